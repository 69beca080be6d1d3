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
  await assert.rejects(a.acquire('shop', Date.now() + 1, never).then(() => a.acquire('shop', Date.now() + 1, never)), (error: unknown) => isUpstreamOutcome(error) && /too late/.test(error.message));
});
