// Requests the service makes to itself on a client's behalf (MCP tool calls, the dashboard's
// try-it panel), run in-process: they obey the size limit Node's HTTP server puts on a request
// from outside, and one over it is refused with the same answer (app.ts, clientErrorHandler).
import { maxHeaderSize } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { ApiError, errorBody } from './errors.ts';
import { newRequestId } from './ids.ts';

/** The answer to a request whose line and headers exceed what Node's HTTP parser takes. */
export const TOO_LARGE = 'The request URL or headers are too large.';

/** Bytes of a request's line and headers on the wire, at least what Node's parser counts of them. */
function headBytes(method: string, url: string, headers: Record<string, string>): number {
  let bytes = Buffer.byteLength(`${method} ${url} HTTP/1.1\r\n`);
  for (const [name, value] of Object.entries(headers)) bytes += Buffer.byteLength(`${name}: ${value}\r\n`);
  return bytes;
}

/**
 * GETs `url` from the app in-process, as a client would over HTTP: one whose line and headers
 * are over `http.maxHeaderSize` (16 KiB unless `--max-http-header-size` says otherwise) is
 * answered 400 without reaching the app (not authenticated, not counted, not recorded).
 */
export async function getInProcess(app: FastifyInstance, url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  if (headBytes('GET', url, headers) > maxHeaderSize) {
    const error = new ApiError('BAD_REQUEST', TOO_LARGE);
    const requestId = newRequestId();
    app.log.info({ requestId, status: error.status, problem: 'in-process request too large' }, 'client error');
    return { status: error.status, body: errorBody(error, requestId) };
  }
  const response = await app.inject({ method: 'GET', url, headers });
  return { status: response.statusCode, body: response.body };
}

/** POSTs a JSON `body` to `url` in-process (an MCP tool that creates a batch job); the same bound on line and headers. */
export async function postInProcess(app: FastifyInstance, url: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; body: string }> {
  if (headBytes('POST', url, headers) > maxHeaderSize) {
    const error = new ApiError('BAD_REQUEST', TOO_LARGE);
    return { status: error.status, body: errorBody(error, newRequestId()) };
  }
  const response = await app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  return { status: response.statusCode, body: response.body };
}
