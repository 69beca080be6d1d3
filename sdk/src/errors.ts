// The errors a call throws. Every error answer of the API becomes an instance of its code's class
// (generated.ts: `NotFoundError`, `RateLimitedError`, …), all of them `PageScrapeError`s.

import type { ErrorEnvelope } from './envelope.ts';

/** One problem with a parameter, as `VALIDATION_ERROR` lists them. */
export type ErrorDetail = NonNullable<ErrorEnvelope['error']['details']>[number];

export interface PageScrapeErrorInit {
  code: string;
  /** HTTP status; 0 when no answer came. */
  status: number;
  requestId?: string | null;
  details?: readonly ErrorDetail[];
  /** Seconds the answer's `Retry-After` asked to wait, if any. */
  retryAfter?: number | null;
  cause?: unknown;
}

export class PageScrapeError extends Error {
  /** The API's error code (`NOT_FOUND`, …), or `CONNECTION_ERROR`, `TIMEOUT`, `UNEXPECTED_RESPONSE`. */
  readonly code: string;
  /** HTTP status; 0 when no answer came. */
  readonly status: number;
  /** The request's id (`req_…`), to quote to the service's operators; null when no answer came. */
  readonly requestId: string | null;
  /** The problems with the parameters (`VALIDATION_ERROR`); empty otherwise. */
  readonly details: readonly ErrorDetail[];
  /** Seconds the answer's `Retry-After` asked to wait, if any. */
  readonly retryAfter: number | null;

  constructor(message: string, init: PageScrapeErrorInit) {
    super(message, { cause: init.cause });
    this.name = new.target.name;
    this.code = init.code;
    this.status = init.status;
    this.requestId = init.requestId ?? null;
    this.details = init.details ?? [];
    this.retryAfter = init.retryAfter ?? null;
  }
}

/** The service could not be reached, or the connection broke before the answer was read. */
export class ConnectionError extends PageScrapeError {
  /**
   * Whether the request may have reached the service (the connection broke after it was sent,
   * rather than being refused). Told for the record only: the client retries both, since every
   * scraping call carries an `Idempotency-Key` that makes the service run and charge it once.
   */
  readonly mayHaveReached: boolean;

  constructor(message: string, init: PageScrapeErrorInit & { mayHaveReached: boolean }) {
    super(message, init);
    this.mayHaveReached = init.mayHaveReached;
  }
}

/** An attempt took longer than `timeoutMs`. */
export class TimeoutError extends PageScrapeError {}

/** An answer that is not the API's JSON envelope (e.g. a proxy's error page). */
export class UnexpectedResponseError extends PageScrapeError {}
