// What Redis holds for a cluster: the rate limiters (per team and per address for failed
// authentication), the flights of identical scrapes and the platforms' shared state (socialnet's
// session), the platforms' pace across nodes; in front of PostgreSQL, also a copy of each team's key versions and balance for the
// gate. `withRedis` puts them in front of the database's stores.
import { isPostgresStores } from '../postgres/kind.ts';
import type { Stores } from '../types.ts';
import { connected, createRedis, type RedisOptions } from './client.ts';
import { TieredCache } from './cache.ts';
import { RedisFlights } from './flights.ts';
import { RedisGate } from './gate.ts';
import { RedisPacer } from './pacer.ts';
import { RedisKeyValue } from './kv.ts';
import { RedisRateLimiter } from './limiter.ts';

export const DEFAULT_PREFIX = 'pagescrape:';
const DEFAULT_CACHE_MAX_BYTES = 256 * 1024 * 1024;

export async function withRedis(stores: Stores, options: RedisOptions): Promise<Stores> {
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  const connection = createRedis(options);
  const { redis } = connection;
  // A Redis that is down at start is not fatal: requests get 503 until it is back.
  await connected(redis, options.timeoutMs ?? 2_000);
  const flights = new RedisFlights(connection, prefix);
  const limiter = new RedisRateLimiter(connection, prefix);
  let gate: RedisGate | undefined;
  let { cache } = stores;
  if (isPostgresStores(stores)) {
    gate = new RedisGate(connection, prefix, stores.accounts, limiter);
    await stores.watchTeams(gate, prefix);
    cache = new TieredCache(connection, prefix, stores.cache, { maxBytes: options.cacheMaxBytes ?? DEFAULT_CACHE_MAX_BYTES, maxAgeMs: stores.cacheMaxAgeMs });
  }
  return {
    ...stores,
    limiter,
    gate,
    cache,
    flights,
    kv: new RedisKeyValue(connection, prefix),
    pacer: (limits, queueMax) => new RedisPacer(connection, prefix, limits, queueMax),
    async backends() {
      let redisState: 'up' | 'down' = 'down';
      try {
        if ((await connection.call(() => redis.ping())) === 'PONG') redisState = 'up';
      } catch {
        // down
      }
      return { ...(await stores.backends()), redis: redisState };
    },
    roundTrips: () => ({ ...stores.roundTrips?.(), redis: connection.roundTrips() }),
    async close() {
      flights.close();
      connection.close();
      await stores.close();
    },
  };
}
