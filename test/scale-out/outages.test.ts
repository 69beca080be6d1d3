// Backend outages on the scale-out set: from at most 5 seconds after PostgreSQL or Redis becomes
// unreachable, requests that need it are answered 503 with Retry-After within 2 seconds (never a
// hang, never a 500),
// /readyz names the backend that is down, and the service recovers by itself when it returns,
// with nothing charged twice.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openPostgresStores } from '../../src/store/postgres/index.ts';
import type { RedisGate } from '../../src/store/redis/gate.ts';
import { withRedis } from '../../src/store/redis/index.ts';
import { byId, startHarness, type Harness } from '../api/harness.ts';
import { expectError, expectNotReady, ledgerState, success, urlOf, variantQuery, type Response } from '../api/support.ts';
import { testBackends, type TestBackends } from '../support/backends.ts';
import { CuttableProxy, OwnRedis } from '../support/outages.ts';

let backends: TestBackends;
let redis: OwnRedis;
let proxy: CuttableProxy;
let h: Harness;
before(async () => {
  backends = await testBackends();
  redis = await OwnRedis.start();
  const direct = new URL(await backends.freshDatabaseUrl());
  proxy = await new CuttableProxy({ host: direct.hostname, port: Number(direct.port || 5432) }).start();
  const viaProxy = new URL(direct.href);
  viaProxy.port = String(proxy.port);
  let migrated = false;
  h = await startHarness({
    credits: 1000,
    open: async () => {
      const stores = await openPostgresStores({ url: viaProxy.href, schema: migrated ? 'check' : 'migrate' });
      migrated = true;
      return withRedis(stores, { url: redis.url, prefix: backends.freshPrefix() });
    },
  });
});
after(async () => {
  await h?.close();
  await proxy?.close();
  await redis?.stop();
  await backends?.drop();
});

const endpoint = byId('linkpage-a.profile');
let variant = 0;
/** A live scrape of a new target each time, timed. */
async function liveScrape(): Promise<{ response: Response; ms: number }> {
  const started = performance.now();
  const response = await h.get(urlOf(endpoint, {}, variantQuery(endpoint, `outage-${++variant}`)));
  return { response, ms: performance.now() - started };
}

/** /readyz names `backend` down within 5 s of the outage. */
async function noticed(backend: 'postgres' | 'redis'): Promise<void> {
  const started = Date.now();
  for (;;) {
    const ready = await h.app.inject({ method: 'GET', url: '/readyz' });
    if (ready.statusCode === 503 && (ready.json() as { backends: Record<string, string> }).backends[backend] === 'down') return;
    assert.ok(Date.now() - started < 5_000, `${backend} noticed down within 5 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function expectUnavailableFast(what: string): Promise<void> {
  for (let i = 0; i < 5; i++) {
    const { response, ms } = await liveScrape();
    expectError(response, 503, 'SERVICE_UNAVAILABLE', { authed: null });
    assert.match(String(response.headers['retry-after']), /^[1-9]\d*$/);
    assert.ok(ms < 2_000, `${what}: answered in ${Math.round(ms)} ms`);
  }
}

/** Polls until a live scrape succeeds again; returns how long it took. */
async function recovered(): Promise<number> {
  const started = Date.now();
  for (;;) {
    const { response } = await liveScrape();
    if (response.statusCode === 200) return Date.now() - started;
    assert.equal(response.statusCode, 503, response.body);
    assert.ok(Date.now() - started < 15_000, 'recovered within 15 s');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function assertLedgerMatchesAnswers(): Promise<void> {
  const state = await ledgerState(h, h.team.id);
  assert.equal(state.balance, state.sum, 'the ledger sums to the balance');
  assert.equal(state.pending, 0);
  const charges = (await h.stores.ledger.entries(h.team.id, 100_000)).filter((entry) => entry.reason === 'charge').length;
  const refunds = (await h.stores.ledger.entries(h.team.id, 100_000)).filter((entry) => entry.reason === 'refund').length;
  assert.equal(charges - refunds, answered200, 'one kept charge per 200 answered');
}

let answered200 = 0;

describe('backend outages on PostgreSQL + Redis', () => {
  test('Redis stopped: 503 within 2 s, /readyz names it; restarted empty: service resumes by itself', async () => {
    success((await liveScrape()).response);
    answered200++;
    const gate = h.stores.gate as RedisGate;
    assert.ok(gate.remembered > 0, 'the node remembers the key');
    await redis.stop();
    await noticed('redis');
    await expectUnavailableFast('Redis down');
    assert.equal(gate.remembered, 0, 'and forgets it once Redis fails: the copies may change unseen');
    expectNotReady(await h.app.inject({ method: 'GET', url: '/readyz' }), { postgres: 'up', redis: 'down' });
    await redis.restart();
    await recovered();
    answered200++;
    const ready = await h.app.inject({ method: 'GET', url: '/readyz' });
    assert.deepEqual(ready.json(), { status: 'ready', backends: { postgres: 'up', redis: 'up' } });
    await assertLedgerMatchesAnswers();
  });

  for (const [mode, what] of [
    ['refuse', 'refusing connections'],
    ['blackhole', 'partitioned (nothing answers, never a hang)'],
  ] as const) {
    test(`PostgreSQL ${what}: 503 within 2 s, /readyz names it; back: service resumes by itself`, async () => {
      const hit = urlOf(endpoint, { cache_max_age: '1d' }, variantQuery(endpoint, `kept-${mode}`));
      success(await h.get(hit));
      answered200++;
      await proxy.set(mode);
      await noticed('postgres');
      await expectUnavailableFast(`PostgreSQL ${what}`);
      // A cache hit of a key the node has seen needs nothing from PostgreSQL.
      const cached = success(await h.get(hit));
      assert.equal(cached.meta.cached, true);
      expectNotReady(await h.app.inject({ method: 'GET', url: '/readyz' }), { postgres: 'down', redis: 'up' });
      await proxy.set('pass');
      await recovered();
      answered200++;
      await assertLedgerMatchesAnswers();
    });
  }
});
