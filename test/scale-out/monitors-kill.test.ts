// Monitors on a cluster, from outside: three service processes (`node src/main.ts`) over one
// PostgreSQL database and Redis prefix, a monitor at a 2 s interval, and the node that ran the
// latest run SIGKILLed between two slots. Each slot must run exactly once: counted where a second
// run could not hide behind the runs' UNIQUE (monitor_id, at) — the upstream's requests, the
// request records (one per run attempt, recorded or not) and each node's own count of the runs
// it made. The surviving nodes go on with the runs; a change of the watched follower count is
// delivered once, as a Standard Webhooks request to a receiver on loopback, and a change outside
// `watch` sends nothing; credits are one per kept run and the ledger sums to the balance. Before
// the kill, an upstream failing: one monitor.failed for the streak, whichever node ran each
// failure, and every run refunded.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { loadConfig, UNPACED_ENV } from '../../src/config.ts';
import { generateKey } from '../../src/server/keys.ts';
import { openStores } from '../../src/store/open.ts';
import type { MonitorRun, Stores } from '../../src/store/types.ts';
import { startSandbox, type RunningSandbox } from '../../sandbox/server.ts';
import { testBackends, type TestBackends } from '../support/backends.ts';
import { spawnService, type ChildService } from '../support/child-service.ts';
import { startReceiver, type Receiver } from '../support/webhook-receiver.ts';

const PROFILE = '/v1/snapmsg/profile';
const USERNAME = 'lunavoss';
const COUNT = /("subscriberCount":\s*")(\d+)(")/;
const METRICS_TOKEN = 'monitors-kill-metrics-token-0123456789';

/** Polls `get` until `check` holds; fails after `ms`. */
async function until<T>(what: string, get: () => Promise<T> | T, check: (value: T) => boolean, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await get();
    if (check(value)) return value;
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}: ${JSON.stringify(value).slice(0, 500)}`);
    await sleep(50);
  }
}

interface Node {
  service: ChildService;
  base: string;
  killed: boolean;
}

/** The monitor runs a node has made (recorded or not), from its own /metrics. */
async function runsMadeBy(node: Node): Promise<number> {
  const response = await fetch(`${node.base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  assert.equal(response.status, 200);
  const text = await response.text();
  let total = 0;
  for (const match of text.matchAll(/^api_monitor_runs_total(?:\{[^}]*\})? (\d+)$/gm)) total += Number(match[1]);
  return total;
}

/**
 * Starts `count` service processes over one schema made first (MIGRATE=auto once), each with its
 * own data directory; `stop` ends the survivors and removes what they made.
 */
async function startNodes(count: number, env: Record<string, string>): Promise<{ stores: Stores; nodes: Node[]; stop: () => Promise<void> }> {
  const dirs: string[] = [];
  const dir = () => {
    const made = mkdtempSync(join(tmpdir(), 'monitors-kill-'));
    dirs.push(made);
    return made;
  };
  const stores = await openStores(loadConfig({ ...env, DATA_DIR: dir(), MIGRATE: 'auto' }));
  // Started at the same time, over the schema made above.
  const services = Array.from({ length: count }, () => spawnService({ ...env, DATA_DIR: dir(), MIGRATE: 'off' }));
  const nodes: Node[] = [];
  for (const service of services) nodes.push({ service, base: await service.listening, killed: false });
  const stop = async () => {
    for (const node of nodes) if (!node.killed) node.service.child.kill('SIGTERM');
    await Promise.all(nodes.map((node) => node.service.exited));
    await stores.close();
    for (const made of dirs) rmSync(made, { recursive: true, force: true });
  };
  return { stores, nodes, stop };
}

describe('monitors on three service processes sharing PostgreSQL, one SIGKILLed between slots', () => {
  let backends: TestBackends;
  let sandbox: RunningSandbox;
  let receiver: Receiver;
  let stores: Stores;
  let nodes: Node[] = [];
  let stopNodes: (() => Promise<void>) | undefined;
  /** The upstream's answers to requests for the monitored profile. */
  let scrapes = 0;

  before(async () => {
    backends = await testBackends();
    receiver = await startReceiver();
    sandbox = await startSandbox({
      seed: 'monitors-kill',
      latencyMs: 200,
      portBase: 0,
      host: '127.0.0.1',
      observe: (answer) => {
        if (answer.platform === 'snapmsg' && answer.path.includes(USERNAME)) scrapes += 1;
      },
    });
    const shared = {
      ...sandbox.env,
      ...UNPACED_ENV,
      DATABASE_URL: await backends.freshDatabaseUrl(),
      REDIS_URL: backends.redisUrl,
      REDIS_PREFIX: backends.freshPrefix(),
      CURSOR_SECRET: 'monitors-kill-cursor-secret-0123456789',
      METRICS_TOKEN,
      MONITOR_MIN_INTERVAL_S: '1',
      REQUEST_BUDGET_MS: '3000',
      RESERVATION_MARGIN_MS: '0',
      WEBHOOK_ALLOW_PRIVATE: 'on',
      WEBHOOK_ALLOW_HTTP: 'on',
      WEBHOOK_RETRY_SCHEDULE: '0.3,0.3,0.3',
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_POLL_MS: '50',
    };
    ({ stores, nodes, stop: stopNodes } = await startNodes(3, shared));
  });

  after(async () => {
    await stopNodes?.();
    await sandbox?.close();
    await receiver?.close();
    await backends?.drop();
  });

  /** A team with `credits` and a live key, and a call of the API with that key on a node. */
  async function team(credits: number) {
    const made = await stores.accounts.createTeam({ name: `monitors-kill-${credits}`, credits, rateLimit: 100_000 });
    const generated = generateKey();
    await stores.accounts.createKey({ teamId: made.id, name: 'live', hash: generated.hash, prefix: generated.prefix, last4: generated.last4 });
    const call = async (node: Node, method: string, path: string, body?: unknown) => {
      const response = await fetch(`${node.base}${path}`, {
        method,
        headers: { 'x-api-key': generated.key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return { status: response.status, text, body: JSON.parse(text) as { data: Record<string, unknown> } };
    };
    return { id: made.id, call };
  }

  /** The team's ledger: balance (once nothing is pending) and the sum of its entries, which must agree. */
  async function ledgerMatches(teamId: string): Promise<number> {
    await until('no reservation pending', () => stores.ledger.usage(teamId), (usage) => usage?.pending === 0, 10_000);
    const balance = await stores.ledger.balance(teamId);
    const entries = await stores.ledger.entries(teamId, 10_000);
    assert.equal(
      entries.reduce((sum, entry) => sum + entry.amount, 0),
      balance,
      'ledger equals balance',
    );
    return balance as number;
  }

  test('an upstream failing three times in a row, the runs taken by any of the nodes: one monitor.failed delivered, every run refunded', async () => {
    const { id: teamId, call } = await team(100);
    const [a, b, c] = nodes as [Node, Node, Node];
    const hook = await call(c, 'POST', '/v1/webhooks', { url: `${receiver.origin}/failed`, events: ['monitor.failed', 'monitor.changed'] });
    assert.equal(hook.status, 201, hook.text);
    sandbox.control.down('linkpage-b');
    try {
      const created = await call(a, 'POST', '/v1/monitors', { endpoint: '/v1/linkpage-b/page', params: { url: 'https://linkpage-b.example/lunavoss' }, interval: '1s' });
      assert.equal(created.status, 201, created.text);
      const monitorId = created.body.data.id as string;
      await until('five failed runs', () => stores.monitors.runs(teamId, monitorId, 1_000), (runs) => runs.filter((run) => run.status === 'failed').length >= 5);
      assert.equal((await call(b, 'PATCH', `/v1/monitors/${monitorId}`, { status: 'paused' })).status, 200);
      await sleep(1_500); // a run in progress ends, the deliveries are made
      const runs = await stores.monitors.runs(teamId, monitorId, 1_000);
      assert.ok(runs.every((run) => run.status === 'failed' && run.creditsCharged === 0 && /^UPSTREAM_/.test(String(run.error?.code))), JSON.stringify(runs));
      const requests = receiver.received.filter((request) => request.path === '/failed');
      assert.equal(new Set(requests.map((request) => request.headers['webhook-id'])).size, 1, 'one monitor.failed for the streak');
      const sent = new Webhook(hook.body.data.secret as string).verify(requests[0]?.body as string, requests[0]?.headers as Record<string, string>) as {
        type: string;
        data: { monitor: string; consecutiveFailures: number };
      };
      assert.deepEqual([sent.type, sent.data.monitor, sent.data.consecutiveFailures], ['monitor.failed', monitorId, 3]);
      // Refunded: each credit reserved for a run given back; none kept.
      const entries = await stores.ledger.entries(teamId, 10_000);
      const charged = entries.filter((entry) => entry.reason === 'charge').map((entry) => entry.requestId);
      const refunded = entries.filter((entry) => entry.reason === 'refund').map((entry) => entry.requestId);
      assert.ok(charged.length >= 3, `the failed runs reserved their credit (${charged.length})`);
      assert.deepEqual([...refunded].sort(), [...charged].sort(), 'every credit reserved was refunded');
      const runIds = new Set(runs.map((run) => run.requestId));
      assert.ok(charged.every((id) => id !== null && runIds.has(id)), 'each charge and refund is a run’s');
      assert.equal(await ledgerMatches(teamId), 100);
    } finally {
      sandbox.control.down('linkpage-b', false);
    }
  });

  test('each slot runs once, the survivors go on, one monitor.changed delivered, one credit per kept run', async () => {
    const { id: teamId, call } = await team(1_000);
    // Each node's count of runs so far (the test before ran some): this test counts from here.
    const baseline = await Promise.all(nodes.map(runsMadeBy));
    const madeSince = async (node: Node) => (await runsMadeBy(node)) - (baseline[nodes.indexOf(node)] as number);
    const [a, b] = nodes as [Node, Node, Node];

    const hook = await call(b, 'POST', '/v1/webhooks', { url: `${receiver.origin}/changed`, events: ['monitor.changed', 'monitor.failed'] });
    assert.equal(hook.status, 201, hook.text);
    const secret = hook.body.data.secret as string;
    const created = await call(a, 'POST', '/v1/monitors', { endpoint: PROFILE, params: { username: USERNAME }, interval: '2s', watch: ['/profile/subscriberCount'] });
    assert.equal(created.status, 201, created.text);
    const monitorId = created.body.data.id as string;
    const runs = async (): Promise<MonitorRun[]> => stores.monitors.runs(teamId, monitorId, 1_000);

    await until('four runs', runs, (found) => found.length >= 4);

    // Wait for a run to end, find the node that made it, and kill that node at once: before the
    // next slot, with no run of the monitor in progress anywhere.
    let victim: Node | undefined;
    let killedAt = 0;
    let madeByVictim = 0;
    for (let attempt = 0; attempt < 10 && !victim; attempt++) {
      const counts = await Promise.all(nodes.map(runsMadeBy));
      const total = counts.reduce((sum, n) => sum + n, 0);
      const after = await until('the next run to end', () => Promise.all(nodes.map(runsMadeBy)), (now) => now.reduce((sum, n) => sum + n, 0) > total, 10_000);
      const maker = after.findIndex((n, i) => n > (counts[i] as number));
      const monitor = await stores.monitors.get(teamId, monitorId);
      assert.ok(monitor);
      // Too close to the next slot (a loaded machine): wait for another run.
      if (Date.now() > monitor.nextRunAt - 500) continue;
      victim = nodes[maker] as Node;
      madeByVictim = (after[maker] as number) - (baseline[maker] as number);
      victim.service.child.kill('SIGKILL');
      victim.killed = true;
      killedAt = Date.now();
      await victim.service.exited;
    }
    assert.ok(victim, 'a node was killed between two slots');
    const survivors = nodes.filter((node) => !node.killed);
    assert.equal(survivors.length, 2);
    assert.ok(madeByVictim >= 1, 'the node killed had made runs');

    const runsAtKill = (await runs()).length;
    await until('four runs after the kill', runs, (found) => found.length >= runsAtKill + 4);

    // The follower count changes: exactly one monitor.changed, delivered, whose patch replaces it.
    let count = 0;
    sandbox.control.rewrite('snapmsg', (path, body) =>
      path.includes(USERNAME)
        ? body.replace(COUNT, (_whole, open: string, digits: string, close: string) => {
            count = Number(digits) + 1;
            return `${open}${count}${close}`;
          })
        : body,
    );
    const changedTo = () => receiver.received.filter((request) => request.path === '/changed');
    await until('a monitor.changed delivered', () => changedTo().length, (n) => n >= 1);
    const runsAtChange = (await runs()).length;
    await until('two runs after the change', runs, (found) => found.length >= runsAtChange + 2);
    // A change outside `watch` (the display name; the count stays at its new value): nothing sent.
    sandbox.control.rewrite('snapmsg', (path, body) => (path.includes(USERNAME) ? body.replace(COUNT, `$1${count}$3`).replaceAll('Luna Voss', 'Luna V.') : body));
    const runsAtRename = (await runs()).length;
    await until('two runs after the change outside watch', runs, (found) => found.length >= runsAtRename + 2);

    const paused = await call(survivors[0] as Node, 'PATCH', `/v1/monitors/${monitorId}`, { status: 'paused' });
    assert.equal(paused.status, 200, paused.text);
    await sleep(1_500); // a run in progress ends, its record and the deliveries are written
    const madeBySurvivors = (await Promise.all(survivors.map(madeSince))).reduce((sum, n) => sum + n, 0);
    for (const node of survivors) {
      node.service.child.kill('SIGTERM');
      node.killed = true;
    }
    await Promise.all(survivors.map((node) => node.service.exited));
    sandbox.control.rewrite('snapmsg', null);

    const all = await runs();
    assert.ok(all.every((run) => run.status === 'succeeded'), JSON.stringify(all.filter((run) => run.status !== 'succeeded')));
    assert.equal(new Set(all.map((run) => run.at)).size, all.length, 'one run per slot');
    assert.ok(all.filter((run) => run.startedAt > killedAt).length >= 4, 'runs go on after the kill');

    // Never twice: every attempt is counted where the UNIQUE (monitor_id, at) cannot hide it.
    assert.equal(scrapes, all.length, `the upstream served the profile once per run (${scrapes} requests, ${all.length} runs)`);
    const records = (await stores.requests.list({ teamId: teamId, limit: 1_000 })).records.filter((record) => record.keyId === monitorId);
    const recordIds = records.map((record) => record.requestId);
    assert.equal(new Set(recordIds).size, recordIds.length, 'one record per attempt');
    const runIds = new Set(all.map((run) => run.requestId));
    assert.deepEqual(
      recordIds.filter((id) => !runIds.has(id)),
      [],
      'no request record of an attempt that was not recorded as the slot’s run',
    );
    const recorded = new Set(recordIds);
    assert.deepEqual(
      all.filter((run) => run.startedAt > killedAt && !recorded.has(run.requestId)).map((run) => run.id),
      [],
      'every run made by a surviving node has its request record',
    );
    // Each node's own count of the runs it made (recorded or not): together, the runs recorded.
    assert.equal(madeByVictim + madeBySurvivors, all.length, `runs made by each node: ${madeByVictim} by the one killed, ${madeBySurvivors} by the others`);

    // Credits: one per kept run, nothing refunded, nothing left pending; the ledger sums to the balance.
    const entries = await stores.ledger.entries(teamId, 10_000);
    assert.equal(entries.filter((entry) => entry.reason === 'refund').length, 0, 'no run was refunded (none ran twice)');
    assert.equal(entries.filter((entry) => entry.reason === 'charge').length, all.length);
    assert.ok(all.every((run) => run.creditsCharged === 1));
    assert.equal(await ledgerMatches(teamId), 1_000 - all.length, 'one credit per kept run');

    // The webhook: exactly one monitor.changed, signed as Standard Webhooks says.
    const ids = new Set(changedTo().map((request) => request.headers['webhook-id']));
    assert.equal(ids.size, 1, `one monitor.changed, none for unchanged runs or a change outside watch: ${JSON.stringify(changedTo().map((request) => request.body))}`);
    const delivered = new Webhook(secret).verify(changedTo()[0]?.body as string, changedTo()[0]?.headers as Record<string, string>) as {
      type: string;
      data: { monitor: string; run: string; patch: unknown[] };
    };
    assert.equal(delivered.type, 'monitor.changed');
    assert.equal(delivered.data.monitor, monitorId);
    assert.deepEqual(delivered.data.patch, [{ op: 'replace', path: '/profile/subscriberCount', value: count }]);
    assert.ok(all.some((run) => run.id === delivered.data.run && run.changed));
  });
});

describe('monitors on two service processes, the one running a monitor SIGKILLed mid-run', () => {
  let backends: TestBackends;
  let sandbox: RunningSandbox;
  let stores: Stores;
  let nodes: Node[] = [];
  let stopNodes: (() => Promise<void>) | undefined;
  /** The upstream's answers to requests for the monitored profile. */
  let scrapes = 0;

  before(async () => {
    backends = await testBackends();
    // Every answer of a `slow-` account takes 1.5 s: long enough to kill a node in the middle of
    // one, and longer than a run's claim (MONITOR_LOCK_MS 1 s), which must be renewed to hold.
    sandbox = await startSandbox({
      seed: 'monitors-kill-mid-run',
      portBase: 0,
      host: '127.0.0.1',
      slowMs: 1_500,
      observe: (answer) => {
        if (answer.platform === 'snapmsg' && answer.path.includes('slow-luna')) scrapes += 1;
      },
    });
    // The request budget (15 s) and reservation margin (60 s) left at their defaults: a run's
    // claim must not last as long as they do.
    const shared = {
      ...sandbox.env,
      ...UNPACED_ENV,
      DATABASE_URL: await backends.freshDatabaseUrl(),
      REDIS_URL: backends.redisUrl,
      REDIS_PREFIX: backends.freshPrefix(),
      CURSOR_SECRET: 'monitors-kill-cursor-secret-0123456789',
      MONITOR_MIN_INTERVAL_S: '1',
      MONITOR_LOCK_MS: '1000',
    };
    ({ stores, nodes, stop: stopNodes } = await startNodes(2, shared));
  });

  after(async () => {
    await stopNodes?.();
    await sandbox?.close();
    await backends?.drop();
  });

  test('runs longer than their claim hold it (renewed), and the survivor takes the monitor up once the dead run’s claim lapses, not its budget and margin', async () => {
    const made = await stores.accounts.createTeam({ name: 'monitors-mid-run', credits: 1_000, rateLimit: 100_000 });
    const generated = generateKey();
    await stores.accounts.createKey({ teamId: made.id, name: 'live', hash: generated.hash, prefix: generated.prefix, last4: generated.last4 });
    const post = (node: Node, path: string, body?: unknown) =>
      fetch(`${node.base}${path}`, {
        method: 'POST',
        headers: { 'x-api-key': generated.key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const [a] = nodes as [Node, Node];
    const created = await post(a, '/v1/monitors', { endpoint: PROFILE, params: { username: 'slow-luna' }, interval: '2s' });
    assert.equal(created.status, 201, await created.clone().text());
    const monitorId = ((await created.json()) as { data: { id: string } }).data.id;
    const runs = () => stores.monitors.runs(made.id, monitorId, 1_000);
    await until('a first run', runs, (found) => found.length >= 1);

    // A run on node a: asked for there, still running 300 ms later (a run held elsewhere is 409 at once).
    let killedAt = 0;
    for (let attempt = 0; attempt < 20 && killedAt === 0; attempt++) {
      const answer = post(a, `/v1/monitors/${monitorId}/run`).then((response) => response.status);
      const early = await Promise.race([answer, sleep(300).then(() => 'running' as const)]);
      if (early !== 'running') {
        await sleep(200);
        continue;
      }
      a.service.child.kill('SIGKILL');
      a.killed = true;
      killedAt = Date.now();
      await a.service.exited;
      await answer.catch(() => undefined);
    }
    assert.ok(killedAt > 0, 'node a was killed in the middle of a run');
    const next = await until('a run after the kill', runs, (found) => found.some((run) => run.startedAt > killedAt), 60_000).then((found) =>
      Math.min(...found.filter((run) => run.startedAt > killedAt).map((run) => run.startedAt)),
    );
    assert.ok(next - killedAt < 5_000, `the next run started ${next - killedAt} ms after the kill`);
    await until('three more runs', runs, (found) => found.filter((run) => run.startedAt > killedAt).length >= 3, 20_000);
    const paused = await fetch(`${(nodes[1] as Node).base}/v1/monitors/${monitorId}`, {
      method: 'PATCH',
      headers: { 'x-api-key': generated.key, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'paused' }),
    });
    assert.equal(paused.status, 200);
    await sleep(2_000); // the run in progress ends
    const all = await runs();
    assert.equal(new Set(all.map((run) => run.at)).size, all.length, 'one run per slot');
    assert.ok(all.every((run) => run.status === 'succeeded'), JSON.stringify(all));
    // Each run 1.5 s long with a 1 s claim: without renewal the other node would take the same
    // slot mid-run and scrape it again. Only the killed run was scraped without being recorded.
    assert.equal(scrapes, all.length + 1, `the upstream served ${scrapes} requests for ${all.length} runs and the one killed`);
    // Identical scrapes in flight are shared across nodes, so a second run of a slot may not reach
    // the upstream: its request record (written whether or not the run is) and its refund show it.
    await sleep(1_200); // the request records are written
    const runIds = new Set(all.map((run) => run.requestId));
    const records = (await stores.requests.list({ teamId: made.id, limit: 1_000 })).records.filter((record) => record.keyId === monitorId);
    assert.deepEqual(
      records.filter((record) => !runIds.has(record.requestId)).map((record) => record.requestId),
      [],
      'no attempt that was not recorded as its slot’s run',
    );
    const entries = await stores.ledger.entries(made.id, 10_000);
    assert.deepEqual(
      entries.filter((entry) => entry.reason === 'refund'),
      [],
      'no run refunded for losing its claim (the killed run’s reservation is refunded at its deadline, later)',
    );
  });
});
