// Proxy pools (src/upstream/proxies.ts and the client): requests go out through the platform's
// proxies in turn; a proxy whose address the platform blocks, or that cannot be reached, is
// benched and the request moves on to another, up to two more; credentials never appear in what
// the client reports. The proxies are local CONNECT proxies, each leaving from its own loopback
// address (127.0.0.x), so the platform can tell them apart as a real one tells IPs apart.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { UpstreamClient } from '../../src/upstream/client.ts';
import { isUpstreamOutcome } from '../../src/upstream/outcomes.ts';
import { parseProxies, ProxyPool } from '../../src/upstream/proxies.ts';
import { connectProxy, socksProxy } from '../support/proxies.ts';
import { refusedPort } from '../support/ports.ts';

async function listen(server: Server, t: TestContext): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections?.();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return (server.address() as AddressInfo).port;
}

/** The platform: 429 for requests from a blocked address, 200 naming the address otherwise. */
async function platform(t: TestContext, blocked: Set<string>): Promise<{ origin: string; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((request, response) => {
    const from = String(request.socket.remoteAddress).replace('::ffff:', '');
    seen.push(from);
    if (blocked.has(from)) response.writeHead(429).end();
    else response.writeHead(200, { 'content-type': 'text/plain' }).end(`hello ${from}`);
  });
  return { origin: `http://127.0.0.1:${await listen(server, t)}`, seen };
}

function client(t: TestContext, origin: string, proxies: string): UpstreamClient {
  const c = new UpstreamClient({
    platforms: { shop: { origin, hosts: ['www.shop.example'] } },
    proxies: { shop: parseProxies('SHOPFRONT_PROXIES', proxies) },
    random: () => 0,
    backoffMs: 1,
  });
  t.after(() => c.close());
  return c;
}
const get = (c: UpstreamClient, path = '/') => c.bind('shop', new AbortController().signal, Date.now() + 5_000)({ path, kind: 'page' });

test('requests take the proxies in turn; a blocked one is benched and the request moves on; the bench ends', async (t) => {
  const blocked = new Set(['127.0.0.2']);
  const { origin, seen } = await platform(t, blocked);
  const a = await connectProxy(t, '127.0.0.2');
  const b = await connectProxy(t, '127.0.0.3');
  const c = client(t, origin, `http://127.0.0.1:${a.port},http://127.0.0.1:${b.port}`);
  const first = await get(c);
  assert.equal(first.body, 'hello 127.0.0.3', 'blocked through A, answered through B');
  assert.deepEqual(seen, ['127.0.0.2', '127.0.0.3']);
  assert.ok((c.proxyStates('shop')[`http://127.0.0.1:${a.port}`] ?? 0) > Date.now(), 'A is benched');
  for (let i = 0; i < 4; i++) assert.equal((await get(c)).body, 'hello 127.0.0.3', 'A is skipped while benched');
  assert.equal(seen.filter((from) => from === '127.0.0.2').length, 1);
});

test('a block through every proxy ends the request as blocked after at most three, naming proxies without their credentials', async (t) => {
  const blocked = new Set(['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5']);
  const { origin, seen } = await platform(t, blocked);
  const proxies = await Promise.all(['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'].map((address) => connectProxy(t, address, 'user:s3cret-pass')));
  const c = client(t, origin, proxies.map((p) => `http://user:s3cret-pass@127.0.0.1:${p.port}`).join(','));
  const error = await get(c).then(
    () => assert.fail('blocked'),
    (caught: unknown) => caught,
  );
  assert.ok(isUpstreamOutcome(error) && error.kind === 'blocked', String(error));
  assert.equal(seen.length, 3, 'the first proxy and two more');
  assert.match(error.message, /blocked through 3 proxies/);
  assert.doesNotMatch(`${error.message} ${String(error.cause)} ${JSON.stringify(c.proxyStates('shop'))}`, /s3cret|user:/);
  const again = await get(c).then(
    () => null,
    (caught: unknown) => caught as Error,
  );
  assert.match(String(again?.message), /blocked through|no proxy for shop is usable/);
});

test('a proxy that cannot be reached is benched and another takes the request; credentials reach the proxy that wants them', async (t) => {
  const { origin, seen } = await platform(t, new Set());
  const dead = await refusedPort();
  t.after(() => dead.release());
  const deadPort = dead.port;
  const alive = await connectProxy(t, '127.0.0.6', 'ann:pw');
  const c = client(t, origin, `http://127.0.0.1:${deadPort},http://ann:pw@127.0.0.1:${alive.port}`);
  assert.equal((await get(c)).body, 'hello 127.0.0.6');
  assert.equal(alive.tunnels(), 1);
  assert.ok((c.proxyStates('shop')[`http://127.0.0.1:${deadPort}`] ?? 0) > Date.now(), 'the dead one is benched');
  assert.deepEqual(seen, ['127.0.0.6']);
});

test('a request bound to a proxy (a session\'s) goes through it alone; blocked there, or benched, it ends blocked without moving on', async (t) => {
  const blocked = new Set<string>();
  const { origin, seen } = await platform(t, blocked);
  const a = await connectProxy(t, '127.0.0.7');
  const b = await connectProxy(t, '127.0.0.8');
  const c = client(t, origin, `http://127.0.0.1:${a.port},http://127.0.0.1:${b.port}`);
  const labelB = `http://127.0.0.1:${b.port}`;
  const first = await get(c);
  assert.equal(first.via, `http://127.0.0.1:${a.port}`, 'the answer names the proxy it came through');
  const bound = (via: string) => c.bind('shop', new AbortController().signal, Date.now() + 5_000)({ path: '/', kind: 'page', via });
  for (let i = 0; i < 3; i++) assert.equal((await bound(labelB)).body, 'hello 127.0.0.8');
  blocked.add('127.0.0.8');
  const count = seen.length;
  const error = await bound(labelB).then(
    () => null,
    (caught: unknown) => caught,
  );
  assert.ok(isUpstreamOutcome(error) && error.kind === 'blocked');
  assert.equal(seen.length, count + 1, 'not moved on to A');
  const benched = await bound(labelB).then(
    () => null,
    (caught: unknown) => caught as Error,
  );
  assert.match(String(benched?.message), /which this request is bound to, is benched/);
  assert.equal(seen.length, count + 1, 'no request while benched');
  assert.equal((await get(c)).body, 'hello 127.0.0.7', 'unbound requests use the others');
});

test('socks5 proxies, with credentials, in the same pool: a blocked one benched, another takes the request', async (t) => {
  const { origin, seen } = await platform(t, new Set(['127.0.0.31']));
  const a = await socksProxy(t, '127.0.0.31', { user: 'sam', password: 'p4ss' });
  const b = await socksProxy(t, '127.0.0.32', { user: 'sam', password: 'p4ss' });
  const c = client(t, origin, `socks5://sam:p4ss@127.0.0.1:${a.port},socks5://sam:p4ss@127.0.0.1:${b.port}`);
  const answer = await get(c);
  assert.equal(answer.body, 'hello 127.0.0.32');
  assert.equal(answer.via, `socks5://127.0.0.1:${b.port}`);
  assert.deepEqual(seen, ['127.0.0.31', '127.0.0.32']);
  assert.equal((await get(c)).body, 'hello 127.0.0.32');
});

test('a benched proxy comes back when its bench ends; the bench grows with failures in a row and a success resets it', () => {
  const pool = new ProxyPool(parseProxies('P', 'http://10.0.0.1:1,http://10.0.0.2:2'), 1);
  const [a, b] = pool.proxies as [(typeof pool.proxies)[number], (typeof pool.proxies)[number]];
  const t0 = 1_000_000;
  assert.equal(pool.pick(new Set(), t0), a);
  assert.equal(pool.pick(new Set(), t0), b, 'in turn');
  assert.deepEqual([a.bench(t0), a.bench(t0), a.bench(t0)], [5_000, 10_000, 20_000]);
  assert.equal(pool.pick(new Set(), t0 + 1_000), b);
  assert.equal(pool.pick(new Set(), t0 + 1_000), b, 'a is benched');
  assert.equal(a.benchedUntil, t0 + 20_000);
  assert.equal(pool.pick(new Set([b]), t0 + 1_000), null, 'none left');
  assert.equal(pool.pick(new Set([b]), t0 + 20_000), a, 'back when the bench ends');
  a.succeeded();
  assert.equal(a.bench(t0), 5_000, 'a success reset the growth');
  for (let i = 0; i < 20; i++) a.bench(t0);
  assert.equal(a.benchedUntil, t0 + 5 * 60_000, 'at most 5 minutes');
});

test('proxy lists: comma-separated or @file, http, https and socks5 with a port; bad entries named without credentials', () => {
  assert.deepEqual(parseProxies('UPSTREAM_PROXIES', 'http://u:p@10.0.0.1:3128, socks5://10.0.0.2:1080'), [
    { url: 'http://u:p@10.0.0.1:3128/', label: 'http://10.0.0.1:3128' },
    { url: 'socks5://10.0.0.2:1080', label: 'socks5://10.0.0.2:1080' },
  ]);
  const fromFile = parseProxies('SHOPFRONT_PROXIES', '@/etc/proxies', () => '# pool\nhttps://10.0.0.3:443\n\nhttp://10.0.0.4:8080 # spare\n');
  assert.deepEqual(fromFile.map((p) => p.label), ['https://10.0.0.3:443', 'http://10.0.0.4:8080']);
  assert.throws(() => parseProxies('UPSTREAM_PROXIES', 'ftp://u:secret@10.0.0.1:21'), (error: Error) => /UPSTREAM_PROXIES: entry 1 must be http/.test(error.message) && !error.message.includes('secret'));
  assert.throws(() => parseProxies('UPSTREAM_PROXIES', 'socks5://u:secret@10.0.0.1'), (error: Error) => /and a port for socks5/.test(error.message) && !error.message.includes('secret'));
  assert.deepEqual(parseProxies('UPSTREAM_PROXIES', 'http://10.0.0.9').map((p) => p.label), ['http://10.0.0.9:80'], 'the scheme\'s default port');
  assert.throws(() => parseProxies('UPSTREAM_PROXIES', 'not a url'), /entry 1 is not a URL/);
  assert.throws(() => parseProxies('X_PROXIES', '@/nope', () => {
    throw Object.assign(new Error('gone'), { code: 'ENOENT' });
  }), /X_PROXIES: cannot read the proxy list \/nope: ENOENT/);
});
