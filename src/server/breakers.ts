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

class Breaker {
  /** Times of the window's scrapes, and whether each failed, oldest first. */
  readonly #events: { at: number; failed: boolean }[] = [];
  /** Failures among `#events`, kept as they come and go (not counted again per scrape). */
  #failures = 0;
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

  #trim(now: number): void {
    const from = now - this.#settings.windowMs;
    let drop = 0;
    while (drop < this.#events.length && (this.#events[drop] as { at: number }).at <= from) drop++;
    if (this.#events.length - drop > MAX_EVENTS) drop = this.#events.length - MAX_EVENTS;
    if (drop === 0) return;
    for (const event of this.#events.splice(0, drop)) if (event.failed) this.#failures -= 1;
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
        this.#events.length = 0;
        this.#failures = 0;
      }
      return;
    }
    this.#events.push({ at: now, failed });
    if (failed) this.#failures += 1;
    this.#trim(now);
    if (this.#events.length >= this.#settings.minRequests && this.#failures / this.#events.length >= this.#settings.failureRatio) {
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
    this.#trim(now);
    return this.#failures > 0 ? 'degraded' : 'ok';
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
