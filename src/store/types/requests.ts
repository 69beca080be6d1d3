// The request log: one record per API request of a known caller, listed and summed for the
// account's usage.

/** One API request of a known caller, as it was answered. */
export interface RequestRecord {
  requestId: string;
  /** When the request arrived (epoch ms). */
  at: number;
  teamId: string;
  keyId: string;
  /** The endpoint's path, e.g. `/v1/shopfront/shop`. */
  endpoint: string;
  status: number;
  /** The error's code; null for a 200. */
  errorCode: string | null;
  credits: number;
  cached: boolean;
  durationMs: number;
  /** The batch job (`job_…`) whose item made the request; absent for a request of the API. */
  jobId?: string;
}

export interface RequestQuery {
  teamId: string;
  /** Epoch ms, inclusive. */
  since?: number;
  /** Epoch ms, exclusive. */
  until?: number;
  endpoint?: string;
  status?: number;
  /** At most this many records (default 50, at most 1,000). */
  limit?: number;
  /** `next` of the page before. */
  cursor?: string | null;
}

/** Newest first; `next` is null on the last page. */
export interface RequestPage {
  records: RequestRecord[];
  next: string | null;
}

export interface RequestTotals {
  /** Per UTC day (`YYYY-MM-DD`), oldest first. */
  days: { day: string; requests: number; credits: number; cached: number }[];
  /** Per endpoint, by path. */
  endpoints: { endpoint: string; requests: number; credits: number; cached: number }[];
}

/** The request records: written in batches off the request path, kept for a number of days. */
export interface RequestLog {
  append(records: readonly RequestRecord[]): Promise<void>;
  /** Throws RangeError for a malformed cursor or limit. */
  list(query: RequestQuery): Promise<RequestPage>;
  /** Totals of the team's records from `since` (inclusive) to `until` (exclusive; default: no bound), epoch ms. */
  totals(teamId: string, since: number, until?: number): Promise<RequestTotals>;
  /** Deletes the records older than `before` (epoch ms); returns how many. */
  prune(before: number): Promise<number>;
}
