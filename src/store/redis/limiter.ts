// The rate limiter shared by every node: an exact rolling window in Redis.
//
// One sorted set per key holds the times of the requests admitted in the last window. A Lua
// script runs atomically in Redis: it drops the times that have left the window, admits the
// request when fewer than `limit` remain, and answers what the headers need, in one round
// trip. Same rules as the in-process limiter (memory-limiter.ts): a denied request is not
// counted, a request frees its place exactly `windowMs` after it was admitted, and a lowered
// limit keeps only the newest `limit` times.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { checkArgs } from '../memory-limiter.ts';
import type { RateDecision, RateLimiter } from '../types.ts';
import type { RedisConnection } from './client.ts';

const HIT = `
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local used = redis.call('ZCARD', key)
if used > limit then
  redis.call('ZREMRANGEBYRANK', key, 0, used - limit - 1)
  used = limit
end
local allowed = 0
if used < limit then
  redis.call('ZADD', key, now, ARGV[4])
  used = used + 1
  allowed = 1
end
local oldest = now
if used > 0 then oldest = tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]) end
redis.call('PEXPIRE', key, window)
return {allowed, used, tostring(oldest)}
`;

interface WithHit extends Redis {
  rateLimitHit(key: string, limit: number, windowMs: number, now: number, member: string): Promise<[number, number, string]>;
}

export class RedisRateLimiter implements RateLimiter {
  readonly #redis: WithHit;
  readonly #call: RedisConnection['call'];
  readonly #prefix: string;
  /** Distinguishes this node's entries from others' admitted in the same millisecond. */
  readonly #node = randomBytes(6).toString('base64url');
  #seq = 0;

  constructor({ redis, call }: RedisConnection, prefix: string) {
    // EVALSHA, falling back to EVAL when Redis lost its scripts (a restart).
    redis.defineCommand('rateLimitHit', { numberOfKeys: 1, lua: HIT });
    this.#redis = redis as WithHit;
    this.#call = call;
    this.#prefix = `${prefix}rate:`;
  }

  async hit(key: string, limit: number, windowMs: number, now: number = Date.now()): Promise<RateDecision> {
    checkArgs(limit, windowMs, now);
    const member = `${now}:${this.#node}:${(this.#seq = (this.#seq + 1) % Number.MAX_SAFE_INTEGER)}`;
    const [allowed, used, oldest] = await this.#call(() => this.#redis.rateLimitHit(this.#prefix + key, limit, windowMs, now, member));
    const remaining = Math.max(0, limit - used);
    const resetSeconds = remaining === 0 ? Math.max(1, Math.ceil((Number(oldest) + windowMs - now) / 1000)) : 0;
    return { allowed: allowed === 1, limit, remaining, resetSeconds };
  }
}
