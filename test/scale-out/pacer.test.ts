// The platforms' pace across nodes (src/store/redis/pacer.ts): two nodes' pacers on one Redis
// hold one concurrency cap and one pace between them.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connected, createRedis, type RedisConnection } from '../../src/store/redis/client.ts';
import { RedisPacer } from '../../src/store/redis/pacer.ts';
import { isUpstreamOutcome } from '../../src/upstream/outcomes.ts';
import type { PaceLimits } from '../../src/upstream/pacing.ts';
import { testBackends, type TestBackends } from '../support/backends.ts';

let backends: TestBackends;
const connections: RedisConnection[] = [];
before(async () => {
  backends = await testBackends();
});
after(async () => {
  for (const connection of connections) connection.close();
  await backends.drop();
});

async function nodes(limits: PaceLimits, queueMax = 100): Promise<[RedisPacer, RedisPacer]> {
  const prefix = backends.freshPrefix();
  const make = async () => {
    const connection = createRedis({ url: backends.redisUrl });
    connections.push(connection);
    await connected(connection.redis, 2_000);
    return new RedisPacer(connection, prefix, () => limits, queueMax);
  };
  return [await make(), await make()];
}
const never = new AbortController().signal;

test('the concurrency cap holds across nodes; a lease ended frees a slot for the other node', async () => {
  const [a, b] = await nodes({ maxConcurrency: 3, maxRps: 0 });
  const deadline = Date.now() + 5_000;
  const held = [await a.acquire('shop', deadline, never), await b.acquire('shop', deadline, never), await a.acquire('shop', deadline, never)];
  let fourth = false;
  const waiting = b.acquire('shop', deadline, never).then((done) => {
    fourth = true;
    return done;
  });
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(fourth, false, 'the fourth waits, on the other node too');
  held[0]?.();
  (await waiting)();
  assert.equal(fourth, true);
  for (const done of held) done();
  const short = Date.now() + 150;
  const all = [await a.acquire('shop', deadline, never), await a.acquire('shop', deadline, never), await b.acquire('shop', deadline, never)];
  await assert.rejects(b.acquire('shop', short, never), (error: unknown) => isUpstreamOutcome(error) && error.kind === 'overloaded');
  for (const done of all) done();
});

test('the pace holds across nodes: 10 starts at 20 per second take at least 450 ms, whichever node starts them', async () => {
  const [a, b] = await nodes({ maxConcurrency: 0, maxRps: 20 });
  const started = Date.now();
  await Promise.all(Array.from({ length: 10 }, async (_, i) => (await (i % 2 ? a : b).acquire('shop', Date.now() + 5_000, never))()));
  assert.ok(Date.now() - started >= 440, `took ${Date.now() - started} ms`);
  // A deadline half a turn away (25 of 50 ms): the pace's next turn comes after it. (At 1 ms, a
  // loaded machine could pass the deadline before the take began, a refusal of another kind.)
  const soon = () => Date.now() + 25;
  await assert.rejects(a.acquire('shop', soon(), never).then(() => a.acquire('shop', soon(), never)), (error: unknown) => isUpstreamOutcome(error) && /too late/.test(error.message));
});

test("a proxy's budget is shared by the nodes that use it, each proxy has its own, and a turn goes to the egress whose turn comes first", async () => {
  const [a, b] = await nodes({ maxConcurrency: 1, maxRps: 0 });
  const deadline = Date.now() + 5_000;
  const proxies = ['http://127.0.0.1:1001', 'http://127.0.0.1:1002'];
  const first = await a.take('shop', proxies, deadline, never);
  const second = await b.take('shop', proxies, deadline, never);
  assert.notEqual(first.egress, second.egress, 'the other node takes the proxy still free');
  let third: string | null = null;
  const waiting = b.take('shop', proxies, deadline, never).then((slot) => {
    third = slot.egress;
    return slot;
  });
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(third, null, 'both proxies are at their cap, whichever node holds them');
  first.release();
  const slot = await waiting;
  assert.equal(third, first.egress, 'it takes the proxy that was freed');
  assert.ok(b.states().some((state) => state.egress === first.egress && state.waits >= 1), 'the wait is counted for that proxy');
  slot.release();
  second.release();
});

test('the pace holds per proxy across nodes: 2 proxies at 10 starts a second carry 10 starts in about 450 ms, one address in about 900', async () => {
  const [a, b] = await nodes({ maxConcurrency: 0, maxRps: 10 });
  /** How long 10 starts from both nodes take through `proxies`, and the proxies they went to. */
  const tenStarts = async (proxies: string[]) => {
    const started = Date.now();
    const slots = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).take('shop', proxies, Date.now() + 10_000, never)));
    const took = Date.now() - started;
    for (const slot of slots) slot.release();
    return { took, egresses: slots.map((slot) => slot.egress) };
  };
  const proxies = ['http://127.0.0.1:1001', 'http://127.0.0.1:1002'];
  const two = await tenStarts(proxies);
  assert.equal(two.egresses.filter((egress) => egress === proxies[0]).length, 5, 'each proxy took half');
  assert.ok(two.took >= 380, `took ${two.took} ms`);
  // Against one address in the same run, rather than a fixed bound: a loaded machine delays both.
  const one = await tenStarts(['http://127.0.0.1:1003']);
  assert.ok(one.took >= 880, `one address took ${one.took} ms`);
  assert.ok(two.took < one.took, `two proxies took ${two.took} ms, one address ${one.took} ms`);
});

test('a turn that comes at once is not a wait (the round trips to Redis are not); one that had to wait for a slot is', async () => {
  const [a] = await nodes({ maxConcurrency: 1, maxRps: 0 });
  const deadline = Date.now() + 5_000;
  const proxy = 'http://127.0.0.1:1001';
  const waitsOf = () => a.states().find((state) => state.egress === proxy)?.waits;
  const first = await a.take('shop', [proxy], deadline, never);
  assert.equal(waitsOf(), 0, 'a free slot taken at once');
  const waiting = a.take('shop', [proxy], deadline, never);
  await new Promise((resolve) => setTimeout(resolve, 50));
  first.release();
  (await waiting).release();
  assert.equal(waitsOf(), 1, 'the second waited for the first');
});
