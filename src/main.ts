// `npm run serve`: the API alone, configured by the environment (see README).
import './gc-tuning.ts';
import { pathToFileURL } from 'node:url';
import { loadConfig, PLATFORM_ORIGINS, UNPACED_ENV, type Config, type Platform } from './config.ts';
import { UpstreamClient, type PlatformOrigin } from './upstream/client.ts';
import { LocalPacer } from './upstream/pacing.ts';
import { endpoints } from './endpoints/index.ts';
import { buildApp } from './server/app.ts';
import { metricsListener } from './server/plugins/metrics.ts';
import { openStores } from './store/open.ts';
import { collectStartGarbage, listenFailure, stopOnSignals } from './lifecycle.ts';
import type { Stores } from './store/types.ts';
import type { FastifyInstance } from 'fastify';
import { LogDestination } from './log-destination.ts';


/** The upstream client for the configured origins, paced per node or, with Redis in `stores`, across nodes. */
export function upstreamClient(config: Config, stores?: Pick<Stores, 'pacer'>): UpstreamClient {
  const platforms = {} as Record<Platform, PlatformOrigin>;
  for (const [platform, { host, aliases }] of Object.entries(PLATFORM_ORIGINS) as [Platform, (typeof PLATFORM_ORIGINS)[Platform]][]) {
    platforms[platform] = { origin: config.origins[platform], hosts: [host, ...aliases] };
  }
  const limits = (platform: string) => config.pace[platform as Platform] ?? { maxConcurrency: 0, maxRps: 0 };
  const pacer = stores?.pacer?.(limits, config.paceQueue) ?? new LocalPacer(limits, config.paceQueue);
  return new UpstreamClient({ platforms, maxBodyBytes: config.upstreamMaxBytes, memoryBytes: config.upstreamMemoryBytes, pacer, proxies: config.proxies });
}

/**
 * Where the service's log goes: standard output (or `dest`), a write(2) per 4 KiB of lines rather
 * than per line (pino's default), and whatever is gathered written out every 250 ms and when the
 * process exits (log-destination.ts). With a line per request, a cache hit took 37.5 -> 35.2 µs
 * of main-thread CPU with the log going to a file when lines were first gathered (bench/compare.ts).
 * pino's asynchronous destination costs more: each write goes through the thread pool (16 µs of
 * CPU for a write of one line, 1 µs a line at 50 lines a write). Up to 250 ms of lines are lost
 * if the process is killed (SIGKILL).
 */
export function logDestination(dest: number | string = 1): LogDestination {
  return new LogDestination(dest);
}

export interface Running {
  app: FastifyInstance;
  address: string;
  /** Where `/metrics` is served open (METRICS_PORT, on 127.0.0.1); null when it is not. */
  metricsAddress: string | null;
  stop: () => Promise<void>;
}

/**
 * Starts the API on the configured address; SIGTERM, SIGINT and SIGHUP (or the end of the npm
 * that started it) drain it and stop. `log` is where its log goes: a file descriptor or a file's
 * path, standard output unless given.
 */
export async function start(config: Config, given?: Stores, { log = 1 }: { log?: number | string } = {}): Promise<Running> {
  const stores = given ?? (await openStores(config));
  const client = upstreamClient(config, stores);
  // TEST_MODE=on: the sandbox in this process, on free loopback ports, for test-mode keys alone;
  // imported only then (its platforms' pages and generators are several MB of heap).
  const sandbox = config.testMode ? await (await import('../sandbox/server.ts')).startSandbox({ seed: 'test-mode', portBase: 0, host: '127.0.0.1' }) : null;
  const testClient = sandbox ? upstreamClient(loadConfig({ ...UNPACED_ENV, ...sandbox.env, DATA_DIR: config.dataDir, CURSOR_SECRET: config.cursorSecret })) : null;
  const logTo = logDestination(log);
  const app = await buildApp({
    stores,
    endpoints,
    upstream: (platform, signal, deadline) => client.bind(platform, signal, deadline),
    ...(testClient ? { testUpstream: (platform: string, signal: AbortSignal, deadline: number) => testClient.bind(platform, signal, deadline) } : {}),
    cursorSecret: config.cursorSecret,
    requestBudgetMs: config.requestBudgetMs,
    reservationMarginMs: config.reservationMarginMs,
    breaker: config.breaker,
    metricsToken: config.metricsToken,
    publicBaseUrl: config.publicBaseUrl,
    logger: { level: config.logLevel, stream: logTo },
    connections: config.connections,
    trustProxy: config.trustProxy,
    requestRecordsDays: config.requestRecordsDays,
    webhooks: {
      guard: { allowPrivate: config.webhooks.allowPrivate, allowHttp: config.webhooks.allowHttp },
      delivery: {
        retryScheduleMs: config.webhooks.retryScheduleMs,
        disableAfterMs: config.webhooks.disableAfterMs,
        timeoutMs: config.webhooks.timeoutMs,
        pollMs: config.webhooks.pollMs,
      },
    },
    monitors: config.monitors,
    jobs: config.jobs,
  });
  app.metrics.watchProxies(() => Object.fromEntries(Object.keys(PLATFORM_ORIGINS).map((platform) => [platform, client.proxyStates(platform)])));
  app.metrics.watchPace(() => client.paceStates());
  const release = async () => {
    await app.close();
    await client.close();
    await testClient?.close();
    await sandbox?.close();
    await stores.close();
    // Written out and closed here, not only when the process exits: a service stopped in a
    // process that goes on (tests, an embedding program) would hold its last lines and its file.
    logTo.end();
  };
  let address: string;
  try {
    await app.ready();
    collectStartGarbage();
    address = await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await release();
    throw listenFailure(error, { host: config.host, port: config.port, hostVariable: 'HOST', portVariable: 'PORT' });
  }
  if (config.webhooks.allowPrivate || config.webhooks.allowHttp) {
    app.log.warn(
      { WEBHOOK_ALLOW_PRIVATE: config.webhooks.allowPrivate, WEBHOOK_ALLOW_HTTP: config.webhooks.allowHttp },
      'webhooks may be sent to loopback and private addresses or over plain http: for development only',
    );
  }
  let metrics: { address: string; close: () => Promise<void> } | null = null;
  if (config.metricsPort !== undefined) {
    try {
      metrics = await metricsListener(app.metrics, config.metricsPort);
    } catch (error) {
      await release();
      throw listenFailure(error, { host: '127.0.0.1', port: config.metricsPort, hostVariable: 'METRICS_PORT', portVariable: 'METRICS_PORT', name: 'metrics' });
    }
  } else if (!config.metricsToken) {
    app.log.warn('/metrics is not served: set METRICS_TOKEN (a bearer token, on this listener) or METRICS_PORT (open, on 127.0.0.1)');
  }
  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      // In-flight requests finish and settle their credits; past the budget they are aborted
      // (and refunded) so that the process never hangs.
      const force = setTimeout(() => app.abortScrapes(), config.requestBudgetMs + 1_000);
      force.unref();
      await metrics?.close();
      await release();
      clearTimeout(force);
      removeStopHandlers();
    })();
    return stopping;
  };
  const removeStopHandlers = stopOnSignals((reason) => {
    app.log.info({ reason }, 'draining and stopping');
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'stop failed');
        process.exit(1);
      },
    );
  });
  return { app, address, metricsAddress: metrics?.address ?? null, stop };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  // loadConfig inside the promise, so that a configuration error is reported like any other.
  Promise.resolve()
    .then(() => start(loadConfig()))
    .then((running) => {
      // A parent that started this process with an IPC channel (`npm run cluster`, the tests)
      // learns where it listens, PORT=0 included, and that it is this process that does.
      process.send?.({ listening: running.address });
    })
    .catch((error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    });
}
