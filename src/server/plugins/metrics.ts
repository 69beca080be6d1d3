// What each request leaves behind: one log line and its Prometheus counts, from the state the
// routes fill in (endpoint, team, credits, cache). Serves /metrics, behind a token when set.
import type { FastifyPluginCallback } from 'fastify';
import fp from 'fastify-plugin';
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

const metrics: FastifyPluginCallback<{ metricsToken?: string | undefined }> = (app, options, done) => {
  app.decorate('metrics', new Metrics());
  app.decorateRequest('state', null as unknown as RequestState);

  app.addHook('onRequest', (request, _reply, hookDone) => {
    request.state = { team: null, endpoint: null, outcome: { creditsCharged: 0, cached: false, errorCode: null } };
    hookDone();
  });

  app.addHook('onResponse', (request, reply, hookDone) => {
    hookDone();
    const { state } = request;
    const endpoint = state?.endpoint ?? null;
    if (endpoint) app.metrics.countRequest(endpoint, reply.statusCode, reply.elapsedTime / 1000);
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

  const tokenHash = options.metricsToken ? hashKey(options.metricsToken) : null;
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (tokenHash) {
      const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
      if (!match?.[1] || !sameHash(hashKey(match[1]), tokenHash)) {
        throw new ApiError('UNAUTHORIZED', 'The metrics token is missing or wrong.');
      }
    }
    return reply.header('content-type', app.metrics.registry.contentType).send(await app.metrics.registry.metrics());
  });
  done();
};

export const metricsPlugin = fp(metrics, { name: 'metrics' });
