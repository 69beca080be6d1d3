// The API routes, one per endpoint declaration, in a context of their own: authentication and
// the rate limit run at onRequest (before anything is read of the query), the declaration's
// query rules at Fastify's validation stage (every problem reported at once, the canonical
// query handed to the handler), then the scrape (under its Idempotency-Key when it has one), or
// the account endpoint's answer.
import type { FastifyPluginAsync } from 'fastify';
import { accountChanges, routePath } from '../../account/changes.ts';
import { accountEndpoints } from '../../account/endpoints.ts';
import { BodyValidator } from '../body.ts';
import type { RawQuery } from '../../endpoints/types.ts';
import type { Stores } from '../../store/types.ts';
import type { CursorSealer } from '../cursors.ts';
import { JSON_TYPE } from '../errors.ts';
import { PlainQueryValidator, queryAjv, type ParsedQuery } from '../query.ts';
import { sendOk, type EndpointRuntime, type ScrapeService } from '../scrape.ts';
import { IDEMPOTENCY_HEADER, idempotencyKeyOf, scrapeFingerprint, type IdempotentRequests } from '../../work/idempotency.ts';
import { authPlugin, type Caller, type Door } from './auth.ts';
import { accountRouteSchema, changeRouteSchema, routeSchema } from './openapi.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The endpoint id of an API route, for the request log and metrics. */
    endpoint?: string;
    /** The route reads a JSON body (errors.ts lets its requests through with one). */
    body?: boolean;
  }
}

export interface RoutesOptions {
  runtimes: Iterable<EndpointRuntime>;
  scraper: ScrapeService;
  /** Requests that carry an `Idempotency-Key`. */
  idempotency: IdempotentRequests;
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

export const routesPlugin: FastifyPluginAsync<RoutesOptions> = async (api, { runtimes, scraper, idempotency, sealer, stores, now, keyUseFlushMs, door }) => {
  // Before authentication, so that refused requests are counted under their endpoint too.
  api.addHook('onRequest', (request, _reply, done) => {
    // routeOptions is built anew at each read: read once.
    const { config } = request.routeOptions;
    request.state.endpoint = config.endpoint ?? null;
    request.state.path = config.url;
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
        const { caller, query } = request;
        const header = request.headers[IDEMPOTENCY_HEADER];
        const key = header === undefined ? null : idempotencyKeyOf(header);
        const cursor = scraper.cursorOf(runtime, caller, query);
        if (key === null) {
          const body = await scraper.answer(runtime, caller, query, cursor, request, reply, request.state.outcome);
          if (body !== null) sendOk(reply, body);
          return reply;
        }
        // After validation (the cursor's too), before the cache.
        await idempotency.answer({ teamId: caller.team.id, test: caller.test, key }, scrapeFingerprint('GET', endpoint.path, query), request, reply, async () => {
          const body = await scraper.answer(runtime, caller, query, cursor, request, reply, request.state.outcome);
          return body === null ? null : { status: 200, body, location: null };
        });
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
        return reply.header('content-type', JSON_TYPE).send(JSON.stringify({ data, meta: freeMeta(request.id, caller) }));
      },
    );
  }

  for (const change of accountChanges) {
    const body = new BodyValidator(change.body, ajv);
    api.route<{ Params: Record<string, string>; Body: Record<string, unknown> }>({
      method: change.method,
      url: routePath(change.path),
      schema: changeRouteSchema(change),
      config: { endpoint: change.id, body: true },
      // Any id is looked up among the team's keys (unknown: 404); the body is checked whole.
      validatorCompiler: ({ httpPart }) => (httpPart === 'body' ? body.check : () => true),
      serializerCompiler: plainSerializer,
      handler: async (request, reply) => {
        const { caller } = request;
        const data = await change.apply(request.params, request.body, { caller, stores, now: now() });
        return reply.header('content-type', JSON_TYPE).send(JSON.stringify({ data, meta: freeMeta(request.id, caller) }));
      },
    });
  }
};

/** The `meta` of an answer that scrapes nothing: free. */
const freeMeta = (requestId: string, caller: Caller) => ({ requestId, creditsCharged: 0, creditsRemaining: caller.team.credits, cached: false, ...(caller.test ? { test: true } : {}) });
