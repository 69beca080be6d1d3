// Schema migrations of the PostgreSQL store: `admin migrate`, MIGRATE=auto, and the refusal to
// start on a database behind or ahead of this program.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { loadConfig } from '../../src/config.ts';
import { migrateDatabase, openPostgresStores, SCHEMA_VERSION, SchemaMismatchError } from '../../src/store/postgres/index.ts';
import { MIGRATION_LOCK, MIGRATIONS } from '../../src/store/postgres/schema.ts';
import { openStores } from '../../src/store/open.ts';
import { testBackends, type TestBackends } from '../support/backends.ts';

const ROOT = join(import.meta.dirname, '..', '..');
let backends: TestBackends;
const dataDir = mkdtempSync(join(tmpdir(), 'migrations-'));
before(async () => {
  backends = await testBackends();
});
after(async () => {
  await backends.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

const configFor = (url: string, extra: Record<string, string> = {}) => loadConfig({ DATA_DIR: dataDir, DATABASE_URL: url, ...extra });

const admin = (url: string, ...args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', 'src/cli/main.ts', ...args],
      { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: url }, timeout: 20_000 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    );
  });

async function sql(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

describe('PostgreSQL schema migrations', () => {
  test('a never-migrated database is refused with the command that fixes it; admin migrate applies every migration once', async () => {
    const url = await backends.freshDatabaseUrl();
    await assert.rejects(openStores(configFor(url)), (error: unknown) => {
      assert.ok(error instanceof SchemaMismatchError, String(error));
      assert.equal(error.found, 0);
      assert.match(error.message, /schema version 0; this program needs version \d+\. Run: npm run -s admin -- migrate \(or start with MIGRATE=auto\)/);
      return true;
    });

    const first = await admin(url, 'migrate', '--json');
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(JSON.parse(first.stdout), { applied: Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1).join(',') });
    const again = await admin(url, 'migrate', '--json');
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout), { applied: 'none: already up to date' });

    const stores = await openStores(configFor(url));
    try {
      const team = await stores.accounts.createTeam({ name: 'migrated', credits: 3, rateLimit: 10 });
      assert.equal(await stores.ledger.balance(team.id), 3);
    } finally {
      await stores.close();
    }
  });

  test('admin migrate tells on standard error what it does: the wait for a lock another process holds, each migration it applies', { timeout: 60_000 }, async () => {
    const url = await backends.freshDatabaseUrl();
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', 'src/cli/main.ts', 'migrate'], { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: url } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      while (!stderr.includes('\n')) await once(child.stderr, 'data');
      assert.equal(stderr, 'migrate: waiting for the migration lock: another process is migrating this database\n');
    } finally {
      await holder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
      await holder.end();
    }
    const [code] = (await once(child, 'close')) as [number | null];
    assert.equal(code, 0, stderr);
    assert.deepEqual(stderr.split('\n').filter((line) => line !== '').slice(1), [
      ...MIGRATIONS.map((migration, index) => `migrate: applying migration ${index + 1} of ${SCHEMA_VERSION}: ${migration.name}`),
      `migrate: installing the job queue (pg-boss) in schema ${new URL(url).searchParams.get('options')?.replace('-c search_path=', '')}_job_queue`,
    ]);
    assert.match(stdout, new RegExp(`^applied\\s*\\n-+\\s*\\n${MIGRATIONS.map((_, index) => index + 1).join(',')}\\s*$`));

    // Nothing to do, nothing said; under --json standard error holds only JSON errors.
    const again = await admin(url, 'migrate');
    assert.deepEqual([again.code, again.stderr], [0, '']);
    const fresh = await backends.freshDatabaseUrl();
    const json = await admin(fresh, 'migrate', '--json');
    assert.deepEqual([json.code, json.stderr], [0, '']);
  });

  test('a database ahead of this program is refused, by the server and by migrate', async () => {
    const url = await backends.freshDatabaseUrl();
    await migrateDatabase({ url });
    await sql(url, `INSERT INTO schema_migrations (version, name) VALUES (${SCHEMA_VERSION + 1}, 'from a newer release')`);
    await assert.rejects(openStores(configFor(url)), /newer than this program's/);
    await assert.rejects(openStores(configFor(url, { MIGRATE: 'auto' })), /newer than this program's/);
    const refused = await admin(url, 'migrate');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^error: The PostgreSQL database is at schema version \d+, newer than this program's/);
  });

  test('MIGRATE=auto migrates at start; nodes starting together migrate once', async () => {
    const url = await backends.freshDatabaseUrl();
    const nodes = await Promise.all(Array.from({ length: 4 }, () => openStores(configFor(url, { MIGRATE: 'auto' }))));
    try {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const { rows } = await client.query('SELECT version FROM schema_migrations ORDER BY version');
      await client.end();
      assert.deepEqual(
        rows.map((r: { version: number }) => r.version),
        Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1),
      );
    } finally {
      await Promise.all(nodes.map((node) => node.close()));
    }
  });

  test('a database with users migrates to one outstanding link per user and emails unique within a team', async () => {
    const url = await backends.freshDatabaseUrl();
    const before = MIGRATIONS.findIndex((migration) => migration.name === 'one outstanding password link per user');
    await sql(
      url,
      `CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
       ${MIGRATIONS.slice(0, before)
         .map((migration, i) => `${migration.sql}; INSERT INTO schema_migrations (version, name) VALUES (${i + 1}, '${migration.name}');`)
         .join('\n')}
       INSERT INTO teams (id, name, credits, rate_limit) VALUES ('team_1', 'a', 0, 1), ('team_2', 'b', 0, 1);
       INSERT INTO users (id, team_id, email, role) VALUES ('user_1', 'team_1', 'a@example.com', 'owner');
       INSERT INTO password_links (hash, user_id, expires_at) VALUES ('early', 'user_1', 4102444800000), ('late', 'user_1', 4102444800001);`,
    );
    assert.deepEqual(await migrateDatabase({ url }), Array.from({ length: SCHEMA_VERSION - before }, (_, i) => before + i + 1));
    const stores = await openPostgresStores({ url });
    try {
      assert.equal(await stores.users.passwordLinkValid('early', 0), false);
      assert.equal(await stores.users.passwordLinkValid('late', 0), true);
      const other = await stores.users.createUser({ teamId: 'team_2', email: 'a@example.com', role: 'member' });
      assert.deepEqual((await stores.users.findUsersByEmail('a@example.com')).map((found) => found.user.id), ['user_1', other.id]);
      await assert.rejects(stores.users.createUser({ teamId: 'team_1', email: 'A@example.com', role: 'member' }), RangeError);
    } finally {
      await stores.close();
    }
  });

  test('MIGRATE accepts auto or off, and the backends their own URL schemes', () => {
    assert.throws(() => loadConfig({ DATA_DIR: dataDir, MIGRATE: 'yes' }), /MIGRATE must be "auto" or "off"/);
    assert.throws(() => loadConfig({ DATA_DIR: dataDir, DATABASE_URL: 'mysql://x@h/db' }), /DATABASE_URL must start with postgres:\/\/ or postgresql:\/\//);
    assert.throws(() => loadConfig({ DATA_DIR: dataDir, REDIS_URL: 'not a url' }), /REDIS_URL must be a URL/);
    assert.throws(() => loadConfig({ DATA_DIR: dataDir, DATABASE_URL: 'postgres://u:secret@h/db', REDIS_URL: 'http://u:secret@h' }), (error: Error) => !error.message.includes('secret'));
  });
});
