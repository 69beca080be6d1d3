// The platforms' pace shared by every node (pacing.ts does it for one node): the concurrency
// cap as leases in a sorted set (a lease lapses by itself if its node dies), and the pace as the
// next free start time, reserved atomically. Each is one Lua script per step.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { UpstreamOutcome } from '../../upstream/outcomes.ts';
import type { PaceLimits, Pacer } from '../../upstream/pacing.ts';
import type { RedisConnection } from './client.ts';

/** How often a request waiting for a slot asks again. */
const POLL_MS = 25;

// KEYS: the platform's leases. ARGV: now, the cap, the lease's expiry, its id. 1 when taken.
const TAKE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[1], math.max(1, tonumber(ARGV[3]) - tonumber(ARGV[1])))
return 1
`;

// KEYS: the platform's next start. ARGV: now, interval, the longest wait. The wait in ms, or -1.
const RESERVE = `
local now = tonumber(ARGV[1])
local start = math.max(now, tonumber(redis.call('GET', KEYS[1]) or '0'))
if start - now > tonumber(ARGV[3]) then return -1 end
local after = start + tonumber(ARGV[2])
redis.call('SET', KEYS[1], tostring(after), 'PX', math.ceil(after - now) + 1000)
return start - now
`;

interface Scripts extends Redis {
  paceTake(leases: string, now: number, cap: number, expiry: number, id: string): Promise<number>;
  paceReserve(next: string, now: number, interval: number, maxWait: number): Promise<number>;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });

export class RedisPacer implements Pacer {
  readonly #redis: Scripts;
  readonly #call: RedisConnection['call'];
  readonly #prefix: string;
  readonly #limits: (platform: string) => PaceLimits;
  readonly #queueMax: number;
  /** Requests of this node waiting for a slot, per platform (the queue's bound is per node). */
  readonly #waiting = new Map<string, number>();

  constructor({ redis, call }: RedisConnection, prefix: string, limits: (platform: string) => PaceLimits, queueMax: number) {
    redis.defineCommand('paceTake', { numberOfKeys: 1, lua: TAKE });
    redis.defineCommand('paceReserve', { numberOfKeys: 1, lua: RESERVE });
    this.#redis = redis as Scripts;
    this.#call = call;
    this.#prefix = `${prefix}pace:`;
    this.#limits = limits;
    this.#queueMax = queueMax;
  }

  async acquire(platform: string, deadline: number, signal: AbortSignal): Promise<() => void> {
    const { maxConcurrency, maxRps } = this.#limits(platform);
    if (maxConcurrency === 0 && maxRps === 0) return () => {};
    const refuse = (why: string) => new UpstreamOutcome('overloaded', platform, why);
    const waiting = this.#waiting.get(platform) ?? 0;
    if (waiting >= this.#queueMax) throw refuse(`too many requests to ${platform} are waiting`);
    this.#waiting.set(platform, waiting + 1);
    let release = () => {};
    try {
      if (maxConcurrency > 0) {
        const leases = `${this.#prefix}${platform}:leases`;
        const id = randomBytes(9).toString('base64url');
        for (;;) {
          const now = Date.now();
          if (now >= deadline) throw refuse(`${platform} had no free slot before this request's deadline`);
          if ((await this.#call(() => this.#redis.paceTake(leases, now, maxConcurrency, deadline + 1_000, id))) === 1) break;
          await sleep(Math.min(POLL_MS, deadline - now), signal);
        }
        let done = false;
        release = () => {
          if (done) return;
          done = true;
          this.#call(() => this.#redis.zrem(leases, id)).catch(() => {}); // else it lapses at the deadline
        };
      }
      if (maxRps > 0) {
        const now = Date.now();
        const wait = await this.#call(() => this.#redis.paceReserve(`${this.#prefix}${platform}:next`, now, 1000 / maxRps, deadline - now));
        if (wait < 0) throw refuse(`${platform} is paced and this request's turn would come too late`);
        if (wait > 0) await sleep(wait, signal);
      }
      return release;
    } catch (error) {
      release();
      throw error;
    } finally {
      this.#waiting.set(platform, (this.#waiting.get(platform) ?? 1) - 1);
    }
  }
}
