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

/** The rolling window, as a Lua function for the scripts that count a request (this one and gate.ts). */
export const WINDOW_LUA = `
local function countIn(key, limit, window, now, member)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local used = redis.call('ZCARD', key)
  if used > limit then
    redis.call('ZREMRANGEBYRANK', key, 0, used - limit - 1)
    used = limit
  end
  local allowed = 0
  if used < limit then
    redis.call('ZADD', key, now, member)
    used = used + 1
    allowed = 1
  end
  local oldest = now
  if used > 0 then oldest = tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]) end
  redis.call('PEXPIRE', key, window)
  return {allowed, used, tostring(oldest)}
end
`;

const HIT = `${WINDOW_LUA}
return countIn(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4])
`;

// Reads only. KEYS: the window. ARGV: limit, window, now. The count of requests in the window,
// and the time of the one whose leaving frees a place under the limit (now when one is free).
const PEEK = `
local since = '(' .. (tonumber(ARGV[3]) - tonumber(ARGV[2]))
local used = redis.call('ZCOUNT', KEYS[1], since, '+inf')
local freeing = ARGV[3]
if used >= tonumber(ARGV[1]) then freeing = redis.call('ZRANGEBYSCORE', KEYS[1], since, '+inf', 'WITHSCORES', 'LIMIT', used - tonumber(ARGV[1]), 1)[2] end
return {used, tostring(freeing)}
`;

/** The decision from what `countIn` answered. */
export function decisionOf(limit: number, windowMs: number, now: number, [allowed, used, oldest]: [number, number, string]): RateDecision {
  const remaining = Math.max(0, limit - used);
  const resetSeconds = remaining === 0 ? Math.max(1, Math.ceil((Number(oldest) + windowMs - now) / 1000)) : 0;
  return { allowed: allowed === 1, limit, remaining, resetSeconds };
}

/** Distinguishes the requests that one node admits in the same millisecond from each other and from other nodes'. */
export class Members {
  readonly #node = randomBytes(6).toString('base64url');
  #seq = 0;

  next(now: number): string {
    return `${now}:${this.#node}:${(this.#seq = (this.#seq + 1) % Number.MAX_SAFE_INTEGER)}`;
  }
}

/** Where the windows live: `<prefix>rate:<limiter key>`. */
export const rateKeyPrefix = (prefix: string): string => `${prefix}rate:`;

interface WithHit extends Redis {
  rateLimitHit(key: string, limit: number, windowMs: number, now: number, member: string): Promise<[number, number, string]>;
  rateLimitPeek(key: string, limit: number, windowMs: number, now: number): Promise<[number, string]>;
}

export class RedisRateLimiter implements RateLimiter {
  readonly #redis: WithHit;
  readonly #call: RedisConnection['call'];
  readonly #prefix: string;
  readonly #members = new Members();

  constructor({ redis, call }: RedisConnection, prefix: string) {
    // EVALSHA, falling back to EVAL when Redis lost its scripts (a restart).
    redis.defineCommand('rateLimitHit', { numberOfKeys: 1, lua: HIT });
    redis.defineCommand('rateLimitPeek', { numberOfKeys: 1, lua: PEEK });
    this.#redis = redis as WithHit;
    this.#call = call;
    this.#prefix = rateKeyPrefix(prefix);
  }

  async hit(key: string, limit: number, windowMs: number, now: number = Date.now()): Promise<RateDecision> {
    checkArgs(limit, windowMs, now);
    const member = this.#members.next(now);
    const answer = await this.#call(() => this.#redis.rateLimitHit(this.#prefix + key, limit, windowMs, now, member));
    return decisionOf(limit, windowMs, now, answer);
  }

  async peek(key: string, limit: number, windowMs: number, now: number = Date.now()): Promise<RateDecision> {
    checkArgs(limit, windowMs, now);
    const [used, freeing] = await this.#call(() => this.#redis.rateLimitPeek(this.#prefix + key, limit, windowMs, now));
    return decisionOf(limit, windowMs, now, [used < limit ? 1 : 0, used, freeing]);
  }
}
