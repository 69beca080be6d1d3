// The API routes, one per endpoint declaration, in a context of their own: authentication and
// the rate limit run at onRequest (before anything is read of the query), the declaration's
// query rules at Fastify's validation stage (every problem reported at once, the canonical
// query handed to the handler), then the scrape (under its Idempotency-Key when it has one), or
// the account endpoint's answer.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { accountChanges, routePath } from '../../account/changes.ts';
import { accountEndpoints } from '../../account/endpoints.ts';
import { BodyValidator } from '../body.ts';
import type { RawQuery } from '../../endpoints/types.ts';
import type { KeptAnswer, Stores } from '../../store/types.ts';
import type { CursorSealer } from '../cursors.ts';
import { JSON_TYPE } from '../errors.ts';
import { PlainQueryValidator, queryAjv, type ParsedQuery } from '../query.ts';
import { sendOk, type EndpointRuntime, type ScrapeService } from '../scrape.ts';
import { bodyFingerprint, IDEMPOTENCY_HEADER, idempotencyKeyOf, scrapeFingerprint, sendAnswer, type IdempotentRequests } from '../../work/idempotency.ts';
import { authPlugin, type Caller, type Door } from './auth.ts';
import { accountRouteSchema, changeRouteSchema, jobRouteSchema, monitorRouteSchema, routeSchema, webhookRouteSchema } from './route-schemas.ts';
import { monitorOperations } from '../../work/monitors/endpoints.ts';
import { jobEndpoints, MAX_JOB_BODY_BYTES } from '../../jobs/endpoints.ts';
import type { JobRunner } from '../../work/jobs.ts';
import type { MonitorRunner, MonitorSettings } from '../../work/monitors/runner.ts';
import { webhookActions, type WebhookContext } from '../../webhooks/endpoints.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The endpoint id of an API route, for the request log and metrics. */
    endpoint?: string;
    /** The route reads a JSON body (errors.ts lets its requests through with one). */
    body?: boolean;
  }
}

export interface RoutesOptions {
  /** The scraping endpoints by path (a job's or a monitor's request names one). */
  byPath: ReadonlyMap<string, EndpointRuntime>;
  scraper: ScrapeService;
  /** Requests that carry an `Idempotency-Key`. */
  idempotency: IdempotentRequests;
  sealer: CursorSealer;
  stores: Stores;
  now: () => number;
  keyUseFlushMs: number;
  /** Admits every API request (auth.ts). */
  door: Door;
  /** What the webhook endpoints need beside the stores. */
  webhooks: Pick<WebhookContext, 'guard' | 'resolver' | 'nudge'>;
  /** Monitors: their runs, bounds, and the scraping endpoints they may watch (by path). */
  /** Runs the batch jobs' items on this node. */
  runner: JobRunner;
  /** Queued or running jobs a team may have. */
  maxActiveJobs: number;
  monitors: { runner: MonitorRunner; settings: MonitorSettings };
}

// Responses are composed by the scrape (data serialised once, before it is stored); the
// response schemas serve the OpenAPI document only.
const plainSerializer = () => (payload: unknown) => JSON.stringify(payload);

export const routesPlugin: FastifyPluginAsync<RoutesOptions> = async (api, { byPath, scraper, idempotency, sealer, stores, now, keyUseFlushMs, door, webhooks, monitors, runner, maxActiveJobs }) => {
  // Before authentication, so that refused requests are counted under their endpoint too.
  api.addHook('onRequest', (request, _reply, done) => {
    // routeOptions is built anew at each read: read once.
    const { config } = request.routeOptions;
    request.state.endpoint = config.endpoint ?? null;
    request.state.path = config.url;
    done();
  });
  await api.register(authPlugin, { door, now, keyUseFlushMs });

  for (const runtime of byPath.values()) {
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

  /**
   * Sends the answer `answer` makes; a POST that carries an `Idempotency-Key` is answered
   * through it (its fingerprint: method, path and body as canonical JSON), so that every POST
   * of the API may be sent again safely, whatever it does.
   */
  const answerOnce = async (request: FastifyRequest, reply: FastifyReply, answer: () => Promise<KeptAnswer>): Promise<FastifyReply> => {
    const header = request.headers[IDEMPOTENCY_HEADER];
    if (request.method === 'POST' && header !== undefined) {
      const scope = { teamId: request.caller.team.id, test: request.caller.test, key: idempotencyKeyOf(header) };
      await idempotency.answer(scope, bodyFingerprint(request.method, request.url.split('?')[0] ?? '', request.body ?? null), request, reply, answer);
    } else sendAnswer(reply, await answer());
    return reply;
  };

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

  for (const action of webhookActions) {
    const body = action.body ? new BodyValidator(action.body, ajv) : null;
    const query = action.query ? new PlainQueryValidator(action.query, () => [], ajv) : null;
    api.route<{ Params: Record<string, string>; Body: Record<string, unknown>; Querystring: RawQuery }>({
      method: action.method,
      url: routePath(action.path),
      schema: webhookRouteSchema(action),
      // Every method but GET is let through the errors plugin's gate with its body (bounded by bodyLimit).
      config: { endpoint: action.id, body: action.method !== 'GET' },
      // Any id is looked up among the team's (unknown: 404); a body or query is checked whole; an action without a body ignores one.
      validatorCompiler: ({ httpPart }) => (httpPart === 'body' && body ? body.check : httpPart === 'querystring' && query ? query.check : () => true),
      serializerCompiler: plainSerializer,
      handler: async (request, reply) => {
        const { caller } = request;
        return answerOnce(request, reply, async () => {
          const data = await action.apply(
            { params: request.params, body: request.body ?? {}, query: request.query ?? {} },
            { caller, stores, sealer, now: now(), ...webhooks },
          );
          return { status: action.status, body: Buffer.from(JSON.stringify({ data, meta: freeMeta(request.id, caller) })), location: null };
        });
      },
    });
  }

  // The batch job endpoints: free; their bodies checked whole, each request's params by its
  // own endpoint's declaration (jobs/endpoints.ts).
  for (const route of jobEndpoints) {
    const body = route.body ? new BodyValidator(route.body, ajv) : null;
    api.route<{ Params: Record<string, string>; Querystring: Record<string, string>; Body: unknown }>({
      method: route.method,
      url: routePath(route.path),
      schema: jobRouteSchema(route),
      config: { endpoint: route.id, body: route.method === 'POST' },
      ...(route.body ? { bodyLimit: MAX_JOB_BODY_BYTES } : {}),
      validatorCompiler: ({ httpPart }) => (httpPart === 'body' && body ? body.check : () => true),
      serializerCompiler: plainSerializer,
      handler: async (request, reply) => {
        const { caller } = request;
        const context = { caller, stores, scraper, runner, runtimes: byPath, maxActivePerTeam: maxActiveJobs, now: now() };
        // A GET may stream (the results' NDJSON): it sends its own answer.
        if (route.method === 'GET') {
          await route.handle(request, reply, context);
          return reply;
        }
        return answerOnce(request, reply, () => captureAnswer(reply, () => route.handle(request, reply, context)));
      },
    });
  }

  for (const operation of monitorOperations) {
    const query = new PlainQueryValidator(operation.query, () => [], ajv);
    const body = operation.body ? new BodyValidator(operation.body, ajv) : null;
    api.route<{ Params: Record<string, string>; Querystring: Record<string, string>; Body: Record<string, unknown> }>({
      method: operation.method,
      url: routePath(operation.path),
      schema: monitorRouteSchema(operation),
      config: { endpoint: operation.id, body: operation.method !== 'GET' },
      // The body is checked whole by its schema, then by the operation (schedule, the endpoint's own parameters).
      validatorCompiler: ({ httpPart }) => (httpPart === 'body' && body ? body.check : httpPart === 'querystring' ? query.check : () => true),
      serializerCompiler: plainSerializer,
      handler: async (request, reply) => {
        const { caller } = request;
        const answer = async () => {
          const result = await operation.apply(
            { params: request.params, query: request.query, body: request.body ?? {} },
            { caller, stores, runner: monitors.runner, settings: monitors.settings, runtimes: byPath, now: now() },
          );
          const charged = result.creditsCharged ?? 0;
          request.state.outcome.creditsCharged = charged;
          const remaining = charged > 0 ? ((await stores.ledger.balance(caller.team.id)) ?? caller.team.credits) : caller.team.credits;
          const meta = { ...freeMeta(request.id, caller), creditsCharged: charged, creditsRemaining: remaining };
          return { status: operation.status, body: Buffer.from(JSON.stringify({ data: result.data, meta })), location: result.location ?? null };
        };
        return answerOnce(request, reply, answer);
      },
    });
  }
};

/** The `meta` of an answer that scrapes nothing: free. */
const freeMeta = (requestId: string, caller: Caller) => ({ requestId, creditsCharged: 0, creditsRemaining: caller.team.credits, cached: false, ...(caller.test ? { test: true } : {}) });

/**
 * Runs a JSON handler that would send its answer, and takes that answer instead (to keep it for
 * an Idempotency-Key, which sends it): its status, body and location.
 */
async function captureAnswer(reply: FastifyReply, run: () => Promise<void>): Promise<{ status: number; body: Buffer; location: string | null }> {
  let sent: unknown;
  const send = reply.send.bind(reply);
  reply.send = ((payload: unknown) => {
    sent = payload;
    return reply;
  }) as typeof reply.send;
  try {
    await run();
  } finally {
    reply.send = send;
  }
  const location = reply.getHeader('location');
  return { status: reply.statusCode, body: Buffer.from(typeof sent === 'string' ? sent : JSON.stringify(sent)), location: typeof location === 'string' ? location : null };
}
