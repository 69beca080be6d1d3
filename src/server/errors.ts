// Every error the API answers with: created once with its status and code, rendered in the
// error envelope `{ error: { code, message, requestId, details? } }`.
import type { FastifyReply } from 'fastify';
import type { ValidationDetail } from '../endpoints/types.ts';

export type ErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHORIZED'
  | 'INSUFFICIENT_CREDITS'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'REQUEST_TIMEOUT'
  | 'VALIDATION_ERROR'
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
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  VALIDATION_ERROR: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  NOT_IMPLEMENTED: 501,
  UPSTREAM_BLOCKED: 502,
  UPSTREAM_UNRECOGNISED: 502,
  SERVICE_UNAVAILABLE: 503,
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

/** Answers with `error` in the envelope, its status and headers. */
export function sendError(reply: FastifyReply, error: ApiError, requestId: string): FastifyReply {
  return reply.code(error.status).headers(error.headers).header('content-type', JSON_TYPE).send(errorBody(error, requestId));
}
