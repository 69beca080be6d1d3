// Monitors end to end: the real service (start()) scraping the sandbox upstream, whose pages the
// tests change between runs (SandboxControl.rewrite), with the minimum interval lowered to 1 s.
// On the embedded store, and on PostgreSQL with two nodes sharing the database.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig, UNPACED_ENV } from '../../src/config.ts';
import { start, type Running } from '../../src/main.ts';
import { generateKey } from '../../src/server/keys.ts';
import { openStores } from '../../src/store/open.ts';
import type { AccountEvent, Stores } from '../../src/store/types.ts';
import { startSandbox, type RunningSandbox } from '../../sandbox/server.ts';
import { testBackends, type TestBackends } from '../support/backends.ts';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { PageScrape } from '../../sdk/dist/index.js';
import { Webhook } from 'standardwebhooks';
import { startReceiver, type Receiver, type Received } from '../support/webhook-receiver.ts';

const CLI = join(import.meta.dirname, '..', '..', 'sdk', 'dist', 'cli.js');

type Json = Record<string, unknown>;
interface Monitor {
  id: string;
  status: string;
  runs: number;
  nextRunAt: string | null;
  lastRunAt: string | null;
  lastChangeAt: string | null;
  consecutiveFailures: number;
  interval: string | null;
  watch: string[];
}
interface Run {
  id: string;
  at: string;
  startedAt: string;
  finishedAt: string;
  status: string;
  creditsCharged: number;
  changed: boolean;
  patch: { op: string; path: string; value?: unknown }[] | null;
  error: { code: string; message: string } | null;
}

const PROFILE = '/v1/snapmsg/profile';
const COUNT = /("subscriberCount":\s*")(\d+)(")/;

interface Node {
  running: Running;
  stores: Stores;
  base: string;
}

async function node(env: Record<string, string>): Promise<Node> {
  const config = loadConfig({ ...UNPACED_ENV, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', MONITOR_MIN_INTERVAL_S: '1', MONITOR_MAX_PER_TEAM: '5', ...env });
  const stores = await openStores(config);
  const running = await start(config, stores);
  return { running, stores, base: running.address };
}

async function team(stores: Stores, credits: number): Promise<{ teamId: string; key: string }> {
  const created = await stores.accounts.createTeam({ name: `monitors-${Math.random().toString(36).slice(2, 8)}`, credits, rateLimit: 100_000 });
  const generated = generateKey();
  await stores.accounts.createKey({ teamId: created.id, name: 'live', hash: generated.hash, prefix: generated.prefix, last4: generated.last4 });
  return { teamId: created.id, key: generated.key };
}

function client(base: string, key: string) {
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: JSON.parse(text) as Json, text };
  };
  return {
    call,
    monitor: async (id: string) => ((await call('GET', `/v1/monitors/${id}`)).body.data as Monitor),
    runs: async (id: string) => ((await call('GET', `/v1/monitors/${id}/runs?limit=100`)).body.data as { runs: Run[] }).runs,
    create: async (body: Json) => {
      const answer = await call('POST', '/v1/monitors', body);
      assert.equal(answer.status, 201, answer.text);
      return answer.body.data as Monitor;
    },
  };
}

/** Waits until `check` holds, polling; fails after `ms`. */
async function until<T>(what: string, get: () => Promise<T>, check: (value: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await get();
    if (check(value)) return value;
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}: ${JSON.stringify(value).slice(0, 500)}`);
    await sleep(100);
  }
}

const monitorEvents = async (stores: Stores, teamId: string, type?: string): Promise<AccountEvent[]> =>
  (await stores.events.list(teamId, 1000)).filter((event) => event.type.startsWith('monitor.') && (type === undefined || event.type === type));

/** Webhook deliveries to loopback, retried fast, looked for often. */
const WEBHOOKS_ENV = { WEBHOOK_ALLOW_PRIVATE: 'on', WEBHOOK_ALLOW_HTTP: 'on', WEBHOOK_RETRY_SCHEDULE: '0.3,0.3,0.3', WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_POLL_MS: '50' };

/** Registers a webhook of the team (POST /v1/webhooks) for the monitors' events, to `path` on the receiver; its signing secret. */
async function subscribe(api: ReturnType<typeof client>, receiver: Receiver, path: string): Promise<string> {
  const created = await api.call('POST', '/v1/webhooks', { url: `${receiver.origin}${path}`, events: ['monitor.changed', 'monitor.failed'] });
  assert.equal(created.status, 201, created.text);
  return (created.body.data as { secret: string }).secret;
}

/** The events delivered to `path`, one per `webhook-id` (retries of one event are one), each verified with the Standard Webhooks library. */
function deliveredTo(receiver: Receiver, path: string, secret: string): { type: string; data: Json }[] {
  const byId = new Map<string, Received>();
  for (const request of receiver.received) if (request.path === path) byId.set(request.headers['webhook-id'] as string, request);
  return [...byId.values()].map((request) => new Webhook(secret).verify(request.body, request.headers) as { type: string; data: Json });
}

async function ledgerMatches(stores: Stores, teamId: string): Promise<number> {
  const balance = (await stores.ledger.balance(teamId)) ?? Number.NaN;
  const entries = await stores.ledger.entries(teamId, 100_000);
  assert.equal(
    entries.reduce((sum, entry) => sum + entry.amount, 0),
    balance,
    'ledger equals balance',
  );
  return balance;
}

describe('monitors on the embedded store', () => {
  let sandbox: RunningSandbox;
  let dir: string;
  let service: Node;
  let receiver: Receiver;
  /** Requests the sandbox served, by path. */
  const served: string[] = [];

  before(async () => {
    sandbox = await startSandbox({ seed: 'monitors', portBase: 0, host: '127.0.0.1', slowMs: 1_500, observe: (answer) => served.push(answer.path) });
    receiver = await startReceiver();
    dir = mkdtempSync(join(tmpdir(), 'monitors-'));
    service = await node({ ...sandbox.env, ...WEBHOOKS_ENV, DATA_DIR: dir });
  });
  after(async () => {
    await service.running.stop();
    await sandbox.close();
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('unchanged runs send nothing; a changed follower count sends exactly one monitor.changed (a webhook, verified) replacing that path; a change outside watch sends nothing; one credit per kept run', async () => {
    const { teamId, key } = await team(service.stores, 1_000);
    const api = client(service.base, key);
    const secret = await subscribe(api, receiver, '/changed');
    const created = await api.create({ endpoint: PROFILE, params: { username: 'lunavoss' }, interval: '1s', watch: ['/profile/subscriberCount'], label: 'luna' });
    assert.match(created.id, /^mon_/);
    assert.equal(created.interval, '1s');
    assert.deepEqual(created.watch, ['/profile/subscriberCount']);

    const baseline = await until('three runs', () => api.runs(created.id), (runs) => runs.filter((run) => run.status === 'succeeded').length >= 3);
    const oldest = baseline.at(-1) as Run;
    assert.equal(oldest.patch, null, 'the first run is the baseline: no patch');
    for (const run of baseline.slice(0, -1)) assert.deepEqual([run.changed, run.patch], [false, []], 'unchanged runs have an empty patch');
    assert.deepEqual(await monitorEvents(service.stores, teamId), [], 'unchanged runs record nothing');
    assert.deepEqual(deliveredTo(receiver, '/changed', secret), [], 'unchanged runs send nothing');

    let count = 0;
    sandbox.control.rewrite('snapmsg', (path, body) =>
      path.startsWith('/add/lunavoss') || path.includes('lunavoss')
        ? body.replace(COUNT, (_whole, open: string, digits: string, close: string) => {
            count = Number(digits) + 1;
            return `${open}${count}${close}`;
          })
        : body,
    );
    const events = await until('one monitor.changed', () => monitorEvents(service.stores, teamId), (found) => found.length >= 1);
    // Runs go on with the new count: still exactly one.
    const seen = (await api.runs(created.id)).length;
    await until('two more runs', () => api.runs(created.id), (runs) => runs.length >= seen + 2);
    const changed = await monitorEvents(service.stores, teamId);
    assert.equal(changed.length, 1, JSON.stringify(changed));
    assert.equal(events[0]?.type, 'monitor.changed');
    const data = changed[0]?.data as { monitor: string; run: string; patch: unknown[]; previousAt: string };
    assert.equal(data.monitor, created.id);
    assert.match(data.run, /^run_/);
    assert.deepEqual(data.patch, [{ op: 'replace', path: '/profile/subscriberCount', value: count }]);
    assert.match(data.previousAt, /^\d{4}-\d\d-\d\dT/);
    const changedRun = (await api.runs(created.id)).find((run) => run.id === data.run);
    assert.deepEqual(changedRun && [changedRun.changed, changedRun.patch], [true, data.patch]);
    assert.ok((await api.monitor(created.id)).lastChangeAt);
    // Sent through the webhook: one delivery, signed as Standard Webhooks says, the same patch.
    const sent = await until('the monitor.changed delivered', async () => deliveredTo(receiver, '/changed', secret), (found) => found.length >= 1, 10_000);
    assert.equal(sent.length, 1, JSON.stringify(sent));
    assert.equal(sent[0]?.type, 'monitor.changed');
    assert.deepEqual(sent[0]?.data, data);
    assert.deepEqual(sent[0]?.data.patch, [{ op: 'replace', path: '/profile/subscriberCount', value: count }]);

    // A change outside `watch` (the display name): recorded nowhere.
    sandbox.control.rewrite('snapmsg', (path, body) => (path.includes('lunavoss') ? body.replace(COUNT, `$1${count}$3`).replaceAll('Luna Voss', 'Luna V.') : body));
    const before = (await api.runs(created.id)).length;
    const later = await until('three more runs', () => api.runs(created.id), (runs) => runs.length >= before + 3);
    assert.equal((await monitorEvents(service.stores, teamId)).length, 1, 'a change outside watch records nothing');
    await sleep(500); // a delivery would have been sent by now (WEBHOOK_POLL_MS 50)
    assert.equal(deliveredTo(receiver, '/changed', secret).length, 1, 'a change outside watch sends nothing');
    assert.ok(later.slice(0, 3).every((run) => !run.changed));
    sandbox.control.rewrite('snapmsg', null);

    await api.call('PATCH', `/v1/monitors/${created.id}`, { status: 'paused' });
    await sleep(1_500); // a run in progress ends
    const runs = await api.runs(created.id);
    const succeeded = runs.filter((run) => run.status === 'succeeded');
    assert.ok(runs.every((run) => run.creditsCharged === (run.status === 'succeeded' ? 1 : 0)));
    const balance = await ledgerMatches(service.stores, teamId);
    assert.equal(balance, 1_000 - succeeded.length, 'one credit per kept run, none otherwise');
  });

  test('pause and resume: a paused monitor does not run; resumed, it runs at once', async () => {
    const { key } = await team(service.stores, 100);
    const api = client(service.base, key);
    const created = await api.create({ endpoint: PROFILE, params: { username: 'lunavoss' }, interval: '1s' });
    await until('a run', () => api.monitor(created.id), (m) => m.runs >= 1);
    const paused = await api.call('PATCH', `/v1/monitors/${created.id}`, { status: 'paused' });
    assert.equal(paused.status, 200, paused.text);
    assert.equal((paused.body.data as Monitor).status, 'paused');
    assert.equal((paused.body.data as Monitor).nextRunAt, null);
    await sleep(1_200); // a run that was in progress ends
    const held = (await api.monitor(created.id)).runs;
    await sleep(2_500);
    assert.equal((await api.monitor(created.id)).runs, held, 'no run while paused');
    const resumed = await api.call('PATCH', `/v1/monitors/${created.id}`, { status: 'active' });
    assert.equal((resumed.body.data as Monitor).status, 'active');
    await until('a run after resuming', () => api.monitor(created.id), (m) => m.runs > held, 5_000);
    await api.call('DELETE', `/v1/monitors/${created.id}`);
  });

  test('three failures in a row: one monitor.failed (a webhook, verified), runs refunded', async () => {
    const { teamId, key } = await team(service.stores, 100);
    const api = client(service.base, key);
    const secret = await subscribe(api, receiver, '/failed');
    sandbox.control.down('linkpage-b');
    try {
      const created = await api.create({ endpoint: '/v1/linkpage-b/page', params: { url: 'https://linkpage-b.example/lunavoss' }, interval: '1s' });
      await until('five failed runs', () => api.runs(created.id), (runs) => runs.filter((run) => run.status === 'failed').length >= 5);
      await api.call('PATCH', `/v1/monitors/${created.id}`, { status: 'paused' });
      const failed = await monitorEvents(service.stores, teamId, 'monitor.failed');
      assert.equal(failed.length, 1, 'once per streak');
      assert.equal((failed[0]?.data as { monitor: string }).monitor, created.id);
      assert.equal((failed[0]?.data as { consecutiveFailures: number }).consecutiveFailures, 3);
      assert.ok((await api.monitor(created.id)).consecutiveFailures >= 5);
      for (const run of await api.runs(created.id)) {
        assert.equal(run.creditsCharged, 0);
        assert.match(String(run.error?.code), /^UPSTREAM_/);
      }
      await sleep(1_200);
      assert.equal(await ledgerMatches(service.stores, teamId), 100, 'every failed run refunded');
      // Each run that reserved its credit was refunded it: a refund per charge, naming a failed run.
      const runIds = new Set((await service.stores.monitors.runs(teamId, created.id, 1_000)).map((run) => run.requestId));
      const entries = await service.stores.ledger.entries(teamId, 10_000);
      const charged = entries.filter((entry) => entry.reason === 'charge').map((entry) => entry.requestId);
      const refunded = entries.filter((entry) => entry.reason === 'refund').map((entry) => entry.requestId);
      assert.ok(charged.length >= 3, `the failed runs reserved their credit (${charged.length})`);
      assert.deepEqual([...refunded].sort(), [...charged].sort(), 'every credit reserved was refunded');
      assert.ok(charged.every((id) => id !== null && runIds.has(id)), 'each charge and refund is a run’s');
      const sent = await until('the monitor.failed delivered', async () => deliveredTo(receiver, '/failed', secret), (found) => found.length >= 1, 10_000);
      await sleep(500);
      assert.equal(deliveredTo(receiver, '/failed', secret).length, 1, 'one monitor.failed sent for the streak');
      assert.equal(sent[0]?.type, 'monitor.failed');
      assert.deepEqual(sent[0]?.data, failed[0]?.data);
    } finally {
      sandbox.control.down('linkpage-b', false);
    }
  });

  test('no credits: runs are skipped and not charged', async () => {
    const { teamId, key } = await team(service.stores, 0);
    const api = client(service.base, key);
    const created = await api.create({ endpoint: PROFILE, params: { username: 'lunavoss' }, interval: '1s' });
    const runs = await until('two runs', () => api.runs(created.id), (found) => found.length >= 2);
    for (const run of runs) {
      assert.equal(run.status, 'skipped');
      assert.equal(run.creditsCharged, 0);
      assert.equal(run.error?.code, 'INSUFFICIENT_CREDITS');
    }
    assert.equal(await ledgerMatches(service.stores, teamId), 0);
    assert.deepEqual((await service.stores.ledger.entries(teamId, 1_000)).filter((entry) => entry.reason !== 'topup'), [], 'a skipped run reserves nothing');
    assert.deepEqual(await monitorEvents(service.stores, teamId), []);
    await api.call('DELETE', `/v1/monitors/${created.id}`);
  });

  test('runs of one monitor never overlap, and a run asked for meanwhile is 409', async () => {
    const { key } = await team(service.stores, 100);
    const api = client(service.base, key);
    // Every answer of slow-luna takes 1.5 s: longer than the interval.
    const created = await api.create({ endpoint: PROFILE, params: { username: 'slow-luna' }, interval: '1s' });
    await until('a run in progress', () => api.monitor(created.id), (m) => m.lastRunAt !== null || m.runs > 0, 5_000);
    const during = await api.call('POST', `/v1/monitors/${created.id}/run`);
    const runs = await until('four runs', () => api.runs(created.id), (found) => found.length >= 4);
    await api.call('DELETE', `/v1/monitors/${created.id}`);
    const ordered = [...runs].sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt));
    for (let i = 1; i < ordered.length; i++) {
      assert.ok(Date.parse(ordered[i]?.startedAt as string) >= Date.parse(ordered[i - 1]?.finishedAt as string), 'each run starts after the one before ends');
    }
    assert.ok(during.status === 409 || during.status === 200, during.text);
    if (during.status === 409) assert.equal((during.body.error as Json).code, 'CONFLICT');
  });

  test('run now answers with the run, charged like a scrape; a later slot on the interval', async () => {
    const { key } = await team(service.stores, 10);
    const api = client(service.base, key);
    const created = await api.create({ endpoint: PROFILE, params: { username: 'lunavoss' }, interval: '1d' });
    await until('the baseline run', () => api.monitor(created.id), (m) => m.runs === 1);
    const now = await api.call('POST', `/v1/monitors/${created.id}/run`);
    assert.equal(now.status, 200, now.text);
    const run = now.body.data as Run;
    assert.deepEqual([run.status, run.creditsCharged, run.changed, run.patch], ['succeeded', 1, false, []]);
    assert.equal((now.body.meta as Json).creditsCharged, 1);
    assert.equal((now.body.meta as Json).creditsRemaining, 8);
    const monitor = await api.monitor(created.id);
    assert.equal(monitor.runs, 2);
    assert.ok(Date.parse(monitor.nextRunAt as string) > Date.now() + 23 * 3600_000);
  });

  test('the SDK (client.monitors) and the command line (pagescrape monitor create … --every --watch, monitor runs)', async () => {
    const { key } = await team(service.stores, 10);
    const sdk = new PageScrape({ apiKey: key, baseUrl: service.base, maxRetries: 0 });
    const created = await sdk.monitors.create({ endpoint: PROFILE, params: { username: 'lunavoss' }, interval: '1d', watch: ['/profile/subscriberCount'] });
    assert.match(created.data.id, /^mon_/);
    await until('the baseline run', () => sdk.monitors.get(created.data.id), (found) => found.data.runs === 1);
    const run = await sdk.monitors.run(created.data.id);
    assert.equal(run.data.status, 'succeeded');
    assert.equal(run.meta.creditsCharged, 1);
    assert.equal((await sdk.monitors.runs(created.data.id)).data.runs.length, 2);
    assert.equal((await sdk.monitors.pause(created.data.id)).data.status, 'paused');
    assert.equal((await sdk.monitors.resume(created.data.id)).data.status, 'active');
    const all = [];
    for await (const monitor of sdk.monitors.all()) all.push(monitor.id);
    assert.deepEqual(all, [created.data.id]);
    assert.deepEqual((await sdk.monitors.delete(created.data.id)).data, { id: created.data.id, deleted: true });
    await assert.rejects(sdk.monitors.get(created.data.id), (error: Error & { code?: string }) => error.code === 'NOT_FOUND');

    const env = { ...process.env, PAGESCRAPE_API_KEY: key, PAGESCRAPE_BASE_URL: service.base };
    const cli = promisify(execFile);
    const made = await cli(process.execPath, [CLI, 'monitor', 'create', PROFILE, '--username', 'lunavoss', '--every', '1h', '--watch', '/profile/subscriberCount', '--label', 'cli'], { env });
    const monitor = (JSON.parse(made.stdout) as { data: Monitor & { label: string } }).data;
    assert.deepEqual([monitor.interval, monitor.watch, monitor.label], ['1h', ['/profile/subscriberCount'], 'cli']);
    await until('its first run', () => sdk.monitors.get(monitor.id), (found) => found.data.runs === 1);
    const runs = await cli(process.execPath, [CLI, 'monitor', 'runs', monitor.id], { env });
    assert.equal((JSON.parse(runs.stdout) as { data: { runs: Run[] } }).data.runs.length, 1);
    await assert.rejects(cli(process.execPath, [CLI, 'monitor', 'create', PROFILE, '--username', 'lunavoss'], { env }), (error: { code?: number; stderr?: string }) => error.code === 2 && /--every/.test(String(error.stderr)));
    await cli(process.execPath, [CLI, 'monitor', 'delete', monitor.id], { env });
  });

  test('validation (422 with JSON paths, the endpoint’s own rules), team scope (404), Idempotency-Key, the bound per team, cursors', async () => {
    const { key } = await team(service.stores, 10);
    const api = client(service.base, key);
    const bad = await api.call('POST', '/v1/monitors', { endpoint: PROFILE, params: { user: 'x', cursor: 'c' }, interval: '1s', cron: '* * * * *' });
    assert.equal(bad.status, 422, bad.text);
    const paths = ((bad.body.error as Json).details as { path: string }[]).map((detail) => detail.path).sort();
    assert.deepEqual(paths, ['cron', 'params.cursor', 'params.user', 'params.username'].sort());
    const shape = await api.call('POST', '/v1/monitors', { endpoint: 3, params: { username: 5 }, interval: '1 hour', watch: ['profile'], extra: true });
    assert.equal(shape.status, 422);
    assert.deepEqual(
      ((shape.body.error as Json).details as { path: string }[]).map((detail) => detail.path).sort(),
      ['endpoint', 'extra', 'interval', 'params.username', 'watch[0]'].sort(),
    );
    const short = await api.call('POST', '/v1/monitors', { endpoint: '/v1/nowhere', params: {}, interval: '1s', timezone: 'Mars/Base' });
    assert.deepEqual(((short.body.error as Json).details as { path: string }[]).map((detail) => detail.path).sort(), ['endpoint', 'timezone']);
    const cron = await api.call('POST', '/v1/monitors', { endpoint: PROFILE, params: { username: 'lunavoss' }, cron: '0 9 * * 1-5', timezone: 'Europe/Paris' });
    assert.equal(cron.status, 201, cron.text);
    const made = cron.body.data as Monitor & { cron: string; timezone: string };
    assert.deepEqual([made.cron, made.timezone, made.interval], ['0 9 * * 1-5', 'Europe/Paris', null]);
    assert.equal(cron.headers.get('location'), `/v1/monitors/${made.id}`);

    const other = await team(service.stores, 10);
    const stranger = client(service.base, other.key);
    assert.equal((await stranger.call('GET', `/v1/monitors/${made.id}`)).status, 404);
    assert.equal((await stranger.call('PATCH', `/v1/monitors/${made.id}`, { label: 'x' })).status, 404);
    assert.equal((await stranger.call('DELETE', `/v1/monitors/${made.id}`)).status, 404);
    assert.equal((await stranger.call('POST', `/v1/monitors/${made.id}/run`)).status, 404);
    assert.equal((await stranger.call('GET', `/v1/monitors/${made.id}/runs`)).status, 404);

    const body = { endpoint: PROFILE, params: { username: 'lunavoss' }, interval: '1h', label: 'same' };
    const first = await api.call('POST', '/v1/monitors', body, { 'idempotency-key': 'create-1' });
    const again = await api.call('POST', '/v1/monitors', { label: 'same', interval: '1h', params: { username: 'lunavoss' }, endpoint: PROFILE }, { 'idempotency-key': 'create-1' });
    assert.equal(again.status, 201);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.text, first.text, 'the same body in another key order is the same request');
    const reused = await api.call('POST', '/v1/monitors', { ...body, label: 'other' }, { 'idempotency-key': 'create-1' });
    assert.equal(reused.status, 422);
    assert.equal((reused.body.error as Json).code, 'IDEMPOTENCY_KEY_REUSED');

    for (let i = 0; i < 3; i++) await api.create({ ...body, label: `n${i}` });
    const over = await api.call('POST', '/v1/monitors', body);
    assert.equal(over.status, 409, 'at most MONITOR_MAX_PER_TEAM (5 here)');
    assert.equal((over.body.error as Json).code, 'CONFLICT');

    const page = await api.call('GET', '/v1/monitors?limit=2');
    const listed = page.body.data as { monitors: Monitor[]; paging: { cursor: string; hasMore: boolean } };
    assert.equal(listed.monitors.length, 2);
    assert.equal(listed.paging.hasMore, true);
    const rest = (await api.call('GET', `/v1/monitors?limit=100&cursor=${listed.paging.cursor}`)).body.data as { monitors: Monitor[]; paging: { hasMore: boolean } };
    assert.equal(rest.monitors.length, 3);
    assert.equal(rest.paging.hasMore, false);
    assert.equal((await api.call('GET', '/v1/monitors?cursor=%%%')).status, 400);
    const patched = await api.call('PATCH', `/v1/monitors/${made.id}`, { interval: '2h', watch: ['/profile/displayName'], label: null });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(
      [(patched.body.data as Monitor).interval, (patched.body.data as Monitor & { cron: null }).cron, (patched.body.data as Monitor).watch],
      ['2h', null, ['/profile/displayName']],
    );
    assert.equal((await api.call('PATCH', `/v1/monitors/${made.id}`, { interval: '0s' })).status, 422);
    assert.equal((await api.call('PATCH', `/v1/monitors/${made.id}`, {})).status, 422);
    assert.equal((await api.call('PUT', `/v1/monitors/${made.id}`, {})).status, 405);
    const deleted = await api.call('DELETE', `/v1/monitors/${made.id}`);
    assert.deepEqual(deleted.body.data, { id: made.id, deleted: true });
    assert.equal((await api.call('GET', `/v1/monitors/${made.id}`)).status, 404);
  });
});

describe('monitors on PostgreSQL, two nodes sharing the database', () => {
  let backends: TestBackends;
  let sandbox: RunningSandbox;
  const dirs: string[] = [];
  const served: string[] = [];

  before(async () => {
    backends = await testBackends();
    sandbox = await startSandbox({ seed: 'monitors-pg', portBase: 0, host: '127.0.0.1', observe: (answer) => served.push(answer.path) });
  });
  after(async () => {
    await sandbox.close();
    await backends.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('each slot runs once, on one node, and goes on when a node stops; one credit per run, no refunds', async () => {
    const url = await backends.freshDatabaseUrl();
    const prefix = backends.freshPrefix();
    const env = () => {
      const dir = mkdtempSync(join(tmpdir(), 'monitors-pg-'));
      dirs.push(dir);
      return { ...sandbox.env, DATA_DIR: dir, DATABASE_URL: url, REDIS_URL: backends.redisUrl, REDIS_PREFIX: prefix, MIGRATE: 'auto' };
    };
    const a = await node(env());
    const b = await node(env());
    let aStopped = false;
    try {
      const { teamId, key } = await team(a.stores, 1_000);
      const api = client(a.base, key);
      const viaB = client(b.base, key);
      const created = await api.create({ endpoint: PROFILE, params: { username: 'lunavoss' }, interval: '1s' });
      await until('four runs', () => viaB.runs(created.id), (runs) => runs.length >= 4);
      // A node goes away between slots; the other takes every later slot.
      await a.running.stop();
      aStopped = true;
      const before = (await viaB.runs(created.id)).length;
      await until('three runs on the other node', () => viaB.runs(created.id), (runs) => runs.length >= before + 3);
      await viaB.call('PATCH', `/v1/monitors/${created.id}`, { status: 'paused' });
      await sleep(1_500);
      const runs = await viaB.runs(created.id);
      assert.equal(new Set(runs.map((run) => run.at)).size, runs.length, 'one run per slot');
      const made = async (n: Node) => (await n.running.app.metrics.monitorRuns.get()).values.reduce((sum, value) => sum + value.value, 0);
      assert.equal((await made(a)) + (await made(b)), runs.length, 'no node ran a slot another recorded');
      const entries = await b.stores.ledger.entries(teamId, 10_000);
      assert.equal(entries.filter((entry) => entry.reason === 'refund').length, 0, 'no run was refunded (none ran twice)');
      assert.equal(entries.filter((entry) => entry.reason === 'charge').length, runs.filter((run) => run.status === 'succeeded').length);
      assert.equal(await ledgerMatches(b.stores, teamId), 1_000 - runs.filter((run) => run.status === 'succeeded').length);
      const ordered = [...runs].sort((x, y) => Date.parse(x.startedAt) - Date.parse(y.startedAt));
      for (let i = 1; i < ordered.length; i++) assert.ok(Date.parse(ordered[i]?.startedAt as string) >= Date.parse(ordered[i - 1]?.finishedAt as string), 'never overlapping');
    } finally {
      if (!aStopped) await a.running.stop();
      await b.running.stop();
    }
  });
});
