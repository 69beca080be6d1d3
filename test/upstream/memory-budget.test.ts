// The process-wide memory budget for upstream bodies: the budget itself (first come, first
// served, bounded waits, deadlocks broken at once), and the client against local servers that
// send many large bodies at once (never more held than the budget, bytes given back when a
// scrape ends, when an answer is retried and when a read fails).
import { describe, test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { UpstreamClient, type BoundUpstream, type UpstreamClientOptions } from '../../src/upstream/client.ts';
import { MemoryBudget } from '../../src/upstream/memory.ts';
import { UpstreamOutcome } from '../../src/upstream/outcomes.ts';
import type { UpstreamResponse } from '../../src/upstream/types.ts';

const KB = 1024;
const PLATFORM = 'shopfront';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => unknown;

/** A server on 127.0.0.1, port 0, closed (connections included) when the test ends. */
async function startServer(t: TestContext, handler: Handler): Promise<string> {
  const server = http.createServer((req, res) => {
    Promise.resolve(handler(req, res)).catch((error: unknown) => res.destroy(error as Error));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function makeClient(t: TestContext, origin: string, options: Partial<UpstreamClientOptions>): UpstreamClient {
  const client = new UpstreamClient({ random: () => 0, ...options, platforms: { [PLATFORM]: { origin, hosts: ['www.shopfront.example'] } } });
  t.after(() => client.close());
  return client;
}

const bind = (client: UpstreamClient, budgetMs = 10_000): BoundUpstream => client.bind(PLATFORM, new AbortController().signal, Date.now() + budgetMs);
const page = (path: string) => ({ path, kind: 'page' as const });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Settles the promise: the answer, or the error it failed with. */
async function settle<T>(promise: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  try {
    return { ok: true, value: await promise };
  } catch (error) {
    return { ok: false, error };
  }
}

/**
 * `count` scrapes at once, each of one page, each ending (releasing) once it has its body:
 * the body length or 'overloaded' of each, and the most bytes the budget held meanwhile.
 */
async function concurrentScrapes(client: UpstreamClient, count: number): Promise<{ results: (number | string)[]; peak: number }> {
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, client.memory.used)), 1);
  try {
    const results = await Promise.all(
      Array.from({ length: count }, async (_, index) => {
        const upstream = bind(client);
        try {
          const response = await upstream(page(`/shop/page${index}`));
          peak = Math.max(peak, client.memory.used);
          return response.body.length;
        } catch (error) {
          assertOverloaded(error);
          return 'overloaded';
        } finally {
          upstream.release();
        }
      }),
    );
    return { results, peak };
  } finally {
    clearInterval(sampler);
  }
}

function assertOverloaded(error: unknown): void {
  assert.ok(error instanceof UpstreamOutcome, String(error));
  assert.equal(error.kind, 'overloaded', error.message);
  assert.equal(error.platform, PLATFORM);
}

describe('MemoryBudget', () => {
  const never = new AbortController().signal;

  test('takes what fits at once; a take that does not fit waits in line and is granted when bytes come back', async () => {
    const budget = new MemoryBudget(100);
    const first = budget.lease();
    const second = budget.lease();
    assert.equal(first.take(60, 1_000, never), true);
    const waiting = second.take(60, 1_000, never);
    assert.ok(waiting instanceof Promise);
    // First come, first served: even a small take queues behind the waiter.
    const third = budget.lease();
    const small = third.take(10, 1_000, never);
    assert.ok(small instanceof Promise);
    assert.equal(budget.waiting, 2);
    first.release();
    assert.equal(await waiting, true);
    assert.equal(await small, true);
    assert.equal(budget.used, 70);
    second.release();
    third.release();
    assert.equal(budget.used, 0);
  });

  test('a wait is bounded: false after waitMs, or at once when the signal aborts; nothing is taken', async () => {
    const budget = new MemoryBudget(100);
    const holder = budget.lease();
    holder.take(100, 0, never);
    const started = Date.now();
    assert.equal(await budget.lease().take(1, 150, never), false);
    assert.ok(Date.now() - started >= 140, 'waited about waitMs');
    const abort = new AbortController();
    const aborted = budget.lease().take(1, 60_000, abort.signal);
    abort.abort();
    assert.equal(await aborted, false);
    assert.equal(budget.lease().take(101, 60_000, never), false, 'more than the whole budget never waits');
    assert.equal(budget.waiting, 0);
    assert.equal(budget.used, 100);
  });

  test('when every lease holding bytes waits for more, the newest of them is refused at once and the others go on', async () => {
    const budget = new MemoryBudget(100);
    const older = budget.lease();
    const newer = budget.lease();
    older.take(50, 0, never);
    newer.take(50, 0, never);
    const olderMore = older.take(30, 60_000, never);
    assert.ok(olderMore instanceof Promise);
    // The second holder waiting too: nobody could ever give back; no timeout needed.
    const started = Date.now();
    assert.equal(await newer.take(30, 60_000, never), false);
    assert.ok(Date.now() - started < 1_000);
    assert.equal(newer.take(1, 60_000, never), false, 'a refused lease takes nothing more');
    newer.release();
    assert.equal(await olderMore, true);
    assert.equal(budget.used, 80);
  });
});

describe('the client under a memory budget', () => {
  test('concurrent large bodies with a declared length never hold more than the budget; they wait in line and are all read', async (t) => {
    const body = 'x'.repeat(300 * KB);
    const origin = await startServer(t, async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-length': String(body.length) });
      for (let at = 0; at < body.length; at += 32 * KB) {
        res.write(body.slice(at, at + 32 * KB));
        await sleep(1);
      }
      res.end();
    });
    const client = makeClient(t, origin, { maxBodyBytes: 400 * KB, memoryBytes: 1_024 * KB, memoryWaitMs: 10_000 });
    const { results, peak } = await concurrentScrapes(client, 12);
    assert.deepEqual(results, Array(12).fill(body.length));
    assert.ok(peak <= 1_024 * KB, `peak ${peak} within the budget`);
    assert.ok(peak >= 600 * KB, `the budget was actually used (peak ${peak})`);
    assert.equal(client.memory.used, 0);
    assert.equal(client.memory.waiting, 0);
  });

  test('concurrent large bodies of unknown size (gzip, chunked, slow) never hold more than the budget; the oldest are read, the youngest overloaded at once', async (t) => {
    const body = 'x'.repeat(300 * KB);
    const compressed = gzipSync(body, { level: 0 });
    const origin = await startServer(t, async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
      for (let at = 0; at < compressed.length; at += 16 * KB) {
        res.write(compressed.subarray(at, at + 16 * KB));
        await sleep(2);
      }
      res.end();
    });
    const client = makeClient(t, origin, { maxBodyBytes: 400 * KB, memoryBytes: 1_024 * KB, memoryWaitMs: 20_000 });
    const started = Date.now();
    const { results, peak } = await concurrentScrapes(client, 12);
    // Twelve readers each holding part of a body fill the budget and all wait: the youngest are
    // refused one by one so that the oldest, served first, finish (three fit in 1 MB).
    assert.deepEqual(results.slice(0, 3), [body.length, body.length, body.length], String(results));
    assert.ok(results.every((result) => result === body.length || result === 'overloaded'), String(results));
    assert.ok(Date.now() - started < 15_000, 'refused at once, not after the 20 s wait');
    assert.ok(peak <= 1_024 * KB, `peak ${peak} within the budget`);
    assert.equal(client.memory.used, 0);
    assert.equal(client.memory.waiting, 0);
  });

  test('an answer stays counted until its scrape releases it; a scrape that cannot get its share waits, then reads', async (t) => {
    const origin = await startServer(t, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end('y'.repeat(400 * KB));
    });
    const client = makeClient(t, origin, { maxBodyBytes: 512 * KB, memoryBytes: 1_024 * KB, memoryWaitMs: 5_000 });
    const first = bind(client);
    const second = bind(client);
    await first(page('/shop/one'));
    await second(page('/shop/two'));
    assert.equal(client.memory.used, 800 * KB, 'both answers held while their scrapes run');
    const third = bind(client);
    const reading = third(page('/shop/three'));
    await sleep(200);
    assert.equal(client.memory.waiting, 1, 'the third waits for its share');
    first.release();
    const response = await reading;
    assert.equal(response.body.length, 400 * KB);
    assert.equal(client.memory.used, 800 * KB);
    second.release();
    third.release();
    assert.equal(client.memory.used, 0);
  });

  test('a scrape that cannot get its share within the wait is overloaded: nothing held, connection freed, no retry', async (t) => {
    let requests = 0;
    const origin = await startServer(t, (_req, res) => {
      requests += 1;
      res.writeHead(200, { 'content-type': 'text/html' }).end('z'.repeat(400 * KB));
    });
    const client = makeClient(t, origin, { maxBodyBytes: 512 * KB, memoryBytes: 1_024 * KB, memoryWaitMs: 300, connections: 2 });
    const holders = [bind(client), bind(client)];
    for (const [index, holder] of holders.entries()) await holder(page(`/shop/held${index}`));
    const started = Date.now();
    const refused = await settle(bind(client)(page('/shop/refused')));
    const waited = Date.now() - started;
    assert.equal(refused.ok, false);
    if (!refused.ok) assertOverloaded(refused.error);
    assert.ok(waited >= 250 && waited < 3_000, `waited ${waited} ms`);
    assert.equal(requests, 3, 'not retried');
    assert.equal(client.memory.used, 800 * KB, 'the refused answer holds nothing');
    for (const holder of holders) holder.release();
    // Its connection was freed: with 2 connections per origin, two more answers are read at once.
    const again = [bind(client), bind(client)];
    const bodies = await Promise.all(again.map((upstream, index) => upstream(page(`/shop/again${index}`))));
    assert.deepEqual(bodies.map((response) => response.body.length), [400 * KB, 400 * KB]);
    for (const upstream of again) upstream.release();
    assert.equal(client.memory.used, 0);
  });

  test('scrapes that all hold part of a body and all wait for more: the newest are refused at once, the others finish', async (t) => {
    const origin = await startServer(t, async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      // 600 KB in 100 KB steps, chunked: every reader holds part of its body for a while.
      for (let step = 0; step < 6; step += 1) {
        if (!res.write('w'.repeat(100 * KB))) await new Promise((resolve) => res.once('drain', resolve));
        await sleep(30);
      }
      res.end();
    });
    const client = makeClient(t, origin, { maxBodyBytes: 700 * KB, memoryBytes: 1_024 * KB, memoryWaitMs: 20_000 });
    const started = Date.now();
    const outcomes = await Promise.all(
      Array.from({ length: 4 }, async (_, index) => {
        const upstream = bind(client, 30_000);
        try {
          return await settle(upstream(page(`/shop/part${index}`)));
        } finally {
          upstream.release();
        }
      }),
    );
    const elapsed = Date.now() - started;
    const read = outcomes.filter((outcome) => outcome.ok) as { ok: true; value: UpstreamResponse }[];
    assert.ok(read.length >= 1, 'at least one body is read');
    for (const outcome of read) assert.equal(outcome.value.body.length, 600 * KB);
    for (const outcome of outcomes) if (!outcome.ok) assertOverloaded(outcome.error);
    assert.ok(elapsed < 10_000, `no one waited for the 20 s timeout (${elapsed} ms)`);
    assert.equal(client.memory.used, 0);
  });

  test('an answer discarded for a retry gives its bytes back; a failed call holds nothing', async (t) => {
    let attempt = 0;
    const origin = await startServer(t, (req, res) => {
      attempt += 1;
      if (req.url === '/shop/fails' && attempt % 2 === 0) return res.writeHead(503).end();
      res.writeHead(200, { 'content-type': 'text/html' }).end(`${attempt}`.padEnd(200 * KB, '.'));
    });
    const client = makeClient(t, origin, { maxBodyBytes: 512 * KB, memoryBytes: 1_024 * KB, maxRetries: 3, backoffMs: 1 });
    const upstream = bind(client);
    // The platform calls the first answer transient: it is fetched again.
    let judged = 0;
    const response = await upstream({
      ...page('/shop/retried'),
      classify: () => {
        judged += 1;
        if (judged === 1) throw new UpstreamOutcome('transient', PLATFORM, 'first answer incomplete');
      },
    });
    assert.equal(judged, 2);
    assert.match(response.body, /^2\./);
    assert.equal(client.memory.used, 200 * KB, 'only the accepted answer is held');
    // 200 (judged transient), 503, 200 (judged transient), 503: transient in the end, nothing held.
    const failed = await settle(
      upstream({
        ...page('/shop/fails'),
        classify: () => {
          throw new UpstreamOutcome('transient', PLATFORM, 'never complete');
        },
      }),
    );
    assert.equal(failed.ok, false);
    assert.equal(client.memory.used, 200 * KB, 'the failed call gave back all it took');
    upstream.release();
    assert.equal(client.memory.used, 0);
  });

  test('a binding nobody releases gives its bytes back when its signal aborts; a body over the cap holds nothing', async (t) => {
    const origin = await startServer(t, (req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end('v'.repeat(req.url === '/shop/huge' ? 600 * KB : 100 * KB));
    });
    const client = makeClient(t, origin, { maxBodyBytes: 512 * KB, memoryBytes: 1_024 * KB });
    const controller = new AbortController();
    const upstream = client.bind(PLATFORM, controller.signal, Date.now() + 10_000);
    await upstream(page('/shop/small'));
    assert.equal(client.memory.used, 100 * KB);
    const huge = await settle(upstream({ ...page('/shop/huge'), headers: { 'accept-encoding': 'identity' } }));
    assert.equal(huge.ok, false);
    assert.equal(client.memory.used, 100 * KB);
    controller.abort();
    assert.equal(client.memory.used, 0);
  });

  test('a budget smaller than one maximal body is refused when the client is made', () => {
    assert.throws(
      () => new UpstreamClient({ platforms: {}, maxBodyBytes: 2 * KB * KB, memoryBytes: KB * KB }),
      /memory budget \(1048576 bytes\) must be at least the largest body accepted \(2097152 bytes\)/,
    );
  });
});
