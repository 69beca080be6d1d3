// The pace per egress: each proxy has its own concurrency and rate per platform, and this
// machine's own address its own, so a pool of proxies carries several times the scrapes of one
// address at the default pace; a request takes the egress whose turn comes first.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { DEFAULT_PACE } from '../../src/config.ts';
import { UpstreamClient } from '../../src/upstream/client.ts';
import { isUpstreamOutcome } from '../../src/upstream/outcomes.ts';
import { DIRECT, LocalPacer } from '../../src/upstream/pacing.ts';
import { parseProxies } from '../../src/upstream/proxies.ts';
import { connectProxy } from '../support/proxies.ts';

const PROXIES = 8;
const WINDOW_MS = 2_000;
const REQUESTS = 120;

async function platform(t: TestContext): Promise<{ origin: string; from: Map<string, number> }> {
  const from = new Map<string, number>();
  const server = createServer((request, response) => {
    const address = String(request.socket.remoteAddress).replace('::ffff:', '');
    from.set(address, (from.get(address) ?? 0) + 1);
    response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, from };
}

/** Scrapes served within the window, of REQUESTS sent at once with the window as their budget (the rest are refused as overloaded at once). */
async function servedInWindow(client: UpstreamClient, pacer: LocalPacer): Promise<number> {
  const deadline = Date.now() + WINDOW_MS;
  const results = await Promise.allSettled(Array.from({ length: REQUESTS }, (_, i) => client.bind('shop', new AbortController().signal, deadline)({ path: `/p/${i}`, kind: 'page' })));
  for (const result of results) if (result.status === 'rejected') assert.ok(isUpstreamOutcome(result.reason) && result.reason.kind === 'overloaded', String(result.reason));
  assert.ok(pacer.states().every((state) => state.waiting === 0 && state.active === 0), 'every slot was given back');
  return results.filter((result) => result.status === 'fulfilled').length;
}

test(`a pool of ${PROXIES} loopback proxies carries at least 5 times the scrapes per second of one address at the default pace`, async (t) => {
  const { origin, from } = await platform(t);
  const direct = new LocalPacer(() => DEFAULT_PACE, 1_000);
  const alone = new UpstreamClient({ platforms: { shop: { origin, hosts: ['www.shop.example'] } }, pacer: direct });
  t.after(() => alone.close());
  const one = await servedInWindow(alone, direct);

  const proxies = await Promise.all(Array.from({ length: PROXIES }, (_, i) => connectProxy(t, `127.0.0.${i + 2}`)));
  const pooled = new LocalPacer(() => DEFAULT_PACE, 1_000);
  const pool = new UpstreamClient({
    platforms: { shop: { origin, hosts: ['www.shop.example'] } },
    pacer: pooled,
    proxies: { shop: parseProxies('SHOPFRONT_PROXIES', proxies.map((proxy) => `http://127.0.0.1:${proxy.port}`).join(',')) },
  });
  t.after(() => pool.close());
  from.clear();
  const many = await servedInWindow(pool, pooled);

  // One address at 5 starts a second: about 10 in 2 s; each proxy as many.
  assert.ok(one >= 8 && one <= 12, `one address: ${one} in ${WINDOW_MS} ms`);
  assert.ok(many >= 5 * one, `the pool: ${many} in ${WINDOW_MS} ms, against ${one} from one address`);
  assert.equal(from.size, PROXIES, 'every proxy carried its share');
  const pace = (WINDOW_MS / 1000) * DEFAULT_PACE.maxRps + 1;
  for (const [address, count] of from) assert.ok(count <= pace, `${address} kept to the pace of one address (${count}, at most ${pace})`);
  const states = pooled.states();
  assert.equal(states.length, PROXIES);
  assert.ok(states.every((state) => state.platform === 'shop' && state.egress !== DIRECT && state.waits > 0), 'waits are counted per proxy');
});

test('a request takes the egress whose turn comes first', async () => {
  const pacer = new LocalPacer(() => ({ maxConcurrency: 1, maxRps: 0 }), 10);
  const never = new AbortController().signal;
  const deadline = Date.now() + 5_000;
  const a = await pacer.take('shop', ['a', 'b'], deadline, never);
  const b = await pacer.take('shop', ['a', 'b'], deadline, never);
  assert.notEqual(a.egress, b.egress, 'the second goes to the free egress');
  let third: string | null = null;
  const waiting = pacer.take('shop', ['a', 'b'], deadline, never).then((slot) => {
    third = slot.egress;
    return slot;
  });
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(third, null, 'both busy: it waits');
  assert.equal(pacer.states().reduce((sum, state) => sum + state.waiting, 0), 1);
  b.release();
  a.release();
  (await waiting).release();
  assert.ok(third === 'a' || third === 'b');
});

test('/metrics shows the queue depth, the slots in use and the waits per egress', async () => {
  const { Metrics } = await import('../../src/server/metrics.ts');
  const pacer = new LocalPacer(() => ({ maxConcurrency: 1, maxRps: 0 }), 10);
  const metrics = new Metrics();
  metrics.watchPace(() => pacer.states());
  const never = new AbortController().signal;
  const held = await pacer.take('shop', ['http://127.0.0.1:1001'], Date.now() + 5_000, never);
  const waiting = pacer.take('shop', ['http://127.0.0.1:1001'], Date.now() + 5_000, never);
  const labels = '{platform="shop",egress="http://127.0.0.1:1001"}';
  let text = await metrics.registry.metrics();
  assert.match(text, new RegExp(`api_upstream_pace_waiting${labels.replace(/[{}.]/g, '\\$&')} 1`));
  assert.match(text, new RegExp(`api_upstream_pace_active${labels.replace(/[{}.]/g, '\\$&')} 1`));
  await new Promise((resolve) => setTimeout(resolve, 30));
  held.release();
  (await waiting).release();
  text = await metrics.registry.metrics();
  assert.match(text, new RegExp(`api_upstream_pace_waits_total${labels.replace(/[{}.]/g, '\\$&')} 1`));
  const waited = Number(new RegExp(`api_upstream_pace_wait_seconds_total${labels.replace(/[{}.]/g, '\\$&')} ([0-9.e-]+)`).exec(text)?.[1]);
  assert.ok(waited >= 0.02 && waited < 1, `waited ${waited} s`);
});

test('a request that starts at once is not counted as a wait, however far the clock moved meanwhile', async (t: TestContext) => {
  // A clock that moves 1 ms at every reading: a busy machine crossing a millisecond between
  // queueing a request and starting it in the same call.
  let clock = Date.now();
  t.mock.method(Date, 'now', () => (clock += 1));
  const pacer = new LocalPacer(() => ({ maxConcurrency: 2, maxRps: 0 }), 10);
  const never = new AbortController().signal;
  const slot = await pacer.take('shop', ['http://127.0.0.1:1001'], clock + 5_000, never);
  slot.release();
  assert.deepEqual(
    pacer.states().map((state) => [state.waits, state.waitedSeconds]),
    [[0, 0]],
  );
});
