// What each request leaves behind: one log line (access-line.ts) and its Prometheus counts, from the state the
// routes fill in (endpoint, team, credits, cache). Serves /metrics on the app behind a bearer
// token (METRICS_TOKEN), or open only when asked (the in-process tests); the service started
// from its configuration serves it open on a loopback listener of its own (metricsListener).
import Fastify, { type FastifyPluginCallback, type FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import { accessLine } from '../access-line.ts';
import { ApiError } from '../errors.ts';
import { hashKey, sameHash } from '../keys.ts';
import { Metrics } from '../metrics.ts';

/** What the handler reports for the request log and metrics. */
export interface Outcome {
  creditsCharged: number;
  cached: boolean;
  /** The error's code, when the answer is an error. */
  errorCode: string | null;
}

export interface RequestState {
  team: string | null;
  endpoint: string | null;
  /** The route's path of an API route (`/v1/shopfront/shop`), with `endpoint`. */
  path?: string;
  outcome: Outcome;
}

declare module 'fastify' {
  interface FastifyRequest {
    state: RequestState;
  }
  interface FastifyInstance {
    metrics: Metrics;
  }
}

export interface MetricsOptions {
  /** `/metrics` requires it as a bearer token. */
  metricsToken?: string | undefined;
  /** Without a token: `/metrics` is served open (true) or not at all (false, the default). */
  openMetrics?: boolean | undefined;
}

const metrics: FastifyPluginCallback<MetricsOptions> = (app, options, done) => {
  app.decorate('metrics', new Metrics());
  app.decorateRequest('state', null as unknown as RequestState);

  app.addHook('onRequest', (request, _reply, hookDone) => {
    request.state = { team: null, endpoint: null, outcome: { creditsCharged: 0, cached: false, errorCode: null } };
    hookDone();
  });

  const writeAccess = accessLine(app.log);
  app.addHook('onResponse', (request, reply, hookDone) => {
    hookDone();
    const { state } = request;
    const endpoint = state?.endpoint ?? null;
    if (endpoint) app.metrics.countRequest(endpoint, reply.statusCode, reply.elapsedTime / 1000);
    // The app's logger's line, the request id in it as the request's own logger would write it
    // (that logger is made only when a request logs more: request-logger.ts).
    writeAccess({
      requestId: request.id,
      team: state?.team ?? null,
      endpoint,
      method: request.method,
      path: request.url.split('?')[0] ?? '',
      status: reply.statusCode,
      credits: state?.outcome.creditsCharged ?? 0,
      cached: state?.outcome.cached ?? false,
      durationMs: Math.round(reply.elapsedTime * 100) / 100,
    });
  });

  const tokenHash = options.metricsToken ? hashKey(options.metricsToken) : null;
  if (tokenHash || options.openMetrics) {
    app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
      if (tokenHash) {
        const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
        if (!match?.[1] || !sameHash(hashKey(match[1]), tokenHash)) {
          throw new ApiError('UNAUTHORIZED', 'The metrics token is missing or wrong.');
        }
      }
      return exposition(app.metrics, reply);
    });
  }
  done();
};

const exposition = async (of: Metrics, reply: FastifyReply) => reply.header('content-type', of.registry.contentType).send(await of.registry.metrics());

export const metricsPlugin = fp(metrics, { name: 'metrics' });

/**
 * `/metrics`, open, on a listener of its own bound to 127.0.0.1: for a Prometheus on the same
 * machine (or a sidecar) when the service's own listener is reachable from elsewhere. It
 * serves nothing else.
 */
export async function metricsListener(of: Metrics, port: number): Promise<{ address: string; close: () => Promise<void> }> {
  const server = Fastify({ logger: false, exposeHeadRoutes: false });
  server.get('/metrics', (_request, reply) => exposition(of, reply));
  const address = await server.listen({ host: '127.0.0.1', port });
  return { address, close: () => server.close() };
}
