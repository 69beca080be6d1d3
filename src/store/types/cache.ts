// The result cache: extracted answers kept by the request that produced them.

export interface CacheEntry {
  /** Serialised `data` object. */
  value: string;
  /** `value` as UTF-8, when the caller has it: a store that keeps bytes takes these rather than encoding `value` again. */
  bytes?: Buffer;
  /** Epoch ms of the live scrape that produced it. */
  storedAt: number;
}

/**
 * An entry as the cache hands it out: the serialised `data` as UTF-8 bytes, ready to be sent.
 * A store that keeps entries in memory encodes each once; sending bytes rather than encoding a
 * string per hit is most of what a cache hit costs (`npm run bench`: 0.71x the bare route with
 * bytes held in memory, 0.56x when each hit encodes the string).
 */
export interface CachedEntry {
  bytes: Buffer;
  /** Epoch ms of the live scrape that produced it. */
  storedAt: number;
}

export interface CacheStore {
  get(key: string): Promise<CachedEntry | null>;
  /**
   * `target` groups every entry of one scraped target so that they can be dropped together.
   * `together`: the write may wait for another under way and go with the others that came
   * meanwhile in one (a batch job's pages, many at once); it is done when the call resolves.
   */
  set(key: string, target: string, entry: CacheEntry, options?: { together?: boolean }): Promise<void>;
  deleteTarget(target: string): Promise<void>;
  /** Drops entries older than `maxAgeMs` and evicts least recently used ones beyond the size bound. */
  prune(now: number): Promise<void>;
}
