// Knowing that a backend is down without making requests wait for it. A request's statements
// and commands have generous timeouts (a busy node queues them; that is load, not an outage),
// so they alone would hold requests for seconds when PostgreSQL or Redis stops answering.
// Instead a probe on a connection of its own asks every half second; three probes in a row
// that fail (or get no answer within a second) mark the backend down, and from then on every
// call fails at once with StoreUnavailableError (503) until a probe succeeds again.
//
// A busy node's event loop may run the probe's timer late, after its answer has arrived but
// before it was read: the timeout is only counted once the I/O already waiting has been
// handled (setImmediate runs after the poll phase), so load alone does not mark a backend down.
import { StoreUnavailableError } from './types.ts';

export interface MonitorOptions {
  intervalMs?: number;
  timeoutMs?: number;
  /** Failed probes in a row that mark the backend down. */
  failures?: number;
}

export class BackendMonitor {
  readonly #name: string;
  readonly #probe: () => Promise<unknown>;
  readonly #timeoutMs: number;
  readonly #failures: number;
  readonly #timer: NodeJS.Timeout;
  #failed = 0;
  #probing = false;

  constructor(name: string, probe: () => Promise<unknown>, options: MonitorOptions = {}) {
    this.#name = name;
    this.#probe = probe;
    this.#timeoutMs = options.timeoutMs ?? 1_000;
    this.#failures = options.failures ?? 3;
    this.#timer = setInterval(() => void this.#check(), options.intervalMs ?? 500);
    this.#timer.unref();
  }

  get down(): boolean {
    return this.#failed >= this.#failures;
  }

  /** Throws StoreUnavailableError while the backend is down. */
  assertUp(): void {
    if (this.down) throw new StoreUnavailableError(`${this.#name} is unreachable (its health probe fails)`);
  }

  async #check(): Promise<void> {
    if (this.#probing) return;
    this.#probing = true;
    let timer: NodeJS.Timeout | undefined;
    const answered = this.#probe().then(
      () => true,
      () => false,
    );
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => setImmediate(() => resolve(false)), this.#timeoutMs);
    });
    try {
      if (await Promise.race([answered, timedOut])) this.#failed = 0;
      else this.#failed++;
    } finally {
      clearTimeout(timer);
      this.#probing = false;
    }
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
