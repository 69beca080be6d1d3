// The cluster's cache in two tiers (redis/cache.ts): Redis in front of PostgreSQL, each with its
// own bound. What the behaviour suite cannot see from outside: what Redis holds.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { openPostgresStores, type PostgresStores } from '../../src/store/postgres/index.ts';
import { withRedis } from '../../src/store/redis/index.ts';
import type { Stores } from '../../src/store/types.ts';
import { testBackends, type TestBackends } from '../support/backends.ts';
import { until } from '../api/support.ts';

let backends: TestBackends;
let redis: Redis;
before(async () => {
  backends = await testBackends();
  redis = new Redis(backends.redisUrl);
});
after(async () => {
  redis.disconnect();
  await backends.drop();
});

/** About 3 KB. */
const value = (c: string) => JSON.stringify(c + 'x'.repeat(3_000 - c.length));

describe('the cache in Redis in front of PostgreSQL', () => {
  let durable: PostgresStores;
  let stores: Stores;
  let prefix: string;
  before(async () => {
    durable = await openPostgresStores({ url: await backends.freshDatabaseUrl(), schema: 'migrate' });
    prefix = backends.freshPrefix();
    stores = await withRedis(durable, { url: backends.redisUrl, prefix, cacheMaxBytes: 10_000 });
  });
  after(() => stores.close());
  const held = (key: string) => redis.exists(`${prefix}cache:e:${key}`);

  test('Redis keeps its bound, dropping the least recently used; PostgreSQL still serves what it dropped', async () => {
    const now = Date.now();
    for (const k of ['b1', 'b2', 'b3']) await stores.cache.set(k, `t-${k}`, { value: value(k), storedAt: now });
    assert.ok(await stores.cache.get('b1'), 'b1 read: b2 is now the least recently used');
    await stores.cache.set('b4', 't-b4', { value: value('b4'), storedAt: now });
    assert.ok(Number(await redis.get(`${prefix}cache:bytes`)) <= 10_000);
    assert.deepEqual([await held('b1'), await held('b2'), await held('b3'), await held('b4')], [1, 0, 1, 1]);
    const fromDatabase = await stores.cache.get('b2');
    assert.equal(fromDatabase?.bytes.toString(), value('b2'));
  });

  test('a deleted target is gone from both tiers, and an older entry of it read from PostgreSQL is not copied back', async () => {
    const scraped = Date.now() - 1_000;
    await stores.cache.set('d1', 'gone', { value: value('d1'), storedAt: scraped });
    assert.equal(await held('d1'), 1);
    await stores.cache.deleteTarget('gone');
    assert.equal(await held('d1'), 0);
    assert.equal(await stores.cache.get('d1'), null);
    // Written to PostgreSQL alone, as by a node whose write raced the deletion.
    await durable.cache.set('d1', 'gone', { value: value('d1'), storedAt: scraped });
    assert.ok(await stores.cache.get('d1'), 'served from PostgreSQL');
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(await held('d1'), 0, 'not copied into Redis: it was scraped before the deletion');
    await stores.cache.set('d2', 'gone', { value: value('d2'), storedAt: Date.now() });
    assert.equal(await held('d2'), 1, 'a later scrape of the target is kept');
  });

  test('an entry never replaces one scraped later; an entry read from PostgreSQL is copied into Redis', async () => {
    const now = Date.now();
    await stores.cache.set('n1', 't-n1', { value: value('new'), storedAt: now });
    await durable.cache.set('n1', 't-n1', { value: value('old'), storedAt: now - 5_000 });
    assert.equal((await stores.cache.get('n1'))?.bytes.toString(), value('new'), 'Redis kept the later one');
    // Redis restarted empty.
    await redis.del(...(await redis.keys(`${prefix}cache:*`)));
    assert.equal((await stores.cache.get('n1'))?.bytes.toString(), value('old'), 'what PostgreSQL holds now');
    assert.ok(await until(async () => (await held('n1')) === 1), 'copied into Redis');
  });

  test('prune drops entries older than the age bound from Redis too', async () => {
    const now = Date.now();
    await stores.cache.set('p1', 't-p1', { value: value('p1'), storedAt: now - 31 * 24 * 3600_000 });
    await stores.cache.set('p2', 't-p2', { value: value('p2'), storedAt: now });
    await stores.cache.prune(now);
    assert.deepEqual([await held('p1'), await held('p2')], [0, 1]);
    assert.equal(await stores.cache.get('p1'), null);
  });
});
