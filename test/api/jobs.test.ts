// Batch jobs end to end: the service started as it runs (start(), over HTTP) against the
// sandbox upstream, on the embedded store and on PostgreSQL; and as child processes killed
// mid-job (SIGKILL) and started again, alone or as one of two nodes sharing a database.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig, UNPACED_ENV } from '../../src/config.ts';
import { start } from '../../src/main.ts';
import { generateKey } from '../../src/server/keys.ts';
import { openStores } from '../../src/store/open.ts';
import type { Stores, Team } from '../../src/store/types.ts';
import { platforms } from '../../sandbox/platforms/index.ts';
import { startSandbox, type RunningSandbox } from '../../sandbox/server.ts';
import { endpoints } from '../../src/endpoints/index.ts';
import { testBackends, type TestBackends } from '../support/backends.ts';
import { spawnService } from '../support/child-service.ts';
import { UpstreamOutcome } from '../../src/upstream/outcomes.ts';
import { OwnRedis } from '../support/outages.ts';
import { byId, fixtureResult, startHarness } from './harness.ts';


let backends: Promise<TestBackends> | undefined;
after(async () => {
  if (backends) await (await backends).drop();
});

// Answers are read as the API documents them; the tests check their fields one by one.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

interface Api {
  base: string;
  call(method: string, path: string, key: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: Json; headers: Headers; text: string }>;
}

const api = (base: string): Api => ({
  base,
  async call(method, path, key, body, headers = {}) {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(text);
    } catch {
      // NDJSON or empty.
    }
    return { status: response.status, body: parsed, headers: response.headers, text };
  },
});

async function newKey(stores: Stores, teamId: string): Promise<string> {
  const generated = generateKey();
  await stores.accounts.createKey({ teamId, name: 'live', hash: generated.hash, prefix: generated.prefix, last4: generated.last4 });
  return generated.key;
}

async function ledgerSum(stores: Stores, teamId: string): Promise<number> {
  return (await stores.ledger.entries(teamId, 1_000_000)).reduce((sum, entry) => sum + entry.amount, 0);
}

/** The service in this process, on the embedded store or (databaseUrl) PostgreSQL and Redis. */
async function serve(env: Record<string, string> = {}, scaleOut = false, latencyMs?: number) {
  const sandbox = await startSandbox({ seed: 'jobs', portBase: 0, host: '127.0.0.1', ...(latencyMs === undefined ? {} : { latencyMs }) });
  const dir = mkdtempSync(join(tmpdir(), 'jobs-'));
  let backendEnv: Record<string, string> = {};
  if (scaleOut) {
    backends ??= testBackends();
    const b = await backends;
    backendEnv = { DATABASE_URL: await b.freshDatabaseUrl(), REDIS_URL: b.redisUrl, REDIS_PREFIX: b.freshPrefix(), MIGRATE: 'auto' };
  }
  const config = loadConfig({ ...sandbox.env, ...UNPACED_ENV, DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...backendEnv, ...env });
  const stores = await openStores(config);
  const running = await start(config, stores);
  return {
    api: api(running.address),
    app: running.app,
    config,
    stores,
    sandbox,
    async team(credits: number): Promise<{ team: Team; key: string }> {
      const team = await stores.accounts.createTeam({ name: `t${Math.random()}`, credits, rateLimit: 1_000_000 });
      return { team, key: await newKey(stores, team.id) };
    },
    async stop() {
      await running.stop();
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls the job until it has ended. */
async function waitJob(a: Api, key: string, id: string, timeoutMs = 120_000): Promise<Json> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { status, body } = await a.call('GET', `/v1/jobs/${id}`, key);
    assert.equal(status, 200, JSON.stringify(body));
    if (body.data.pending === 0 && (body.data.status === 'completed' || body.data.status === 'cancelled')) return body.data;
    if (Date.now() > until) throw new Error(`job ${id} did not end: ${JSON.stringify(body.data)}`);
    await sleep(100);
  }
}

async function allResults(a: Api, key: string, id: string, status?: string): Promise<Json[]> {
  const out: Json[] = [];
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({ limit: '37', ...(status ? { status } : {}), ...(cursor ? { cursor } : {}) });
    const { status: code, body } = await a.call('GET', `/v1/jobs/${id}/results?${query}`, key);
    assert.equal(code, 200, JSON.stringify(body));
    out.push(...body.data.results);
    cursor = body.data.paging.cursor;
    assert.equal(body.data.paging.hasMore, cursor !== null);
  } while (cursor);
  return out;
}

const byPath = new Map(endpoints.map((endpoint) => [endpoint.path, endpoint]));

/** A page's data with what differs between two scrapes of the same page left out: when, and the sealed cursor (its presence kept). */
function comparable(path: string, data: Record<string, unknown>): Record<string, unknown> {
  const { fetchedAt: _at, ...rest } = data;
  const paging = byPath.get(path)?.paging;
  if (paging && rest.paging) {
    const page = rest.paging as Record<string, unknown>;
    rest.paging = { ...page, [paging.field]: page[paging.flag] ? 'next' : page[paging.field] };
  }
  return rest;
}

/** What the synchronous endpoint answers for a request, its listing followed up to `maxPages`. */
async function synchronous(a: Api, key: string, path: string, params: Record<string, string>, maxPages: number): Promise<{ pages: unknown[]; error: string | null }> {
  const paging = byPath.get(path)?.paging;
  const pages: unknown[] = [];
  let token: string | null = null;
  for (let n = 0; n < maxPages; n++) {
    const query = new URLSearchParams({ ...params, ...(token && paging ? { [paging.param]: token } : {}) });
    const { status, body } = await a.call('GET', `${path}?${query}`, key);
    if (status !== 200) return { pages, error: body.error.code };
    pages.push(comparable(path, body.data));
    if (!paging || !body.data.paging[paging.flag]) break;
    token = body.data.paging[paging.field];
  }
  return { pages, error: null };
}

/** The sandbox catalogue's requests whose answer is the same at every call (no first-time failures, no slowness). */
const steady = platforms
  .flatMap((platform) => platform.catalogue)
  .filter((entry) => !/slow|flaky|down|first|rotating|transient|rate.?limit|429|throttl|Large|260|UPSTREAM_BLOCKED|blocked|challenge|login/i.test(entry.description))
  .map((entry) => ({ endpoint: entry.endpoint, params: Object.fromEntries(new URLSearchParams(entry.query)) }));

for (const scaleOut of [false, true]) {
  const engine = scaleOut ? 'postgres' : 'embedded';

  describe(`batch jobs (${engine})`, () => {
    test('every result equals what the synchronous endpoint answers, listings followed to their end; credits = live pages kept = ledger', async () => {
      const s = await serve({}, scaleOut);
      try {
        const { team, key } = await s.team(100_000);
        const sync = await s.team(100_000);
        const requests = steady;
        assert.ok(requests.length >= 30, `${requests.length} requests`);
        assert.ok(new Set(requests.map((r) => r.endpoint)).size >= 8, 'several endpoints');
        const created = await s.api.call('POST', '/v1/jobs', key, { requests, max_pages: 100, label: 'catalogue' });
        assert.equal(created.status, 202, created.text);
        assert.equal(created.headers.get('location'), `/v1/jobs/${created.body.data.id}`);
        assert.equal(created.body.data.status, 'queued');
        assert.equal(created.body.data.total, requests.length);
        const job = await waitJob(s.api, key, created.body.data.id);
        assert.equal(job.status, 'completed');
        const results = await allResults(s.api, key, job.id);
        assert.deepEqual(results.map((r) => r.index), requests.map((_, i) => i));
        let livePages = 0;
        for (const [i, item] of results.entries()) {
          const request = requests[i] as (typeof requests)[number];
          const expected = await synchronous(s.api, sync.key, request.endpoint, request.params, 100);
          const what = `${request.endpoint} ${JSON.stringify(request.params)}`;
          assert.equal(item.error?.code ?? null, expected.error, what);
          assert.equal(item.status, expected.error ? 'failed' : 'succeeded', what);
          assert.deepEqual(item.pages.map((page: Record<string, unknown>) => comparable(request.endpoint, page)), expected.pages, what);
          assert.equal(item.creditsCharged, item.pages.length, `${what}: one credit per live page kept`);
          livePages += item.pages.length;
        }
        assert.ok(results.some((r) => r.pages.length > 2), 'some listing ran over several pages');
        assert.equal(job.creditsCharged, livePages);
        assert.equal(job.pages, livePages);
        assert.equal(await s.stores.ledger.balance(team.id), 100_000 - livePages);
        assert.equal(await ledgerSum(s.stores, team.id), 100_000 - livePages, 'ledger = balance');
        // Records are written in batches (every second): the last ones now.
        await s.app.writeRecords();
        const records = (await s.stores.requests.list({ teamId: team.id, limit: 1000 })).records.filter((r) => byPath.has(r.endpoint));
        assert.ok(records.length >= livePages);
        assert.ok(records.every((r) => r.jobId === job.id), 'request records of the scrapes name the job');
        assert.equal(records.reduce((sum, r) => sum + r.credits, 0), livePages);
        // The NDJSON stream: every item, plain and gzipped.
        const plain = await s.api.call('GET', `/v1/jobs/${job.id}/results.ndjson`, key);
        assert.equal(plain.status, 200);
        assert.match(plain.headers.get('content-type') ?? '', /application\/x-ndjson/);
        const lines = plain.text.trim().split('\n').map((line) => JSON.parse(line));
        assert.deepEqual(lines, results);
        const zipped = await fetch(`${s.api.base}/v1/jobs/${job.id}/results.ndjson`, { headers: { 'x-api-key': key, 'accept-encoding': 'gzip' } });
        assert.equal(zipped.headers.get('content-encoding'), 'gzip');
        // fetch decodes gzip itself: the text is the same.
        assert.equal(await zipped.text(), plain.text);
        const events = (await s.stores.events.list(team.id)).filter((e) => e.type === 'job.completed');
        assert.deepEqual(events.map((e) => [e.data.id, e.data.status]), [[job.id, 'completed']]);
      } finally {
        await s.stop();
      }
    });

    test('a team with credits for half the items: exactly those charged, the others 402; cancel leaves pending items uncharged', async () => {
      const s = await serve({ JOB_CONCURRENCY_PER_TEAM: '2' }, scaleOut);
      try {
        const { team, key } = await s.team(10);
        const requests = Array.from({ length: 20 }, (_, n) => ({ endpoint: '/v1/linkpage-a/profile', params: { url: `https://linkpage-a.example/half${n}` } }));
        const created = await s.api.call('POST', '/v1/jobs', key, { requests });
        assert.equal(created.status, 202, created.text);
        const job = await waitJob(s.api, key, created.body.data.id);
        const results = await allResults(s.api, key, job.id);
        const charged = results.filter((r) => r.creditsCharged === 1);
        const refused = results.filter((r) => r.error?.code === 'INSUFFICIENT_CREDITS');
        assert.equal(charged.length, 10);
        assert.equal(refused.length, 10);
        assert.ok(refused.every((r) => r.status === 'failed' && r.pages.length === 0 && r.attempts === 1));
        assert.equal(job.creditsCharged, 10);
        assert.equal(await s.stores.ledger.balance(team.id), 0);
        assert.equal(await ledgerSum(s.stores, team.id), 0);
        const failedOnly = await allResults(s.api, key, job.id, 'failed');
        assert.equal(failedOnly.length, 10);

        // Cancel: a job of a team limited to 1 item at a time, cancelled at once.
        const rich = await s.team(1_000);
        const many = Array.from({ length: 200 }, (_, n) => ({ endpoint: '/v1/linkpage-a/profile', params: { url: `https://linkpage-a.example/cancel${n}` } }));
        const big = await s.api.call('POST', '/v1/jobs', rich.key, { requests: many });
        const cancelled = await s.api.call('POST', `/v1/jobs/${big.body.data.id}/cancel`, rich.key);
        assert.equal(cancelled.status, 200, cancelled.text);
        assert.equal(cancelled.body.data.status, 'cancelled');
        const ended = await waitJob(s.api, rich.key, big.body.data.id);
        assert.ok(ended.cancelled > 150, `${ended.cancelled} cancelled`);
        assert.equal(ended.succeeded + ended.cancelled, 200);
        assert.equal(ended.creditsCharged, ended.succeeded);
        assert.equal(await s.stores.ledger.balance(rich.team.id), 1_000 - ended.succeeded, 'only the items that ran are charged');
        assert.equal(await ledgerSum(s.stores, rich.team.id), 1_000 - ended.succeeded);
        const retried = await s.api.call('POST', `/v1/jobs/${job.id}/retry`, key);
        assert.equal(retried.status, 200);
        assert.equal(retried.body.data.pending, 10, 'the failed items are queued again');
        const again = await s.api.call('POST', `/v1/jobs/${job.id}/retry`, key);
        assert.equal(again.status, 409);
        assert.equal(again.body.error.code, 'CONFLICT');
        await waitJob(s.api, key, job.id);
      } finally {
        await s.stop();
      }
    });

    test("two teams' jobs at once: the small one is not starved by the big one", async () => {
      const s = await serve({ JOB_CONCURRENCY_PER_TEAM: '2', JOB_WORKERS: '3' }, scaleOut);
      try {
        const big = await s.team(10_000);
        const small = await s.team(100);
        const bigJob = await s.api.call('POST', '/v1/jobs', big.key, {
          requests: Array.from({ length: 300 }, (_, n) => ({ endpoint: '/v1/linkpage-a/profile', params: { url: `https://linkpage-a.example/big${n}` } })),
        });
        await sleep(200);
        const smallJob = await s.api.call('POST', '/v1/jobs', small.key, {
          requests: Array.from({ length: 5 }, (_, n) => ({ endpoint: '/v1/linkpage-a/profile', params: { url: `https://linkpage-a.example/small${n}` } })),
        });
        const smallEnded = await waitJob(s.api, small.key, smallJob.body.data.id);
        const bigNow = (await s.api.call('GET', `/v1/jobs/${bigJob.body.data.id}`, big.key)).body.data;
        assert.equal(smallEnded.succeeded, 5);
        assert.ok(bigNow.pending > 100, `the big job still had ${bigNow.pending} items to run when the small one ended`);
        await s.api.call('POST', `/v1/jobs/${bigJob.body.data.id}/cancel`, big.key);
        await waitJob(s.api, big.key, bigJob.body.data.id);
      } finally {
        await s.stop();
      }
    });

    test("with the default settings, a second team's small job runs while a first team's big job holds its cap", async () => {
      // Each scrape takes 50 ms: the big job's 400 items, 4 at a time, take 5 s at least.
      const s = await serve({}, scaleOut, 50);
      try {
        assert.deepEqual([s.config.jobs.concurrencyPerTeam, s.config.jobs.workers], [4, 16], "api-async.md's defaults: 4 items a team, 16 workers a node");
        const big = await s.team(10_000);
        const small = await s.team(100);
        const bigJob = await s.api.call('POST', '/v1/jobs', big.key, {
          requests: Array.from({ length: 400 }, (_, n) => ({ endpoint: '/v1/linkpage-a/profile', params: { url: `https://linkpage-a.example/big${n}` } })),
        });
        assert.equal(bigJob.status, 202, bigJob.text);
        // The big job at its cap: 4 of its items running (the node's 12 other workers idle).
        let depth = await s.stores.jobs.depth();
        while (depth.running < 4) {
          await sleep(10);
          depth = await s.stores.jobs.depth();
        }
        assert.equal(depth.running, 4, 'the big team at its cap, not over it');
        const smallJob = await s.api.call('POST', '/v1/jobs', small.key, {
          requests: Array.from({ length: 6 }, (_, n) => ({ endpoint: '/v1/linkpage-a/profile', params: { url: `https://linkpage-a.example/small${n}` } })),
        });
        assert.equal(smallJob.status, 202, smallJob.text);
        const smallEnded = await waitJob(s.api, small.key, smallJob.body.data.id);
        assert.equal(smallEnded.succeeded, 6);
        const bigNow = (await s.api.call('GET', `/v1/jobs/${bigJob.body.data.id}`, big.key)).body.data;
        assert.ok(bigNow.pending > 0 && bigNow.succeeded > 0, `the big job ran (${bigNow.succeeded} items) and still had ${bigNow.pending} to run when the small one ended`);
        await s.api.call('POST', `/v1/jobs/${bigJob.body.data.id}/cancel`, big.key);
        await waitJob(s.api, big.key, bigJob.body.data.id);
      } finally {
        await s.stop();
      }
    });

    test('the whole body is validated first, each problem at its path; Idempotency-Key; the cap of active jobs; results of another team are not found', async () => {
      const s = await serve({ JOB_MAX_ACTIVE_PER_TEAM: '1', JOB_CONCURRENCY_PER_TEAM: '1' }, scaleOut);
      try {
        const { key } = await s.team(100);
        const other = await s.team(100);
        const bad = await s.api.call('POST', '/v1/jobs', key, {
          requests: [
            { endpoint: '/v1/snapmsg/profile', params: { username: 'lunavoss' } },
            { endpoint: '/v1/nope', params: {} },
            { endpoint: '/v1/snapmsg/profile', params: { usrname: 'x' } },
          ],
          max_pages: 101,
        });
        assert.equal(bad.status, 422, bad.text);
        const paths = bad.body.error.details.map((d: { path: string }) => d.path).sort();
        assert.deepEqual(paths, ['max_pages']);
        const bad2 = await s.api.call('POST', '/v1/jobs', key, {
          requests: [
            { endpoint: '/v1/snapmsg/profile', params: { username: 'lunavoss' } },
            { endpoint: '/v1/nope', params: {} },
            { endpoint: '/v1/snapmsg/profile', params: { usrname: 'x' } },
          ],
        });
        assert.equal(bad2.status, 422, bad2.text);
        assert.deepEqual(bad2.body.error.details.map((d: { path: string }) => d.path).sort(), ['requests[1].endpoint', 'requests[2].params.username', 'requests[2].params.usrname']);
        assert.equal((await s.api.call('POST', '/v1/jobs', key, { requests: [] })).status, 422);
        const huge = await s.api.call('POST', '/v1/jobs', key, { requests: [{ endpoint: '/v1/snapmsg/profile', params: { username: 'x'.repeat(4 * 1024 * 1024) } }] });
        assert.equal(huge.status, 400);
        assert.match(huge.body.error.message, /4 MB/);
        const body = { requests: Array.from({ length: 50 }, (_, n) => ({ endpoint: '/v1/linkpage-a/profile', params: { url: `https://linkpage-a.example/idem${n}` } })) };
        const first = await s.api.call('POST', '/v1/jobs', key, body, { 'idempotency-key': 'job-1' });
        assert.equal(first.status, 202, first.text);
        const replay = await s.api.call('POST', '/v1/jobs', key, body, { 'idempotency-key': 'job-1' });
        assert.equal(replay.status, 202);
        assert.equal(replay.body.data.id, first.body.data.id);
        assert.equal(replay.headers.get('idempotent-replayed'), 'true');
        assert.equal(replay.headers.get('location'), `/v1/jobs/${first.body.data.id}`);
        const reused = await s.api.call('POST', '/v1/jobs', key, { ...body, label: 'other' }, { 'idempotency-key': 'job-1' });
        assert.equal(reused.status, 422);
        assert.equal(reused.body.error.code, 'IDEMPOTENCY_KEY_REUSED');
        const capped = await s.api.call('POST', '/v1/jobs', key, body);
        assert.equal(capped.status, 429, capped.text);
        assert.equal(capped.body.error.code, 'RATE_LIMITED');
        assert.equal((await s.api.call('GET', `/v1/jobs/${first.body.data.id}`, other.key)).status, 404);
        assert.equal((await s.api.call('GET', `/v1/jobs/${first.body.data.id}/results`, other.key)).status, 404);
        // Another team can neither cancel nor retry it: 404, and the job goes on.
        for (const action of ['cancel', 'retry']) {
          const refused = await s.api.call('POST', `/v1/jobs/${first.body.data.id}/${action}`, other.key);
          assert.equal(refused.status, 404, refused.text);
          assert.equal(refused.body.error.code, 'NOT_FOUND');
        }
        assert.notEqual((await s.api.call('GET', `/v1/jobs/${first.body.data.id}`, key)).body.data.status, 'cancelled');
        assert.equal((await s.api.call('POST', '/v1/jobs/job_nosuchjob/cancel', key)).status, 404);
        const listed = await s.api.call('GET', '/v1/jobs?limit=5', key);
        assert.deepEqual(listed.body.data.jobs.map((j: { id: string }) => j.id), [first.body.data.id]);
        await s.api.call('POST', `/v1/jobs/${first.body.data.id}/cancel`, key);
      } finally {
        await s.stop();
      }
    });
  });
}

describe('batch jobs: a process killed mid-job', () => {
  /** `node src/main.ts` as a child, unpaced, with a cursor secret of its own. */
  const node = (env: Record<string, string>) => spawnService({ ...UNPACED_ENV, CURSOR_SECRET: 'jobs-test-secret-0123456789', ...env });

  /** Waits until the team holds no reservation in flight (a dead process's are given back past their deadline). */
  async function settled(stores: Stores, teamId: string): Promise<void> {
    const until = Date.now() + 60_000;
    while ((await stores.ledger.usage(teamId))?.pending !== 0) {
      if (Date.now() > until) throw new Error('reservations still pending');
      await sleep(200);
    }
  }

  async function checkEveryItemOnce(a: Api, stores: Stores, key: string, teamId: string, jobId: string, total: number, credits: number): Promise<void> {
    const job = await waitJob(a, key, jobId);
    assert.equal(job.status, 'completed');
    assert.equal(job.succeeded, total, JSON.stringify(job));
    const results = await allResults(a, key, jobId);
    assert.equal(results.length, total);
    for (const item of results) {
      assert.equal(item.status, 'succeeded');
      assert.equal(item.pages.length, 1, `item ${item.index}: one page, stored once`);
      assert.equal(item.creditsCharged, 1, `item ${item.index}: charged once`);
    }
    assert.equal(job.creditsCharged, total);
    await settled(stores, teamId);
    assert.equal(await stores.ledger.balance(teamId), credits - total, 'charged once per item, the dead process\'s reservations given back');
    assert.equal(await ledgerSum(stores, teamId), credits - total, 'ledger = balance');
  }

  const requests = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ endpoint: '/v1/linkpage-a/profile', params: { url: `https://linkpage-a.example/${tag}${i}` } }));

  test('embedded: SIGKILL mid-job, then a restart: every item ends, none charged twice', async () => {
    const sandbox: RunningSandbox = await startSandbox({ seed: 'jobs-kill', portBase: 0, host: '127.0.0.1', latencyMs: 40 });
    const dir = mkdtempSync(join(tmpdir(), 'jobs-kill-'));
    const env = { ...sandbox.env, DATA_DIR: dir, JOB_CONCURRENCY_PER_TEAM: '2', REQUEST_BUDGET_MS: '2000', RESERVATION_MARGIN_MS: '0' };
    const stores = await openStores(loadConfig({ ...env, ...UNPACED_ENV }));
    let second: ReturnType<typeof node> | null = null;
    try {
      const team = await stores.accounts.createTeam({ name: 'kill', credits: 1_000, rateLimit: 100_000 });
      const key = await newKey(stores, team.id);
      const first = node(env);
      const a = api(await first.listening);
      const created = await a.call('POST', '/v1/jobs', key, { requests: requests(120, 'kill') });
      assert.equal(created.status, 202, created.text);
      for (;;) {
        const { body } = await a.call('GET', `/v1/jobs/${created.body.data.id}`, key);
        if (body.data.succeeded >= 20) break;
        await sleep(50);
      }
      first.child.kill('SIGKILL');
      await first.exited;
      const midway = await stores.jobs.get(team.id, created.body.data.id);
      assert.ok(midway && midway.pending > 0, 'killed mid-job');
      second = node(env);
      const b = api(await second.listening);
      await checkEveryItemOnce(b, stores, key, team.id, created.body.data.id, 120, 1_000);
    } finally {
      second?.child.kill('SIGTERM');
      await second?.exited;
      await stores.close();
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('postgres: two nodes share the database, one is SIGKILLed mid-job: the other takes its items up', async () => {
    backends ??= testBackends();
    const b = await backends;
    const sandbox: RunningSandbox = await startSandbox({ seed: 'jobs-nodes', portBase: 0, host: '127.0.0.1', latencyMs: 40 });
    const dirs = [mkdtempSync(join(tmpdir(), 'jobs-node-a-')), mkdtempSync(join(tmpdir(), 'jobs-node-b-'))];
    const shared = {
      ...sandbox.env,
      DATABASE_URL: await b.freshDatabaseUrl(),
      REDIS_URL: b.redisUrl,
      REDIS_PREFIX: b.freshPrefix(),
      MIGRATE: 'auto',
      JOB_CONCURRENCY_PER_TEAM: '3',
      JOB_LOCK_MS: '3000',
      REQUEST_BUDGET_MS: '2000',
      RESERVATION_MARGIN_MS: '0',
    };
    const nodeA = node({ ...shared, DATA_DIR: dirs[0] as string });
    const addressA = await nodeA.listening;
    const nodeB = node({ ...shared, DATA_DIR: dirs[1] as string });
    const stores = await openStores(loadConfig({ ...shared, ...UNPACED_ENV, DATA_DIR: dirs[0] as string, MIGRATE: 'off' }));
    try {
      const addressB = await nodeB.listening;
      const team = await stores.accounts.createTeam({ name: 'nodes', credits: 1_000, rateLimit: 100_000 });
      const key = await newKey(stores, team.id);
      const a = api(addressA);
      const created = await a.call('POST', '/v1/jobs', key, { requests: requests(150, 'nodes') });
      assert.equal(created.status, 202, created.text);
      for (;;) {
        const { body } = await a.call('GET', `/v1/jobs/${created.body.data.id}`, key);
        if (body.data.succeeded >= 20) break;
        await sleep(50);
      }
      nodeA.child.kill('SIGKILL');
      await nodeA.exited;
      const midway = await stores.jobs.get(team.id, created.body.data.id);
      assert.ok(midway && midway.pending > 0, 'killed mid-job');
      await checkEveryItemOnce(api(addressB), stores, key, team.id, created.body.data.id, 150, 1_000);
    } finally {
      nodeA.child.kill('SIGKILL');
      nodeB.child.kill('SIGTERM');
      await nodeB.exited;
      await stores.close();
      await sandbox.close();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('batch jobs: Redis restarted empty', () => {
  test('postgres: Redis stopped and started again empty mid-job: every item ends, each charged once; what failed meanwhile succeeds on retry', async () => {
    const redis = await OwnRedis.start();
    const s = await serve({ REDIS_URL: redis.url, JOB_CONCURRENCY_PER_TEAM: '4', JOB_WORKERS: '8' }, true);
    try {
      const { team, key } = await s.team(1_000);
      const requests = Array.from({ length: 200 }, (_, n) => ({ endpoint: '/v1/linkpage-a/profile', params: { url: `https://linkpage-a.example/redis${n}` } }));
      const created = await s.api.call('POST', '/v1/jobs', key, { requests });
      assert.equal(created.status, 202, created.text);
      const id = created.body.data.id as string;
      for (;;) {
        const { body } = await s.api.call('GET', `/v1/jobs/${id}`, key);
        if (body.data.succeeded >= 20) break;
        await sleep(20);
      }
      await redis.stop();
      await redis.restart();
      // The API answers 503 until the node has found Redis back; the job runs on meanwhile.
      for (let n = 0; (await s.api.call('GET', `/v1/jobs/${id}`, key)).status !== 200; n++) {
        assert.ok(n < 300, 'the API is back within 30 s');
        await sleep(100);
      }
      let job = await waitJob(s.api, key, id);
      assert.equal(job.succeeded + job.failed, 200, JSON.stringify(job));
      if (job.failed > 0) {
        // Items whose three attempts all met Redis down failed (503): nothing of them was lost.
        assert.equal((await s.api.call('POST', `/v1/jobs/${id}/retry`, key)).status, 200);
        job = await waitJob(s.api, key, id);
      }
      assert.equal(job.succeeded, 200, JSON.stringify(job));
      const results = await allResults(s.api, key, id);
      assert.ok(results.every((item) => item.status === 'succeeded' && item.pages.length === 1 && item.creditsCharged === 1));
      assert.equal(job.creditsCharged, 200);
      for (let n = 0; (await s.stores.ledger.usage(team.id))?.pending !== 0; n++) {
        assert.ok(n < 600, 'reservations settled');
        await sleep(100);
      }
      assert.equal(await s.stores.ledger.balance(team.id), 800, 'each item charged once');
      assert.equal(await ledgerSum(s.stores, team.id), 800);
    } finally {
      await s.stop();
      await redis.stop();
    }
  });
});

describe('batch jobs: failures of an item', () => {
  test('a transient failure is retried with back-off up to 3 attempts; other failures end the item at once; neither is charged', async () => {
    const h = await startHarness({ app: { jobs: { backoffMs: 1_000, pollMs: 10 } } });
    const tries = new Map<string, number>();
    h.script = async (declaration, request) => {
      const url = request.params.url ?? '';
      tries.set(url, (tries.get(url) ?? 0) + 1);
      if (url.endsWith('/twice') && (tries.get(url) ?? 0) <= 2) throw new UpstreamOutcome('transient', declaration.platform, 'down for a moment');
      if (url.endsWith('/always')) throw new UpstreamOutcome('transient', declaration.platform, 'down');
      if (url.endsWith('/gone')) throw new UpstreamOutcome('not_found', declaration.platform, 'no such page');
      return fixtureResult(declaration);
    };
    try {
      const endpoint = byId('linkpage-a.profile');
      const requests = ['twice', 'always', 'gone'].map((name) => ({ endpoint: endpoint.path, params: { url: `https://linkpage-a.example/${name}` } }));
      const created = await h.app.inject({ method: 'POST', url: '/v1/jobs', headers: { 'x-api-key': h.key }, payload: { requests } });
      assert.equal(created.statusCode, 202, created.body);
      const id = created.json().data.id as string;
      let job: Json;
      for (let n = 0; ; n++) {
        job = (await h.get(`/v1/jobs/${id}`)).json().data;
        if (job.pending === 0) break;
        assert.ok(n < 2_000, 'the job ends');
        // The back-off is counted on the service's clock.
        h.clock.now += 250;
        await sleep(5);
      }
      const results = (await h.get(`/v1/jobs/${id}/results`)).json().data.results as Json[];
      assert.deepEqual(
        results.map((r) => [r.status, r.attempts, r.error?.code ?? null, r.creditsCharged]),
        [
          ['succeeded', 3, null, 1],
          ['failed', 3, 'UPSTREAM_BLOCKED', 0],
          ['failed', 1, 'NOT_FOUND', 0],
        ],
      );
      assert.deepEqual([...tries.values()], [3, 3, 1]);
      assert.equal(await h.balance(), 99);
      assert.equal(await h.ledgerSum(), 99);
      const metrics = await h.app.metrics.registry.getSingleMetricAsString('api_job_items_total');
      assert.match(metrics, /outcome="retried"\} 4/);
      assert.match(metrics, /outcome="failed"\} 2/);
    } finally {
      await h.close();
    }
  });
});

describe('batch jobs through MCP', () => {
  test('create_job submits a job, get_job follows it, get_job_results reads its results', async () => {
    const s = await serve();
    try {
      const { key } = await s.team(100);
      let id = 0;
      const call = async (name: string, args: Record<string, unknown>): Promise<Json> => {
        const response = await fetch(`${s.api.base}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': key },
          body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } }),
        });
        assert.equal(response.status, 200);
        return ((await response.json()) as Json).result;
      };
      const listed = await fetch(`${s.api.base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': key },
        body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'tools/list' }),
      });
      const names = ((await listed.json()) as Json).result.tools.map((tool: { name: string }) => tool.name);
      for (const name of ['create_job', 'get_job', 'get_job_results']) assert.ok(names.includes(name), name);
      const created = await call('create_job', { requests: [{ endpoint: '/v1/snapmsg/profile', params: { username: 'lunavoss' } }], label: 'mcp' });
      assert.equal(created.isError, undefined, JSON.stringify(created));
      const jobId = created.structuredContent.data.id as string;
      for (;;) {
        const job = await call('get_job', { id: jobId });
        if (job.structuredContent.data.pending === 0) break;
        await sleep(50);
      }
      const results = await call('get_job_results', { id: jobId });
      assert.equal(results.structuredContent.data.results.length, 1);
      assert.equal(results.structuredContent.data.results[0].status, 'succeeded');
      const invalid = await call('create_job', { requests: [{ endpoint: '/v1/snapmsg/profile', params: {} }] });
      assert.equal(invalid.isError, true);
      assert.match(invalid.content[0].text, /requests\[0\]\.params\.username/);
    } finally {
      await s.stop();
    }
  });
});
