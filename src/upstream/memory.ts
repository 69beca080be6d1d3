// The process-wide budget of upstream bytes held in memory. Each upstream body is capped on its
// own (UPSTREAM_MAX_BYTES); this bounds them all together (UPSTREAM_MEMORY_BYTES): many large
// answers at once would otherwise take the process to hundreds of megabytes.
//
// Each scrape holds a lease. Bytes are taken as they are buffered and stay taken while the
// scrape may still hold them (the decoded body text, and what the extractor made of it), so
// the lease gives everything back when the scrape ends. A request that cannot take what it
// needs waits in line for a bounded time, then gives up; the client turns that into
// `UpstreamOutcome('overloaded')` (503, refunded).
//
// Bytes are taken chunk by chunk, so leases that wait may hold bytes already. The line is
// ordered by the age of the lease, oldest first, so that bytes given back go to the scrape
// furthest along, which then finishes and gives back all it holds. When every lease holding
// bytes is waiting, none can ever give any back: the newest waiter among them is refused at
// once (its scrape ends and gives its bytes back) instead of all of them timing out together.

interface Waiter {
  lease: MemoryLease;
  bytes: number;
  done: (taken: boolean) => void;
}

export class MemoryBudget {
  readonly capacity: number;
  #used = 0;
  #leases = 0;
  /** Leases holding bytes. */
  #holders = 0;
  readonly #queue: Waiter[] = [];

  constructor(capacity: number) {
    if (!(capacity > 0)) throw new Error(`the memory budget must be positive, got ${capacity}`);
    this.capacity = capacity;
  }

  /** Bytes currently taken by all leases. */
  get used(): number {
    return this.#used;
  }

  /** Requests waiting for bytes. */
  get waiting(): number {
    return this.#queue.length;
  }

  lease(): MemoryLease {
    this.#leases += 1;
    return new MemoryLease(this, this.#leases);
  }

  /** @internal through MemoryLease.take */
  take(lease: MemoryLease, bytes: number, waitMs: number, signal: AbortSignal): boolean | Promise<boolean> {
    if (this.#queue.length === 0 && this.#used + bytes <= this.capacity) {
      this.#grant(lease, bytes);
      return true;
    }
    if (bytes > this.capacity || waitMs <= 0 || signal.aborted) return false;
    return new Promise<boolean>((resolve) => {
      const waiter: Waiter = { lease, bytes, done: () => undefined };
      const timer = setTimeout(() => finish(false), waitMs);
      const onAbort = () => finish(false);
      const finish = (taken: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        const at = this.#queue.indexOf(waiter);
        if (at >= 0) this.#queue.splice(at, 1);
        resolve(taken);
        // The head of the line may have left: those behind it may fit now.
        if (!taken) this.#drain();
      };
      waiter.done = finish;
      signal.addEventListener('abort', onAbort, { once: true });
      // Behind every waiter of an older (or the same) lease, ahead of the younger ones.
      const behind = this.#queue.findIndex((other) => other.lease.serial > lease.serial);
      this.#queue.splice(behind < 0 ? this.#queue.length : behind, 0, waiter);
      this.#breakDeadlock();
    });
  }

  /** @internal through MemoryLease.give */
  give(lease: MemoryLease, bytes: number): void {
    if (bytes <= 0) return;
    const before = lease.held;
    lease.held -= bytes;
    this.#used -= bytes;
    if (before > 0 && lease.held === 0) this.#holders -= 1;
    this.#drain();
    this.#breakDeadlock();
  }

  #grant(lease: MemoryLease, bytes: number): void {
    if (lease.held === 0 && bytes > 0) this.#holders += 1;
    lease.held += bytes;
    this.#used += bytes;
  }

  /** Lets in, in order, the waiters at the head of the line that fit. */
  #drain(): void {
    while (this.#queue.length > 0) {
      const head = this.#queue[0] as Waiter;
      if (this.#used + head.bytes > this.capacity) return;
      this.#queue.shift();
      this.#grant(head.lease, head.bytes);
      head.done(true);
    }
  }

  /** When every lease holding bytes is waiting for more, refuses the newest such waiter. */
  #breakDeadlock(): void {
    while (this.#queue.length > 0 && this.#holders > 0) {
      const waitingHolders = new Set(this.#queue.filter((waiter) => waiter.lease.held > 0).map((waiter) => waiter.lease));
      if (waitingHolders.size < this.#holders) return;
      const newest = this.#queue.findLast((waiter) => waiter.lease.held > 0) as Waiter;
      // Its scrape ends and gives its bytes back; until then it no longer counts as waiting.
      newest.lease.refused = true;
      newest.done(false);
    }
  }
}

/** The bytes one scrape holds. */
export class MemoryLease {
  readonly #budget: MemoryBudget;
  /** Order of creation (1, 2, …): older leases are served first. */
  readonly serial: number;
  /** Bytes taken and not given back. */
  held = 0;
  /** Set when a wait of this lease was refused to break a deadlock: later takes fail at once. */
  refused = false;

  constructor(budget: MemoryBudget, serial: number) {
    this.#budget = budget;
    this.serial = serial;
  }

  /**
   * Takes `bytes`: true at once when they fit and nobody waits before; otherwise waits in line
   * up to `waitMs` (or until `signal` aborts) and resolves true once taken, false when not.
   */
  take(bytes: number, waitMs: number, signal: AbortSignal): boolean | Promise<boolean> {
    if (this.refused) return false;
    return this.#budget.take(this, bytes, waitMs, signal);
  }

  give(bytes: number): void {
    this.#budget.give(this, Math.min(bytes, this.held));
  }

  /** Gives back everything this lease holds. */
  release(): void {
    this.give(this.held);
  }
}
