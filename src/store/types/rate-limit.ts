// The rate limiter: requests per team in a rolling window.

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the window admits one more request; 0 when requests remain. */
  resetSeconds: number;
}

export interface RateLimiter {
  /** Counts one request against `key` if it is admitted under `limit` per `windowMs` (rolling). */
  hit(key: string, limit: number, windowMs: number, now?: number): Promise<RateDecision>;
  /** What a hit on `key` under `limit` would get now, without counting anything. */
  peek(key: string, limit: number, windowMs: number, now?: number): Promise<RateDecision>;
}
