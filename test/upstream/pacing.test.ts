// Pacing and concurrency per platform (src/upstream/pacing.ts): starts kept apart by the pace,
// at most so many at once, a bounded queue, and refusals (overloaded) when the queue is full or
// the turn would come after the deadline.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LocalPacer, type PaceLimits } from '../../src/upstream/pacing.ts';
import { UpstreamOutcome } from '../../src/upstream/outcomes.ts';

const pacer = (limits: PaceLimits, queue = 100) => new LocalPacer(() => limits, queue);
const never = new AbortController().signal;

test('starts are at least 1/maxRps apart, in arrival order', async () => {
  const p = pacer({ maxConcurrency: 0, maxRps: 20 });
  const started: number[] = [];
  const t0 = Date.now();
  await Promise.all(
    Array.from({ length: 5 }, async (_, i) => {
      const done = await p.acquire('shop', t0 + 5_000, never);
      started.push(i);
      done();
    }),
  );
  const elapsed = Date.now() - t0;
  assert.deepEqual(started, [0, 1, 2, 3, 4]);
  assert.ok(elapsed >= 4 * 50 - 5, `5 starts at 20/s take at least 200 ms, took ${elapsed}`);
});

test('at most maxConcurrency at once; the next starts when one ends', async () => {
  const p = pacer({ maxConcurrency: 2, maxRps: 0 });
  const deadline = Date.now() + 5_000;
  const a = await p.acquire('shop', deadline, never);
  const b = await p.acquire('shop', deadline, never);
  let third = false;
  const waiting = p.acquire('shop', deadline, never).then((done) => {
    third = true;
    return done;
  });
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(third, false, 'waits while two are running');
  a();
  a(); // ending a slot twice frees it once
  (await waiting)();
  assert.equal(third, true);
  b();
  const other = await pacer({ maxConcurrency: 1, maxRps: 0 }).acquire('other', deadline, never);
  other();
});

test('a full queue, or a turn past the deadline, is refused at once as overloaded; so is a wait for a slot that outlasts the deadline', async () => {
  const p = pacer({ maxConcurrency: 1, maxRps: 0 }, 2);
  const now = Date.now();
  const held = await p.acquire('shop', now + 5_000, never);
  const queued = [p.acquire('shop', now + 5_000, never), p.acquire('shop', now + 5_000, never)];
  await assert.rejects(p.acquire('shop', now + 5_000, never), (error: unknown) => error instanceof UpstreamOutcome && error.kind === 'overloaded' && /too many requests/.test(error.message));
  held();
  for (const waiting of queued) (await waiting)();

  const slow = pacer({ maxConcurrency: 0, maxRps: 1 });
  (await slow.acquire('shop', Date.now() + 5_000, never))();
  await assert.rejects(slow.acquire('shop', Date.now() + 200, never), (error: unknown) => error instanceof UpstreamOutcome && error.kind === 'overloaded' && /turn would come too late/.test(error.message));

  const busy = pacer({ maxConcurrency: 1, maxRps: 0 });
  const holding = await busy.acquire('shop', Date.now() + 5_000, never);
  const started = Date.now();
  await assert.rejects(busy.acquire('shop', Date.now() + 100, never), (error: unknown) => error instanceof UpstreamOutcome && /no free slot before this request's deadline/.test(error.message));
  assert.ok(Date.now() - started < 1_000);
  holding();
});

test('an aborted request leaves the queue; unlimited platforms never wait', async () => {
  const p = pacer({ maxConcurrency: 1, maxRps: 0 });
  const held = await p.acquire('shop', Date.now() + 5_000, never);
  const controller = new AbortController();
  const waiting = p.acquire('shop', Date.now() + 5_000, controller.signal);
  controller.abort(new Error('client gone'));
  await assert.rejects(waiting, /client gone/);
  held();
  (await p.acquire('shop', Date.now() + 5_000, never))();
  const free = pacer({ maxConcurrency: 0, maxRps: 0 });
  await Promise.all(Array.from({ length: 1_000 }, async () => (await free.acquire('shop', Date.now() + 1, never))()));
});
