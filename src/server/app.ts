// The Fastify application: envelope, errors, auth, rate limit, the generated endpoint routes,
// OpenAPI, docs, health and metrics. Everything platform-specific arrives through the
// endpoint declarations.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { EndpointDeclaration } from '../endpoints/types.ts';
import { StoreUnavailableError, type Stores } from '../store/types.ts';
import { authenticate, enforceRateLimit, KeyUseRecorder } from './auth.ts';
import { answerAndClose, DEFAULT_CONNECTION_LIMITS, edgeServerFactory, type ConnectionLimits } from './connections.ts';
import { CursorSealer } from './cursors.ts';
import { ApiError, errorBody } from './errors.ts';
import { newRequestId } from './ids.ts';
import { Metrics } from './metrics.ts';
import { routeSchema } from './openapi.ts';
import { compileEndpoints, ScrapeService, type Outcome, type UpstreamBinder } from './scrape.ts';
import { sameHash, hashKey } from './keys.ts';

export interface AppOptions {
  stores: Stores;
  endpoints: readonly EndpointDeclaration[];
  cursorSecret: string;
  /** The upstream HTTP client, bound per request to the endpoint's platform. */
  upstream?: UpstreamBinder;
  requestBudgetMs?: number;
  reservationMarginMs?: number;
  metricsToken?: string | undefined;
  /** Fastify logger option; false in tests. */
  logger?: FastifyServerOptions['logger'];
  /** Clock, replaceable in tests. */
  now?: () => number;
  /** How often abandoned reservations are refunded and the cache pruned. */
  maintenanceIntervalMs?: number;
  /** How often key last-use times are written. */
  keyUseFlushMs?: number;
  /**
   * The load balancers' addresses or networks (CIDR): behind them, the client address is the
   * one they report in X-Forwarded-For. Empty: the socket's peer is the client.
   */
  trustProxy?: readonly string[];
  /** Timeouts and connection caps of the HTTP server; the defaults are the production ones. */
  connections?: Partial<ConnectionLimits>;
  /** The address the OpenAPI document names in `servers`; by default the one the service listens on. */
  publicBaseUrl?: string | undefined;
}

interface RequestState {
  team: string | null;
  endpoint: string | null;
  outcome: Outcome;
}

declare module 'fastify' {
  interface FastifyRequest {
    state: RequestState;
  }
  interface FastifyInstance {
    metrics: Metrics;
    /** Aborts in-flight scrapes (they are refunded); used when draining takes too long. */
    abortScrapes: () => void;
    /** Runs the periodic maintenance once (refunds of abandoned reservations, cache pruning). */
    maintain: () => Promise<void>;
  }
}

const JSON_TYPE = 'application/json; charset=utf-8';

function sendError(reply: FastifyReply, error: ApiError, requestId: string): FastifyReply {
  return reply.code(error.status).headers(error.headers).header('content-type', JSON_TYPE).send(errorBody(error, requestId));
}

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

/** One OpenAPI tag per platform, described by the platform's endpoint declarations. */
function platformTags(endpoints: readonly EndpointDeclaration[]): { name: string; description: string }[] {
  const descriptions = new Map<string, string>();
  for (const endpoint of endpoints) {
    const known = descriptions.get(endpoint.platform);
    if (known !== undefined && known !== endpoint.platformDescription) {
      throw new Error(`the endpoints of ${endpoint.platform} describe their platform differently (${endpoint.id})`);
    }
    descriptions.set(endpoint.platform, endpoint.platformDescription);
  }
  return [...descriptions].map(([name, description]) => ({ name, description }));
}

/**
 * The address the server listens on as a URL, or null before it listens. A wildcard address
 * (all interfaces) is named by its loopback address, as Fastify names it when it starts.
 */
function listeningUrl(app: FastifyInstance): string | null {
  const address = app.server.address();
  if (address === null || typeof address === 'string') return null;
  const host = address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '::1' : address.address;
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

const noUpstream: UpstreamBinder = (platform) => async () => {
  throw new Error(`no upstream client configured for ${platform}`);
};

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const now = options.now ?? Date.now;
  const { stores } = options;
  const limits: ConnectionLimits = { ...DEFAULT_CONNECTION_LIMITS, ...options.connections };
  const app = Fastify({
    logger: options.logger ?? false,
    genReqId: newRequestId,
    requestIdHeader: false,
    // One log line per request comes from the onResponse hook below.
    logController: new LogController({ requestIdLogLabel: 'requestId', disableRequestLogging: true }),
    exposeHeadRoutes: false,
    // Requests that arrive while closing get our own 503 envelope (below).
    return503OnClosing: false,
    trustProxy: options.trustProxy?.length ? [...options.trustProxy] : false,
    bodyLimit: 64 * 1024,
    routerOptions: { maxParamLength: 2048 },
    serverFactory: edgeServerFactory({
      limits,
      trustedProxies: options.trustProxy ?? [],
      onAnswer: (entry) => app.log.info(entry, entry.what),
    }),
    // Requests Node's HTTP parser refuses (headers or URL too large, malformed request line) or
    // that do not arrive in time still get the error envelope, unless an answer has begun.
    clientErrorHandler: (error, socket) => {
      const code = (error as { code?: string }).code;
      // Node's own handler checks the same: the response in flight on this socket, if any.
      const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
      if (code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
        socket.destroy();
        return;
      }
      const requestId = newRequestId();
      const answer =
        code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? new ApiError('REQUEST_TIMEOUT', `The request did not arrive in time (headers within ${limits.headersTimeoutMs / 1000} s, all of it within ${limits.requestTimeoutMs / 1000} s).`)
          : new ApiError('BAD_REQUEST', code === 'HPE_HEADER_OVERFLOW' ? 'The request URL or headers are too large.' : 'The request could not be read.');
      answerAndClose(socket, answer, requestId);
      app.log.info({ requestId, status: answer.status, address: socket.remoteAddress, problem: code }, 'client error');
    },
    frameworkErrors: (_error, request, reply) => {
      reply.header('x-request-id', request.id);
      sendError(reply, new ApiError('BAD_REQUEST', 'The request could not be read.'), request.id);
    },
  });

  const metrics = new Metrics();
  const keyUse = new KeyUseRecorder(stores);
  const shutdown = new AbortController();
  const sealer = new CursorSealer(options.cursorSecret);
  const scraper = new ScrapeService(stores, sealer, metrics, {
    upstream: options.upstream ?? noUpstream,
    requestBudgetMs: options.requestBudgetMs ?? 15_000,
    reservationMarginMs: options.reservationMarginMs ?? 60_000,
    now,
    shutdown: shutdown.signal,
  });
  const runtimes = compileEndpoints(options.endpoints);

  app.decorate('metrics', metrics);
  app.decorate('abortScrapes', () => shutdown.abort());
  app.decorate('maintain', async () => {
    const refunded = await stores.ledger.refundExpired(now());
    if (refunded > 0) {
      metrics.creditsRefunded.inc({ reason: 'abandoned' }, refunded);
      app.log.warn({ refunded }, 'refunded abandoned reservations');
    }
    await stores.cache.prune(now());
  });
  app.decorateRequest('state', null as unknown as RequestState);

  // While the app closes, new requests are refused with a 503 envelope, and a connection whose
  // response has just finished is closed as well: Fastify only reaps connections idle when
  // close() begins, so a keep-alive client of a request in flight would hold close() (and
  // SIGTERM) until its idle timeout.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });

  // The two hooks every request passes through are callback-style: no promise per request.
  app.addHook('onRequest', (request, reply, done) => {
    request.state = { team: null, endpoint: null, outcome: { creditsCharged: 0, cached: false } };
    reply.header('x-request-id', request.id);
    if (closing) {
      reply.header('connection', 'close');
      done(new ApiError('SERVICE_UNAVAILABLE', 'The service is restarting; retry shortly.', { headers: { 'retry-after': '5' } }));
      return;
    }
    // No route reads a body: a request that announces one is answered without reading it and
    // its connection closed, so that a body sent slowly (or never) holds nothing.
    const { headers } = request;
    if (headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0')) {
      reply.header('connection', 'close');
    }
    // Every route is GET: any other method is 405 or 404 here, before Fastify would read (and
    // refuse, as 400) a body it does not need.
    if (request.method !== 'GET') {
      done(routeError(request));
      return;
    }
    done();
  });

  app.addHook('onResponse', (request, reply, done) => {
    done();
    if (closing) request.raw.socket?.end();
    const { state } = request;
    const endpoint = state?.endpoint ?? null;
    if (endpoint) {
      metrics.countRequest(endpoint, reply.statusCode, reply.elapsedTime / 1000);
    }
    request.log.info(
      {
        team: state?.team ?? null,
        endpoint,
        method: request.method,
        path: request.url.split('?')[0],
        status: reply.statusCode,
        credits: state?.outcome.creditsCharged ?? 0,
        cached: state?.outcome.cached ?? false,
        durationMs: Math.round(reply.elapsedTime * 100) / 100,
      },
      'request',
    );
  });

  app.setErrorHandler((error, request, reply) => {
    sendError(reply, asApiError(error, request), request.id);
  });

  // Unknown paths are 404; known paths with another method are 405 (a GET reaching this
  // handler is on an unknown path, e.g. a known one with a trailing slash).
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
  app.setNotFoundHandler((request, reply) => sendError(reply, routeError(request), request.id));

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Public-Page Data Extraction API',
        version: '1.0.0',
        // The project grants no licence to others (package.json: UNLICENSED).
        license: { name: 'Proprietary; all rights reserved', identifier: 'LicenseRef-Proprietary' },
        description:
          'Read-only API that scrapes public, logged-out pages of five platforms on demand and returns typed JSON. ' +
          'Each live scrape costs 1 credit; a cached result within `cache_max_age` costs none. ' +
          'Requests are limited per team to a rolling 60-second window (100 by default).',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The API key.' },
          bearer: { type: 'http', scheme: 'bearer', description: 'The API key as a bearer token.' },
        },
      },
      security: [{ apiKey: [] }, { bearer: [] }],
      tags: platformTags(options.endpoints),
    },
    // Built on the first request for the document, so after the server listens.
    transformObject: (document) => {
      if (!('openapiObject' in document)) return document.swaggerObject;
      const { openapi, info, ...rest } = document.openapiObject;
      const url = options.publicBaseUrl ?? listeningUrl(app) ?? '/';
      return { openapi, info, servers: [{ url, description: 'This service.' }], ...rest };
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });

  // Validation and serialisation are ours (auth and the rate limit come first, every problem
  // is reported at once, data is checked against its schema before it is stored): the
  // schemas given to Fastify serve the OpenAPI document.
  const passValidation = () => () => true;
  const plainSerializer = () => (payload: unknown) => JSON.stringify(payload);

  for (const runtime of runtimes.values()) {
    const { endpoint } = runtime;
    app.get(
      endpoint.path,
      {
        schema: routeSchema(endpoint),
        validatorCompiler: passValidation,
        serializerCompiler: plainSerializer,
      },
      // Authentication and the rate limit come first, before anything is read of the query.
      async (request, reply) => {
        request.state.endpoint = endpoint.id;
        const at = now();
        const caller = await authenticate(request, stores, stores.limiter, keyUse, at);
        request.state.team = caller.team.id;
        await enforceRateLimit(caller, stores.limiter, reply, at);
        await scraper.handle(runtime, caller, request, reply, request.state.outcome);
        return reply;
      },
    );
  }

  const hidden = { schema: { hide: true } };
  app.get('/openapi.json', hidden, async (_request, reply) => reply.header('content-type', JSON_TYPE).send(JSON.stringify(app.swagger())));
  app.get('/healthz', hidden, async (_request, reply) => reply.header('content-type', JSON_TYPE).send('{"status":"ok"}'));
  app.get('/readyz', hidden, async (request, reply) => {
    try {
      await stores.ping();
      // Reachable is not enough: a full disk or a read-only file fail every live scrape.
      await stores.probeWrite();
    } catch (error) {
      request.log.error({ err: error }, 'readiness check failed');
      throw new ApiError('SERVICE_UNAVAILABLE', 'The store is unreachable or cannot write.', { headers: { 'retry-after': '5' }, cause: error });
    }
    return reply.header('content-type', JSON_TYPE).send('{"status":"ready"}');
  });
  const metricsTokenHash = options.metricsToken ? hashKey(options.metricsToken) : null;
  app.get('/metrics', hidden, async (request, reply) => {
    if (metricsTokenHash) {
      const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
      if (!match?.[1] || !sameHash(hashKey(match[1]), metricsTokenHash)) {
        throw new ApiError('UNAUTHORIZED', 'The metrics token is missing or wrong.');
      }
    }
    return reply.header('content-type', metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  const timers: NodeJS.Timeout[] = [];
  const every = (ms: number, job: () => Promise<void>, what: string) => {
    const timer = setInterval(() => job().catch((error: unknown) => app.log.error({ err: error }, `${what} failed`)), ms);
    timer.unref();
    timers.push(timer);
  };
  app.addHook('onReady', async () => {
    await app.maintain();
    every(options.maintenanceIntervalMs ?? 30_000, app.maintain, 'maintenance');
    every(options.keyUseFlushMs ?? 5_000, () => keyUse.flush(), 'key use flush');
  });
  app.addHook('onClose', async () => {
    for (const timer of timers) clearInterval(timer);
    await keyUse.flush();
  });

  return app;
}
