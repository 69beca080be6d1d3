// Pacing and concurrency per platform: at most `maxConcurrency` upstream requests to a platform
// at once, and their starts at least 1/`maxRps` seconds apart (0: no bound), so that a platform
// sees a polite client. A request beyond them waits in a bounded queue, first come first served;
// when the queue is full, or its turn would come after the request's deadline, it is refused at
// once as `overloaded` (503 SERVICE_UNAVAILABLE with Retry-After, refunded).
//
// Each node paces its own requests: with N nodes, a platform sees up to N times the pace.
import { UpstreamOutcome } from './outcomes.ts';

export interface PaceLimits {
  /** Upstream requests to the platform at once; 0: no bound. */
  maxConcurrency: number;
  /** Upstream request starts per second; 0: no bound. */
  maxRps: number;
}

export interface Pacer {
  /** Waits for the platform's turn; resolves with the function that ends the request's slot. */
  acquire(platform: string, deadline: number, signal: AbortSignal): Promise<() => void>;
}

interface Waiter {
  deadline: number;
  /** Leaves the queue and takes a slot. */
  start: () => void;
  /** Leaves the queue, refused. */
  fail: (error: unknown) => void;
}

class PlatformPace {
  readonly #platform: string;
  readonly #limits: PaceLimits;
  readonly #queueMax: number;
  readonly #queue: Waiter[] = [];
  #active = 0;
  /** Epoch ms before which no request may start (the pace). */
  #nextStart = 0;
  #timer: NodeJS.Timeout | null = null;

  constructor(platform: string, limits: PaceLimits, queueMax: number) {
    this.#platform = platform;
    this.#limits = limits;
    this.#queueMax = queueMax;
  }

  get #interval(): number {
    return this.#limits.maxRps > 0 ? 1000 / this.#limits.maxRps : 0;
  }

  #refuse(why: string, retryAfterMs: number): UpstreamOutcome {
    return new UpstreamOutcome('overloaded', this.#platform, `${why}; retry in ${Math.max(1, Math.ceil(retryAfterMs / 1000))} s`);
  }

  acquire(deadline: number, signal: AbortSignal): Promise<() => void> {
    const now = Date.now();
    // The earliest this request could start by the pace alone, behind those already waiting.
    const turn = Math.max(now, this.#nextStart) + this.#queue.length * this.#interval;
    if (this.#queue.length >= this.#queueMax) return Promise.reject(this.#refuse(`too many requests to ${this.#platform} are waiting`, turn - now));
    if (turn > deadline) return Promise.reject(this.#refuse(`${this.#platform} is paced and this request's turn would come too late`, turn - now));
    return new Promise((resolve, reject) => {
      const leave = () => {
        clearTimeout(late);
        signal.removeEventListener('abort', onAbort);
        const index = this.#queue.indexOf(waiter);
        if (index >= 0) this.#queue.splice(index, 1);
      };
      const waiter: Waiter = {
        deadline,
        start: () => {
          leave();
          resolve(this.#release());
        },
        fail: (error) => {
          leave();
          reject(error);
        },
      };
      const onAbort = () => waiter.fail(signal.reason);
      // No slot freed before the deadline (the pace alone was judged above): refused then.
      const late = setTimeout(() => waiter.fail(this.#refuse(`${this.#platform} had no free slot before this request's deadline`, 1000)), deadline - now);
      signal.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(waiter);
      this.#pump();
    });
  }

  /** The end of a slot: once only. */
  #release(): () => void {
    this.#active += 1;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.#active -= 1;
      this.#pump();
    };
  }

  #pump(): void {
    if (this.#timer) return;
    while (this.#queue.length > 0) {
      const now = Date.now();
      const first = this.#queue[0] as Waiter;
      if (this.#limits.maxConcurrency > 0 && this.#active >= this.#limits.maxConcurrency) return; // a release pumps again
      if (now < this.#nextStart) {
        this.#timer = setTimeout(() => {
          this.#timer = null;
          this.#pump();
        }, this.#nextStart - now);
        return;
      }
      this.#nextStart = now + this.#interval;
      first.start();
    }
  }
}

/** The pace of every platform on this node. */
export class LocalPacer implements Pacer {
  readonly #paces = new Map<string, PlatformPace>();
  readonly #limits: (platform: string) => PaceLimits;
  readonly #queueMax: number;

  constructor(limits: (platform: string) => PaceLimits, queueMax: number) {
    this.#limits = limits;
    this.#queueMax = queueMax;
  }

  acquire(platform: string, deadline: number, signal: AbortSignal): Promise<() => void> {
    const limits = this.#limits(platform);
    if (limits.maxConcurrency === 0 && limits.maxRps === 0) return Promise.resolve(() => {});
    let pace = this.#paces.get(platform);
    if (!pace) this.#paces.set(platform, (pace = new PlatformPace(platform, limits, this.#queueMax)));
    return pace.acquire(deadline, signal);
  }
}
