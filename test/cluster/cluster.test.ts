// The cluster of `npm run cluster`, for real: three node processes on PostgreSQL and a Redis
// server of this test's own, HAProxy in front, driven concurrently through HAProxy and directly.
// Credits, the rate limit, revocation, a node killed under load and Redis stopped under load.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Agent, fetch } from 'undici';
import { startSandbox, type RunningSandbox } from '../../sandbox/server.ts';
import { startCluster, type Cluster } from '../../src/cluster.ts';
import { UNPACED_ENV } from '../../src/config.ts';
import { generateKey } from '../../src/server/keys.ts';
import { migrateDatabase, openPostgresStores } from '../../src/store/postgres/index.ts';
import type { Stores } from '../../src/store/types.ts';
import { testBackends, type TestBackends } from '../support/backends.ts';
import { OwnRedis } from '../support/outages.ts';

const ROOT = join(import.meta.dirname, '..', '..');
// Each request's budget. 600 live scrapes at once through three nodes and the sandbox, all on
// this machine, have taken longer than 10 s on a busy one: a scrape past its budget fails
// (502), and such failures soon open the platform's breaker, which the exact counts below
// would take for a fault in the credits or the limit.
const BUDGET_MS = 20_000;
const MARGIN_MS = 1_000;

// Clients keep idle connections for less time than HAProxy and the nodes do (5 s), as clients
// should: a connection reused just as the other side closes it fails the request.
const dispatcher = new Agent({ keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000 });

let backends: TestBackends;
let redis: OwnRedis;
let sandbox: RunningSandbox;
let cluster: Cluster;
let stores: Stores;
let databaseUrl: string;
const dataDir = mkdtempSync(join(tmpdir(), 'cluster-test-'));

before(async () => {
  backends = await testBackends();
  redis = await OwnRedis.start();
  databaseUrl = await backends.freshDatabaseUrl();
  await migrateDatabase({ url: databaseUrl });
  stores = await openPostgresStores({ url: databaseUrl });
  sandbox = await startSandbox({ latencyMs: 50 });
  cluster = await startCluster({
    nodes: 3,
    host: '127.0.0.1',
    port: 0,
    databaseUrl,
    redisUrl: redis.url,
    redisPrefix: 'cluster-test:',
    dataDir,
    cursorSecret: 'cluster-test-cursor-secret-0123456789',
    output: process.env.CLUSTER_TEST_OUTPUT ? (line) => console.error(line) : undefined,
    env: { ...sandbox.env, ...UNPACED_ENV, LOG_LEVEL: 'error', REQUEST_BUDGET_MS: String(BUDGET_MS), RESERVATION_MARGIN_MS: String(MARGIN_MS) },
  });
  // Each node and HAProxy answer once (a scrape: database, Redis and upstream connections
  // opened, the code paths compiled) before the races, which measure credits, not a cold start.
  const warm = await newTeam(100, 10_000);
  for (const point of entryPoints()) assert.equal((await get(point, profile('warmup'), warm.key)).status, 200);
});

after(async () => {
  await dispatcher.close();
  await cluster?.stop();
  await stores?.close();
  await sandbox?.close();
  await redis?.stop();
  await backends?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function newTeam(credits: number, rateLimit: number): Promise<{ teamId: string; key: string; keyId: string }> {
  const team = await stores.accounts.createTeam({ name: `cluster-${Math.random().toString(36).slice(2, 8)}`, credits, rateLimit });
  const generated = generateKey();
  const record = await stores.accounts.createKey({ teamId: team.id, name: 'test', hash: generated.hash, prefix: generated.prefix, last4: generated.last4 });
  return { teamId: team.id, key: generated.key, keyId: record.id };
}

/** Every node directly and HAProxy, in turn. */
const entryPoints = (): string[] => [cluster.address, ...cluster.nodes.map((node) => node.address)];

interface Answer {
  status: number;
  body: { meta?: { creditsCharged: number; requestId: string }; error?: { code: string; requestId: string } };
}

/** One request; every answer, HAProxy's own included, must be the API's JSON. */
async function get(base: string, path: string, key: string): Promise<Answer> {
  let response;
  try {
    response = await fetch(`${base}${path}`, { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(20_000), dispatcher });
  } catch (error) {
    // A reused connection closed by the other side before any answer: sent again once, as
    // HTTP clients do with a GET. (Seen about once in two full runs, cause not found; see the
    // issue notes.) A request that got an answer is never sent twice.
    if ((error as { cause?: { code?: string } }).cause?.code !== 'UND_ERR_SOCKET') throw error;
    response = await fetch(`${base}${path}`, { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(20_000), dispatcher });
  }
  const text = await response.text();
  assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8', `${response.status} from ${base}: ${text.slice(0, 200)}`);
  return { status: response.status, body: JSON.parse(text) as Answer['body'] };
}

// The races below send many more requests than there are credits (or admissions), so that they
// race; but not all at once: a machine running two suites side by side has been seen taking
// 22 s to answer 600 requests sent at once, past each request's budget. At most this many are in
// flight, sized to the cores (120 on two), which is still far more than the credits they race for.
const IN_FLIGHT = Math.max(120, 60 * availableParallelism());

/** Runs `count` requests, at most IN_FLIGHT at once; their answers in order. */
async function race<T>(count: number, send: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      results[i] = await send(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, count) }, lane));
  return results;
}

const counts = (values: number[]): Record<string, number> => {
  const counted: Record<string, number> = {};
  for (const value of values) counted[value] = (counted[value] ?? 0) + 1;
  return counted;
};

const profile = (name: string) => `/v1/snapmsg/profile?username=${name}`;

async function ledgerOf(teamId: string) {
  // Usage (with the pending count) first: once it shows nothing pending, nothing writes to the
  // team's ledger any more, and the entries and balance read after it are of one moment. Read
  // the other way round, a refund of the reaper could land between the entries and the balance.
  const usage = await stores.ledger.usage(teamId);
  const entries = await stores.ledger.entries(teamId, 100_000);
  return {
    balance: await stores.ledger.balance(teamId),
    sum: entries.reduce((total, entry) => total + entry.amount, 0),
    kept: (usage?.charged ?? 0) - (usage?.refunded ?? 0),
    pending: usage?.pending ?? -1,
  };
}

// Each test normally takes seconds; a hang (seen once in a full run, not reproduced) fails it
// within two minutes instead of holding the whole run.
describe('a cluster of three nodes behind HAProxy', { timeout: 120_000 }, () => {
  test('600 live scrapes racing for 100 credits across nodes: exactly 100 charged, 500 answered 402', async () => {
    const team = await newTeam(100, 10_000);
    const points = entryPoints();
    const results = await race(600, (i) => get(points[i % points.length] as string, profile(`race${i}`), team.key));
    assert.deepEqual(counts(results.map((r) => r.status)), { 200: 100, 402: 500 }, JSON.stringify(results.find((r) => r.status !== 200 && r.status !== 402)?.body));
    assert.deepEqual(await ledgerOf(team.teamId), { balance: 0, sum: 0, kept: 100, pending: 0 });
  });

  test('600 requests against a limit of 100 per minute across nodes: exactly 100 admitted', async () => {
    const team = await newTeam(1_000, 100);
    const points = entryPoints();
    const url = `${profile('limited')}&cache_max_age=1d`;
    const results = await race(600, (i) => get(points[i % points.length] as string, url, team.key));
    const statuses = counts(results.map((r) => r.status));
    assert.deepEqual(statuses, { 200: 100, 429: 500 }, JSON.stringify(results.find((r) => r.status !== 200 && r.status !== 429)?.body));
  });

  test('one Idempotency-Key sent 60 times at once through HAProxy and to each node: one scrape charged, every 200 the same bytes', async () => {
    const team = await newTeam(10, 10_000);
    const points = entryPoints();
    const send = (point: string) =>
      fetch(`${point}${profile('idempotent')}`, { headers: { 'x-api-key': team.key, 'idempotency-key': 'cluster-once' }, signal: AbortSignal.timeout(20_000), dispatcher }).then(
        async (response) => ({ status: response.status, replayed: response.headers.get('idempotent-replayed'), body: Buffer.from(await response.arrayBuffer()) }),
      );
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => send(points[i % points.length] as string)));
    assert.deepEqual(Object.keys(counts(answers.map((answer) => answer.status))).filter((status) => status !== '200' && status !== '409'), []);
    // Once the first has its answer, every node replays it.
    const replays = await Promise.all(points.map(send));
    const first = replays[0]?.body as Buffer;
    for (const answer of [...answers, ...replays]) if (answer.status === 200) assert.ok(answer.body.equals(first), 'the same bytes');
    assert.ok(replays.every((answer) => answer.status === 200 && answer.replayed === 'true'));
    assert.equal(answers.filter((answer) => answer.status === 200 && answer.replayed === null).length, 1, 'one ran');
    assert.deepEqual(await ledgerOf(team.teamId), { balance: 9, sum: 9, kept: 1, pending: 0 });
  });

  test("a key's daily credit limit of 5 under 100 live scrapes racing through HAProxy and each node: exactly 5 charged, the rest 402 KEY_CREDIT_LIMIT", async () => {
    const team = await newTeam(1_000, 10_000);
    await stores.accounts.updateKey(team.keyId, { dailyCreditLimit: 5 });
    const points = entryPoints();
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => get(points[i % points.length] as string, profile(`daily${i}`), team.key)));
    assert.deepEqual(counts(results.map((r) => r.status)), { 200: 5, 402: 95 });
    assert.ok(results.every((r) => r.status === 200 || r.body.error?.code === 'KEY_CREDIT_LIMIT'));
    assert.deepEqual(await ledgerOf(team.teamId), { balance: 995, sum: 995, kept: 5, pending: 0 });
  });

  test('a key revoked with the CLI fails with 401 on the next request to each node (and the CLI without Redis is refused)', async () => {
    const team = await newTeam(10, 1_000);
    const url = `${profile('revoked')}&cache_max_age=1d`;
    for (const point of entryPoints()) assert.equal((await get(point, url, team.key)).status, 200);
    const revoke = (env: Record<string, string>) =>
      new Promise<{ code: number; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          ['--disable-warning=ExperimentalWarning', 'src/cli/main.ts', 'key', 'revoke', '--id', team.keyId],
          { cwd: ROOT, env: { ...process.env, DATA_DIR: join(dataDir, 'cli'), DATABASE_URL: databaseUrl, ...env } },
          (error, _stdout, stderr) => resolve({ code: error ? 1 : 0, stderr }),
        );
      });
    // Without Redis the nodes would not see it: refused, and nothing changed.
    const withoutRedis = await revoke({});
    assert.equal(withoutRedis.code, 1);
    assert.match(withoutRedis.stderr, /REDIS_URL and REDIS_PREFIX/);
    for (const point of entryPoints()) assert.equal((await get(point, url, team.key)).status, 200, point);
    const revoked = await revoke({ REDIS_URL: redis.url, REDIS_PREFIX: 'cluster-test:' });
    assert.equal(revoked.code, 0, revoked.stderr);
    for (const point of entryPoints()) assert.equal((await get(point, url, team.key)).status, 401, point);
  });

  // A node killed between committing a charge and writing its answer charged a request whose
  // client got no answer: no ordering of the two avoids that window (the commit may land in
  // PostgreSQL while the node dies waiting for its acknowledgement). So a kept charge is a 200
  // received, or a request whose connection broke when its node died; never anything else.
  test('a node killed with SIGKILL under load: after the reaper, the ledger sums to the balance; each charge kept is a 200 received or an answer lost with the node', async () => {
    const team = await newTeam(1_000, 100_000);
    const victim = cluster.nodes[2];
    assert.ok(victim);
    const points = entryPoints();
    let n = 0;
    const received: number[] = [];
    const load = async (until: number) => {
      while (Date.now() < until) {
        const point = points[n % points.length] as string;
        const name = `killed${n++}`;
        try {
          const response = await fetch(`${point}${profile(name)}`, { headers: { 'x-api-key': team.key }, signal: AbortSignal.timeout(20_000), dispatcher });
          await response.arrayBuffer();
          received.push(response.status); // HAProxy answers 502 for a request its node died with
        } catch {
          received.push(0); // the connection to the killed node broke: no answer
        }
      }
    };
    const end = Date.now() + 3_000;
    const clients = Array.from({ length: 30 }, () => load(end));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const exited = once(victim.process, 'exit');
    victim.process.kill('SIGKILL');
    await exited;
    await Promise.all(clients);
    // The reaper of the surviving nodes refunds what the dead one reserved, within 10 s of the deadline.
    const deadline = Date.now() + BUDGET_MS + MARGIN_MS + 12_000;
    let state = await ledgerOf(team.teamId);
    while (state.pending > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      state = await ledgerOf(team.teamId);
    }
    await victim.restart();
    const ok = received.filter((s) => s === 200).length;
    const lost = received.filter((s) => s !== 200 && s !== 503).length;
    assert.ok(ok > 0 && lost > 0, `the load got answers, and the kill broke some: ${JSON.stringify(counts(received))}`);
    assert.equal(state.pending, 0, 'every reservation kept or refunded');
    assert.equal(state.balance, state.sum, 'the ledger sums to the balance');
    assert.ok(state.kept >= ok && state.kept <= ok + lost, `charges kept (${state.kept}) between the 200s received (${ok}) and those plus the answers lost (${lost})`);
  });

  test('Redis stopped under load: 503s while it is down, full service after it restarts, nothing charged twice', async () => {
    const team = await newTeam(1_000, 100_000);
    const points = entryPoints();
    let n = 0;
    const received: { status: number; startedAt: number }[] = [];
    let running = true;
    const load = async () => {
      while (running) {
        const startedAt = Date.now();
        const answer = await get(points[n % points.length] as string, profile(`redis${n++}`), team.key);
        received.push({ status: answer.status, startedAt });
        if (answer.status === 503) assert.match(answer.body.error?.requestId ?? '', /^req_[A-Za-z0-9_-]{24,}$/);
      }
    };
    const clients = Array.from({ length: 10 }, () =>
      load().finally(() => {
        running = false;
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    await redis.stop();
    const stoppedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const restartedAt = Date.now();
    await redis.restart();
    let recovered = false;
    while (Date.now() - restartedAt < 15_000) {
      const startedAt = Date.now();
      const probe = await get(cluster.address, profile(`after${n++}`), team.key);
      received.push({ status: probe.status, startedAt });
      if (probe.status === 200) {
        recovered = true;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    running = false;
    await Promise.all(clients);
    assert.ok(recovered, 'full service after Redis restarted');
    const duringOutage = received.filter((r) => r.startedAt >= stoppedAt && r.startedAt < restartedAt).map((r) => r.status);
    assert.ok(duringOutage.length > 0 && duringOutage.every((s) => s === 503), `503s while Redis is down: ${JSON.stringify(counts(duringOutage))}`);
    const statuses = received.map((r) => r.status);
    assert.ok(statuses.every((s) => s === 200 || s === 503), JSON.stringify(counts(statuses)));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const state = await ledgerOf(team.teamId);
    assert.deepEqual([state.pending, state.balance], [0, state.sum]);
    assert.equal(state.kept, statuses.filter((s) => s === 200).length, 'one charge per 200');
  });
});
