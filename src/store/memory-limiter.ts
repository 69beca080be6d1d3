// Exact rolling-window rate limiter for a single process (the embedded default).
//
// Each key keeps a sliding log of the timestamps of the requests it admitted, at most
// `limit` of them, in a ring buffer. A request is admitted when fewer than `limit` logged
// requests are younger than `windowMs`; a denied request is not logged. So no span of
// `windowMs` ever contains more than `limit` admitted requests, and a request is freed
// exactly `windowMs` after it was admitted (no fixed buckets, no approximation).
//
// Memory: at most `limit` numbers per active key; keys whose newest request has left the
// window are dropped by a lazy sweep (at most once per `sweepIntervalMs`). Keys come from
// clients (an address failing authentication, an email signing in), so the keys tracked are
// bounded in number and in bytes too: beyond either bound, the oldest keys not used lately are
// forgotten first (a team in use is never one of them).

import type { RateDecision, RateLimiter } from './types.ts';

/** First allocation of a log; it doubles as needed up to the key's limit. */
const INITIAL_CAPACITY = 16;

class Log {
  buf: Float64Array;
  start = 0;
  size = 0;
  /** The key's limit: the most timestamps this log may ever need. */
  limit: number;
  windowMs: number;
  /** Hit since the last eviction pass reached it. */
  used = false;

  constructor(limit: number, windowMs: number) {
    this.limit = Math.max(1, limit);
    this.buf = new Float64Array(Math.min(this.limit, INITIAL_CAPACITY));
    this.windowMs = windowMs;
  }

  oldest(): number {
    return this.buf[this.start] as number;
  }

  newest(): number {
    return this.buf[(this.start + this.size - 1) % this.buf.length] as number;
  }

  /** Forgets admitted requests that have left the window ending at `now`. */
  expire(now: number, windowMs: number): void {
    while (this.size > 0 && now - this.oldest() >= windowMs) {
      this.start = (this.start + 1) % this.buf.length;
      this.size--;
    }
    if (this.size === 0) this.start = 0;
  }

  /**
   * Applies a (possibly changed) limit. When the limit shrank, only the newest `limit`
   * timestamps are kept: the request count under the new limit frees up exactly when the
   * oldest of those leaves the window, so nothing older matters any more.
   */
  resize(limit: number): void {
    const next = Math.max(1, limit);
    if (next === this.limit) return;
    this.limit = next;
    if (this.size > next) this.#copyInto(new Float64Array(next), this.size - next);
    else if (this.buf.length > next) this.#copyInto(new Float64Array(next), 0);
  }

  /** Moves the timestamps from the `skip`-th oldest on into `target`, oldest first. */
  #copyInto(target: Float64Array, skip: number): void {
    const keep = this.size - skip;
    for (let i = 0; i < keep; i++) target[i] = this.buf[(this.start + skip + i) % this.buf.length] as number;
    this.buf = target;
    this.start = 0;
    this.size = keep;
  }

  push(t: number): void {
    // Only called when size < limit; the buffer grows (doubling) on demand up to the limit.
    if (this.size === this.buf.length) this.#copyInto(new Float64Array(Math.min(this.limit, this.buf.length * 2)), 0);
    this.buf[(this.start + this.size) % this.buf.length] = t;
    this.size++;
  }
}

export interface InProcessRateLimiterOptions {
  /** How often, at most, idle keys are swept out (default 60 s). */
  sweepIntervalMs?: number;
  /** Keys tracked at most (default 50,000). */
  maxKeys?: number;
  /** Bytes the keys and their logs take at most, as `bytes` counts them (default 16 MiB). */
  maxBytes?: number;
}

/** What a key's entry holds beyond its key and its timestamps: the log, the map's entry. */
const ENTRY_OVERHEAD = 256;
const keyBytes = (key: string): number => 2 * key.length + ENTRY_OVERHEAD;

export class InProcessRateLimiter implements RateLimiter {
  /** Oldest first (a key given a second chance goes to the back). */
  readonly #logs = new Map<string, Log>();
  readonly #sweepIntervalMs: number;
  readonly #maxKeys: number;
  readonly #maxBytes: number;
  #bytes = 0;
  #lastSweep = -Infinity;

  constructor(options: InProcessRateLimiterOptions = {}) {
    this.#sweepIntervalMs = options.sweepIntervalMs ?? 60_000;
    this.#maxKeys = options.maxKeys ?? 50_000;
    this.#maxBytes = options.maxBytes ?? 16 * 1024 * 1024;
  }

  /** Number of keys currently tracked (for tests and metrics). */
  get size(): number {
    return this.#logs.size;
  }

  /** Bytes the tracked keys and their logs take (two per character of a key, eight per timestamp, and a fixed overhead). */
  get bytes(): number {
    return this.#bytes;
  }

  async hit(key: string, limit: number, windowMs: number, now: number = Date.now()): Promise<RateDecision> {
    checkArgs(limit, windowMs, now);
    this.#maybeSweep(now);

    let log = this.#logs.get(key);
    const held = log === undefined ? 0 : keyBytes(key) + log.buf.byteLength;
    if (log) {
      log.windowMs = windowMs;
      log.resize(limit);
      log.expire(now, windowMs);
      log.used = true;
    }
    const used = log?.size ?? 0;
    const allowed = used < limit;
    if (allowed) {
      if (!log) {
        log = new Log(limit, windowMs);
        this.#logs.set(key, log);
      }
      log.push(now);
    } else if (log && log.size === 0) {
      this.#logs.delete(key);
      log = undefined;
    }
    this.#bytes += (log === undefined ? 0 : keyBytes(key) + log.buf.byteLength) - held;
    this.#evict(key);

    const after = allowed ? used + 1 : used;
    const remaining = Math.max(0, limit - after);
    let resetSeconds = 0;
    if (remaining === 0) {
      // The oldest request in the window once this one is counted (this one when the log was empty).
      const oldest = used > 0 && log ? log.oldest() : now;
      resetSeconds = Math.max(1, Math.ceil((oldest + windowMs - now) / 1000));
    }
    return { allowed, limit, remaining, resetSeconds };
  }

  #maybeSweep(now: number): void {
    if (now - this.#lastSweep < this.#sweepIntervalMs && now >= this.#lastSweep) return;
    this.#lastSweep = now;
    for (const [key, log] of this.#logs) {
      if (log.size === 0 || now - log.newest() >= log.windowMs) this.#forget(key, log);
    }
  }

  /**
   * Forgets keys while over a bound, the oldest first, but one used since the last pass gets a
   * second chance at the back (the clock algorithm: close to least recently used, at no cost to
   * a hit); never the key just used.
   */
  #evict(current: string): void {
    while (this.#logs.size > 1 && (this.#logs.size > this.#maxKeys || this.#bytes > this.#maxBytes)) {
      const [key, log] = this.#logs.entries().next().value as [string, Log];
      this.#logs.delete(key);
      if (log.used || key === current) {
        log.used = false;
        this.#logs.set(key, log);
      } else this.#bytes -= keyBytes(key) + log.buf.byteLength;
    }
  }

  #forget(key: string, log: Log): void {
    this.#logs.delete(key);
    this.#bytes -= keyBytes(key) + log.buf.byteLength;
  }
}

export function checkArgs(limit: number, windowMs: number, now: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`rate limit must be an integer >= 1, got ${limit}`);
  if (!Number.isFinite(windowMs) || windowMs <= 0) throw new RangeError(`rate window must be a positive number of ms, got ${windowMs}`);
  if (!Number.isFinite(now)) throw new RangeError(`now must be epoch ms, got ${now}`);
}
