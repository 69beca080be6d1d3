// What the nodes of a cluster share: small values with a time to live, and scrapes in flight.

/** Small values shared by every node, each with a time to live (the platforms' shared state). */
export interface KeyValue {
  get(key: string): Promise<string | null>;
  /** `value` null deletes the key. */
  set(key: string, value: string | null, ttlMs: number): Promise<void>;
}

/**
 * Single-flight across nodes. `join` runs `run` when no identical scrape (same `key`) is in
 * flight on any node, and otherwise waits for that scrape's outcome, as `run` would have
 * returned it. `run` resolves with the outcome, serialised, and does not reject.
 */
export interface Flights {
  join(key: string, deadline: number, run: () => Promise<string>): Promise<string>;
}
