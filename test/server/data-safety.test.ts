// What the service says when its data is at risk: /readyz fails whenever the store cannot
// write (a full database, a write lock held elsewhere), in agreement with live scrapes; a
// scrape whose reservation the sweep of abandoned ones refunded never reports a charge; every
// file a running service writes is private.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, test } from 'node:test';
import { loadConfig, PLATFORM_ORIGINS } from '../../src/config.ts';
import { start } from '../../src/main.ts';
import { openStores } from '../../src/store/open.ts';
import { StoreUnavailableError } from '../../src/store/types.ts';
import { UpstreamOutcome } from '../../src/upstream/outcomes.ts';
import { byId, fixtureResult, startHarness, type Harness } from '../api/harness.ts';
import { expectError, expectNotReady, ledgerState, urlOf, variantQuery } from '../api/support.ts';
import { refusedPort } from '../support/ports.ts';

const endpoint = byId('snapmsg.profile');
/** A live scrape of a target nobody asked for yet (never a cache hit). */
let targets = 0;
const liveScrape = (h: Harness) => h.get(urlOf(endpoint, {}, variantQuery(endpoint, ++targets)));

async function metricValue(h: Harness, name: string, labels: string): Promise<number> {
  const text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}{`) && candidate.includes(labels));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

describe('/readyz fails when the store cannot write, and agrees with live scrapes', () => {
  test('a full database (SQLITE_FULL): 503 from /readyz and from a live scrape, nothing charged; both recover when space is freed', async () => {
    const h = await startHarness({ credits: 10, sqlite: { maxDatabaseBytes: 2 * 1024 * 1024 } });
    try {
      assert.equal((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
      assert.equal((await liveScrape(h)).statusCode, 200);

      // Fill the database: cache entries of shrinking sizes, then reservations, until even
      // those fail as on a full disk. Every loop is bounded.
      const { team: filler } = await h.newTeam(100_000);
      const attempt = (write: Promise<unknown>): Promise<unknown> =>
        write.then(
          () => null,
          (error: unknown) => error,
        );
      let n = 0;
      for (const size of [64 * 1024, 8 * 1024, 1024, 100]) {
        let failed: unknown = null;
        for (let i = 0; i < 500 && !failed; i++) {
          failed = await attempt(h.stores.cache.set(`fill-${++n}`, 'fill', { value: 'x'.repeat(size), storedAt: Date.now() }));
        }
        assert.ok(failed instanceof StoreUnavailableError && /full/.test(failed.message), `cache writes of ${size} bytes fill it: ${String(failed)}`);
      }
      let failed: unknown = null;
      for (let i = 0; i < 10_000 && !failed; i++) failed = await attempt(h.stores.ledger.reserve(filler.id, 1, `req_fill_${i}`, Date.now() + 60_000));
      assert.ok(failed instanceof StoreUnavailableError && /full/.test(failed.message), `reservations fill it: ${String(failed)}`);

      expectNotReady(await h.app.inject({ method: 'GET', url: '/readyz' }), { sqlite: 'down' });
      const before = await h.balance();
      expectError(await liveScrape(h), 503, 'SERVICE_UNAVAILABLE', { authed: true });
      assert.equal(await h.balance(), before, 'nothing charged');
      await assert.rejects(h.stores.probeWrite(), (error: unknown) => error instanceof StoreUnavailableError && /full/.test(error.message));

      await h.stores.cache.deleteTarget('fill');
      assert.equal((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200, 'ready again');
      assert.equal((await liveScrape(h)).statusCode, 200);
    } finally {
      await h.close();
    }
  });

  test('a write lock held by another process past the busy timeout: 503 from /readyz and from a live scrape; 200 once released', async () => {
    const h = await startHarness({ credits: 10, sqlite: { busyTimeoutMs: 200 } });
    const other = new DatabaseSync(join(h.dir, 'service.db'), { timeout: 0 });
    try {
      assert.equal((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
      other.exec('BEGIN IMMEDIATE');
      // Reads still work (WAL): a read-only check would say "ready" here.
      await h.stores.ping();
      expectNotReady(await h.app.inject({ method: 'GET', url: '/readyz' }), { sqlite: 'down' });
      const before = await h.balance();
      expectError(await liveScrape(h), 503, 'SERVICE_UNAVAILABLE', { authed: true });
      other.exec('ROLLBACK');
      assert.equal(await h.balance(), before);
      assert.equal((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
      assert.equal((await liveScrape(h)).statusCode, 200);
    } finally {
      other.close();
      await h.close();
    }
  });
});

describe('a reservation refunded as abandoned while its scrape still runs', () => {
  /** A script that waits at a gate; `entered` resolves when a scrape reaches it. */
  const gated = (h: Harness, outcome: 'data' | 'fail') => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered!: () => void;
    const started = new Promise<void>((resolve) => {
      entered = resolve;
    });
    h.script = async (declaration) => {
      entered();
      await gate;
      if (outcome === 'fail') throw new UpstreamOutcome('transient', declaration.platform, 'scripted transient');
      return fixtureResult(declaration);
    };
    return { release, started };
  };

  test('is served with creditsCharged 0, and nothing is charged or counted as charged', async () => {
    const h = await startHarness({ credits: 10 });
    try {
      const { release, started } = gated(h, 'data');
      const response = liveScrape(h);
      await started;
      // The sweep (run at start-up and periodically) finds the reservation past its deadline,
      // as after a stall longer than the budget and its margin.
      assert.equal(await h.stores.ledger.refundExpired(Date.now() + 24 * 60 * 60_000), 1);
      release();
      const answer = await response;
      assert.equal(answer.statusCode, 200, answer.body);
      const { meta } = answer.json() as { meta: { creditsCharged: number; creditsRemaining: number; cached: boolean } };
      assert.equal(meta.creditsCharged, 0, 'no charge is reported: the refund stands');
      assert.equal(meta.creditsRemaining, 10);
      assert.equal(meta.cached, false);
      assert.deepEqual(await ledgerState(h, h.team.id), { balance: 10, sum: 10, rows: 3, pending: 0 });
      assert.equal(await metricValue(h, 'api_credits_charged_total', endpoint.id), 0);
    } finally {
      await h.close();
    }
  });

  test('a scrape that then fails is not refunded twice, nor counted twice', async () => {
    const h = await startHarness({ credits: 10 });
    try {
      const { release, started } = gated(h, 'fail');
      const response = liveScrape(h);
      await started;
      assert.equal(await h.stores.ledger.refundExpired(Date.now() + 24 * 60 * 60_000), 1);
      release();
      expectError(await response, 502, 'UPSTREAM_BLOCKED', { authed: true });
      assert.deepEqual(await ledgerState(h, h.team.id), { balance: 10, sum: 10, rows: 3, pending: 0 });
      assert.equal(await metricValue(h, 'api_credits_refunded_total', 'reason="failed"'), 0, 'the sweep gave it back, not the request');
    } finally {
      await h.close();
    }
  });
});

describe('file modes of a running service', () => {
  test('every file in DATA_DIR is 0600 after a start, live writes and a stop', async (t) => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'data-safety-')), 'data');
    const closed = await refusedPort();
    t.after(() => closed.release());
    const config = loadConfig({
      DATA_DIR: dataDir,
      PORT: '0',
      ...Object.fromEntries(Object.values(PLATFORM_ORIGINS).map(({ variable }) => [variable, closed.origin])),
    });
    const stores = await openStores(config);
    const running = await start(config, stores);
    try {
      const team = await stores.accounts.createTeam({ name: 'modes', credits: 3, rateLimit: 100 });
      await stores.ledger.addCredits(team.id, 2);
      assert.equal((await running.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
      await running.app.maintain();
      const files = readdirSync(dataDir).sort();
      assert.deepEqual(files, ['cursor-secret', 'initialised', 'service.db', 'service.db-shm', 'service.db-wal']);
      for (const file of files) assert.equal((statSync(join(dataDir, file)).mode & 0o777).toString(8), '600', file);
    } finally {
      await running.stop();
    }
    for (const file of readdirSync(dataDir)) assert.equal((statSync(join(dataDir, file)).mode & 0o777).toString(8), '600', file);
    rmSync(join(dataDir, '..'), { recursive: true, force: true });
  });
});
