// The Fastify application: the HTTP server's limits and edge errors, then the plugins in the
// order each request meets them: the error envelope, request log and metrics, the OpenAPI
// document, health, maintenance, and the API routes with their authentication and rate limit.
// Everything platform-specific arrives through the endpoint declarations.
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { EndpointDeclaration } from '../endpoints/types.ts';
import type { Stores } from '../store/types.ts';
import { answerAndClose, DEFAULT_CONNECTION_LIMITS, edgeServerFactory, type ConnectionLimits } from './connections.ts';
import { CursorSealer } from './cursors.ts';
import { ApiError, sendError, stampAnswer } from './errors.ts';
import { newRequestId } from './ids.ts';
import { lazyRequestLogger } from './request-logger.ts';
import { getInProcess, TOO_LARGE } from './in-process.ts';
import { Breakers, DEFAULT_BREAKER, type BreakerSettings } from './breakers.ts';
import { statusPlugin } from './plugins/status.ts';
import { dashboardPlugin } from '../dashboard/plugin.ts';
import { mcpPlugin } from '../mcp/plugin.ts';
import { errorsPlugin } from './plugins/errors.ts';
import { Door } from './plugins/auth.ts';
import { healthPlugin } from './plugins/health.ts';
import { maintenancePlugin } from './plugins/maintenance.ts';
import { recordsPlugin } from './plugins/records.ts';
import { metricsPlugin } from './plugins/metrics.ts';
import { listeningUrl, openApiPlugin } from './plugins/openapi.ts';
import { referencePlugin } from './plugins/reference.ts';
import { DEFAULT_MONITOR_SETTINGS, MonitorRunner, type MonitorSettings } from '../work/monitors/runner.ts';
import { JobRunner } from '../work/jobs.ts';
import { isPostgresStores } from '../store/postgres/kind.ts';
import { DEFAULT_JOB_CONCURRENCY_PER_TEAM, DEFAULT_JOB_WORKERS, type JobSettings } from '../config.ts';
import { routesPlugin } from './plugins/routes.ts';
import { WebhookDispatcher, type DispatcherSettings } from '../webhooks/dispatcher.ts';
import { systemResolver, type GuardSettings, type Resolver } from '../webhooks/guard.ts';
import { compileEndpoints, ScrapeService, type UpstreamBinder } from './scrape.ts';
import { EdgeHits } from './edge-hits.ts';
import { IdempotentRequests } from '../work/idempotency.ts';

export interface AppOptions {
  stores: Stores;
  endpoints: readonly EndpointDeclaration[];
  cursorSecret: string;
  /** The upstream HTTP client, bound per request to the endpoint's platform. */
  upstream?: UpstreamBinder;
  requestBudgetMs?: number;
  reservationMarginMs?: number;
  /** `/metrics` on this app requires it as a bearer token. */
  metricsToken?: string | undefined;
  /** Without a token, whether `/metrics` is served open on this app (the in-process tests); by default it is not served. */
  openMetrics?: boolean;
  /** Fastify logger option; false in tests. */
  logger?: FastifyServerOptions['logger'];
  /** Clock, replaceable in tests. */
  now?: () => number;
  /** How often the cache is pruned; default 30 s. */
  maintenanceIntervalMs?: number;
  /** How often abandoned reservations are refunded; default 5 s. */
  reapIntervalMs?: number;
  /** Request records older than this many days are deleted; default 90. */
  requestRecordsDays?: number;
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
  /** The platforms' circuit breakers (BREAKER_*); the defaults are the production ones. */
  breaker?: BreakerSettings;
  /** The built-in sandbox for test-mode keys (TEST_MODE=on); absent: test keys get 403. */
  testUpstream?: UpstreamBinder;
  /**
   * Webhooks: the address guard's switches (default: public https only), the resolver it checks
   * names with, and `delivery`: the dispatcher's settings, when this app delivers (the service
   * does, from start to close; apps of tests only when they ask).
   */
  webhooks?: { guard?: GuardSettings; resolver?: Resolver; delivery?: Omit<DispatcherSettings, 'guard' | 'resolver'> };
  /** Monitors' bounds and their loop (MONITOR_*); the defaults are the production ones. */
  monitors?: Partial<MonitorSettings>;
  /** Batch jobs (JOB_*); `backoffMs` and `pollMs` for tests. */
  jobs?: Partial<JobSettings> & { backoffMs?: number; pollMs?: number };
  /** Whether plain cache hits are answered before Fastify (edge-hits.ts); on by default, off to compare the two paths in tests. */
  edgeHits?: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Aborts in-flight scrapes (they are refunded); used when draining takes too long. */
    abortScrapes: () => void;
  }
}

const DAY_MS = 24 * 60 * 60 * 1000;

const noUpstream: UpstreamBinder = (platform) => async () => {
  throw new Error(`no upstream client configured for ${platform}`);
};

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const now = options.now ?? Date.now;
  const { stores } = options;
  const limits: ConnectionLimits = { ...DEFAULT_CONNECTION_LIMITS, ...options.connections };
  // Set once the routes are: the server takes requests only after that.
  let edgeHits: EdgeHits | null = null;
  const app = Fastify({
    logger: options.logger ?? false,
    genReqId: newRequestId,
    requestIdHeader: false,
    // One log line per request comes from the metrics plugin.
    logController: new LogController({ requestIdLogLabel: 'requestId', disableRequestLogging: true }),
    childLoggerFactory: lazyRequestLogger,
    exposeHeadRoutes: false,
    // Requests that arrive while closing get our own 503 envelope (errors plugin).
    return503OnClosing: false,
    trustProxy: options.trustProxy?.length ? [...options.trustProxy] : false,
    bodyLimit: 64 * 1024,
    routerOptions: { maxParamLength: 2048 },
    serverFactory: edgeServerFactory({
      limits,
      trustedProxies: options.trustProxy ?? [],
      onAnswer: (entry) => app.log.info(entry, entry.what),
      first: (request, response, next) => (edgeHits ? edgeHits.serve(request, response, next) : next(request, response)),
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
          : new ApiError('BAD_REQUEST', code === 'HPE_HEADER_OVERFLOW' ? TOO_LARGE : 'The request could not be read.');
      answerAndClose(socket, answer, requestId);
      app.log.info({ requestId, status: answer.status, address: socket.remoteAddress, problem: code }, 'client error');
    },
    frameworkErrors: (_error, request, reply) => {
      sendError(stampAnswer(reply, request.id), new ApiError('BAD_REQUEST', 'The request could not be read.'), request.id);
    },
  });

  // First: routes keep the error handler of the moment they are added.
  await app.register(errorsPlugin, { bodiesUnder: ['/dashboard', '/mcp'] });
  await app.register(metricsPlugin, { metricsToken: options.metricsToken, openMetrics: options.openMetrics });
  await app.register(openApiPlugin, { endpoints: options.endpoints, publicBaseUrl: options.publicBaseUrl });
  await app.register(referencePlugin, { publicBaseUrl: options.publicBaseUrl });
  await app.register(healthPlugin, { stores });
  if (stores.roundTrips) app.metrics.watchBackends(stores.roundTrips);
  await app.register(maintenancePlugin, {
    stores,
    now,
    intervalMs: options.maintenanceIntervalMs ?? 30_000,
    reapIntervalMs: options.reapIntervalMs ?? 5_000,
    recordsMaxAgeMs: (options.requestRecordsDays ?? 90) * DAY_MS,
    jobsMaxAgeMs: (options.jobs?.retentionDays ?? 7) * DAY_MS,
    monitorRunsMaxAgeMs: (options.monitors?.runRetentionDays ?? DEFAULT_MONITOR_SETTINGS.runRetentionDays) * DAY_MS,
  });
  await app.register(recordsPlugin, { stores });

  const shutdown = new AbortController();
  app.decorate('abortScrapes', () => shutdown.abort());
  const sealer = new CursorSealer(options.cursorSecret);
  const breakers = new Breakers(options.breaker ?? DEFAULT_BREAKER, now);
  const platforms = [...new Set(options.endpoints.map((endpoint) => endpoint.platform))];
  app.metrics.watchBreakers(platforms, (platform) => breakers.status(platform).state);
  await app.register(statusPlugin, { platforms, breakers });
  const requestBudgetMs = options.requestBudgetMs ?? 15_000;
  const reservationMarginMs = options.reservationMarginMs ?? 60_000;
  const scraper = new ScrapeService(stores, sealer, app.metrics, {
    breakers,
    upstream: options.upstream ?? noUpstream,
    testUpstream: options.testUpstream,
    requestBudgetMs,
    reservationMarginMs,
    now,
    shutdown: shutdown.signal,
  });
  // Admits the API's requests, and the in-process ones of the dashboard and MCP.
  const door = new Door(stores, options.testUpstream !== undefined);
  // A key is held while its request runs, at most as long as the request's credit is.
  const idempotency = new IdempotentRequests(stores.idempotency, app.metrics, { now, lockMs: requestBudgetMs + reservationMarginMs });
  const guard = options.webhooks?.guard ?? { allowPrivate: false, allowHttp: false };
  const resolver = options.webhooks?.resolver ?? systemResolver;
  const delivery = options.webhooks?.delivery;
  const dispatcher = delivery
    ? new WebhookDispatcher({ ...delivery, guard, resolver, stores, metrics: app.metrics, onError: (error) => app.log.warn({ err: error }, 'webhook delivery round failed') })
    : null;
  if (dispatcher) {
    app.metrics.watchWebhookQueue(() => stores.webhooks.queueDepth());
    app.addHook('onReady', async () => dispatcher.start());
    // Before the stores close (they close after the app): attempts in flight are freed.
    app.addHook('onClose', async () => dispatcher.stop());
  }
  // What the webhook routes and pages need beside the stores.
  const webhookContext = { guard, resolver, nudge: () => dispatcher?.nudge() };
  const runtimes = compileEndpoints(options.endpoints);
  // Monitors' runs: the loop starts with the service and, at its close, stops taking runs and
  // waits for those in progress (before the request records are written for the last time).
  const monitorSettings: MonitorSettings = { ...DEFAULT_MONITOR_SETTINGS, ...options.monitors };
  const runtimesByPath = new Map([...runtimes.values()].map((runtime) => [runtime.endpoint.path, runtime]));
  const monitorRunner = new MonitorRunner({
    store: stores.monitors,
    scraper,
    runtimes: runtimesByPath,
    metrics: app.metrics,
    log: app.log,
    now,
    settings: monitorSettings,
    addRecord: (record) => app.addRecord(record),
  });
  app.addHook('onReady', async () => monitorRunner.start());
  app.addHook('onClose', async () => monitorRunner.stop());
  const jobs = options.jobs ?? {};
  const runner = new JobRunner(stores, scraper, runtimesByPath, app.metrics, app.log, {
    concurrencyPerTeam: jobs.concurrencyPerTeam ?? DEFAULT_JOB_CONCURRENCY_PER_TEAM,
    workers: jobs.workers ?? DEFAULT_JOB_WORKERS,
    lockMs: jobs.lockMs ?? requestBudgetMs + reservationMarginMs,
    backoffMs: jobs.backoffMs ?? 1_000,
    pollMs: jobs.pollMs ?? 500,
    // The embedded store's jobs are this process's alone: what an earlier run left claimed, it left dying.
    takeOverOnStart: !isPostgresStores(stores),
    addRecord: (record) => app.addRecord(record),
    now,
  });
  app.metrics.watchJobQueue(() => stores.jobs.depth());
  app.addHook('onReady', async () => runner.start());
  app.addHook('preClose', async () => runner.stop());
  await app.register(routesPlugin, {
    webhooks: webhookContext,
    monitors: { runner: monitorRunner, settings: monitorSettings },
    byPath: runtimesByPath,
    runner,
    maxActiveJobs: jobs.maxActivePerTeam ?? 10,
    scraper,
    idempotency,
    sealer,
    stores,
    now,
    keyUseFlushMs: options.keyUseFlushMs ?? 5_000,
    door,
  });
  if (options.edgeHits !== false) {
    edgeHits = new EdgeHits({
      byPath: runtimesByPath,
      door,
      cache: stores.cache,
      handOverLookup: (raw, key, entry) => scraper.handOverLookup(raw, key, entry),
      metrics: app.metrics,
      log: app.log,
      addRecord: (record) => app.addRecord(record),
      now,
      closing: () => app.isClosing(),
    });
  }
  await app.register(mcpPlugin, { door, endpoints: options.endpoints, version: '1.0.0', now });
  await app.register(dashboardPlugin, {
    prefix: '/dashboard',
    stores,
    endpoints: options.endpoints,
    secret: options.cursorSecret,
    now,
    publicBaseUrl: options.publicBaseUrl,
    baseUrl: () => options.publicBaseUrl ?? listeningUrl(app) ?? 'http://127.0.0.1',
    callAs: (keyId, url) => getInProcess(app, url, door.asKey(keyId)),
    webhooks: webhookContext,
  });
  return app;
}
