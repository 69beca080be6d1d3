// Slow, idle and numerous connections cannot lock other clients out: hundreds of slowloris
// (headers dripping), slow-body and idle connections from one address while clients on other
// loopback addresses (127.0.0.0/8 is all loopback on Linux) keep being served; the slow ones
// are answered 408 and closed in time; one address holds a bounded number of connections,
// the process a bounded total; trusted proxies are exempt from the per-address bound. The
// timeouts are shortened here so that the tests take seconds; the defaults are checked apart.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { loadConfig, parseTrustProxy } from '../../src/config.ts';
import { endpoints } from '../../src/endpoints/index.ts';
import { buildApp } from '../../src/server/app.ts';
import { addressKey, checkingIntervalMs, DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from '../../src/server/connections.ts';
import { openSqliteStores } from '../../src/store/sqlite/index.ts';
import { byId, startHarness, type Harness } from '../api/harness.ts';
import { sleep, until, urlOf } from '../api/support.ts';

const ATTACKER = '127.0.0.2';
const OTHERS = ['127.0.0.1', '127.0.0.3'];

interface Served {
  app: Harness;
  port: number;
}

async function serve(connections: Partial<ConnectionLimits>, trustProxy: string[] = []): Promise<Served> {
  const app = await startHarness({ credits: 1_000_000, rateLimit: 1_000_000, app: { connections, trustProxy } });
  await app.app.listen({ port: 0, host: '127.0.0.1' });
  return { app, port: (app.app.server.address() as { port: number }).port };
}

/** A raw connection from `localAddress`: when it was opened, what it received, and when it was closed. */
interface Held {
  socket: Socket;
  connectedAt: () => number | null;
  received: () => string;
  closed: Promise<number>;
  isClosed: () => boolean;
}

function hold(port: number, localAddress: string, start: string, drip: string | null, everyMs = 200): Held {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
  let received = '';
  let closed = false;
  let connectedAt: number | null = null;
  let timer: NodeJS.Timeout | undefined;
  socket.setEncoding('utf8');
  socket.on('connect', () => {
    connectedAt = Date.now();
    if (start) socket.write(start);
    if (drip) timer = setInterval(() => socket.writable && socket.write(drip), everyMs);
  });
  socket.on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => {});
  const closedAt = new Promise<number>((resolve) =>
    socket.on('close', () => {
      closed = true;
      clearInterval(timer);
      resolve(Date.now());
    }),
  );
  return { socket, connectedAt: () => connectedAt, received: () => received, closed: closedAt, isClosed: () => closed };
}

/** One request from `localAddress` on a fresh connection; the status, or the error's code. */
function fetchFrom(port: number, localAddress: string, path: string, headers: Record<string, string> = {}): Promise<number | string> {
  return new Promise((resolve) => {
    const request = httpRequest({ host: '127.0.0.1', port, path, localAddress, agent: false, headers, timeout: 10_000 }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    request.end();
  });
}

/** What `promise` resolves to within `ms`, or null. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** The status and error code of a raw answer carrying the envelope. */
function envelope(answer: string): { status: number; code: string; requestId: string } {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]);
  assert.match(head, /content-type: application\/json; charset=utf-8/i, answer);
  const parsed = JSON.parse(body) as { error: { code: string; message: string; requestId: string } };
  assert.deepEqual(Object.keys(parsed.error), ['code', 'message', 'requestId']);
  assert.equal(/x-request-id: (\S+)/i.exec(head)?.[1], parsed.error.requestId);
  return { status, code: parsed.error.code, requestId: parsed.error.requestId };
}

describe('defaults', () => {
  const dirs: string[] = [];
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('a whole request within 30 s, headers within 10 s, idle keep-alive 5 s, 4,096 connections, 64 per address', () => {
    assert.deepEqual(DEFAULT_CONNECTION_LIMITS, {
      requestTimeoutMs: 30_000,
      headersTimeoutMs: 10_000,
      keepAliveTimeoutMs: 5_000,
      maxConnections: 4_096,
      maxConnectionsPerAddress: 64,
    });
    const dir = mkdtempSync(join(tmpdir(), 'slow-clients-'));
    dirs.push(dir);
    const config = loadConfig({ DATA_DIR: dir });
    assert.deepEqual(config.connections, DEFAULT_CONNECTION_LIMITS);
    assert.deepEqual(config.trustProxy, []);
    const set = loadConfig({
      DATA_DIR: dir,
      REQUEST_TIMEOUT_MS: '20000',
      HEADERS_TIMEOUT_MS: '5000',
      KEEP_ALIVE_TIMEOUT_MS: '65000',
      MAX_CONNECTIONS: '100',
      MAX_CONNECTIONS_PER_ADDRESS: '7',
      TRUST_PROXY: '10.0.0.0/8, 192.0.2.7 fd00::/8',
    });
    assert.deepEqual(set.connections, { requestTimeoutMs: 20_000, headersTimeoutMs: 5_000, keepAliveTimeoutMs: 65_000, maxConnections: 100, maxConnectionsPerAddress: 7 });
    assert.deepEqual(set.trustProxy, ['10.0.0.0/8', '192.0.2.7', 'fd00::/8']);
    // A request timeout below the default headers timeout lowers it.
    assert.equal(loadConfig({ DATA_DIR: dir, REQUEST_TIMEOUT_MS: '4000' }).connections.headersTimeoutMs, 4_000);
    assert.throws(() => loadConfig({ DATA_DIR: dir, REQUEST_TIMEOUT_MS: '4000', HEADERS_TIMEOUT_MS: '5000' }), /HEADERS_TIMEOUT_MS \(5000\) must not exceed REQUEST_TIMEOUT_MS/);
    assert.throws(() => loadConfig({ DATA_DIR: dir, MAX_CONNECTIONS: '0' }), /MAX_CONNECTIONS must be an integer of at least 1/);
    for (const bad of ['true', '*', '10.0.0.0/33', 'lb.internal', '10.0.0.1/8/1', '::1/129']) {
      assert.throws(() => parseTrustProxy(bad), /TRUST_PROXY must list/, bad);
    }
  });

  test('the HTTP server gets them: timeouts checked every second at most, so a slow request is closed within 31 s', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'slow-clients-'));
    dirs.push(dir);
    const stores = openSqliteStores({ path: join(dir, 'service.db') });
    const app = await buildApp({ stores, endpoints, cursorSecret: 'test-cursor-secret-0123456789abcdef' });
    try {
      const server = app.server;
      assert.equal(server.requestTimeout, 30_000);
      assert.equal(server.headersTimeout, 10_000);
      assert.equal(server.keepAliveTimeout, 5_000);
      assert.equal(server.maxConnections, 4_096);
      const interval = (server as unknown as { connectionsCheckingInterval: number }).connectionsCheckingInterval;
      assert.equal(interval, checkingIntervalMs(DEFAULT_CONNECTION_LIMITS));
      assert.ok(interval <= 1_000);
      assert.ok(server.requestTimeout + interval <= 31_000, 'well within a minute');
    } finally {
      await app.close();
      await stores.close();
    }
  });

  test('IPv6 clients are counted per /64, IPv4-mapped ones as IPv4', () => {
    assert.equal(addressKey('127.0.0.2'), '127.0.0.2');
    assert.equal(addressKey('::ffff:192.0.2.9'), '192.0.2.9');
    assert.equal(addressKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:db8:1:2:bbbb:cccc:dddd:eeee'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:0db8:0001:0002::9'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:db8::1'), '2001:db8:0:0::/64');
    assert.equal(addressKey('::1'), '0:0:0:0::/64');
    assert.equal(addressKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
  });
});

describe('slowloris and slow bodies from one address', () => {
  const limits = { requestTimeoutMs: 3_000, headersTimeoutMs: 2_000, keepAliveTimeoutMs: 1_000, maxConnections: 2_000, maxConnectionsPerAddress: 50 };
  let served: Served;
  after(() => served?.app.close());

  test('hundreds of them: other addresses keep being served; the slow ones get 408 or 429 and are all closed in time', async () => {
    served = await serve(limits);
    const { port, app } = served;
    const endpoint = byId('linkpage-a.profile');
    const started = Date.now();
    // 300 slowloris and 100 slow-body connections, interleaved.
    const slow = Array.from({ length: 400 }, (_, i) =>
      i % 4 === 3
        ? hold(port, ATTACKER, `GET ${urlOf(endpoint, { cache_max_age: '1d' })} HTTP/1.1\r\nHost: x\r\nx-api-key: ${app.key}\r\nContent-Length: 100000\r\n\r\n`, `${i % 10}`, 250)
        : hold(port, ATTACKER, `GET /healthz?${i} HTTP/1.1\r\nHost: x\r\n`, `X-Drip-${i}: y\r\n`, 250),
    );

    // While they drip, clients on other addresses are served, again and again.
    await sleep(300);
    for (let round = 0; round < 10; round++) {
      for (const address of OTHERS) {
        assert.equal(await fetchFrom(port, address, '/healthz'), 200, `round ${round} from ${address}`);
        assert.equal(await fetchFrom(port, address, urlOf(endpoint, { cache_max_age: '1d' }), { 'x-api-key': app.key }), 200);
      }
    }

    // All slow connections are closed: the refused at once, the admitted at their timeout.
    const closedAt = await within(Promise.all(slow.map((held) => held.closed)), 20_000);
    assert.ok(closedAt, `still open after 20 s: ${slow.filter((held) => !held.isClosed()).length}`);
    const longest = Math.max(...closedAt) - started;
    assert.ok(longest < limits.requestTimeoutMs + 8_000, `the last slow connection closed after ${longest} ms`);

    const statuses = new Map<string, number>();
    for (const held of slow) {
      const { status, code } = envelopeOrAnswer(held.received());
      statuses.set(`${status} ${code}`, (statuses.get(`${status} ${code}`) ?? 0) + 1);
    }
    // 50 from the address at a time were admitted; everything beyond was refused with 429.
    const refused = statuses.get('429 RATE_LIMITED') ?? 0;
    const timedOut = statuses.get('408 REQUEST_TIMEOUT') ?? 0;
    const answered = statuses.get('200 ok') ?? 0;
    assert.equal(refused + timedOut + answered, slow.length, JSON.stringify([...statuses]));
    // At most 50 at a time were admitted: the slowloris ones held their place until their
    // headers' timeout at least, the slow-body ones were answered at once and made room for
    // others. So the time the timed-out ones held fits in 50 places over the attack's span
    // (a single timeout when the 400 connect at once; more on a busy machine, where they connect
    // over several and each timeout lets others in).
    const span = Math.max(...closedAt) - Math.min(...slow.map((held) => held.connectedAt() ?? started));
    const admittedAtMost = Math.floor((limits.maxConnectionsPerAddress * span) / limits.headersTimeoutMs);
    const summary = JSON.stringify({ statuses: [...statuses], span });
    assert.ok(timedOut <= admittedAtMost, summary);
    assert.ok(refused >= slow.length - admittedAtMost - answered, summary);
    assert.ok(timedOut > 0, 'slowloris connections that were admitted timed out with 408');
    assert.ok(answered > 0, 'slow-body connections that were admitted got their answer without their body');
    // And the address may connect again (once the server has seen the closes too).
    assert.ok(await until(async () => (await fetchFrom(port, ATTACKER, '/healthz')) === 200, 5_000));
  });
});

/** A raw answer: the envelope's status and code, or `ok` for a success. */
function envelopeOrAnswer(answer: string): { status: number; code: string } {
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(answer)?.[1]);
  if (status === 200) {
    assert.match(answer, /\r\nconnection: close\r\n/i, 'a request that announced a body is answered with Connection: close');
    return { status, code: 'ok' };
  }
  return envelope(answer);
}

describe('timeouts', () => {
  const limits = { requestTimeoutMs: 2_000, headersTimeoutMs: 1_000, keepAliveTimeoutMs: 1_000, maxConnections: 100, maxConnectionsPerAddress: 100 };
  let served: Served;
  after(() => served?.app.close());

  test('a connection that sends nothing, a slowloris and a request dripping within its headers time are closed with a 408 envelope', async () => {
    served = await serve(limits);
    const { port } = served;
    const started = Date.now();
    const silent = hold(port, ATTACKER, '', null);
    // Each header line well within any per-line limit, the whole never finished.
    const loris = hold(port, ATTACKER, 'GET /healthz HTTP/1.1\r\n', 'X-A: b\r\n', 100);
    // Headers complete in time, but the request's body never: a GET that announces a body is
    // answered and closed without it.
    const body = hold(port, ATTACKER, 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n', 'z', 500);
    for (const held of [silent, loris]) {
      const at = await held.closed;
      assert.ok(at - started >= limits.headersTimeoutMs - 100, `closed after ${at - started} ms, before the timeout`);
      assert.ok(at - started < limits.requestTimeoutMs + 5_000, `closed after ${at - started} ms`);
      const answer = envelope(held.received());
      assert.equal(answer.status, 408);
      assert.equal(answer.code, 'REQUEST_TIMEOUT');
      assert.match(held.received(), /\r\nconnection: close\r\n/i);
    }
    const at = await body.closed;
    assert.ok(at - started < 3_000, `the request with an unwanted body was closed after ${at - started} ms`);
    assert.match(body.received(), /^HTTP\/1\.1 200 [\s\S]*\r\nconnection: close\r\n/i);
  });

  test('an idle keep-alive connection is closed after its timeout; a busy one is not', async () => {
    const { port } = served;
    const idle = hold(port, ATTACKER, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', null);
    await until(() => idle.received().includes('{"status":"ok"}'));
    const answeredAt = Date.now();
    assert.match(idle.received(), /keep-alive/i);
    // A keep-alive client that sends a request every 300 ms stays connected meanwhile.
    const busy = hold(port, ATTACKER, '', 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', 300);
    const at = await idle.closed;
    // Node adds one second of grace to the announced timeout.
    assert.ok(at - answeredAt >= limits.keepAliveTimeoutMs - 100, `closed after ${at - answeredAt} ms`);
    assert.ok(at - answeredAt < limits.keepAliveTimeoutMs + 6_000, `closed after ${at - answeredAt} ms`);
    assert.equal(busy.isClosed(), false);
    assert.ok((busy.received().match(/HTTP\/1\.1 200 /g) ?? []).length >= 3);
    busy.socket.destroy();
  });
});

describe('connection caps', () => {
  const servers: Served[] = [];
  after(async () => {
    for (const served of servers) await served.app.close();
  });

  test('MAX_CONNECTIONS: beyond it new connections are closed at once; once the idle ones time out, clients are served again', async () => {
    const limits = { requestTimeoutMs: 4_000, headersTimeoutMs: 3_000, keepAliveTimeoutMs: 1_000, maxConnections: 40, maxConnectionsPerAddress: 1_000 };
    const served = await serve(limits);
    servers.push(served);
    const { port } = served;
    const idle = Array.from({ length: 40 }, () => hold(port, ATTACKER, '', null));
    await until(() => idle.every((held) => held.socket.readyState === 'open'));
    await sleep(200);
    const refused = await fetchFrom(port, OTHERS[1] as string, '/healthz');
    assert.notEqual(refused, 200, 'the process is at its cap');
    await Promise.all(idle.map((held) => held.closed));
    assert.equal(await fetchFrom(port, OTHERS[1] as string, '/healthz'), 200);
  });

  test('MAX_CONNECTIONS_PER_ADDRESS: the excess gets a 429 envelope and is closed; other addresses and trusted proxies are not bound by it', async () => {
    const limits = { requestTimeoutMs: 10_000, headersTimeoutMs: 8_000, keepAliveTimeoutMs: 1_000, maxConnections: 1_000, maxConnectionsPerAddress: 5 };
    const served = await serve(limits, ['127.0.0.4']);
    servers.push(served);
    const { port } = served;
    const attacker = Array.from({ length: 5 }, () => hold(port, ATTACKER, '', null));
    await sleep(300);
    assert.ok(attacker.every((held) => !held.isClosed() && held.received() === ''), 'five are admitted');
    const opened = Date.now();
    const excess = hold(port, ATTACKER, '', null);
    const closedAt = await excess.closed;
    assert.ok(closedAt - opened < limits.headersTimeoutMs, `refused, not timed out: closed after ${closedAt - opened} ms`);
    const answer = envelope(excess.received());
    assert.equal(answer.status, 429);
    assert.equal(answer.code, 'RATE_LIMITED');
    assert.match(excess.received(), /\r\nretry-after: \d+\r\n/i);
    // A request sent on a refused connection is read and dropped, never answered as well.
    const eager = hold(port, ATTACKER, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', null);
    await eager.closed;
    assert.equal((eager.received().match(/HTTP\/1\.1 /g) ?? []).length, 1);
    assert.match(eager.received(), /^HTTP\/1\.1 429 /);

    // Another address is served; a trusted proxy may hold many more.
    assert.equal(await fetchFrom(port, OTHERS[1] as string, '/healthz'), 200);
    const proxy = Array.from({ length: 20 }, () => hold(port, '127.0.0.4', '', null));
    await sleep(300);
    assert.ok(proxy.every((held) => !held.isClosed() && held.received() === ''), 'the proxy connections are admitted');
    for (const held of [...proxy, ...attacker]) held.socket.destroy();
    // Closed connections are counted out: the address may connect again.
    await until(async () => (await fetchFrom(port, ATTACKER, '/healthz')) === 200);
    assert.equal(await fetchFrom(port, ATTACKER, '/healthz'), 200);
  });
});
