// The API routes, one per endpoint declaration, in a context of their own: authentication and
// the rate limit run at onRequest (before anything is read of the query), the declaration's
// query rules at Fastify's validation stage (every problem reported at once, the canonical
// query handed to the handler), then the scrape, or the account endpoint's answer.
import type { FastifyPluginAsync } from 'fastify';
import { accountEndpoints } from '../../account/endpoints.ts';
import type { RawQuery } from '../../endpoints/types.ts';
import type { Stores } from '../../store/types.ts';
import type { CursorSealer } from '../cursors.ts';
import { JSON_TYPE } from '../errors.ts';
import { PlainQueryValidator, queryAjv, type ParsedQuery } from '../query.ts';
import type { EndpointRuntime, ScrapeService } from '../scrape.ts';
import { authPlugin, type Door } from './auth.ts';
import { accountRouteSchema, routeSchema } from './openapi.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The endpoint id of an API route, for the request log and metrics. */
    endpoint?: string;
  }
}

export interface RoutesOptions {
  runtimes: Iterable<EndpointRuntime>;
  scraper: ScrapeService;
  sealer: CursorSealer;
  stores: Stores;
  now: () => number;
  keyUseFlushMs: number;
  /** Admits every API request (auth.ts). */
  door: Door;
}

// Responses are composed by the scrape (data serialised once, before it is stored); the
// response schemas serve the OpenAPI document only.
const plainSerializer = () => (payload: unknown) => JSON.stringify(payload);

export const routesPlugin: FastifyPluginAsync<RoutesOptions> = async (api, { runtimes, scraper, sealer, stores, now, keyUseFlushMs, door }) => {
  // Before authentication, so that refused requests are counted under their endpoint too.
  api.addHook('onRequest', (request, _reply, done) => {
    request.state.endpoint = request.routeOptions.config.endpoint ?? null;
    done();
  });
  await api.register(authPlugin, { door, now, keyUseFlushMs });

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

  const ajv = queryAjv();
  for (const endpoint of accountEndpoints) {
    const validator = new PlainQueryValidator(endpoint.query, (query) => endpoint.check?.(query, now()) ?? [], ajv);
    api.get<{ Querystring: RawQuery }>(
      endpoint.path,
      {
        schema: accountRouteSchema(endpoint),
        config: { endpoint: endpoint.id },
        validatorCompiler: ({ httpPart }) => (httpPart === 'querystring' ? validator.check : () => true),
        serializerCompiler: plainSerializer,
      },
      async (request, reply) => {
        const { caller } = request;
        const data = await endpoint.answer(request.query, { caller, stores, sealer, now: now() });
        const meta = { requestId: request.id, creditsCharged: 0, creditsRemaining: caller.team.credits, cached: false, ...(caller.test ? { test: true } : {}) };
        return reply.header('content-type', JSON_TYPE).send(JSON.stringify({ data, meta }));
      },
    );
  }
};
