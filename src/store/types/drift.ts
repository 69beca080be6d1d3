// Drift capture: upstream answers a platform's mapping did not recognise, kept for its operator.

/** An upstream answer a platform's mapping did not recognise, kept for its operator (drift capture). */
export interface DriftSample {
  id: string;
  /** When it was captured (ISO 8601, ms). */
  at: string;
  platform: string;
  /** The endpoint's id, e.g. `shopfront.shop`. */
  endpoint: string;
  requestId: string;
  /** What the mapping found wrong. */
  reason: string;
  /** Path and query of the answer on the platform's origin. */
  path: string;
  status: number;
  /** The answer's headers without cookies. */
  headers: Record<string, string>;
  /** The decoded body, cut at the size cap when `truncated`. */
  body: string;
  truncated: boolean;
}

export type DriftSummary = Omit<DriftSample, 'headers' | 'body'>;

export interface DriftLog {
  /**
   * Keeps a sample; when `perHour` samples of the same platform and endpoint were kept in the
   * hour before it, the oldest of them goes.
   */
  add(sample: Omit<DriftSample, 'id'>, perHour: number): Promise<string>;
  /** Newest first, without headers and bodies. */
  list(query: { platform?: string; limit?: number }): Promise<DriftSummary[]>;
  get(id: string): Promise<DriftSample | null>;
  /** Deletes the samples captured before `before` (epoch ms); returns how many. */
  prune(before: number): Promise<number>;
}
