// Running the service: configuration from the environment, health and readiness, draining on
// shutdown (in-flight requests finish and settle their credit once), the real `src/main.ts`
// process (start-up, SIGTERM), and crash recovery of abandoned credit reservations.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig, PLATFORM_ORIGINS } from '../../src/config.ts';
import { endpoints } from '../../src/endpoints/index.ts';
import { buildApp } from '../../src/server/app.ts';
import { SETTLED_RESERVATION_DAYS } from '../../src/server/plugins/maintenance.ts';
import { generateKey } from '../../src/server/keys.ts';
import { openSqliteStores } from '../../src/store/sqlite/index.ts';
import type { Stores } from '../../src/store/types.ts';
import { byId, defaultScript, fixtureResult, startHarness } from '../api/harness.ts';
import { expectError, expectNotReady, ledgerState, sleep, until, urlOf, variantQuery } from '../api/support.ts';
import { freePort, refusedPort, type RefusedPort } from '../support/ports.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const DAY_MS = 24 * 60 * 60 * 1000;
const tempDir = () => mkdtempSync(join(tmpdir(), 'lifecycle-test-'));
const NO_STACK = /^\s+at .+[:(]\d+/m;

/** True when `promise` settles within `ms`, false otherwise. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe('configuration from the environment', () => {
  const dirs: string[] = [];
  const dir = () => {
    const made = tempDir();
    dirs.push(made);
    return made;
  };
  after(() => {
    for (const made of dirs) rmSync(made, { recursive: true, force: true });
  });

  test('PORT, HOST, DATA_DIR and the origins are read; defaults fill the rest', () => {
    const dataDir = join(dir(), 'nested', 'data');
    const config = loadConfig({ PORT: '4321', HOST: '0.0.0.0', DATA_DIR: dataDir, SNAPMSG_ORIGIN: 'http://127.0.0.1:4101', METRICS_TOKEN: 'tok' });
    assert.equal(config.port, 4321);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.dataDir, dataDir);
    assert.ok(statSync(dataDir).isDirectory(), 'DATA_DIR is created');
    assert.equal(config.origins.snapmsg, 'http://127.0.0.1:4101');
    assert.equal(config.origins.socialnet, 'https://www.socialnet.example');
    assert.equal(config.origins['linkpage-a'], 'https://linkpage-a.example');
    assert.equal(config.metricsToken, 'tok');
    const defaults = loadConfig({ DATA_DIR: dir() });
    assert.equal(defaults.port, 3000);
    assert.equal(defaults.host, '127.0.0.1');
    assert.equal(defaults.metricsToken, undefined);
    assert.equal(defaults.requestBudgetMs, 15_000);
    assert.equal(defaults.reservationMarginMs, 60_000);
    assert.equal(defaults.cacheMaxBytes, 1024 ** 3);
    assert.equal(defaults.logLevel, 'info');
  });

  test('an origin with a path (or query, or credentials, or another scheme) is rejected with a clear error', () => {
    const dataDir = dir();
    assert.equal(loadConfig({ DATA_DIR: dataDir, SHOPFRONT_ORIGIN: 'https://shop.test:8443/' }).origins.shopfront, 'https://shop.test:8443');
    for (const [variable, value] of [
      ['SOCIALNET_ORIGIN', 'https://www.socialnet.example/feed'],
      ['SNAPMSG_ORIGIN', 'http://127.0.0.1:4101/api/'],
      ['LINKPAGE_A_ORIGIN', 'https://linkpage-a.example/?x=1'],
      ['LINKPAGE_B_ORIGIN', 'https://user:pw@linkpage-b.example'],
      ['SHOPFRONT_ORIGIN', 'ftp://www.shopfront.example'],
      ['SHOPFRONT_ORIGIN', 'not a url'],
    ] as const) {
      assert.throws(
        () => loadConfig({ DATA_DIR: dataDir, [variable]: value }),
        (error: Error) => error.message.includes(variable) && error.message.includes(value) && /origin/.test(error.message),
        `${variable}=${value}`,
      );
    }
  });

  test('PORT and the numeric settings must be integers in range', () => {
    const dataDir = dir();
    for (const [variable, value] of [
      ['PORT', 'abc'],
      ['PORT', '-1'],
      ['REQUEST_BUDGET_MS', '10'],
      ['CACHE_MAX_BYTES', '1.5'],
    ] as const) {
      assert.throws(
        () => loadConfig({ DATA_DIR: dataDir, [variable]: value }),
        (error: Error) => error.message.startsWith(`${variable} must be an integer`) && error.message.includes(`"${value}"`),
        `${variable}=${value}`,
      );
    }
  });

  test('without CURSOR_SECRET a secret is generated once into DATA_DIR/cursor-secret and reused', () => {
    const dataDir = dir();
    const file = join(dataDir, 'cursor-secret');
    assert.equal(existsSync(file), false);
    const first = loadConfig({ DATA_DIR: dataDir }).cursorSecret;
    assert.ok(first.length >= 32, 'a long random secret');
    assert.equal(readFileSync(file, 'utf8').trim(), first);
    assert.equal(statSync(file).mode & 0o777, 0o600, 'readable by the owner only');
    assert.equal(loadConfig({ DATA_DIR: dataDir }).cursorSecret, first, 'the next start reuses it');
    assert.notEqual(loadConfig({ DATA_DIR: dir() }).cursorSecret, first, 'another data directory gets its own');
  });

  test('CURSOR_SECRET, when set, is used as is (at least 16 characters) and nothing is written', () => {
    const dataDir = dir();
    assert.equal(loadConfig({ DATA_DIR: dataDir, CURSOR_SECRET: 'a-configured-secret-value' }).cursorSecret, 'a-configured-secret-value');
    assert.equal(existsSync(join(dataDir, 'cursor-secret')), false);
    assert.throws(() => loadConfig({ DATA_DIR: dataDir, CURSOR_SECRET: 'too-short' }), /CURSOR_SECRET must be at least 16 characters/);
  });
});

describe('health and readiness', () => {
  test('/healthz and /readyz are 200 while the store is reachable', async () => {
    const h = await startHarness();
    try {
      const health = await h.app.inject({ method: 'GET', url: '/healthz' });
      assert.equal(health.statusCode, 200);
      assert.deepEqual(health.json(), { status: 'ok' });
      const ready = await h.app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 200);
      assert.equal(ready.headers['content-type'], 'application/json; charset=utf-8');
      assert.deepEqual(ready.json(), { status: 'ready', backends: { sqlite: 'up' } });
    } finally {
      await h.close();
    }
  });

  test('/readyz is 503 SERVICE_UNAVAILABLE with Retry-After when the store cannot be reached; /healthz stays 200', async () => {
    let down = false;
    const h = await startHarness({
      wrapStores: (stores: Stores): Stores => ({
        ...stores,
        backends: async () => (down ? { sqlite: 'down' } : stores.backends()),
      }),
    });
    try {
      assert.equal((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
      down = true;
      const ready = await h.app.inject({ method: 'GET', url: '/readyz' });
      expectNotReady(ready, { sqlite: 'down' });
      assert.ok(!ready.body.includes('ECONNREFUSED') && !ready.body.includes('10.9.8.7'), 'the cause is not leaked');
      assert.equal((await h.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
      down = false;
      assert.equal((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200, 'ready again when the store is back');
    } finally {
      await h.close();
    }
  });

  test('with the SQLite store closed, /readyz and API requests are 503', async () => {
    const h = await startHarness();
    try {
      await h.stores.close();
      expectNotReady(await h.app.inject({ method: 'GET', url: '/readyz' }), { sqlite: 'down' });
      const endpoint = byId('snapmsg.profile');
      const api = await h.get(urlOf(endpoint));
      expectError(api, 503, 'SERVICE_UNAVAILABLE', { authed: null });
      assert.ok(api.headers['retry-after']);
    } finally {
      await h.close();
    }
  });
});

describe('draining on shutdown', () => {
  /** A gate the scripted extractor waits on, and a promise that resolves when it is entered. */
  const gated = () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered!: () => void;
    const started = new Promise<void>((resolve) => {
      entered = resolve;
    });
    return { gate, release, started, entered };
  };

  test('app.close() (what SIGTERM does) lets an in-flight request finish with 200, charged exactly once', async () => {
    const h = await startHarness({ credits: 10 });
    const endpoint = byId('linkpage-a.profile');
    const { gate, release, started, entered } = gated();
    h.script = async (e) => {
      entered();
      await gate;
      return fixtureResult(e);
    };
    try {
      await h.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = h.app.server.address() as AddressInfo;
      const base = `http://127.0.0.1:${port}`;
      const inFlight = fetch(`${base}${urlOf(endpoint, {}, variantQuery(endpoint, 'drain'))}`, { headers: { 'x-api-key': h.key } });
      await started;
      assert.equal((await ledgerState(h, h.team.id)).pending, 1, 'the credit is reserved while the scrape runs');

      let closed = false;
      const closing = h.app.close().then(() => {
        closed = true;
      });
      await sleep(50);
      assert.equal(closed, false, 'close waits for the request in flight');
      // No new connections are accepted while draining.
      await assert.rejects(fetch(`${base}/healthz`, { headers: { connection: 'close' } }));

      release();
      const response = await inFlight;
      assert.equal(response.status, 200);
      const body = (await response.json()) as { meta: { requestId: string; creditsCharged: number; creditsRemaining: number } };
      assert.equal(body.meta.creditsCharged, 1);
      assert.equal(body.meta.creditsRemaining, 9);
      // The keep-alive connection of the finished request does not hold the close open.
      assert.equal(await within(closing, 2_000), true, 'close completes promptly after the last response');

      const state = await ledgerState(h, h.team.id);
      assert.deepEqual(state, { balance: 9, sum: 9, rows: 2, pending: 0 });
      const rows = (await h.stores.ledger.entries(h.team.id, 10)).filter((entry) => entry.requestId === body.meta.requestId);
      assert.deepEqual(
        rows.map((entry) => [entry.reason, entry.amount]),
        [['charge', -1]],
        'one charge, no refund',
      );
      // Maintenance after the fact finds nothing to refund.
      h.clock.now += 24 * 60 * 60 * 1000;
      await h.app.maintain();
      assert.deepEqual(await ledgerState(h, h.team.id), state);
    } finally {
      release();
      h.script = defaultScript;
      h.app.server.closeAllConnections();
      await h.close();
    }
  });

  test('a request still running when the drain gives up is aborted and refunded exactly once', async () => {
    const h = await startHarness({ credits: 10 });
    const endpoint = byId('snapmsg.profile');
    const { gate, release, started, entered } = gated();
    h.script = async (e, _request, signal) => {
      entered();
      await Promise.race([
        gate,
        new Promise<never>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true })),
      ]);
      return fixtureResult(e);
    };
    try {
      const before = await ledgerState(h, h.team.id);
      const pending = h.get(urlOf(endpoint, {}, variantQuery(endpoint, 'abort')));
      await started;
      h.app.abortScrapes();
      const response = await pending;
      assert.notEqual(response.statusCode, 200, response.body);
      assert.ok(response.statusCode >= 500, `an aborted scrape is a server-side failure, got ${response.statusCode}`);
      assert.deepEqual(Object.keys(response.json() as object), ['error']);
      assert.ok(await until(async () => (await ledgerState(h, h.team.id)).pending === 0));
      const after = await ledgerState(h, h.team.id);
      assert.equal(after.balance, before.balance, 'refunded');
      assert.equal(after.sum, after.balance);
      assert.equal(after.rows, before.rows + 2, 'one charge and one refund');
    } finally {
      release();
      h.script = defaultScript;
      await h.close();
    }
  });
});

describe('crash recovery of abandoned reservations', () => {
  test('an expired pending reservation is refunded once at start-up; a live one only after its deadline', async () => {
    const dir = tempDir();
    const path = join(dir, 'service.db');
    const start = Date.now();
    const clock = { now: start };
    try {
      // A process reserved two credits and died: one deadline already past, one in the future.
      const crashed = openSqliteStores({ path });
      const team = await crashed.accounts.createTeam({ name: 'crash', credits: 10, rateLimit: 100 });
      const expired = await crashed.ledger.reserve(team.id, 1, 'req_expiredreservation000000', clock.now - 1_000);
      const live = await crashed.ledger.reserve(team.id, 1, 'req_livereservation000000000', clock.now + 60_000);
      assert.ok(expired.ok && live.ok);
      assert.equal(await crashed.ledger.balance(team.id), 8);
      await crashed.close();

      const boot = async () => {
        const stores = openSqliteStores({ path });
        const app = await buildApp({ stores, endpoints, cursorSecret: 'test-cursor-secret-0123456789abcdef', now: () => clock.now, openMetrics: true });
        await app.ready();
        return { stores, app };
      };
      const refunds = async (stores: Stores) => (await stores.ledger.entries(team.id, 100)).filter((entry) => entry.reason === 'refund');

      const first = await boot();
      assert.equal(await first.stores.ledger.balance(team.id), 9, 'the expired reservation is refunded at start-up');
      assert.deepEqual(
        (await refunds(first.stores)).map((entry) => [entry.requestId, entry.amount]),
        [['req_expiredreservation000000', 1]],
      );
      assert.equal((await first.stores.ledger.usage(team.id))?.pending, 1, 'the live one stays pending');
      assert.match((await first.app.inject({ method: 'GET', url: '/metrics' })).body, /^api_credits_refunded_total\{reason="abandoned"\} 1$/m);
      await first.app.close();
      await first.stores.close();

      const second = await boot();
      assert.equal(await second.stores.ledger.balance(team.id), 9, 'a second start refunds nothing again');
      assert.equal((await refunds(second.stores)).length, 1);

      clock.now += 30_000;
      await second.app.maintain();
      assert.equal(await second.stores.ledger.balance(team.id), 9, 'not before its deadline');

      clock.now += 31_000;
      await second.app.maintain();
      await second.app.maintain();
      assert.equal(await second.stores.ledger.balance(team.id), 10, 'after its deadline, once');
      assert.deepEqual((await refunds(second.stores)).map((entry) => entry.requestId).sort(), ['req_expiredreservation000000', 'req_livereservation000000000']);
      const usage = await second.stores.ledger.usage(team.id);
      assert.equal(usage?.pending, 0);
      const sum = (await second.stores.ledger.entries(team.id, 100)).reduce((total, entry) => total + entry.amount, 0);
      assert.equal(sum, 10, 'the ledger sums to the balance');

      // Settled, they are kept SETTLED_RESERVATION_DAYS past their deadline, then pruned.
      const settledFor = async (id: string) => (await second.stores.ledger.refund(id).then(() => 'kept', () => 'pruned'));
      clock.now = start + SETTLED_RESERVATION_DAYS * DAY_MS - 1_000;
      await second.app.maintain();
      assert.deepEqual([await settledFor(expired.reservationId), await settledFor(live.reservationId)], ['kept', 'kept']);
      clock.now = start + SETTLED_RESERVATION_DAYS * DAY_MS;
      await second.app.maintain();
      assert.deepEqual([await settledFor(expired.reservationId), await settledFor(live.reservationId)], ['pruned', 'kept']);
      clock.now = start + SETTLED_RESERVATION_DAYS * DAY_MS + 60_001;
      await second.app.maintain();
      assert.deepEqual([await settledFor(expired.reservationId), await settledFor(live.reservationId)], ['pruned', 'pruned']);
      assert.equal(await second.stores.ledger.balance(team.id), 10, 'pruning changes no balance');
      assert.equal((await second.stores.ledger.entries(team.id, 100)).length, 5, 'nor the ledger');
      await second.app.close();
      await second.stores.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the real server process (src/main.ts)', () => {
  /** Every platform origin pointed at a local port that refuses connections: nothing leaves the machine. */
  let deadOrigins: Record<string, string> = {};
  let refused: RefusedPort | null = null;

  /** Spawns `node src/main.ts` with the same Node, with an IPC channel; collects its output and exit. */
  const serve = (env: Record<string, string>) => {
    const { CURSOR_SECRET: _secret, METRICS_TOKEN: _token, ...inherited } = process.env;
    const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', 'src/main.ts'], {
      cwd: ROOT,
      env: { ...inherited, LOG_LEVEL: 'info', REQUEST_BUDGET_MS: '1000', ...deadOrigins, ...env },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const output = { stdout: '', stderr: '' };
    child.stdout?.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    /** The address it reports over IPC once it listens; null when it ends first (its output read). */
    const listening = new Promise<string | null>((resolve) => {
      child.on('message', (message: { listening?: string }) => resolve(message.listening ?? null));
      child.once('close', () => resolve(null));
    });
    return { child, output, exited, listening };
  };

  let dir = '';
  let child: ChildProcess | null = null;
  before(async () => {
    dir = tempDir();
    const closed = await refusedPort();
    refused = closed;
    deadOrigins = Object.fromEntries(Object.values(PLATFORM_ORIGINS).map(({ variable }) => [variable, closed.origin]));
  });
  after(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await refused?.release();
    rmSync(dir, { recursive: true, force: true });
  });

  test('an origin with a path stops the start with a clear message and no stack trace', async () => {
    const { output, exited } = serve({ DATA_DIR: dir, PORT: '0', SOCIALNET_ORIGIN: 'https://www.socialnet.example/feed' });
    const { code } = await exited;
    assert.equal(code, 1);
    assert.match(output.stderr, /SOCIALNET_ORIGIN must be an origin \(scheme, host, optional port; no path\), got "https:\/\/www\.socialnet\.example\/feed"/);
    assert.doesNotMatch(output.stderr, NO_STACK);
  });

  test('starts on PORT, refunds a crash leftover, answers, logs, and exits 0 promptly on SIGTERM', async () => {
    // Data a crashed predecessor left behind: a team, a key, a reservation past its deadline.
    const setup = openSqliteStores({ path: join(dir, 'service.db') });
    const team = await setup.accounts.createTeam({ name: 'served', credits: 5, rateLimit: 100 });
    const generated = generateKey();
    await setup.accounts.createKey({ teamId: team.id, name: 'k', hash: generated.hash, prefix: generated.prefix, last4: generated.last4 });
    assert.ok((await setup.ledger.reserve(team.id, 1, 'req_abandonedbyacrash0000000', Date.now() - 1)).ok);
    await setup.close();

    // On the PORT given: one nothing used a moment ago, and another when something else on the
    // machine took it meanwhile (the server then says so and exits).
    let port = await freePort();
    let server = serve({ DATA_DIR: dir, PORT: String(port), HOST: '127.0.0.1' });
    for (let attempt = 2; attempt <= 5 && (await server.listening) === null && /EADDRINUSE/.test(server.output.stderr); attempt++) {
      port = await freePort();
      server = serve({ DATA_DIR: dir, PORT: String(port), HOST: '127.0.0.1' });
    }
    child = server.child;
    const base = `http://127.0.0.1:${port}`;
    assert.equal(await server.listening, base, `the server came up on PORT and said so: ${server.output.stderr}`);
    assert.equal((await fetch(`${base}/healthz`)).status, 200);

    assert.equal((await fetch(`${base}/readyz`)).status, 200);
    assert.ok(existsSync(join(dir, 'cursor-secret')), 'the cursor secret was generated into DATA_DIR');
    const openapi = await fetch(`${base}/openapi.json`);
    assert.equal(((await openapi.json()) as { openapi: string }).openapi, '3.1.0');

    // The start-up refunded the abandoned reservation (read through a second connection).
    const reader = openSqliteStores({ path: join(dir, 'service.db') });
    try {
      assert.equal(await reader.ledger.balance(team.id), 5);
      assert.equal((await reader.ledger.usage(team.id))?.pending, 0);
    } finally {
      await reader.close();
    }

    // Authenticated and admitted (rate headers), then 501 while the endpoint has no extractor,
    // or 502 once it has one (its upstream is a closed port); not charged either way.
    const endpoint = endpoints.find((candidate) => !candidate.extractor) ?? byId('linkpage-a.profile');
    const response = await fetch(`${base}${urlOf(endpoint)}`, { headers: { 'x-api-key': generated.key } });
    const requestId = response.headers.get('x-request-id');
    assert.equal(response.headers.get('x-ratelimit-limit'), '100');
    const errorCode = ((await response.json()) as { error: { code: string } }).error.code;
    if (endpoint.extractor) assert.deepEqual([response.status, errorCode], [502, 'UPSTREAM_BLOCKED']);
    else assert.deepEqual([response.status, errorCode], [501, 'NOT_IMPLEMENTED']);
    assert.ok(await until(() => server.output.stdout.includes(`"requestId":"${requestId}"`)), 'the request is logged');
    assert.ok(!server.output.stdout.includes(generated.key), 'the key is not logged');

    const stopping = Date.now();
    server.child.kill('SIGTERM');
    const { code, signal } = await server.exited;
    assert.equal(signal, null);
    assert.equal(code, 0, server.output.stderr);
    assert.ok(Date.now() - stopping < 5_000, 'exits promptly');
    assert.match(server.output.stdout, /draining and stopping/);
    assert.doesNotMatch(server.output.stderr, NO_STACK);
  });
});
