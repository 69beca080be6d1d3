// The data directory: a database that is gone from a directory used before is refused, never
// silently replaced by an empty one; `initialiseDatabase` (`admin init`) starts over on
// purpose; every file is private (0600); an unwritable DATA_DIR says "permission denied".
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import { loadConfig, type Config } from '../../src/config.ts';
import { describeFsError } from '../../src/fs-errors.ts';
import { initialiseDatabase, openStores, signsOfUse } from '../../src/store/open.ts';
import { openSqliteStores } from '../../src/store/sqlite/index.ts';
import { MissingDatabaseError, StoreUnavailableError, type Stores } from '../../src/store/types.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'data-dir-test-'));
  dirs.push(dir);
  return dir;
};
const configFor = (dataDir: string): Config => loadConfig({ DATA_DIR: dataDir });
const modeOf = (file: string): string => (statSync(file).mode & 0o777).toString(8);

/** A used data directory: opened once, with a team in its database. */
async function usedDir(): Promise<{ dataDir: string; config: Config; teamId: string }> {
  const dataDir = join(tempDir(), 'data');
  const config = configFor(dataDir);
  const stores = await openStores(config);
  const team = await stores.accounts.createTeam({ name: 'acme', credits: 7, rateLimit: 100 });
  await stores.close();
  return { dataDir, config, teamId: team.id };
}

/** The message openStores refuses with; asserts that it names the file and the command. */
async function refusal(config: Config): Promise<string> {
  let message = '';
  await assert.rejects(
    openStores(config),
    (error: unknown) => {
      assert.ok(error instanceof Error && error.cause instanceof MissingDatabaseError, String(error));
      message = error.message;
      return true;
    },
  );
  assert.ok(message.includes(join(config.dataDir, 'service.db')), `names the file: ${message}`);
  assert.ok(message.includes('npm run -s admin -- init'), `names the command: ${message}`);
  return message;
}

describe('a database gone from a used data directory', () => {
  test('a directory never used before is initialised, and marked as used', async () => {
    const dataDir = join(tempDir(), 'fresh');
    const config = configFor(dataDir);
    const stores = await openStores(config);
    await stores.ping();
    await stores.close();
    assert.ok(existsSync(join(dataDir, 'service.db')));
    assert.match(readFileSync(join(dataDir, 'initialised'), 'utf8'), /npm run -s admin -- init/);
    // An empty file someone created there before the first start holds nothing to lose.
    const other = join(tempDir(), 'touched');
    mkdirSync(other);
    writeFileSync(join(other, 'service.db'), '');
    await (await openStores(configFor(other))).close();
  });

  test('a deleted service.db is refused, and nothing is created in its place', async () => {
    const { dataDir, config } = await usedDir();
    rmSync(join(dataDir, 'service.db'));
    assert.match(await refusal(config), /^The database .*service\.db is missing, but DATA_DIR .* has been used before \(it holds .*initialised.*\)\.\nRefusing to start with a new, empty database/);
    assert.equal(existsSync(join(dataDir, 'service.db')), false, 'no empty database was created');
    // So does the next start: the refused one changed nothing.
    await refusal(config);
  });

  test('an emptied (0-byte) service.db is refused and left as it is', async () => {
    const { dataDir, config } = await usedDir();
    truncateSync(join(dataDir, 'service.db'), 0);
    assert.match(await refusal(config), /is empty \(0 bytes\)/);
    assert.equal(statSync(join(dataDir, 'service.db')).size, 0);
  });

  test('a service.db without the schema (header only) is refused without being written', async () => {
    const { dataDir, config } = await usedDir();
    const path = join(dataDir, 'service.db');
    rmSync(path);
    const raw = new DatabaseSync(path);
    raw.exec('PRAGMA journal_mode = WAL');
    raw.close();
    const before = readFileSync(path);
    assert.match(await refusal(config), /holds none of the service's tables/);
    assert.deepEqual(readFileSync(path), before);
  });

  test('a deleted service.db whose -wal remains is refused even without the marker (a directory from before it existed)', async () => {
    const dataDir = join(tempDir(), 'data');
    const config = configFor(dataDir);
    // Written by an earlier version: no marker. The service's connection stays open, so the
    // -wal and -shm files exist when the database is deleted under it.
    const stores = openSqliteStores({ path: join(dataDir, 'service.db') });
    await stores.accounts.createTeam({ name: 'acme', credits: 7, rateLimit: 100 });
    assert.ok(existsSync(join(dataDir, 'service.db-wal')));
    rmSync(join(dataDir, 'service.db'));
    try {
      assert.match(await refusal(config), /it holds .*service\.db-wal/);
    } finally {
      await stores.close();
    }
  });

  test('a demo key is a sign of use, unless it is the copy `npm run cluster` writes of its own key', async () => {
    const dataDir = join(tempDir(), 'data');
    mkdirSync(join(dataDir, 'cluster'), { recursive: true });
    writeFileSync(join(dataDir, 'cluster', 'demo-key'), 'psk_live_cluster\n');
    writeFileSync(join(dataDir, 'demo-key'), 'psk_live_cluster\n');
    assert.deepEqual(signsOfUse(dataDir), [], 'the cluster\'s key, from PostgreSQL: nothing of the database here');
    writeFileSync(join(dataDir, 'demo-key'), 'psk_live_demo\n');
    assert.deepEqual(signsOfUse(dataDir), ['demo-key'], 'a key of the demo\'s own');
    assert.match(await refusal(configFor(dataDir)), /it holds demo-key/);
  });

  test('an intact directory from before the marker existed opens and is marked', async () => {
    const dataDir = join(tempDir(), 'data');
    const config = configFor(dataDir);
    const old = openSqliteStores({ path: join(dataDir, 'service.db') });
    const team = await old.accounts.createTeam({ name: 'acme', credits: 7, rateLimit: 100 });
    await old.close();
    const stores = await openStores(config);
    assert.equal(await stores.ledger.balance(team.id), 7);
    await stores.close();
    assert.ok(existsSync(join(dataDir, 'initialised')));
  });

  test('initialiseDatabase starts over on purpose, keeps a lost -wal aside, and never replaces a database', async () => {
    const { dataDir, config, teamId } = await usedDir();
    await assert.rejects(initialiseDatabase(config), /already holds a database; init never replaces one/);
    const kept = await openStores(config);
    assert.equal(await kept.ledger.balance(teamId), 7, 'the refused init changed nothing');
    assert.equal(await kept.ledger.addCredits(teamId, 1), 8);

    // The database is deleted while the service holds it open: its -wal and -shm remain.
    rmSync(join(dataDir, 'service.db'));
    const done = await initialiseDatabase(config);
    await kept.close().catch(() => undefined);
    assert.equal(done.database, join(dataDir, 'service.db'));
    assert.ok(done.orphanedWal?.startsWith(join(dataDir, 'service.db-wal.orphaned-')), String(done.orphanedWal));
    assert.ok(existsSync(done.orphanedWal ?? ''));

    const fresh = await openStores(config);
    try {
      assert.deepEqual(await fresh.accounts.listTeams(), [], 'a new, empty database');
      assert.equal(await fresh.ledger.balance(teamId), null);
    } finally {
      await fresh.close();
    }
    // An emptied database is initialised in place.
    truncateSync(join(dataDir, 'service.db'), 0);
    assert.deepEqual(await initialiseDatabase(config), { database: join(dataDir, 'service.db'), orphanedWal: null });
    await (await openStores(config)).close();
  });
});

describe('file modes', () => {
  test('every file in the data directory is 0600 after a start and some writes', async () => {
    const dataDir = join(tempDir(), 'data');
    const config = configFor(dataDir);
    const stores = await openStores(config);
    try {
      const team = await stores.accounts.createTeam({ name: 'acme', credits: 7, rateLimit: 100 });
      const r = await stores.ledger.reserve(team.id, 1, 'req_modes', Date.now() + 60_000);
      assert.ok(r.ok);
      await stores.ledger.commit(r.reservationId);
      await stores.cache.set('k', 't', { value: '{"a":1}', storedAt: Date.now() });
      await stores.cache.prune(Date.now());
      await stores.probeWrite();
      const files = readdirSync(dataDir).sort();
      assert.deepEqual(files, ['cursor-secret', 'initialised', 'service.db', 'service.db-shm', 'service.db-wal']);
      for (const file of files) assert.equal(modeOf(join(dataDir, file)), '600', file);
    } finally {
      await stores.close();
    }
    assert.equal(modeOf(dataDir), '700', 'a data directory the service creates is private too');
  });

  test('files an earlier version left readable by others are made private at start', async () => {
    const dataDir = join(tempDir(), 'data');
    const config = configFor(dataDir);
    const old = new DatabaseSync(join(dataDir, 'service.db'));
    old.exec('PRAGMA journal_mode = WAL');
    old.close();
    await openSqliteStores({ path: join(dataDir, 'service.db') }).close();
    writeFileSync(join(dataDir, 'demo-key'), 'ps_live_x\n');
    for (const file of readdirSync(dataDir)) chmodSync(join(dataDir, file), 0o644);
    const stores = await openStores(config);
    try {
      await stores.accounts.createTeam({ name: 'acme', credits: 7, rateLimit: 100 });
      for (const file of readdirSync(dataDir)) assert.equal(modeOf(join(dataDir, file)), '600', file);
    } finally {
      await stores.close();
    }
  });
});

describe('an unusable DATA_DIR says why', () => {
  /** Runs `loadConfig` and `openStores` in a child process, as `uid` when given. */
  const openIn = (env: Record<string, string>, uid?: number) => {
    const script = `
      const { loadConfig } = await import(${JSON.stringify(join(ROOT, 'src/config.ts'))});
      const { openStores } = await import(${JSON.stringify(join(ROOT, 'src/store/open.ts'))});
      try { await (await openStores(loadConfig(process.env))).close(); console.log('opened'); }
      catch (error) { console.log(error.message); }`;
    const result = spawnSync(process.execPath, ['--disable-warning=ExperimentalWarning', '--input-type=module', '-e', script], {
      env: { PATH: process.env.PATH ?? '', ...env },
      encoding: 'utf8',
      timeout: 20_000,
      ...(uid === undefined ? {} : { uid, gid: uid }),
    });
    assert.equal(result.status, 0, result.stderr);
    return result.stdout.trim();
  };

  test('a DATA_DIR the user may not write is "permission denied", with or without CURSOR_SECRET', () => {
    // Root writes anywhere whatever the mode, so as root the child runs as "nobody" instead.
    const root = process.getuid?.() === 0;
    const parent = tempDir();
    chmodSync(parent, 0o755);
    const locked = join(parent, 'locked');
    mkdirSync(locked, { mode: 0o755 });
    if (!root) chmodSync(locked, 0o500);
    const as = root ? 65534 : undefined;
    assert.equal(openIn({ DATA_DIR: locked }, as), `cannot write the cursor secret into DATA_DIR ${locked}: permission denied (EACCES)`);
    assert.equal(openIn({ DATA_DIR: locked, CURSOR_SECRET: 'a-configured-secret-value' }, as), `cannot write the database ${join(locked, 'service.db')}: permission denied (EACCES)`);
    assert.equal(openIn({ DATA_DIR: join(locked, 'sub') }, as), `cannot create DATA_DIR ${join(locked, 'sub')}: permission denied (EACCES)`);
    chmodSync(locked, 0o755);
  });

  test('a DATA_DIR that is a file, or lies under one, says so', () => {
    const file = join(tempDir(), 'file');
    writeFileSync(file, '');
    assert.throws(() => loadConfig({ DATA_DIR: file }), { message: `cannot create DATA_DIR ${file}: a file of that name exists (EEXIST)` });
    assert.throws(() => loadConfig({ DATA_DIR: join(file, 'data') }), { message: `cannot create DATA_DIR ${join(file, 'data')}: a part of the path is not a directory (ENOTDIR)` });
  });

  test('the words for each file-system error', () => {
    const errno = (code: string) => Object.assign(new Error(`${code}: raw text`), { code });
    assert.equal(describeFsError(errno('EACCES'), 'cannot write x').message, 'cannot write x: permission denied (EACCES)');
    assert.equal(describeFsError(errno('EPERM'), 'cannot write x').message, 'cannot write x: permission denied (EPERM)');
    assert.equal(describeFsError(errno('EROFS'), 'cannot write x').message, 'cannot write x: read-only file system (EROFS)');
    assert.equal(describeFsError(errno('ENOSPC'), 'cannot write x').message, 'cannot write x: no space left on device (ENOSPC)');
    assert.equal(describeFsError(errno('EWEIRD'), 'cannot write x').message, 'cannot write x: EWEIRD: raw text (EWEIRD)');
  });

  test('an emptied cursor-secret is an error, never an empty signing key', () => {
    const dataDir = tempDir();
    const first = loadConfig({ DATA_DIR: dataDir }).cursorSecret;
    assert.ok(first.length >= 32);
    assert.equal(modeOf(join(dataDir, 'cursor-secret')), '600');
    assert.deepEqual(readdirSync(dataDir), ['cursor-secret'], 'no temporary file is left');
    writeFileSync(join(dataDir, 'cursor-secret'), '\n');
    assert.throws(() => loadConfig({ DATA_DIR: dataDir }), /cursor-secret is empty or shorter than 16 characters; delete it to generate a new one/);
  });
});

describe('the SQLite store refuses to create when told not to', () => {
  test("create: false rejects a missing, empty or schema-less file and writes nothing, and another program's database outright", async () => {
    const dir = tempDir();
    const missing = join(dir, 'missing.db');
    assert.throws(() => openSqliteStores({ path: missing, create: false }), (error: unknown) => error instanceof MissingDatabaseError && error.problem === 'missing');
    assert.equal(existsSync(missing), false);
    const empty = join(dir, 'empty.db');
    writeFileSync(empty, '');
    assert.throws(() => openSqliteStores({ path: empty, create: false }), (error: unknown) => error instanceof MissingDatabaseError && error.problem === 'empty');
    assert.equal(statSync(empty).size, 0);
    const foreign = join(dir, 'foreign.db');
    const raw = new DatabaseSync(foreign);
    raw.exec('CREATE TABLE notes (body TEXT)');
    raw.close();
    assert.throws(() => openSqliteStores({ path: foreign, create: false }), (error: unknown) => !(error instanceof MissingDatabaseError) && /holds tables that are not this service's/.test(String(error)));
    const foreignDir = join(dir, 'foreign');
    mkdirSync(foreignDir);
    writeFileSync(join(foreignDir, 'service.db'), readFileSync(foreign));
    await assert.rejects(initialiseDatabase(configFor(foreignDir)), /holds tables that are not this service's/, 'init never writes into another program\'s database');
    const made = join(dir, 'made.db');
    await openSqliteStores({ path: made }).close();
    const stores: Stores = openSqliteStores({ path: made, create: false });
    await stores.close();
    assert.throws(() => openSqliteStores({ path: join(dir, 'no-such-dir', 'x.db') }), StoreUnavailableError);
  });
});
