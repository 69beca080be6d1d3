// Writes of many callers gathered by key into few statements: the first write of a key goes at
// once; those asked while a write of the same key is under way wait for it and go together in
// the next (one statement, one lock of the rows they share and one commit for them all), at most
// `max` at a time. Batch jobs write this way what their many items do at once on PostgreSQL:
// their credits' reservations (server/job-credits.ts), their cache entries (postgres/cache.ts)
// and their last pages (postgres/jobs.ts), which one by one queued on the same rows' locks.
interface Asked<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

export class WriteBatches<T, R> {
  readonly #write: (key: string, items: T[]) => Promise<R[]>;
  readonly #max: number;
  readonly #waiting = new Map<string, Asked<T, R>[]>();
  readonly #writing = new Set<string>();

  /** `write` stores one batch of a key and answers each of its items, in their order. */
  constructor(write: (key: string, items: T[]) => Promise<R[]>, max = Number.POSITIVE_INFINITY) {
    this.#write = write;
    this.#max = max;
  }

  /** Writes `item` with the others of `key` that come meanwhile; resolves with its own answer. */
  add(key: string, item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      const waiting = this.#waiting.get(key);
      if (waiting) waiting.push({ item, resolve, reject });
      else this.#waiting.set(key, [{ item, resolve, reject }]);
      if (!this.#writing.has(key)) void this.#drain(key);
    });
  }

  async #drain(key: string): Promise<void> {
    this.#writing.add(key);
    try {
      for (let waiting = this.#waiting.get(key); waiting; waiting = this.#waiting.get(key)) {
        const batch = waiting.splice(0, this.#max);
        if (waiting.length === 0) this.#waiting.delete(key);
        try {
          const results = await this.#write(key, batch.map((asked) => asked.item));
          batch.forEach((asked, n) => asked.resolve(results[n] as R));
        } catch (error) {
          for (const asked of batch) asked.reject(error);
        }
      }
    } finally {
      this.#writing.delete(key);
    }
  }
}
