// The error envelope for everything the API answers: the gate every request passes first
// (request id, closing, methods, bodies), the error handler, and 404 / 405 for unknown routes.
import type { FastifyPluginCallback, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { StoreUnavailableError } from '../../store/types.ts';
import { ApiError, sendError, stampAnswer } from '../errors.ts';

function asApiError(error: unknown, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof StoreUnavailableError) {
    request.log.error({ err: error }, 'store unavailable');
    return new ApiError('SERVICE_UNAVAILABLE', 'The service is temporarily unavailable; retry shortly.', { headers: { 'retry-after': '5' } });
  }
  const status = (error as { statusCode?: number }).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new ApiError('BAD_REQUEST', 'The request could not be read.');
  }
  request.log.error({ err: error }, 'unexpected error');
  return new ApiError('INTERNAL_ERROR', 'An unexpected error occurred; it has been logged with this request id.');
}

export interface ErrorsOptions {
  /** Paths under these prefixes take bodies (the dashboard's forms, MCP's POSTs); everything else is GET only. */
  bodiesUnder?: readonly string[];
}

const errors: FastifyPluginCallback<ErrorsOptions> = (app, { bodiesUnder = [] }, done) => {
  const takesForms = (url: string) => bodiesUnder.some((prefix) => url === prefix || url.startsWith(`${prefix}/`) || url.startsWith(`${prefix}?`));
  // While the app closes, new requests are refused with a 503 envelope, and a connection whose
  // response has just finished is closed as well: Fastify only reaps connections idle when
  // close() begins, so a keep-alive client of a request in flight would hold close() (and
  // SIGTERM) until its idle timeout.
  let closing = false;
  app.addHook('preClose', (hookDone) => {
    closing = true;
    hookDone();
  });
  app.addHook('onResponse', (request, _reply, hookDone) => {
    if (closing) request.raw.socket?.end();
    hookDone();
  });

  // Unknown paths are 404; known paths with another method are 405 (a GET reaching the
  // not-found handler is on an unknown path, e.g. a known one with a trailing slash).
  const knownPaths = new Set<string>();
  app.addHook('onRoute', (route) => {
    if (!route.url.includes('*') && !route.url.includes(':')) knownPaths.add(route.url);
  });
  const routeError = (request: FastifyRequest): ApiError => {
    const path = request.url.split('?')[0] ?? '';
    if (request.method !== 'GET' && (knownPaths.has(path) || knownPaths.has(path.replace(/\/$/, '')))) {
      return new ApiError('METHOD_NOT_ALLOWED', `Method ${request.method} is not allowed here; use GET.`, { headers: { allow: 'GET' } });
    }
    // The path is the client's own, echoed back only in part: the answer stays small.
    return new ApiError('NOT_FOUND', `No endpoint at ${path.length > 200 ? `${path.slice(0, 200)}…` : path}.`);
  };

  // Callback-style, as every hook each request passes through: no promise per request.
  app.addHook('onRequest', (request, reply, hookDone) => {
    stampAnswer(reply, request.id);
    if (closing) {
      reply.header('connection', 'close');
      hookDone(new ApiError('SERVICE_UNAVAILABLE', 'The service is restarting; retry shortly.', { headers: { 'retry-after': '5' } }));
      return;
    }
    // The dashboard's forms and MCP's messages are read (bounded by their routes); no other route reads a body.
    if (takesForms(request.url)) {
      hookDone();
      return;
    }
    // No API route reads a body: a request that announces one is answered without reading it
    // and its connection closed, so that a body sent slowly (or never) holds nothing.
    const { headers } = request;
    if (headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0')) {
      reply.header('connection', 'close');
    }
    // Every route is GET: any other method is 405 or 404 here, before Fastify would read (and
    // refuse, as 400) a body it does not need.
    if (request.method !== 'GET') {
      hookDone(routeError(request));
      return;
    }
    hookDone();
  });

  app.setErrorHandler((error, request, reply) => {
    const answer = asApiError(error, request);
    if (request.state) request.state.outcome.errorCode = answer.code;
    sendError(reply, answer, request.id);
  });
  app.setNotFoundHandler((request, reply) => sendError(reply, routeError(request), request.id));
  done();
};

export const errorsPlugin = fp(errors, { name: 'errors' });
