// The connection to Redis, set up so that an outage fails fast: commands are never queued
// while disconnected (the request gets a 503 at once instead of waiting for a reconnect), a
// Redis that stops answering is found by a health probe on a connection of its own (and calls
// then fail at once, monitor.ts), a command that gets no answer still times out, and the client
// reconnects by itself forever.
import { Redis } from 'ioredis';
import { BackendMonitor } from '../monitor.ts';
import { publishRoundTrip } from '../round-trips.ts';
import { StoreUnavailableError } from '../types.ts';

export interface RedisOptions {
  /** `redis://[[user]:password@]host:port[/db]` or `rediss://…`. */
  url: string;
  /** Every key this service writes starts with it; default `pagescrape:`. */
  prefix?: string;
  /** Bound on the cache entries Redis holds in front of PostgreSQL; default 256 MiB. */
  cacheMaxBytes?: number;
  /** Bound on a command's answer and on connecting; default 5 s (an outage is found by the probe sooner). */
  timeoutMs?: number;
}

/** A Redis client, and `call`, which runs a command of it with unavailability turned into StoreUnavailableError. */
export interface RedisConnection {
  redis: Redis;
  /** Runs one command (one round trip). */
  call<T>(fn: () => Promise<T>): Promise<T>;
  /** Commands run so far through `call`. */
  roundTrips(): number;
  close(): void;
}

export function createRedis(options: RedisOptions): RedisConnection {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const redis = new Redis(options.url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: timeoutMs,
    connectTimeout: timeoutMs,
    // Reconnect after 100 ms, 200 ms, … at most every second: back within a second of Redis.
    retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
    lazyConnect: false,
  });
  // Connection errors are reported by the commands that fail; without a listener they would be
  // logged by the library on every reconnection attempt.
  redis.on('error', () => {});
  let roundTrips = 0;
  const probe = redis.duplicate({ connectTimeout: 1_000, commandTimeout: 1_000 });
  probe.on('error', () => {});
  const monitor = new BackendMonitor('Redis', () => probe.ping());
  return {
    redis,
    roundTrips: () => roundTrips,
    close() {
      monitor.stop();
      probe.disconnect();
      redis.disconnect();
    },
    async call(fn) {
      roundTrips++;
      publishRoundTrip('redis');
      monitor.assertUp();
      try {
        return await fn();
      } catch (err) {
        throw toStoreError(err);
      }
    },
  };
}

/** Resolves once connected, or after `timeoutMs` anyway (commands then fail with 503 until it is). */
export async function connected(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    redis.on('ready', done);
  });
}

export function toStoreError(err: unknown): unknown {
  if (err instanceof StoreUnavailableError || !(err instanceof Error)) return err;
  // Anything but a script's own error (a bug) means Redis cannot serve now: not connected,
  // a timeout, a connection reset, a server loading its data or out of memory.
  if (/ERR Error running script|ERR user_script/.test(err.message)) return err;
  return new StoreUnavailableError(`Redis unavailable: ${err.message}`, { cause: err });
}

