// Circuit breakers, one per platform: when blocks and transient failures make up too large a
// share of a platform's recent scrapes, requests for it stop reaching it for a cool-down, and
// are answered at once (502 UPSTREAM_BLOCKED with Retry-After, uncharged). After the cool-down
// one request goes through as a probe: its success closes the breaker, its failure opens it
// again for twice as long (up to a bound).
//
// Each node keeps its own breakers: a node judges a platform by the scrapes it made itself.

export interface BreakerSettings {
  /** Scrapes in the window before the breaker may open. */
  minRequests: number;
  /** The rolling window the share is taken over. */
  windowMs: number;
  /** Share of failures (0 to 1) at or above which the breaker opens. */
  failureRatio: number;
  /** The first cool-down; it doubles while probes fail. */
  coolDownMs: number;
  maxCoolDownMs: number;
}

export const DEFAULT_BREAKER: Readonly<BreakerSettings> = { minRequests: 10, windowMs: 30_000, failureRatio: 0.5, coolDownMs: 15_000, maxCoolDownMs: 120_000 };

/** `ok`: closed, no failure in the window; `degraded`: closed, with failures; `down`: open. */
export type PlatformState = 'ok' | 'degraded' | 'down';

export type Admission = { ok: true; probe: boolean } | { ok: false; retryAfterSeconds: number };

/** Scrapes remembered per platform at most, whatever the window (bounds memory under load). */
const MAX_EVENTS = 10_000;

/**
 * The window's scrapes, oldest first: their times and outcomes in a ring of MAX_EVENTS slots.
 * Under load the window holds MAX_EVENTS scrapes and each new one drops the oldest: taking it
 * off the front of an array moved the 10,000 behind it, 2.5% of the service's time in `npm run
 * bench:live` (about 12 µs a scrape); the ring drops it in place.
 */
class Window {
  readonly #at = new Float64Array(MAX_EVENTS);
  readonly #failed = new Uint8Array(MAX_EVENTS);
  #start = 0;
  length = 0;
  /** Failures among the scrapes held, kept as they come and go (not counted again per scrape). */
  failures = 0;

  push(at: number, failed: boolean): void {
    if (this.length === MAX_EVENTS) this.#shift();
    const slot = (this.#start + this.length) % MAX_EVENTS;
    this.#at[slot] = at;
    this.#failed[slot] = failed ? 1 : 0;
    this.length += 1;
    if (failed) this.failures += 1;
  }

  /** Drops the scrapes at or before `from`. */
  trim(from: number): void {
    while (this.length > 0 && (this.#at[this.#start] as number) <= from) this.#shift();
  }

  clear(): void {
    this.#start = 0;
    this.length = 0;
    this.failures = 0;
  }

  #shift(): void {
    this.failures -= this.#failed[this.#start] as number;
    this.#start = (this.#start + 1) % MAX_EVENTS;
    this.length -= 1;
  }
}

class Breaker {
  readonly #events = new Window();
  #openUntil = 0;
  #open = false;
  #coolDownMs: number;
  #probing = false;
  lastSuccessAt: number | null = null;
  readonly #settings: BreakerSettings;

  constructor(settings: BreakerSettings) {
    this.#settings = settings;
    this.#coolDownMs = settings.coolDownMs;
  }

  admit(now: number): Admission {
    if (!this.#open) return { ok: true, probe: false };
    if (now < this.#openUntil) return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((this.#openUntil - now) / 1000)) };
    if (this.#probing) return { ok: false, retryAfterSeconds: 1 };
    this.#probing = true;
    return { ok: true, probe: true };
  }

  record(now: number, failed: boolean): void {
    if (!failed) this.lastSuccessAt = now;
    if (this.#open) {
      // Only a probe's outcome counts while open.
      if (!this.#probing) return;
      this.#probing = false;
      if (failed) {
        this.#coolDownMs = Math.min(this.#coolDownMs * 2, this.#settings.maxCoolDownMs);
        this.#openUntil = now + this.#coolDownMs;
      } else {
        this.#open = false;
        this.#coolDownMs = this.#settings.coolDownMs;
        this.#events.clear();
      }
      return;
    }
    this.#events.push(now, failed);
    this.#events.trim(now - this.#settings.windowMs);
    if (this.#events.length >= this.#settings.minRequests && this.#events.failures / this.#events.length >= this.#settings.failureRatio) {
      this.#open = true;
      this.#openUntil = now + this.#coolDownMs;
    }
  }

  /** A probe that ended without an upstream outcome: the next request may probe. */
  release(): void {
    this.#probing = false;
  }

  state(now: number): PlatformState {
    if (this.#open) return 'down';
    this.#events.trim(now - this.#settings.windowMs);
    return this.#events.failures > 0 ? 'degraded' : 'ok';
  }
}

export class Breakers {
  readonly #breakers = new Map<string, Breaker>();
  readonly #settings: BreakerSettings;
  readonly #now: () => number;

  constructor(settings: BreakerSettings, now: () => number) {
    this.#settings = settings;
    this.#now = now;
  }

  #of(platform: string): Breaker {
    let breaker = this.#breakers.get(platform);
    if (!breaker) this.#breakers.set(platform, (breaker = new Breaker(this.#settings)));
    return breaker;
  }

  admit(platform: string): Admission {
    return this.#of(platform).admit(this.#now());
  }

  /** A scrape's outcome: `failed` for a block or a transient failure; anything the platform answered otherwise is a success. */
  record(platform: string, failed: boolean): void {
    this.#of(platform).record(this.#now(), failed);
  }

  release(platform: string): void {
    this.#of(platform).release();
  }

  status(platform: string): { state: PlatformState; lastSuccessAt: string | null } {
    const breaker = this.#of(platform);
    return { state: breaker.state(this.#now()), lastSuccessAt: breaker.lastSuccessAt === null ? null : new Date(breaker.lastSuccessAt).toISOString() };
  }
}
