// The OpenAPI document: each endpoint's route schema, generated from its declaration, collected
// by @fastify/swagger as the routes are added; /openapi.json (the docs page is reference.ts).
// The document carries the guide (src/docs/guide.ts), an example answer per endpoint
// (src/docs/examples.json) and code samples per endpoint (src/docs/samples.ts).
import swagger from '@fastify/swagger';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { Type, type TObject, type TSchema } from 'typebox';
import type { AccountChange } from '../../account/changes.ts';
import { WEBHOOKS_TAG, type WebhookAction } from '../../webhooks/endpoints.ts';
import { MONITORS_TAG, type MonitorOperation } from '../../work/monitors/endpoints.ts';
import { JOBS_TAG, type JobEndpoint } from '../../jobs/endpoints.ts';
import { ACCOUNT_TAG, accountEndpoints } from '../../account/endpoints.ts';
import { exampleOf } from '../../docs/examples.ts';
import { guide } from '../../docs/guide.ts';
import { codeSamples, methodName } from '../../docs/samples.ts';
import type { ApiEndpoint, EndpointDeclaration } from '../../endpoints/types.ts';
import { DateTime, Obj } from '../../endpoints/schemas/common.ts';
import { JSON_TYPE, UPSTREAM_BLOCKED_MESSAGE } from '../errors.ts';
import { fullQuerySchema, unknownName } from '../query.ts';

export const Meta = Obj({
  requestId: Type.String({ description: 'Request identifier, prefix `req_`; also the `x-request-id` header.' }),
  creditsCharged: Type.Integer({ description: '1 on a live scrape, 0 on a cache hit (and on a live scrape whose credit was already refunded as abandoned).' }),
  creditsRemaining: Type.Integer({ description: 'Balance right after this request.' }),
  cached: Type.Boolean({ description: 'True on a cache hit.' }),
  cachedAt: Type.Optional(DateTime('When the cached result was scraped; present on a cache hit only.')),
  stale: Type.Optional(Type.Boolean({ description: 'True when a cached result stands in for a live scrape that failed (`stale_if_error`).' })),
  test: Type.Optional(Type.Boolean({ description: 'True for a test-mode key (`psk_test_`): the answer comes from the built-in sandbox and costs nothing.' })),
});

export const ErrorEnvelope = Obj({
  error: Obj({
    code: Type.String(),
    message: Type.String(),
    requestId: Type.String(),
    details: Type.Optional(Type.Array(Obj({ path: Type.String(), message: Type.String() }), { description: 'Validation errors only.' })),
  }),
});

/** The `Idempotency-Key` request header of every scraping endpoint (validated by the route, src/work/idempotency.ts). */
const IdempotencyHeader = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x21-\\x7e]+$',
      description:
        'Makes the request safe to send again: its 2xx answer is kept for 24 hours and replayed byte for byte (with `Idempotent-Replayed: true`, charged nothing) to the same request sent again with the same key by the team; an answer other than 2xx is not kept, so the same key may be sent again. While the first request with the key runs, the same request gets 409 `IDEMPOTENCY_IN_PROGRESS`; another request with the key, 422 `IDEMPOTENCY_KEY_REUSED`. Scoped to the team and the mode of the API key (live or test). 1 to 255 visible ASCII characters; use a fresh one (a UUID) per request. The SDK sends one with every scraping call and reuses it on its retries.',
      examples: ['5f0c6a3e-8d1b-4f7a-9c2e-1b3d5e7f9a0c'],
    }),
  ),
});

const errorExample = (code: string, message: string, details?: { path: string; message: string }[]) => ({
  error: { code, message, requestId: 'req_3q2VbX9kT0mW7yZ1aC4dE6fG', ...(details ? { details } : {}) },
});

const rateHeaders = {
  'x-ratelimit-limit': { type: 'integer', description: 'Requests allowed per rolling 60 seconds.' },
  'x-ratelimit-remaining': { type: 'integer', description: 'Requests left in the current window.' },
  'x-ratelimit-reset': { type: 'integer', description: 'Seconds until the window admits one more request; 0 when requests remain.' },
  'x-request-id': { type: 'string', description: 'The request identifier.' },
};

const errorResponse = (description: string, code: string, message: string, extraHeaders: Record<string, unknown> = {}, details?: { path: string; message: string }[]) => ({
  description,
  headers: { ...rateHeaders, ...extraHeaders },
  content: { 'application/json': { schema: ErrorEnvelope, example: errorExample(code, message, details) } },
});

/** The 422 of a query, with `details` as an example. */
const invalidQuery = (details: { path: string; message: string }[], more = '') =>
  errorResponse(
    `Invalid query parameters; every problem is listed in \`details\`. A parameter the endpoint does not declare is one (never ignored): its detail names the closest declared name.${more}`,
    'VALIDATION_ERROR',
    'The query parameters are invalid; see details.',
    {},
    details,
  );

const retryAfter = { 'retry-after': { type: 'integer', description: 'Seconds to wait before retrying.' } };

/** The query schema with each example value attached to its parameter, for the docs. */
function withExamples(schema: TObject, examples: Record<string, string>): TObject {
  const properties: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties)) {
    properties[name] = name in examples ? { ...property, examples: [examples[name]] } : property;
  }
  return { ...schema, properties } as TObject;
}

const operationId = (endpoint: ApiEndpoint): string => methodName(endpoint.id);

/** The 200 answer of `endpoint`, with its example answer from the sandbox. */
const successResponse = (endpoint: ApiEndpoint, description: string, headers: Record<string, unknown> = rateHeaders) => {
  const example = exampleOf(endpoint.id);
  return {
    description,
    headers,
    content: { 'application/json': { schema: Type.Object({ data: endpoint.data, meta: Meta }, { additionalProperties: false }) as TSchema, ...(example === undefined ? {} : { example }) } },
  };
};

const unauthorized = () => errorResponse('Missing, invalid or revoked API key.', 'UNAUTHORIZED', 'The API key is invalid or has been revoked.');
const rateLimitedResponse = () =>
  errorResponse('Rate limit exceeded (per team, rolling 60 seconds), or too many failed authentications from this address.', 'RATE_LIMITED', 'Rate limit of 100 requests per 60 seconds exceeded. Retry in 30 s.', retryAfter);
const forbidden = () =>
  errorResponse('A test-mode key (`psk_test_`) while test mode is off on this service.', 'FORBIDDEN', 'Test mode is off on this service: test keys (psk_test_) are refused.');
const internal = () => errorResponse('An unexpected fault; it is logged with the request id.', 'INTERNAL_ERROR', 'An unexpected error occurred; it has been logged with this request id.');

/** The OpenAPI entry of an account endpoint: free, and answering from the store alone. */
export function accountRouteSchema(endpoint: ApiEndpoint): Record<string, unknown> {
  const responses: Record<string, unknown> = {
    200: successResponse(endpoint, 'The answer; free (`meta.creditsCharged` is 0).'),
    401: unauthorized(),
    403: forbidden(),
    405: errorResponse('A method other than GET.', 'METHOD_NOT_ALLOWED', 'Method POST is not allowed here; use GET.'),
    429: rateLimitedResponse(),
    500: internal(),
    503: errorResponse('A store the service depends on is unreachable. Retry after `Retry-After`.', 'SERVICE_UNAVAILABLE', 'The service is temporarily unavailable; retry shortly.', retryAfter),
  };
  const [first] = Object.keys(endpoint.query.properties);
  responses[422] = invalidQuery([
    ...(first === undefined ? [] : [{ path: first, message: 'Has an invalid format' }]),
    unknownName(first === undefined ? 'verbose' : `${first}_`, Object.keys(endpoint.query.properties)),
  ]);
  if (endpoint.paging) {
    responses[400] = errorResponse(`The \`${endpoint.paging.param}\` is malformed, forged, or was issued for other filters.`, 'BAD_REQUEST', `The ${endpoint.paging.param} is malformed or was not issued by this service.`);
  }
  return {
    operationId: operationId(endpoint),
    summary: endpoint.summary,
    description: endpoint.description,
    tags: [ACCOUNT_TAG.name],
    querystring: withExamples(endpoint.query, endpoint.exampleQuery),
    response: responses,
  };
}

/** The OpenAPI entry of a change to the account (a PATCH): free, its body validated whole. */
export function changeRouteSchema(change: AccountChange): Record<string, unknown> {
  const param = Object.keys(change.params.properties)[0];
  const responses: Record<string, unknown> = {
    200: { description: 'The result; free (`meta.creditsCharged` is 0).', headers: rateHeaders, content: { 'application/json': { schema: Type.Object({ data: change.data, meta: Meta }, { additionalProperties: false }) } } },
    400: errorResponse('The body is not JSON (`content-type: application/json`), or cannot be read.', 'BAD_REQUEST', 'The request body must be JSON (content-type: application/json).'),
    401: unauthorized(),
    403: errorResponse(
      `A test key, or a key a member of the team made${param ? ', or a key raising or removing its own daily credit limit' : ''}.`,
      'FORBIDDEN',
      "A key made by a member of the team cannot change the account's settings: use a key an owner made, or ask an owner.",
    ),
    405: errorResponse(`A method other than ${change.method}${param ? '' : ' or GET'}.`, 'METHOD_NOT_ALLOWED', `Method PUT is not allowed here; use ${param ? change.method : `GET or ${change.method}`}.`),
    422: errorResponse('The body is invalid; every problem is listed in `details` with its JSON path.', 'VALIDATION_ERROR', 'The request body is invalid; see details.', {}, [
      { path: Object.keys(change.body.properties)[0] ?? '', message: 'Must be a whole number or null' },
    ]),
    429: rateLimitedResponse(),
    500: internal(),
    503: errorResponse('A store the service depends on is unreachable. Retry after `Retry-After`.', 'SERVICE_UNAVAILABLE', 'The service is temporarily unavailable; retry shortly.', retryAfter),
  };
  if (param) responses[404] = errorResponse(`The team has no such ${param === 'id' ? 'key' : param}.`, 'NOT_FOUND', 'The team has no key key_nope.');
  return {
    operationId: methodName(change.id),
    summary: change.summary,
    description: change.description,
    tags: [ACCOUNT_TAG.name],
    ...(param ? { params: change.params } : {}),
    body: { ...change.body, examples: [change.example.body] },
    response: responses,
  };
}

/** The OpenAPI entry of a webhook endpoint: free; a body or query validated whole; an id of another team's is unknown. */
export function webhookRouteSchema(action: WebhookAction): Record<string, unknown> {
  const param = Object.keys(action.params.properties)[0];
  const methods = action.path === '/v1/webhooks' ? 'GET or POST' : action.path === '/v1/webhooks/{id}' ? 'DELETE or GET' : action.method;
  const responses: Record<string, unknown> = {
    [action.status]: {
      description: `${action.status === 201 ? 'Created' : 'The result'}; free (\`meta.creditsCharged\` is 0).`,
      headers: rateHeaders,
      content: { 'application/json': { schema: Type.Object({ data: action.data, meta: Meta }, { additionalProperties: false }) } },
    },
    401: unauthorized(),
    405: errorResponse(`A method other than ${methods}.`, 'METHOD_NOT_ALLOWED', `Method PUT is not allowed here; use ${methods}.`),
    429: rateLimitedResponse(),
    500: internal(),
    503: errorResponse('A store the service depends on is unreachable. Retry after `Retry-After`.', 'SERVICE_UNAVAILABLE', 'The service is temporarily unavailable; retry shortly.', retryAfter),
  };
  if (action.changes) {
    responses[403] = errorResponse('A test key, or a key a member of the team made: webhooks are managed with a key an owner (or the operator) made.', 'FORBIDDEN', "A key made by a member of the team cannot manage the team's webhooks: use a key an owner made, or ask an owner.");
  }
  if (param) responses[404] = errorResponse(`The team has no such ${action.path.includes('/deliveries/') ? 'delivery' : 'webhook'} (another team's ids are unknown too).`, 'NOT_FOUND', 'The team has no webhook wh_nope.');
  if (action.body) {
    responses[400] = errorResponse('The body is not JSON (`content-type: application/json`), or cannot be read.', 'BAD_REQUEST', 'The request body must be JSON (content-type: application/json).');
    responses[409] = errorResponse('The team already has the most webhooks it may have (10).', 'CONFLICT', 'The team has 10 webhooks, the most it may have: delete one first.');
    responses[422] = errorResponse(
      'The body is invalid, or the URL is refused (not https, or not a public address); every problem is listed in `details` with its JSON path.',
      'VALIDATION_ERROR',
      'The request body is invalid; see details.',
      {},
      [{ path: 'url', message: '169.254.169.254 is a link-local address: webhooks are sent to public addresses only' }],
    );
  }
  if (action.query) {
    responses[400] = errorResponse('The `cursor` is malformed, forged, or was issued for another webhook.', 'BAD_REQUEST', 'The cursor is malformed or was not issued by this service.');
    responses[422] = invalidQuery([unknownName('curser', Object.keys(action.query.properties))]);
  }
  return {
    operationId: methodName(action.id),
    summary: action.summary,
    description: action.description,
    tags: [WEBHOOKS_TAG.name],
    ...(param ? { params: action.params } : {}),
    ...(action.query ? { querystring: action.query } : {}),
    ...(action.body ? { body: { ...action.body, examples: [action.example.body] } } : {}),
    ...(action.method === 'POST' ? { headers: IdempotencyHeader } : {}),
    response: responses,
  };
}

/** The OpenAPI entry of a batch job endpoint: free, its items charged as they run. */
export function jobRouteSchema(route: JobEndpoint): Record<string, unknown> {
  const hasId = 'id' in route.params.properties;
  const ok = route.data
    ? { description: route.status === 202 ? 'The job, queued; `Location` names it. Free.' : 'The answer; free.', headers: route.status === 202 ? { ...rateHeaders, location: { type: 'string', description: '`/v1/jobs/{id}`.' } } : rateHeaders, content: { 'application/json': { schema: Type.Object({ data: route.data, meta: Meta }, { additionalProperties: false }) } } }
    : { description: 'One item per line (`application/x-ndjson`), gzip when accepted.', headers: rateHeaders, content: { 'application/x-ndjson': { schema: { type: 'string' } } } };
  const responses: Record<string, unknown> = {
    [route.status]: ok,
    401: unauthorized(),
    403: forbidden(),
    422: route.body
      ? errorResponse('The body is invalid; every problem is listed in `details` with its JSON path, an item\'s params checked by its own endpoint. `IDEMPOTENCY_KEY_REUSED`: the `Idempotency-Key` was used for another request.', 'VALIDATION_ERROR', 'The request body is invalid; see details.', {}, [
          { path: 'requests[12].params.username', message: 'Required' },
        ])
      : invalidQuery([{ path: 'limit', message: 'Must be a whole number from 1 to 100' }]),
    429: rateLimitedResponse(),
    500: internal(),
    503: errorResponse('A store the service depends on is unreachable. Retry after `Retry-After`.', 'SERVICE_UNAVAILABLE', 'The service is temporarily unavailable; retry shortly.', retryAfter),
  };
  if (hasId) responses[404] = errorResponse('The team has no such job (or it was deleted after its retention).', 'NOT_FOUND', 'The team has no job job_nope.');
  if (route.id === 'jobs.retry') responses[409] = errorResponse('The job is still queued or running.', 'CONFLICT', 'The job is still queued or running; retry its failed items once it has ended.');
  if (route.body) responses[400] = errorResponse('The body is not JSON, or larger than 4 MB.', 'BAD_REQUEST', 'The request body is not valid JSON.');
  if (route.query.properties.cursor) responses[400] = errorResponse('The cursor is malformed.', 'BAD_REQUEST', 'The cursor is malformed or was not issued by this service.');
  return {
    operationId: methodName(route.id),
    summary: route.summary,
    description: route.description,
    tags: [JOBS_TAG.name],
    ...(hasId ? { params: route.params } : {}),
    ...(Object.keys(route.query.properties).length > 0 ? { querystring: route.query } : {}),
    ...(route.body ? { body: route.body } : {}),
    ...(route.method === 'POST' ? { headers: IdempotencyHeader } : {}),
    response: responses,
  };
}

/** The OpenAPI entry of a monitors' endpoint: its path parameters, query, JSON body (closed) and answers. */
export function monitorRouteSchema(operation: MonitorOperation): Record<string, unknown> {
  const hasId = Object.keys(operation.params.properties).length > 0;
  const responses: Record<string, unknown> = {
    [operation.status]: {
      description: operation.id === 'monitors.run' ? 'The run, when it ended; charged like any live scrape (`meta.creditsCharged`).' : operation.status === 201 ? 'Created; `Location` names it. Free.' : 'The answer; free.',
      headers: operation.status === 201 ? { ...rateHeaders, location: { type: 'string', description: 'The path of the monitor.' } } : rateHeaders,
      content: { 'application/json': { schema: Type.Object({ data: operation.data, meta: Meta }, { additionalProperties: false }) } },
    },
    401: unauthorized(),
    403: forbidden(),
    405: errorResponse('A method this path does not take.', 'METHOD_NOT_ALLOWED', 'Method PUT is not allowed here; use GET or POST.'),
    422: errorResponse(
      operation.body ? 'The body is invalid; every problem is listed in `details` with its JSON path (`params.username`, the endpoint’s own checks).' : 'Invalid query parameters; every problem is listed in `details`.',
      'VALIDATION_ERROR',
      'The request body is invalid; see details.',
      {},
      [{ path: operation.body ? 'interval' : 'limit', message: operation.body ? 'Must be at least 15m' : 'Has an invalid format' }],
    ),
    429: rateLimitedResponse(),
    500: internal(),
    503: errorResponse('A store the service depends on is unreachable. Retry after `Retry-After`.', 'SERVICE_UNAVAILABLE', 'The service is temporarily unavailable; retry shortly.', retryAfter),
  };
  if (operation.method !== 'GET' || Object.keys(operation.query.properties).includes('cursor')) {
    responses[400] = operation.body
      ? errorResponse('The body is not JSON (`content-type: application/json`), or cannot be read.', 'BAD_REQUEST', 'The request body must be JSON (content-type: application/json).')
      : errorResponse('The cursor is malformed, or the request cannot be read.', 'BAD_REQUEST', 'The cursor is malformed or was not issued by this service.');
  }
  if (hasId) responses[404] = errorResponse("The team has no such monitor (another team's is not found either).", 'NOT_FOUND', 'The team has no monitor mon_nope.');
  if (operation.id === 'monitors.create' || operation.id === 'monitors.run') {
    responses[409] = errorResponse(
      operation.id === 'monitors.create' ? '`CONFLICT`: the team has as many monitors as it may (MONITOR_MAX_PER_TEAM); or `IDEMPOTENCY_IN_PROGRESS`.' : '`CONFLICT`: a run of it is in progress; or `IDEMPOTENCY_IN_PROGRESS`.',
      'CONFLICT',
      'A run of this monitor is in progress; read its runs in a moment.',
    );
  }
  return {
    operationId: methodName(operation.id),
    summary: operation.summary,
    description: operation.description,
    tags: [MONITORS_TAG.name],
    ...(hasId ? { params: operation.params } : {}),
    ...(Object.keys(operation.query.properties).length > 0 ? { querystring: operation.query } : {}),
    ...(operation.method === 'POST' ? { headers: IdempotencyHeader } : {}),
    ...(operation.body ? { body: { ...operation.body, examples: [operation.example.body] } } : {}),
    response: responses,
  };
}

export function routeSchema(endpoint: EndpointDeclaration): Record<string, unknown> {
  const responses: Record<string, unknown> = {
    200: successResponse(endpoint, 'The extracted data. A live scrape costs 1 credit; a cache hit costs none. The example is a real answer from the sandbox, its lists cut to three items.', {
      ...rateHeaders,
      'idempotent-replayed': { type: 'string', enum: ['true'], description: 'Present on the answer kept for an `Idempotency-Key`, replayed byte for byte (its `meta.requestId` is the first request\'s); nothing was charged.' },
    }),
    401: unauthorized(),
    402: errorResponse(
      "`INSUFFICIENT_CREDITS`: the balance is lower than the 1 credit a live scrape costs. `KEY_CREDIT_LIMIT`: this key's daily credit limit (`dailyCreditLimit`) is spent; the message says when it resets (midnight UTC), and cached results (`cache_max_age`) are still served. Neither is charged.",
      'INSUFFICIENT_CREDITS',
      'A live scrape costs 1 credit; the balance is 0.',
    ),
    403: forbidden(),
    404: errorResponse('The content does not exist, was deleted, is private, or has no public content.', 'NOT_FOUND', 'The content does not exist, was deleted, is private, or has no public content.'),
    405: errorResponse('A method other than GET.', 'METHOD_NOT_ALLOWED', 'Method POST is not allowed here; use GET.'),
    409: errorResponse(
      '`IDEMPOTENCY_IN_PROGRESS`: a request with the same `Idempotency-Key` is still being answered; send it again after `Retry-After` (1 s) with the same key. Not charged.',
      'IDEMPOTENCY_IN_PROGRESS',
      'A request with this Idempotency-Key is still being answered; send it again in 1 s with the same key.',
      retryAfter,
    ),
    422: invalidQuery(
      [{ path: Object.keys(endpoint.exampleQuery)[0] ?? 'url', message: 'Required' }, unknownName('cache-max-age', Object.keys(fullQuerySchema(endpoint).properties))],
      ' So is an invalid `Idempotency-Key` header. `IDEMPOTENCY_KEY_REUSED`: the `Idempotency-Key` was used for a different request (another path or other parameters) in the last 24 hours.',
    ),
    429: rateLimitedResponse(),
    500: internal(),
    501: errorResponse('The endpoint is not available yet.', 'NOT_IMPLEMENTED', `${endpoint.path} is not available yet.`),
    502: errorResponse(
      '`UPSTREAM_BLOCKED`: the source blocked the request (its rate limit, a login wall, a challenge or a block page), or is temporarily unavailable; the message says which. Retry after `Retry-After`; when the source fails often, requests to it are paused for a cool-down and answered at once. `UPSTREAM_UNRECOGNISED`: the source answered with a page the service cannot read. Neither is charged. With `stale_if_error`, a cached result of at most that age is returned instead (200, `meta.stale`).',
      'UPSTREAM_BLOCKED',
      UPSTREAM_BLOCKED_MESSAGE.blocked(endpoint.platform),
    ),
    503: errorResponse(
      'A store the service depends on is unreachable, or the service is busy: its memory for upstream answers is taken by other requests. Not charged; retry after `Retry-After`.',
      'SERVICE_UNAVAILABLE',
      'The service is temporarily unavailable; retry shortly.',
      retryAfter,
    ),
  };
  if (endpoint.paging) {
    responses[400] = errorResponse(
      `The \`${endpoint.paging.param}\` is malformed, forged, expired, issued for another endpoint or target, or rejected by the source.`,
      'BAD_REQUEST',
      `The ${endpoint.paging.param} has expired (they last 24 hours); fetch the first page again.`,
    );
  }
  return {
    operationId: operationId(endpoint),
    summary: endpoint.summary,
    description: endpoint.description,
    tags: [endpoint.platform],
    querystring: withExamples(fullQuerySchema(endpoint), endpoint.exampleQuery),
    headers: IdempotencyHeader,
    response: responses,
  };
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
export function listeningUrl(app: FastifyInstance): string | null {
  const address = app.server.address();
  if (address === null || typeof address === 'string') return null;
  const host = address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '::1' : address.address;
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

export interface OpenApiOptions {
  endpoints: readonly EndpointDeclaration[];
  /** The address the document names in `servers`; by default the one the service listens on. */
  publicBaseUrl?: string | undefined;
}

export const STATUS_TAG = { name: 'status', description: "Each platform's state as the service sees it. Public and free." };

/** Whether an Accept-Encoding header takes gzip (named, or `*`, with a weight above 0). */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  const value = Array.isArray(header) ? header.join(',') : (header ?? '');
  return value.split(',').some((entry) => {
    const [coding = '', ...parameters] = entry.split(';').map((part) => part.trim().toLowerCase());
    const weight = parameters.find((parameter) => parameter.startsWith('q='));
    return (coding === 'gzip' || coding === '*') && (weight === undefined || Number(weight.slice(2)) > 0);
  });
}

/** Registered before the routes, whose schemas it collects. */
const openApi: FastifyPluginAsync<OpenApiOptions> = async (app, options) => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Public-Page Data Extraction API',
        version: '1.0.0',
        // The project grants no licence to others (package.json: UNLICENSED).
        license: { name: 'Proprietary; all rights reserved', identifier: 'LicenseRef-Proprietary' },
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The API key.' },
          bearer: { type: 'http', scheme: 'bearer', description: 'The API key as a bearer token.' },
        },
      },
      security: [{ apiKey: [] }, { bearer: [] }],
      tags: [...platformTags(options.endpoints), ACCOUNT_TAG, WEBHOOKS_TAG, JOBS_TAG, MONITORS_TAG, STATUS_TAG],
    },
    // Built on the first request for the document, so after the server listens.
    transformObject: (document) => {
      if (!('openapiObject' in document)) return document.swaggerObject;
      const { openapi, info, ...rest } = document.openapiObject;
      const url = options.publicBaseUrl ?? listeningUrl(app) ?? '/';
      const all: ApiEndpoint[] = [...options.endpoints, ...accountEndpoints];
      const paths = rest.paths as Record<string, { get?: Record<string, unknown> }> | undefined;
      for (const endpoint of all) {
        const operation = paths?.[endpoint.path]?.get;
        if (operation) operation['x-codeSamples'] = codeSamples(endpoint, url);
      }
      return { openapi, info: info && { ...info, description: guide(all, url) }, servers: [{ url, description: 'This service.' }], ...rest };
    },
  });
  // Browsers ask for an icon; the service has none to show.
  app.get('/favicon.ico', { schema: { hide: true } }, async (_request, reply) => reply.code(204).send());
  // The service's front page is its reference (reference.ts).
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/docs', 302));
  app.get('/openapi.json', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('content-type', JSON_TYPE).send(JSON.stringify(app.swagger())),
  );
};

export const openApiPlugin = fp(openApi, { name: 'openapi' });
