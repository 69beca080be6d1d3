// The API routes, one per endpoint declaration, in a context of their own: authentication and
// the rate limit run at onRequest (before anything is read of the query), the declaration's
// query rules at Fastify's validation stage (every problem reported at once, the canonical
// query handed to the handler), then the scrape.
import type { FastifyPluginAsync } from 'fastify';
import type { Stores } from '../../store/types.ts';
import type { ParsedQuery } from '../query.ts';
import type { EndpointRuntime, ScrapeService } from '../scrape.ts';
import { authPlugin } from './auth.ts';
import { routeSchema } from './openapi.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The endpoint id of an API route, for the request log and metrics. */
    endpoint?: string;
  }
}

export interface RoutesOptions {
  runtimes: Iterable<EndpointRuntime>;
  scraper: ScrapeService;
  stores: Stores;
  now: () => number;
  keyUseFlushMs: number;
}

// Responses are composed by the scrape (data serialised once, before it is stored); the
// response schemas serve the OpenAPI document only.
const plainSerializer = () => (payload: unknown) => JSON.stringify(payload);

export const routesPlugin: FastifyPluginAsync<RoutesOptions> = async (api, { runtimes, scraper, stores, now, keyUseFlushMs }) => {
  // Before authentication, so that refused requests are counted under their endpoint too.
  api.addHook('onRequest', (request, _reply, done) => {
    request.state.endpoint = request.routeOptions.config.endpoint ?? null;
    done();
  });
  await api.register(authPlugin, { stores, now, keyUseFlushMs });

  for (const runtime of runtimes) {
    const { endpoint } = runtime;
    api.get<{ Querystring: ParsedQuery }>(
      endpoint.path,
      {
        schema: routeSchema(endpoint),
        config: { endpoint: endpoint.id },
        validatorCompiler: ({ httpPart }) => (httpPart === 'querystring' ? runtime.query.check : () => true),
        serializerCompiler: plainSerializer,
      },
      async (request, reply) => {
        await scraper.handle(runtime, request.caller, request.query, request, reply, request.state.outcome);
        return reply;
      },
    );
  }
};
