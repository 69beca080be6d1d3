// The error envelope for everything the API answers: the gate every request passes first
// (request id, closing, methods, bodies), the error handler, and 404 / 405 for unknown routes.
import type { FastifyPluginCallback, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { StoreUnavailableError } from '../../store/types.ts';
import { announcesBody } from '../body.ts';
import { ApiError, asApiError, sendError, stampAnswer } from '../errors.ts';

function toApiError(error: unknown, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof StoreUnavailableError) {
    request.log.error({ err: error }, 'store unavailable');
    return asApiError(error);
  }
  const { statusCode: status, code } = error as { statusCode?: number; code?: string };
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // A body where one is read: JSON only.
    if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new ApiError('BAD_REQUEST', 'The request body must be JSON (content-type: application/json).');
    if (code === 'FST_ERR_CTP_INVALID_JSON_BODY' || code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || error instanceof SyntaxError) return new ApiError('BAD_REQUEST', 'The request body is not valid JSON.');
    if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new ApiError('BAD_REQUEST', 'The request body is too large (a batch job takes at most 4 MB, any other body 64 KB).');
    return new ApiError('BAD_REQUEST', 'The request could not be read.');
  }
  request.log.error({ err: error }, 'unexpected error');
  return asApiError(error);
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The methods a path takes (its routes', HEAD aside), sorted; null for a path no route has. */
    allowedMethods: (url: string) => string[] | null;
    /** Whether the app has begun to close (new requests get 503). */
    isClosing: () => boolean;
  }
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
  app.decorate('isClosing', () => closing);

  // Unknown paths are 404; known paths with another method are 405 naming the methods they
  // take (GET, or the PATCH of an account setting).
  const knownPaths = new Map<string, Set<string>>();
  /** Paths with a parameter (`/v1/account/keys/:id`), outside the prefixes that take forms. */
  const patterns: { pattern: RegExp; methods: Set<string> }[] = [];
  app.addHook('onRoute', (route) => {
    if (route.url.includes('*')) return;
    const methods = [route.method].flat().filter((method) => method !== 'HEAD');
    if (!route.url.includes(':')) {
      const known = knownPaths.get(route.url) ?? new Set<string>();
      for (const method of methods) known.add(method);
      knownPaths.set(route.url, known);
      return;
    }
    const pattern = new RegExp(`^${route.url.split('/').map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}$`);
    const known = patterns.find((entry) => entry.pattern.source === pattern.source);
    if (known) for (const method of methods) known.methods.add(method);
    else patterns.push({ pattern, methods: new Set(methods) });
  });
  const methodsOf = (path: string): Set<string> | undefined =>
    knownPaths.get(path) ?? knownPaths.get(path.replace(/\/$/, '')) ?? patterns.find(({ pattern }) => pattern.test(path))?.methods;
  app.decorate('allowedMethods', (url: string) => {
    const methods = methodsOf(url.split('?')[0] ?? '');
    return methods ? [...methods].sort() : null;
  });
  const routeError = (request: FastifyRequest): ApiError => {
    const path = request.url.split('?')[0] ?? '';
    const methods = methodsOf(path);
    if (methods && !methods.has(request.method)) {
      const allowed = [...methods].sort().join(', ');
      return new ApiError('METHOD_NOT_ALLOWED', `Method ${request.method} is not allowed here; use ${[...methods].sort().join(' or ')}.`, { headers: { allow: allowed } });
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
    const { headers } = request;
    const withBody = announcesBody(headers);
    // Most requests: a GET without a body passes whatever its route (routeOptions is an object
    // built anew at each read, not needed for them).
    if (request.method === 'GET' && !withBody) {
      hookDone();
      return;
    }
    // The dashboard's forms and MCP's messages are read (bounded by their routes), and the JSON
    // body of an API route that declares one (a PATCH of the account's settings).
    const route = request.routeOptions;
    if (takesForms(request.url) || (route.config.body === true && route.method === request.method)) {
      hookDone();
      return;
    }
    // No other route reads a body: a request that announces one is answered without reading it
    // and its connection closed, so that a body sent slowly (or never) holds nothing.
    if (withBody) reply.header('connection', 'close');
    // Every other route is GET: any other method is 405 or 404 here, before Fastify would read
    // (and refuse, as 400) a body it does not need.
    if (request.method !== 'GET') {
      hookDone(routeError(request));
      return;
    }
    hookDone();
  });

  app.setErrorHandler((error, request, reply) => {
    const answer = toApiError(error, request);
    if (request.state) request.state.outcome.errorCode = answer.code;
    sendError(reply, answer, request.id);
  });
  app.setNotFoundHandler((request, reply) => sendError(reply, routeError(request), request.id));
  done();
};

export const errorsPlugin = fp(errors, { name: 'errors' });
