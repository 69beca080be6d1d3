// The store behaviour suite on the scale-out set: PostgreSQL for accounts, credits and the
// cache, Redis for the rate limiter and the cache's first tier (bounded like the database
// here). The same checks as the embedded store (sqlite.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { openPostgresStores } from '../../src/store/postgres/index.ts';
import { withRedis } from '../../src/store/redis/index.ts';
import { testBackends, type TestBackends } from '../support/backends.ts';
import { storeBehaviour } from './behaviour.ts';
import { webhookStoreBehaviour } from './webhooks-behaviour.ts';

let backends: TestBackends;
before(async () => {
  backends = await testBackends();
});
after(() => backends.drop());

storeBehaviour('postgres + redis', async (config) => {
  const stores = await openPostgresStores({ url: await backends.freshDatabaseUrl(), schema: 'migrate', ...config });
  return withRedis(stores, { url: backends.redisUrl, prefix: backends.freshPrefix(), cacheMaxBytes: config?.cacheMaxBytes });
}, { clockedClaims: false });

webhookStoreBehaviour('postgres + redis', async () => {
  const stores = await openPostgresStores({ url: await backends.freshDatabaseUrl(), schema: 'migrate' });
  return withRedis(stores, { url: backends.redisUrl, prefix: backends.freshPrefix() });
});

describe('postgres: a reservation that waited for a concurrent one', () => {
  test('fails with the balance it found, not the one its statement started with', async () => {
    const url = await backends.freshDatabaseUrl();
    const stores = await openPostgresStores({ url, schema: 'migrate' });
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      const team = await stores.accounts.createTeam({ name: 'last-credit', credits: 1, rateLimit: 100 });
      // Another node's debit of the last credit, not committed yet: it holds the team's row.
      await other.query('BEGIN');
      await other.query('UPDATE teams SET credits = credits - 1 WHERE id = $1', [team.id]);
      const reserving = stores.ledger.reserve(team.id, 1, 'req_waited', Date.now() + 60_000);
      const waiting = async () =>
        Number(
          (await other.query("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows[0]?.n,
        ) > 0;
      const deadline = Date.now() + 10_000;
      while (!(await waiting())) {
        assert.ok(Date.now() < deadline, 'the reservation waits for the row');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await other.query('COMMIT');
      assert.deepEqual(await reserving, { ok: false, reason: 'balance', balance: 0 });
    } finally {
      await other.end();
      await stores.close();
    }
  });
});
