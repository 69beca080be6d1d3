// Every error the API answers with: created once with its status and code, rendered in the
// error envelope `{ error: { code, message, requestId, details? } }`.
import type { FastifyReply } from 'fastify';
import type { ValidationDetail } from '../endpoints/types.ts';
import { StoreUnavailableError } from '../store/types.ts';

export type ErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHORIZED'
  | 'INSUFFICIENT_CREDITS'
  | 'KEY_CREDIT_LIMIT'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'REQUEST_TIMEOUT'
  | 'IDEMPOTENCY_IN_PROGRESS'
  | 'CONFLICT'
  | 'VALIDATION_ERROR'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'RATE_LIMITED'
  | 'INTERNAL_ERROR'
  | 'NOT_IMPLEMENTED'
  | 'UPSTREAM_BLOCKED'
  | 'UPSTREAM_UNRECOGNISED'
  | 'SERVICE_UNAVAILABLE';

export const STATUS_OF: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  INSUFFICIENT_CREDITS: 402,
  KEY_CREDIT_LIMIT: 402,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  IDEMPOTENCY_IN_PROGRESS: 409,
  CONFLICT: 409,
  VALIDATION_ERROR: 422,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  NOT_IMPLEMENTED: 501,
  UPSTREAM_BLOCKED: 502,
  UPSTREAM_UNRECOGNISED: 502,
  SERVICE_UNAVAILABLE: 503,
};

/** What a client should do about each error: for the reference page and the SDK's error classes. */
export const ADVICE_OF: Record<ErrorCode, string> = {
  BAD_REQUEST: 'The cursor or page token is malformed, expired (they last 24 hours) or was issued for another target or filter: start the listing again from its first page. Also a request whose URL and headers exceed 16 KiB (an MCP call too): shorten it.',
  UNAUTHORIZED: 'Send a valid key in `x-api-key` (or `Authorization: Bearer`); a revoked key stays refused. Ask the account holder for a new one.',
  INSUFFICIENT_CREDITS: 'The balance is below the 1 credit a live scrape costs: top up, or ask with `cache_max_age` for a cached result, which is free.',
  KEY_CREDIT_LIMIT: "This key's daily credit limit (`dailyCreditLimit`, credits per UTC day) is spent: the message says when it resets (midnight UTC). Cached results (`cache_max_age`) are still served; an owner can raise the limit (`PATCH /v1/account/keys/{id}`, the dashboard or the CLI). Not charged.",
  FORBIDDEN: 'A test key (`psk_test_`) on a service whose test mode is off: use a live key, or a service with `TEST_MODE=on`.',
  NOT_FOUND: 'The content does not exist, was deleted, is private or has no public content (or the path is unknown): do not retry.',
  METHOD_NOT_ALLOWED: 'Every endpoint answers GET only.',
  REQUEST_TIMEOUT: 'The request was not received in time: send it again.',
  IDEMPOTENCY_IN_PROGRESS: 'A request with the same `Idempotency-Key` is still being answered: wait `Retry-After` (1 s) and send it again with the same key, to get its answer once it is kept. Not charged.',
  CONFLICT: 'The resource is not in a state that allows this (the team already has the most webhooks or monitors it may have, a monitor whose run is in progress, a batch job retried while it still runs, …): the message says what; change that first, or wait and read its state again, then retry. Not charged.',
  VALIDATION_ERROR: 'Fix the parameters listed in `details` (`path` and `message` for each problem; a parameter the endpoint does not declare is one, named with the closest declared name); do not retry unchanged.',
  IDEMPOTENCY_KEY_REUSED: 'The `Idempotency-Key` was used within the last 24 hours for a different request (another path, other parameters or another body): use a fresh key for each distinct request. Not charged.',
  RATE_LIMITED: 'Too many requests for the team in the last 60 seconds: wait for `Retry-After` seconds, then retry. `X-RateLimit-Remaining` tells how close you are.',
  INTERNAL_ERROR: 'An unexpected fault on the service, logged with the request id: retry later, and report the `requestId` if it persists. Not charged.',
  NOT_IMPLEMENTED: 'The endpoint is not available yet.',
  UPSTREAM_BLOCKED: 'The source platform is unavailable or refused the service for now: retry after `Retry-After` (or a few seconds), or pass `stale_if_error` to get a cached result instead. Not charged.',
  UPSTREAM_UNRECOGNISED: "The source answered with a page the service cannot read (its layout changed); retrying rarely helps until the service is updated, so report the `requestId`. Not charged.",
  SERVICE_UNAVAILABLE: 'The service is busy or one of its stores is unreachable: retry after `Retry-After`. Not charged.',
};

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ValidationDetail[] | undefined;
  /** Extra response headers, e.g. `Retry-After`. */
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: ValidationDetail[]; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'ApiError';
    this.code = code;
    this.status = STATUS_OF[code];
    this.details = options.details;
    this.headers = options.headers ?? {};
  }
}

/**
 * What a throw that is not an ApiError answers as, wherever it is caught (a request, a job's item,
 * a monitor's run): a store that is away (StoreUnavailableError: PostgreSQL or Redis down or
 * reconnecting) is a 503 to retry, anything else a 500 whose cause is logged by the caller.
 */
export function asApiError(thrown: unknown): ApiError {
  if (thrown instanceof ApiError) return thrown;
  if (thrown instanceof StoreUnavailableError) return new ApiError('SERVICE_UNAVAILABLE', 'The service is temporarily unavailable; retry shortly.', { headers: { 'retry-after': '5' }, cause: thrown });
  return new ApiError('INTERNAL_ERROR', 'An unexpected error occurred; it has been logged with this request id.', { cause: thrown });
}

/**
 * The two messages of `UPSTREAM_BLOCKED` (same code, status and `Retry-After`): the platform
 * refused the request (a block), or did not answer it after the retries (an outage).
 */
export const UPSTREAM_BLOCKED_MESSAGE = {
  blocked: (platform: string) => `${platform} blocked the request (its rate limit, a login wall, a challenge or a block page); retry later.`,
  unavailable: (platform: string) => `${platform} is temporarily unavailable; retry shortly.`,
};

export const validationError = (details: ValidationDetail[]) =>
  new ApiError('VALIDATION_ERROR', 'The query parameters are invalid; see details.', { details });

/** The error body; `details` only on validation errors. */
export function errorBody(error: ApiError, requestId: string): string {
  const body: { code: string; message: string; requestId: string; details?: ValidationDetail[] } = {
    code: error.code,
    message: error.message,
    requestId,
  };
  if (error.details) body.details = error.details;
  return JSON.stringify({ error: body });
}

/** The content type of every JSON answer. */
export const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The headers every answer carries, set as a request arrives: its id, and `nosniff`, so that no
 * browser takes a JSON body (which may echo a client's input) for HTML or script.
 */
export function stampAnswer(reply: FastifyReply, requestId: string): FastifyReply {
  return reply.headers(answerStamp(requestId));
}

/** The headers every answer carries, first. */
export const answerStamp = (requestId: string) => ({ 'x-request-id': requestId, 'x-content-type-options': 'nosniff' }) as const;

/** Answers with `error` in the envelope, its status and headers. */
export function sendError(reply: FastifyReply, error: ApiError, requestId: string): FastifyReply {
  return reply.code(error.status).headers(error.headers).header('content-type', JSON_TYPE).send(errorBody(error, requestId));
}
