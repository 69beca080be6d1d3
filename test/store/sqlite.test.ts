import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { InProcessRateLimiter } from '../../src/store/memory-limiter.ts';
import { accountStore } from '../../src/store/sqlite/accounts.ts';
import { Connection } from '../../src/store/sqlite/connection.ts';
import { openSqliteStores } from '../../src/store/sqlite/index.ts';
import { MIGRATIONS, SCHEMA_VERSION } from '../../src/store/sqlite/schema.ts';
import { ledger } from '../../src/store/sqlite/ledger.ts';
import type { SqliteStoreOptions } from '../../src/store/sqlite/index.ts';
import { StoreUnavailableError } from '../../src/store/types.ts';
import type { Stores } from '../../src/store/types.ts';
import { storeBehaviour } from './behaviour.ts';
import { webhookStoreBehaviour } from './webhooks-behaviour.ts';
import { cachedEntry } from '../support/cached-entry.ts';

const dir = mkdtempSync(join(tmpdir(), 'store-sqlite-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let seq = 0;
const freshPath = (): string => join(dir, `db-${++seq}.sqlite`);

storeBehaviour('sqlite file', async (config) => openSqliteStores({ path: freshPath(), ...config }));
storeBehaviour('sqlite :memory:', async (config) => openSqliteStores({ path: ':memory:', ...config }));
webhookStoreBehaviour('sqlite file', async () => openSqliteStores({ path: freshPath() }));

const SQLITE_MODULE = new URL('../../src/store/sqlite/index.ts', import.meta.url).href;

/** Runs `body` (an async function body with `stores`, `data` and `ready` in scope) in a worker thread. */
function inWorker(
  body: string,
  data: Record<string, unknown>,
  options: { start?: Int32Array; onReady?: () => void } = {},
): { worker: Worker; result: Promise<unknown> } {
  const worker = new Worker(
    `
    const { parentPort, workerData } = require('node:worker_threads');
    (async () => {
      const { openSqliteStores } = await import(workerData.module);
      const stores = openSqliteStores({ path: workerData.path });
      const data = workerData.data;
      const ready = () => {
        parentPort.postMessage({ ready: true });
        if (workerData.start) Atomics.wait(workerData.start, 0, 0);
      };
      const result = await (async () => { ${body} })();
      parentPort.postMessage({ result });
    })();
    `,
    { eval: true, workerData: { module: SQLITE_MODULE, path: data.path, data, start: options.start } },
  );
  const result = new Promise<unknown>((resolve, reject) => {
    worker.on('message', (m: { ready?: boolean; result?: unknown }) => {
      if (m.ready) options.onReady?.();
      else resolve(m.result);
    });
    worker.on('error', reject);
    worker.on('exit', (code) => reject(new Error(`worker exited with ${code} before answering`)));
  });
  return { worker, result };
}

async function ledgerSum(s: Stores, teamId: string): Promise<number> {
  return (await s.ledger.entries(teamId, 100_000)).reduce((sum, e) => sum + e.amount, 0);
}

describe('sqlite specifics', () => {
  test('creates the schema once, in WAL mode', async () => {
    const path = freshPath();
    const s = openSqliteStores({ path });
    await s.ping();
    const raw = new DatabaseSync(path);
    try {
      assert.equal((raw.prepare('PRAGMA user_version').get() as { user_version: number }).user_version, SCHEMA_VERSION);
      assert.equal((raw.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode, 'wal');
      const tables = raw
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .all()
        .map((r) => r.name);
      assert.deepEqual(tables, ['api_keys', 'cache', 'drift', 'events', 'idempotency', 'job_items', 'job_pages', 'job_teams', 'jobs', 'ledger', 'monitor_runs', 'monitors', 'password_links', 'requests', 'reservations', 'sessions', 'teams', 'users', 'webhook_attempts', 'webhook_deliveries', 'webhook_endpoints', 'write_probe']);
      // The ledger is append-only, even for a hand-written statement.
      const team = await s.accounts.createTeam({ name: 't', credits: 3, rateLimit: 1 });
      assert.throws(() => raw.prepare('UPDATE ledger SET amount = 100').run(), /append-only/);
      assert.throws(() => raw.prepare('DELETE FROM ledger').run(), /append-only/);
      assert.equal(await s.ledger.balance(team.id), 3);
    } finally {
      raw.close();
      await s.close();
    }
    const again = openSqliteStores({ path }); // reopening does not migrate again
    assert.equal((await again.accounts.listTeams()).length, 1);
    await again.close();
  });

  test("a reservation writes two indexes of its table, and a team's pending count reads only those in flight", async () => {
    const path = freshPath();
    const s = openSqliteStores({ path });
    const team = await s.accounts.createTeam({ name: 't', credits: 5, rateLimit: 1 });
    const held = await s.ledger.reserve(team.id, 1, 'req_a', Date.now() + 60_000);
    const settled = await s.ledger.reserve(team.id, 1, 'req_b', Date.now() + 60_000);
    assert.ok(held.ok && settled.ok);
    await s.ledger.commit(settled.reservationId);
    const raw = new DatabaseSync(path, { readOnly: true });
    try {
      const indexes = raw.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'reservations' ORDER BY name").all().map((r) => r.name);
      // The primary key's, the pending ones' (for expiry and counts), the settled ones' (for pruning).
      assert.deepEqual(indexes, ['reservations_pending', 'reservations_settled', 'sqlite_autoindex_reservations_1']);
      const plan = raw.prepare("EXPLAIN QUERY PLAN SELECT count(*) AS n FROM reservations WHERE team_id = ? AND state = 'pending'").all().map((r) => r.detail);
      assert.deepEqual(plan, ['SCAN reservations USING INDEX reservations_pending']);
    } finally {
      raw.close();
    }
    assert.equal((await s.ledger.usage(team.id))?.pending, 1);
    await s.close();
  });

  test('migrating a v5 database keeps one outstanding link per user, the latest to expire', async () => {
    const path = freshPath();
    const raw = new DatabaseSync(path);
    for (const migration of MIGRATIONS.slice(0, 5)) raw.exec(migration);
    raw.exec(`PRAGMA user_version = 5;
      INSERT INTO teams (id, name, credits, rate_limit, created_at) VALUES ('team_1', 't', 0, 1, '2026-01-01T00:00:00.000Z');
      INSERT INTO users (id, team_id, email, role, created_at) VALUES ('user_1', 'team_1', 'a@example.com', 'owner', '2026-01-01T00:00:00.000Z');
      INSERT INTO password_links (hash, user_id, expires_at) VALUES ('early', 'user_1', 1000), ('late', 'user_1', 2000);
      INSERT INTO password_links (hash, user_id, expires_at, used_at) VALUES ('used', 'user_1', 500, '2026-01-01T00:00:00.000Z');`);
    raw.close();
    const s = openSqliteStores({ path });
    try {
      assert.equal(await s.users.passwordLinkValid('early', 0), false, 'the earlier outstanding link is gone');
      assert.equal(await s.users.passwordLinkValid('late', 0), true);
      await s.users.createPasswordLink({ hash: 'newest', userId: 'user_1', expiresAt: 3000 });
      assert.equal(await s.users.passwordLinkValid('late', 0), false);
    } finally {
      await s.close();
    }
  });

  test('migrating a v6 database makes emails unique within a team, keeping users and what refers to them', async () => {
    const path = freshPath();
    const raw = new DatabaseSync(path);
    raw.exec('PRAGMA foreign_keys = ON');
    for (const migration of MIGRATIONS.slice(0, 6)) raw.exec(migration);
    raw.exec(`PRAGMA user_version = 6;
      INSERT INTO teams (id, name, credits, rate_limit, created_at) VALUES ('team_1', 'a', 0, 1, '2026-01-01T00:00:00.000Z'), ('team_2', 'b', 0, 1, '2026-01-01T00:00:00.000Z');
      INSERT INTO users (id, team_id, email, role, password_hash, created_at) VALUES ('user_1', 'team_1', 'a@example.com', 'owner', 'scrypt$x', '2026-01-01T00:00:00.000Z');
      INSERT INTO password_links (hash, user_id, expires_at) VALUES ('link', 'user_1', 4102444800000);
      INSERT INTO sessions (hash, user_id, csrf, created_at, expires_at) VALUES ('session', 'user_1', 'c', '2026-01-01T00:00:00.000Z', 4102444800000);
      INSERT INTO api_keys (id, team_id, name, hash, prefix, last4, created_at, created_by) VALUES ('key_1', 'team_1', 'k', 'h', 'p', 'l4', '2026-01-01T00:00:00.000Z', 'user_1');`);
    raw.close();
    const s = openSqliteStores({ path });
    try {
      assert.equal((await s.users.getUser('user_1'))?.hasPassword, true);
      assert.equal(await s.users.passwordLinkValid('link', 0), true);
      assert.equal((await s.users.findSession('session', 0))?.user.id, 'user_1');
      const other = await s.users.createUser({ teamId: 'team_2', email: 'a@example.com', role: 'member' });
      assert.deepEqual((await s.users.findUsersByEmail('a@example.com')).map((found) => found.user.id), ['user_1', other.id]);
      await assert.rejects(s.users.createUser({ teamId: 'team_1', email: 'A@example.com', role: 'member' }), RangeError);
    } finally {
      await s.close();
    }
    const check = new DatabaseSync(path);
    try {
      assert.deepEqual(check.prepare('PRAGMA foreign_key_check').all(), []);
      check.exec('PRAGMA foreign_keys = ON');
      assert.throws(() => check.exec("INSERT INTO sessions (hash, user_id, csrf, created_at, expires_at) VALUES ('s2', 'user_nope', 'c', 'x', 1)"), /FOREIGN KEY/);
    } finally {
      check.close();
    }
  });

  test('data survives reopening', async () => {
    const path = freshPath();
    const a = openSqliteStores({ path });
    const team = await a.accounts.createTeam({ name: 'Acme', credits: 5, rateLimit: 30 });
    const key = await a.accounts.createKey({ teamId: team.id, name: 'ci', hash: 'h-survive', prefix: 'ps_', last4: 'wxyz' });
    const r = await a.ledger.reserve(team.id, 2, 'req_survive', Date.now() + 60_000);
    assert.ok(r.ok);
    await a.cache.set('cache-key', 'target', { value: '{"a":1}', storedAt: 1234 });
    await a.accounts.recordKeyUse(new Map([[key.id, '2030-01-01T00:00:00.000Z']]));
    await a.close();

    const b = openSqliteStores({ path });
    assert.deepEqual(await b.accounts.getTeam(team.id), { ...team, credits: 3 });
    const found = await b.accounts.findActiveKey('h-survive');
    assert.equal(found?.key.id, key.id);
    assert.equal(found?.key.lastUsedAt, '2030-01-01T00:00:00.000Z');
    assert.deepEqual(await b.cache.get('cache-key'), cachedEntry('{"a":1}', 1234));
    assert.equal((await b.ledger.usage(team.id))?.pending, 1);
    assert.deepEqual(await b.ledger.refund(r.reservationId), { refunded: true, balance: 5 });
    assert.equal(await ledgerSum(b, team.id), 5);
    await b.close();
  });

  // Another process's commit is seen by every call made in a later turn of the event loop
  // (a request that follows a CLI command always arrives in a later turn).
  test('a cached value is text in the table and comes back from it byte for byte', async () => {
    const path = freshPath();
    const values = ['{"bio":"café • 東京 😀","q":"\\"\\u0000\\\\"}', '', '{"a":1}'];
    const a = openSqliteStores({ path });
    // Stored from its bytes (as a live result is) and from its text alone.
    await a.cache.set('with-bytes', 't', { value: values[0] as string, bytes: Buffer.from(values[0] as string), storedAt: 1 });
    await a.cache.set('empty', 't', { value: values[1] as string, storedAt: 2 });
    await a.cache.set('text-only', 't', { value: values[2] as string, storedAt: 3 });
    await a.close();
    const raw = new DatabaseSync(path, { readOnly: true });
    try {
      const rows = raw.prepare('SELECT key, typeof(value) AS type, value FROM cache ORDER BY stored_at').all();
      assert.deepEqual(
        rows.map((row) => ({ ...row })),
        [
          { key: 'with-bytes', type: 'text', value: values[0] },
          { key: 'empty', type: 'text', value: '' },
          { key: 'text-only', type: 'text', value: values[2] },
        ],
      );
    } finally {
      raw.close();
    }
    // A new store has nothing in memory: each value is read from the table.
    const b = openSqliteStores({ path });
    assert.deepEqual(await b.cache.get('with-bytes'), cachedEntry(values[0] as string, 1));
    assert.deepEqual(await b.cache.get('empty'), cachedEntry('', 2));
    assert.deepEqual(await b.cache.get('text-only'), cachedEntry(values[2] as string, 3));
    await b.close();
  });

  test('two connections to one file see each other’s changes at once', async () => {
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
    const path = freshPath();
    const service = openSqliteStores({ path });
    const cli = openSqliteStores({ path }); // the operator CLI, as another process would
    try {
      const team = await cli.accounts.createTeam({ name: 'Acme', credits: 0, rateLimit: 100 });
      await cli.accounts.createKey({ teamId: team.id, name: 'a', hash: 'h-a', prefix: 'ps_', last4: 'aaaa' });
      await nextTurn();
      const b = await cli.accounts.createKey({ teamId: team.id, name: 'b', hash: 'h-b', prefix: 'ps_', last4: 'bbbb' });
      assert.ok(await service.accounts.findActiveKey('h-b'));

      assert.equal(await cli.accounts.revokeKey(b.id), true);

      await nextTurn();
      assert.equal(await service.accounts.findActiveKey('h-b'), null, 'revocation seen by the next lookup');

      assert.deepEqual(await service.ledger.reserve(team.id, 1, 'req_1', Date.now() + 60_000), { ok: false, reason: 'balance', balance: 0 });
      await cli.ledger.addCredits(team.id, 10);
      await nextTurn();
      assert.equal((await service.accounts.findActiveKey('h-a'))?.team.credits, 10);
      const r = await service.ledger.reserve(team.id, 1, 'req_2', Date.now() + 60_000);
      assert.ok(r.ok);
      assert.equal(r.balance, 9);
      assert.equal(await cli.ledger.balance(team.id), 9);
      await cli.accounts.updateTeam(team.id, { rateLimit: 5 });
      await nextTurn();
      assert.equal((await service.accounts.findActiveKey('h-a'))?.team.rateLimit, 5);
      await service.ledger.commit(r.reservationId);
      assert.equal(await ledgerSum(cli, team.id), 9);
    } finally {
      await service.close();
      await cli.close();
    }
  });

  test('a write lock held beyond the busy timeout is StoreUnavailableError; reads go on', async () => {
    const path = freshPath();
    const s = openSqliteStores({ path, busyTimeoutMs: 50 });
    const team = await s.accounts.createTeam({ name: 't', credits: 2, rateLimit: 1 });
    await s.accounts.createKey({ teamId: team.id, name: 'k', hash: 'h-lock', prefix: 'ps_', last4: 'lock' });
    await s.cache.set('k', 't', { value: '1', storedAt: 1 });
    const other = new DatabaseSync(path);
    other.exec('BEGIN IMMEDIATE');
    try {
      await assert.rejects(s.ledger.addCredits(team.id, 1), StoreUnavailableError);
      await assert.rejects(s.ledger.reserve(team.id, 1, 'req_x', Date.now() + 1_000), StoreUnavailableError);
      // WAL: reads do not wait for the writer, and a cache read writes nothing.
      assert.equal(await s.ledger.balance(team.id), 2);
      assert.ok(await s.accounts.findActiveKey('h-lock'));
      assert.deepEqual(await s.cache.get('k'), cachedEntry('1', 1));
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    assert.equal(await s.ledger.addCredits(team.id, 1), 3);
    // A programming error stays what it is.
    await assert.rejects(s.ledger.addCredits(team.id, -1), (err) => !(err instanceof StoreUnavailableError));
    await s.close();
    await assert.rejects(s.ping(), StoreUnavailableError);
  });

  test('an unreachable database file is StoreUnavailableError', () => {
    assert.throws(() => openSqliteStores({ path: join(dir, 'missing-dir', 'x.sqlite') }), StoreUnavailableError);
  });

  test('reservations left by a crashed instance are refunded exactly once by racing instances', async () => {
    const path = freshPath();
    const setup = openSqliteStores({ path });
    const team = await setup.accounts.createTeam({ name: 'crash', credits: 40, rateLimit: 100 });
    await setup.close();

    // The "crashed" instance reserves and is killed before committing or refunding.
    // The sweeps are given their clock: a deadline in real time would make the test depend on
    // how fast the worker starts on a loaded machine.
    const deadline = Date.now() + 60_000;
    const afterDeadline = deadline + 1;
    const crashed = inWorker(
      `
      for (let i = 0; i < 40; i++) {
        const r = await stores.ledger.reserve(data.teamId, 1, 'req_crash_' + i, data.deadline);
        if (!r.ok) throw new Error('reserve failed');
      }
      return 'reserved';
      `,
      { path, teamId: team.id, deadline },
    );
    assert.equal(await crashed.result, 'reserved');
    await crashed.worker.terminate();

    const s = openSqliteStores({ path });
    assert.equal(await s.ledger.balance(team.id), 0);
    assert.equal(await s.ledger.refundExpired(deadline - 1), 0, 'not before the deadline');

    // Four instances in their own threads sweep at the same moment, two of them also
    // refunding reservations one by one; an in-process sweep races with them too.
    const start = new Int32Array(new SharedArrayBuffer(4));
    let ready = 0;
    const onReady = () => {
      if (++ready === 4) {
        Atomics.store(start, 0, 1);
        Atomics.notify(start, 0);
      }
    };
    const sweep = `ready(); return await stores.ledger.refundExpired(data.now);`;
    const oneByOne = `
      const ids = data.ids;
      ready();
      for (const id of ids) await stores.ledger.refund(id);
      return -1;
    `;
    const raw = new DatabaseSync(path, { readOnly: true });
    const ids = raw
      .prepare('SELECT id FROM reservations WHERE team_id = ? ORDER BY id')
      .all(team.id)
      .map((r) => r.id as string);
    raw.close();
    assert.equal(ids.length, 40);
    const workers = [
      inWorker(sweep, { path, now: afterDeadline }, { start, onReady }),
      inWorker(sweep, { path, now: afterDeadline }, { start, onReady }),
      inWorker(oneByOne, { path, ids }, { start, onReady }),
      inWorker(oneByOne, { path, ids: [...ids].reverse() }, { start, onReady }),
    ];
    const [local, ...fromWorkers] = await Promise.all([
      (async () => {
        while (ready < 4) await sleep(1);
        return s.ledger.refundExpired(afterDeadline);
      })(),
      ...workers.map((w) => w.result),
    ]);
    for (const w of workers) await w.worker.terminate();
    const swept = (local as number) + (fromWorkers[0] as number) + (fromWorkers[1] as number);
    assert.ok(swept >= 0 && swept <= 40);

    const entries = await s.ledger.entries(team.id, 1_000);
    assert.equal(entries.filter((e) => e.reason === 'refund').length, 40, 'one refund per reservation');
    const refundedRequests = new Set(entries.filter((e) => e.reason === 'refund').map((e) => e.requestId));
    assert.equal(refundedRequests.size, 40);
    assert.equal(await s.ledger.balance(team.id), 40);
    assert.equal(await ledgerSum(s, team.id), 40);
    assert.equal((await s.ledger.usage(team.id))?.pending, 0);
    assert.equal(await s.ledger.refundExpired(afterDeadline), 0);
    await s.close();
  });

  test('a result is in the table once set resolves; a deleted target leaves nothing behind', async () => {
    const path = freshPath();
    const s = openSqliteStores({ path });
    const raw = new DatabaseSync(path);
    const count = () => (raw.prepare('SELECT count(*) AS n FROM cache').get() as { n: number }).n;
    try {
      await Promise.all(Array.from({ length: 10 }, (_, i) => s.cache.set(`k${i}`, 't', { value: `v${i}`, storedAt: 1_000 + i })));
      assert.equal(count(), 10);
      assert.deepEqual(await s.cache.get('k3'), cachedEntry('v3', 1_003));
      // Issued in one turn: the delete follows the write before it.
      await Promise.all([s.cache.set('late', 't', { value: 'v', storedAt: 2_000 }), s.cache.deleteTarget('t')]);
      assert.equal(count(), 0);
      assert.equal(await s.cache.get('late'), null);
    } finally {
      await s.close();
    }
    raw.close();
  });

  test('ledger writes of one turn share one commit; a failing one is undone alone', async () => {
    const c = new Connection(':memory:', 5_000, { create: true });
    const commits: number[] = [];
    c.afterCommit = () => commits.push(1);
    const accounts = accountStore(c);
    const credits = ledger(c);
    try {
      const team = await accounts.createTeam({ name: 'group', credits: 100, rateLimit: 60 });
      commits.length = 0;
      const deadline = Date.now() + 60_000;
      // Issued in one turn: 30 reserves, with a reserve for an unknown team and a refund of an
      // unknown reservation in the middle.
      const writes = [
        ...Array.from({ length: 15 }, (_, i) => credits.reserve(team.id, 1, `req_a${i}`, deadline)),
        credits.reserve('team_nope', 1, 'req_nope', deadline),
        credits.refund('res_nope'),
        ...Array.from({ length: 15 }, (_, i) => credits.reserve(team.id, 2, `req_b${i}`, deadline)),
      ];
      const settled = await Promise.allSettled(writes);
      assert.equal(commits.length, 1, 'one commit for the 32 writes');
      assert.deepEqual(
        settled.map((r) => r.status),
        [...Array(15).fill('fulfilled'), 'rejected', 'rejected', ...Array(15).fill('fulfilled')],
      );
      const reserved = settled.flatMap((r) => (r.status === 'fulfilled' && 'ok' in r.value && r.value.ok ? [r.value] : []));
      assert.deepEqual(
        reserved.map((r) => r.balance),
        Array.from({ length: 30 }, (_, i) => (i < 15 ? 99 - i : 85 - 2 * (i - 14))),
        'each saw the writes before it',
      );
      assert.equal(await credits.balance(team.id), 55);
      const entries = await credits.entries(team.id, 1_000);
      assert.equal(entries.reduce((sum, e) => sum + e.amount, 0), 55, 'the ledger sums to the balance');
      assert.ok(!entries.some((e) => e.requestId === 'req_nope'));
      const [kept, given] = await Promise.all([
        credits.commit((reserved[0] as { reservationId: string }).reservationId),
        credits.refund((reserved[29] as { reservationId: string }).reservationId),
      ]);
      assert.deepEqual([kept.charged, given.refunded, given.balance], [true, true, 57]);
      assert.equal(commits.length, 2);
    } finally {
      c.closed = true;
      c.db.close();
    }
  });

  test('writes queued for a group commit are committed at close', async () => {
    const path = freshPath();
    const s = openSqliteStores({ path });
    const team = await s.accounts.createTeam({ name: 'closing', credits: 5, rateLimit: 60 });
    const reserved = s.ledger.reserve(team.id, 2, 'req_close', Date.now() + 60_000);
    await s.close();
    assert.equal((await reserved).ok, true);
    const again = openSqliteStores({ path, create: false });
    try {
      assert.equal(await again.ledger.balance(team.id), 3);
    } finally {
      await again.close();
    }
  });

  test('cache reads are recorded in memory and written at prune', async () => {
    const path = freshPath();
    const options: SqliteStoreOptions = { path, cacheMaxBytes: 1_100, cacheTouchFlushMs: 60_000 };
    const s = openSqliteStores(options);
    const raw = new DatabaseSync(path);
    const accessed = (k: string) =>
      (raw.prepare('SELECT accessed_at FROM cache WHERE key = ?').get(k) as { accessed_at: number }).accessed_at;
    try {
      await s.cache.set('a', 't', { value: 'x'.repeat(300), storedAt: Date.now() });
      await sleep(5);
      await s.cache.set('b', 't', { value: 'x'.repeat(300), storedAt: Date.now() });
      await sleep(40); // results are written together a few milliseconds after they are set
      const before = accessed('a');
      await sleep(5);
      await s.cache.get('a');
      assert.equal(accessed('a'), before, 'a read does not write');
      await s.cache.set('c', 't', { value: 'x'.repeat(300), storedAt: Date.now() });
      await s.cache.set('d', 't', { value: 'x'.repeat(300), storedAt: Date.now() });
      await s.cache.prune(Date.now());
      assert.ok(accessed('a') > before, 'prune wrote the access time first');
      assert.equal(await s.cache.get('b'), null);
      assert.ok(await s.cache.get('a'));
    } finally {
      raw.close();
      await s.close();
    }
  });
});

describe('InProcessRateLimiter memory', () => {
  test('memory follows the requests made, not the limit', async () => {
    const limiter = new InProcessRateLimiter();
    const before = process.memoryUsage().arrayBuffers;
    // A preallocated log of 2^31 timestamps would need 16 GiB.
    for (let k = 0; k < 100; k++) assert.equal((await limiter.hit(`big${k}`, 2 ** 31, 60_000, 1_000)).remaining, 2 ** 31 - 1);
    assert.ok(process.memoryUsage().arrayBuffers - before < 1024 * 1024);
    for (let i = 1; i < 99; i++) await limiter.hit('big0', 2 ** 31, 60_000, 1_000 + i);
    // 99 logged, plus this one.
    assert.equal((await limiter.hit('big0', 2 ** 31, 60_000, 2_000)).remaining, 2 ** 31 - 100);
  });

  test('keeps at most `limit` timestamps per key and drops idle keys', async () => {
    const limiter = new InProcessRateLimiter({ sweepIntervalMs: 1_000 });
    const t0 = 1_700_000_000_000;
    for (let k = 0; k < 1_000; k++) {
      for (let i = 0; i < 5; i++) await limiter.hit(`k${k}`, 3, 60_000, t0 + i);
    }
    assert.equal(limiter.size, 1_000);
    await limiter.hit('x', 3, 60_000, t0 + 60_010);
    assert.equal(limiter.size, 1, 'keys whose requests all left the window are gone; the new one stays');
  });

  test('bounded in keys and in bytes, whatever the clients send: the least recently used key is forgotten first', async () => {
    const t0 = 1_700_000_000_000;
    // Failed authentications from 1,000 addresses, while a team keeps making requests.
    const limiter = new InProcessRateLimiter({ maxKeys: 100 });
    const team = async (at: number) => (await limiter.hit('team_1', 1_000, 60_000, at)).remaining;
    let used = 0;
    for (let k = 0; k < 1_000; k++) {
      await limiter.hit(`authfail:10.0.${k >> 8}.${k & 255}`, 30, 60_000, t0 + k);
      if (k % 10 === 0) assert.equal(await team(t0 + k), 1_000 - ++used);
      assert.ok(limiter.size <= 100, `${limiter.size} keys`);
    }
    assert.equal(await team(t0 + 1_000), 1_000 - ++used, 'the team, in use all along, kept its count');
    // Long keys (sign-in attempts under made-up emails) are bounded by their bytes.
    const bytes = 256 * 1024;
    const small = new InProcessRateLimiter({ maxBytes: bytes });
    for (let k = 0; k < 2_000; k++) await small.hit(`signin:user:${String(k).padStart(250, 'x')}@example.com`, 10, 900_000, t0);
    assert.ok(small.bytes <= bytes, `${small.bytes} bytes`);
    assert.ok(small.size > 100 && small.size < 2_000, `${small.size} keys`);
    // And by default.
    const unbounded = new InProcessRateLimiter();
    for (let k = 0; k < 60_000; k++) await unbounded.hit(`authfail:${k}`, 30, 60_000, t0);
    assert.ok(unbounded.size <= 50_000, `${unbounded.size} keys by default`);
    assert.ok(unbounded.bytes <= 16 * 1024 * 1024, `${unbounded.bytes} bytes by default`);
  });

  test('rejects nonsensical limits', async () => {
    const limiter = new InProcessRateLimiter();
    await assert.rejects(limiter.hit('k', 0, 60_000));
    await assert.rejects(limiter.hit('k', 1, 0));
  });
});
