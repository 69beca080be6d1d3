// Pacing and concurrency per egress: at most `maxConcurrency` upstream requests to a platform
// at once through one egress (one proxy, or this machine's own address), and their starts at
// least 1/`maxRps` seconds apart (0: no bound), so that a platform sees a polite client from each
// address it sees; a pool of proxies carries as many times the scrapes of one address. A request
// goes to the egress (among those it may use) whose turn comes first. A request beyond them
// waits in a bounded queue, first come first served; when the queue is full, or its turn would
// come after the request's deadline, it is refused at once as `overloaded` (503
// SERVICE_UNAVAILABLE with Retry-After, refunded).
//
// Each node paces its own requests here: with N nodes, an egress sees up to N times the pace
// (the Redis pacer, src/store/redis/pacer.ts, shares each egress's budget across nodes).
import { UpstreamOutcome } from './outcomes.ts';

/** The egress of requests sent without a proxy: this machine's own address. */
export const DIRECT = 'direct';

export interface PaceLimits {
  /** Upstream requests to the platform at once; 0: no bound. */
  maxConcurrency: number;
  /** Upstream request starts per second; 0: no bound. */
  maxRps: number;
}

/** A slot taken: the egress it is on, and the function that ends it. */
export interface PaceSlot {
  egress: string;
  release: () => void;
}

/** Queue depth, slots in use, and the waits so far, of one platform through one egress. */
export interface EgressState {
  platform: string;
  egress: string;
  waiting: number;
  active: number;
  /** Requests that waited for a slot, and the seconds they waited in all. */
  waits: number;
  waitedSeconds: number;
}

export interface Pacer {
  /**
   * Waits for a turn on one of `egresses` (the one whose turn comes first); resolves with the
   * egress and the function that ends the request's slot.
   */
  take(platform: string, egresses: readonly string[], deadline: number, signal: AbortSignal): Promise<PaceSlot>;
  /** Waits for the platform's turn on this machine's own address (`take` with DIRECT alone). */
  acquire(platform: string, deadline: number, signal: AbortSignal): Promise<() => void>;
  /** Each egress's queue and waits on this node, for /metrics. */
  states(): EgressState[];
}

interface Waiter {
  deadline: number;
  /** Leaves the queue and takes a slot. */
  start: () => void;
  /** Leaves the queue, refused. */
  fail: (error: unknown) => void;
}

class EgressPace {
  readonly #platform: string;
  waits = 0;
  waitedMs = 0;
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

  get waiting(): number {
    return this.#queue.length;
  }

  get active(): number {
    return this.#active;
  }

  /**
   * When a request arriving now would start, as a key to compare egresses by: first the
   * requests ahead of it beyond the free slots, then its turn by the pace alone.
   */
  turn(now: number): [number, number] {
    const { maxConcurrency } = this.#limits;
    const beyondSlots = maxConcurrency > 0 ? Math.max(0, this.#active + this.#queue.length - maxConcurrency + 1) : 0;
    return [beyondSlots, Math.max(now, this.#nextStart) + this.#queue.length * this.#interval];
  }

  acquire(deadline: number, signal: AbortSignal): Promise<() => void> {
    const now = Date.now();
    // The earliest this request could start by the pace alone, behind those already waiting.
    const turn = this.turn(now)[1];
    if (this.#queue.length >= this.#queueMax) return Promise.reject(this.#refuse(`too many requests to ${this.#platform} are waiting`, turn - now));
    if (turn > deadline) return Promise.reject(this.#refuse(`${this.#platform} is paced and this request's turn would come too late`, turn - now));
    return new Promise((resolve, reject) => {
      // Set once this call has left the request in the queue: only then does its start count as
      // a wait (a start within this call is at once, however the clock moved meanwhile).
      let queued = false;
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
          if (queued) {
            this.waits += 1;
            this.waitedMs += Date.now() - now;
          }
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
      queued = true;
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

/** The pace of every platform through every egress on this node. */
export class LocalPacer implements Pacer {
  readonly #paces = new Map<string, EgressPace>();
  readonly #limits: (platform: string) => PaceLimits;
  readonly #queueMax: number;

  constructor(limits: (platform: string) => PaceLimits, queueMax: number) {
    this.#limits = limits;
    this.#queueMax = queueMax;
  }

  #pace(platform: string, egress: string, limits: PaceLimits): EgressPace {
    const key = `${platform} ${egress}`;
    let pace = this.#paces.get(key);
    if (!pace) this.#paces.set(key, (pace = new EgressPace(platform, limits, this.#queueMax)));
    return pace;
  }

  /** Ties go to the first of `egresses` (a proxy pool hands them over from the next in turn). */
  async take(platform: string, egresses: readonly string[], deadline: number, signal: AbortSignal): Promise<PaceSlot> {
    const first = egresses[0];
    if (first === undefined) throw new Error('no egress to take a turn on');
    const limits = this.#limits(platform);
    if (limits.maxConcurrency === 0 && limits.maxRps === 0) return { egress: first, release: () => {} };
    const now = Date.now();
    let best = first;
    let bestPace: EgressPace | null = null;
    let bestTurn: [number, number] = [Infinity, Infinity];
    for (const egress of egresses) {
      const pace = this.#pace(platform, egress, limits);
      const turn = pace.turn(now);
      if (turn[0] < bestTurn[0] || (turn[0] === bestTurn[0] && turn[1] < bestTurn[1])) {
        best = egress;
        bestPace = pace;
        bestTurn = turn;
      }
    }
    const release = await (bestPace as EgressPace).acquire(deadline, signal);
    return { egress: best, release };
  }

  async acquire(platform: string, deadline: number, signal: AbortSignal): Promise<() => void> {
    return (await this.take(platform, [DIRECT], deadline, signal)).release;
  }

  states(): EgressState[] {
    return [...this.#paces].map(([key, pace]) => {
      const [platform = '', egress = ''] = key.split(' ');
      return { platform, egress, waiting: pace.waiting, active: pace.active, waits: pace.waits, waitedSeconds: pace.waitedMs / 1000 };
    });
  }
}
