// npm run bench:cache-backend: what a cache read costs on PostgreSQL (where the scale-out set
// keeps cached payloads) against a Redis GET of the same payload, from one node: latency and
// the node's CPU per read, sequential and 50 at a time. Evidence for the choice in the README.
import { Redis } from 'ioredis';
import pg from 'pg';
import { ensureDatabase } from '../src/cluster.ts';
import { migrateDatabase, openPostgresStores } from '../src/store/postgres/index.ts';

const tag = Math.random().toString(36).slice(2, 8);
const server = new URL(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
const url = new URL(server.href);
url.pathname = `/bench_cache_${tag}`;
const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const READS = 5_000;
const payload = JSON.stringify({ items: Array.from({ length: 120 }, (_, i) => ({ id: i, text: `item ${i} `.repeat(12) })) });

await ensureDatabase(url.href);
await migrateDatabase({ url: url.href });
const stores = await openPostgresStores({ url: url.href });
const redis = new Redis(redisUrl);
const redisKey = `bench-cache-${tag}`;
try {
  await stores.cache.set('k', 't', { value: payload, storedAt: Date.now() });
  await redis.set(redisKey, payload, 'PX', 600_000);
  const measure = async (name: string, read: () => Promise<unknown>, parallel: number) => {
    for (let i = 0; i < 200; i++) await read();
    const cpu = process.cpuUsage();
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: parallel }, async () => {
        while (next++ < READS) await read();
      }),
    );
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    console.log(`${name.padEnd(34)} ${parallel === 1 ? 'sequential' : `${parallel} at a time`}: ${((ms * 1000) / READS).toFixed(0).padStart(4)} µs per read, ${(READS / (ms / 1000)).toFixed(0).padStart(6)} reads/s, ${((used.user + used.system) / READS).toFixed(0).padStart(4)} µs node CPU per read`);
  };
  console.log(`payload ${Buffer.byteLength(payload)} bytes, ${READS} reads each`);
  for (const parallel of [1, 50]) {
    await measure('PostgreSQL cache.get', () => stores.cache.get('k'), parallel);
    await measure('Redis GET', () => redis.getBuffer(redisKey), parallel);
  }
} finally {
  await redis.del(redisKey);
  redis.disconnect();
  await stores.close();
  const admin = new pg.Client({ connectionString: server.href });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS bench_cache_${tag} WITH (FORCE)`);
  await admin.end();
}
