// The result cache: extracted answers kept by the request that produced them.

/**
 * A result to keep: the serialised `data` object as text (`value`), as UTF-8 (`bytes`), or both.
 * A store takes the form it keeps, and makes the other only when it is not given (entryText,
 * entryBytes): a live scrape hands over its bytes alone.
 */
export type CacheEntry = { value: string; bytes?: Buffer; storedAt: number } | { value?: undefined; bytes: Buffer; storedAt: number };

/** The entry's `data` as text. */
export const entryText = (entry: CacheEntry): string => (entry.value !== undefined ? entry.value : entry.bytes.toString('utf8'));

/** The entry's `data` as UTF-8. */
export const entryBytes = (entry: CacheEntry): Buffer => entry.bytes ?? Buffer.from(entry.value as string);

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
