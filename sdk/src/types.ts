// The shapes every call shares: the response envelope and the options of a client and a call.
import type { PageScrapeError } from './errors.ts';
import type { Meta } from './envelope.ts';

/** A successful answer: the endpoint's `data` and the request's `meta` (credits, cache, request id). */
export interface ApiResponse<D> {
  data: D;
  meta: Meta;
}

/** Options of one call; each overrides the client's. */
export interface RequestOptions {
  /** Aborts the call, including its retries and the waits between them. */
  signal?: AbortSignal;
  /** Bound on each attempt, from sending the request to reading the whole answer. */
  timeoutMs?: number;
  /**
   * Retries of a failure worth another attempt: a connection refused or cut, an attempt past
   * `timeoutMs`, a 408, 409 `IDEMPOTENCY_IN_PROGRESS`, 429, 502 or 503 answer. Waiting out a
   * 409 `IDEMPOTENCY_IN_PROGRESS` (an earlier attempt of the same call still being answered)
   * uses none of them, for at most `timeoutMs`.
   */
  maxRetries?: number;
  /**
   * The `Idempotency-Key` of a scraping call (1 to 255 visible ASCII characters), sent on each of
   * its attempts. Default: a fresh random UUID per call. Give your own to make one request safe
   * to send again across calls, even across processes (e.g. a job id): within 24 hours the
   * service answers the same request with the same key from its first success, charged once;
   * the same key with another request is a 422 `IDEMPOTENCY_KEY_REUSED`. `paginate` gives each
   * page a fresh key of its own and ignores this.
   */
  idempotencyKey?: string;
  /** Called before each wait for a retry: what failed, which retry follows and after how long. */
  onRetry?: (event: RetryEvent) => void;
}

/** A retry about to be made, as `onRetry` is told of it. */
export interface RetryEvent {
  /** Why: the error of the attempt that failed (`RateLimitedError`, `UpstreamBlockedError`, …). */
  error: PageScrapeError;
  /** Which retry follows: 1 for the first. */
  retry: number;
  /** The most retries the call makes. */
  maxRetries: number;
  /** How long the client waits before it, in milliseconds. */
  delayMs: number;
}

export interface ClientOptions {
  /** The API key (`psk_live_…` or `psk_test_…`). Default: `PAGESCRAPE_API_KEY`. */
  apiKey?: string;
  /** Where the service is, e.g. `https://api.example.com`. Default: `PAGESCRAPE_BASE_URL`, else `http://127.0.0.1:3000`. */
  baseUrl?: string;
  /** Bound on each attempt of a call, in milliseconds. Default: 60,000. */
  timeoutMs?: number;
  /**
   * Retries of a failure worth another attempt (a connection refused or cut, a timeout, a 408,
   * 409 `IDEMPOTENCY_IN_PROGRESS`, 429, 502 or 503 answer). Default: 3.
   */
  maxRetries?: number;
  /** The longest wait before a retry, in milliseconds; an answer asking to wait longer is thrown at once. Default: 60,000. */
  maxRetryDelayMs?: number;
  /** The `fetch` to use. Default: the global one. */
  fetch?: typeof fetch;
}

/** Options of `paginate`. */
export interface PaginateOptions<Page> extends RequestOptions {
  /** Stop after this many pages. Default: no bound, the listing's end. */
  maxPages?: number;
  /**
   * Spend at most this many credits: a page costs at most 1 (0 when it comes from the cache),
   * so no page is requested once `creditsSpent + 1` would exceed it. Default: no bound.
   */
  maxCredits?: number;
  /** Called with every page as it arrives, before its items are yielded. */
  onPage?: (page: Page) => void;
}
