// The batch job endpoints, declared once each like the account's (src/account/): method, path,
// path parameters, query, body and data schemas drive the route, its validation, its OpenAPI
// entry and the docs; `handle` answers. Authenticated and rate-limited like every endpoint, and
// free: what a job's items scrape is charged as they run (1 credit per live page kept), and
// they do not count against the rate limit.
import { createGzip } from 'node:zlib';
import { Readable } from 'node:stream';
import { Type, type TObject, type TSchema } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DateTime, Int, Nullable, Obj, Str } from '../endpoints/schemas/common.ts';
import type { ValidationDetail } from '../endpoints/types.ts';
import type { Caller } from '../server/plugins/auth.ts';
import { ApiError, JSON_TYPE } from '../server/errors.ts';
import { acceptsGzip } from '../server/gzip.ts';
import { cacheMaxAgeParam } from '../server/query.ts';
import type { EndpointRuntime, ScrapeService } from '../server/scrape.ts';
import type { Job, JobItem, Stores } from '../store/types.ts';
import type { JobRunner } from '../work/jobs.ts';

export const JOBS_TAG = {
  name: 'jobs',
  description:
    "Batch jobs: hand over up to 10,000 requests of the scraping endpoints at once; the service runs them (listings followed along their cursor), retries what fails for a moment, and keeps every result. Each item is charged as a request would be (1 credit per live page kept, none for a cached one), exactly once, when its result is stored; items do not count against the rate limit.",
};

/** The most requests one job holds, and the largest body of its creation. */
export const MAX_JOB_REQUESTS = 10_000;
export const MAX_JOB_BODY_BYTES = 4 * 1024 * 1024;
export const MAX_PAGES = 100;
/** Results per page of the JSON listing, and items per read of the NDJSON stream. */
const RESULTS_PER_PAGE = 100;
const STREAM_BATCH = 50;
const JOBS_PER_PAGE = 20;

export interface JobContext {
  caller: Caller;
  stores: Stores;
  scraper: ScrapeService;
  runner: JobRunner;
  /** The scraping endpoints by path. */
  runtimes: ReadonlyMap<string, EndpointRuntime>;
  maxActivePerTeam: number;
  now: number;
}

export interface JobEndpoint {
  id: string;
  method: 'GET' | 'POST';
  /** The OpenAPI path, its parameters in braces. */
  path: string;
  summary: string;
  description: string;
  params: TObject;
  query: TObject;
  body?: TObject;
  /** `data` of a JSON answer; absent for the NDJSON stream. */
  data?: TSchema;
  /** 200, or 202 for the creation. */
  status: 200 | 202;
  handle: (request: FastifyRequest<{ Params: Record<string, string>; Querystring: Record<string, string>; Body: unknown }>, reply: FastifyReply, context: JobContext) => Promise<void>;
}

export const JobView = Obj(
  {
    id: Str({ description: '`job_…`.' }),
    label: Nullable(Str()),
    status: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('completed'), Type.Literal('cancelled')]),
    createdAt: DateTime(),
    startedAt: Nullable(DateTime()),
    completedAt: Nullable(DateTime('When its last item ended.')),
    total: Int({ description: 'Items (requests) in the job.' }),
    pending: Int({ description: 'Items not ended yet: waiting or running.' }),
    succeeded: Int(),
    failed: Int(),
    cancelled: Int({ description: 'Items cancelled before they ran.' }),
    pages: Int({ description: 'Pages stored, every item\'s.' }),
    creditsCharged: Int({ description: 'Credits charged so far: 1 per live page kept.' }),
  },
  'A batch job.',
);

export const ItemView = Obj(
  {
    index: Int({ description: "The item's place in `requests`, from 0." }),
    endpoint: Str(),
    params: Type.Record(Type.String(), Type.String()),
    status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('cancelled')]),
    pages: Type.Array(Type.Object({}, { additionalProperties: true }), { description: "Each page's `data`, as the endpoint answers it; a listing's pages in order." }),
    creditsCharged: Int(),
    error: Nullable(Obj({ code: Str(), message: Str() })),
    attempts: Int({ description: 'Runs of the item so far.' }),
    finishedAt: Nullable(DateTime()),
  },
  "One request of a job and its result. A failed listing keeps the pages it stored before it failed (they are charged).",
);

const Paging = Obj({ cursor: Nullable(Str({ description: 'Pass it as `cursor` for the next page; null on the last one.' })), hasMore: Type.Boolean() });

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export const jobView = (job: Job) => ({
  id: job.id,
  label: job.label,
  status: job.status,
  createdAt: iso(job.createdAt) as string,
  startedAt: iso(job.startedAt),
  completedAt: iso(job.completedAt),
  total: job.total,
  pending: job.pending,
  succeeded: job.succeeded,
  failed: job.failed,
  cancelled: job.cancelled,
  pages: job.pages,
  creditsCharged: job.creditsCharged,
});

/** An item as JSON text, its pages spliced in as they are stored (never parsed again). */
export function itemJson(item: JobItem): string {
  const head = JSON.stringify({ index: item.index, endpoint: item.endpoint, params: item.params, status: item.status === 'running' ? 'pending' : item.status });
  const tail = JSON.stringify({ creditsCharged: item.creditsCharged, error: item.error, attempts: item.attempts, finishedAt: iso(item.finishedAt) });
  return `${head.slice(0, -1)},"pages":[${item.pages.join(',')}],${tail.slice(1)}`;
}

const freeMeta = (requestId: string, caller: Caller) => ({ requestId, creditsCharged: 0, creditsRemaining: caller.team.credits, cached: false, ...(caller.test ? { test: true } : {}) });

function sendData(reply: FastifyReply, request: FastifyRequest, caller: Caller, dataJson: string, status = 200): void {
  reply.code(status).header('content-type', JSON_TYPE).send(`{"data":${dataJson},"meta":${JSON.stringify(freeMeta(request.id, caller))}}`);
}

/** The 404 of a job the team does not have (the id echoed back only in part: the answer stays small). */
const noJob = (id: string) => new ApiError('NOT_FOUND', `The team has no job ${id.length > 100 ? `${id.slice(0, 100)}…` : id}.`);

async function ownJob(context: JobContext, id: string): Promise<Job> {
  const job = id.length <= 100 ? await context.stores.jobs.get(context.caller.team.id, id) : null;
  if (!job) throw noJob(id);
  return job;
}

const IdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, description: 'The job id (`job_…`).' }) });
const CursorParam = Type.String({ minLength: 1, maxLength: 200, description: '`paging.cursor` of the page before.' });
const LimitParam = (max: number, fallback: number) => Type.String({ pattern: '^[0-9]{1,3}$', description: `Per page, 1 to ${max} (default ${fallback}).` });

function limitOf(raw: string | undefined, max: number, fallback: number, path = 'limit'): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > max) throw new ApiError('VALIDATION_ERROR', 'The query parameters are invalid; see details.', { details: [{ path, message: `Must be a whole number from 1 to ${max}` }] });
  return value;
}

const badCursor = () => new ApiError('BAD_REQUEST', 'The cursor is malformed or was not issued by this service.');

/** The body of `POST /v1/jobs`, checked whole by its schema (every problem with its JSON path). */
export const CreateBody = Obj({
  requests: Type.Array(
    Obj({
      endpoint: Str({ minLength: 1, maxLength: 200, description: 'The path of a scraping endpoint, e.g. `/v1/snapmsg/profile`.' }),
      params: Type.Record(Type.String(), Type.String({ maxLength: 4096 }), { description: "The endpoint's own query parameters, as strings." }),
    }),
    { minItems: 1, maxItems: MAX_JOB_REQUESTS, description: `1 to ${MAX_JOB_REQUESTS} requests.` },
  ),
  cache_max_age: Type.Optional(cacheMaxAgeParam),
  max_pages: Type.Optional(Int({ minimum: 1, maximum: MAX_PAGES, description: `A listing's item follows its cursor to the end of the listing or this many pages (default 1).` })),
  label: Type.Optional(Str({ maxLength: 200 })),
});

type CreateInput = { requests: { endpoint: string; params: Record<string, string> }[]; cache_max_age?: string; max_pages?: number; label?: string };

/** Every request's params checked by its own endpoint's declaration, each problem at its JSON path. */
function checkRequests(body: CreateInput, context: JobContext): ValidationDetail[] {
  const details: ValidationDetail[] = [];
  body.requests.forEach(({ endpoint, params }, index) => {
    const runtime = context.runtimes.get(endpoint);
    if (!runtime) {
      details.push({ path: `requests[${index}].endpoint`, message: 'Is not a scraping endpoint of this service (e.g. /v1/snapmsg/profile)' });
      return;
    }
    if (params.stale_if_error !== undefined) details.push({ path: `requests[${index}].params.stale_if_error`, message: 'Is not available in a job: a failed item is retried, then reported' });
    const { stale_if_error: _ignored, ...rest } = params;
    const checked = runtime.query.check(rest);
    if ('error' in checked) {
      for (const detail of checked.error.details ?? []) details.push({ path: `requests[${index}].params${detail.path ? `.${detail.path}` : ''}`, message: detail.message });
      return;
    }
    const { token, params: target } = checked.value;
    if (token !== null && context.scraper.openCursor(runtime, token, target, context.caller.test) === null) {
      details.push({ path: `requests[${index}].params.${runtime.endpoint.paging?.param}`, message: 'Is malformed, or was issued for another target or mode of key' });
    }
  });
  return details;
}

const create: JobEndpoint = {
  id: 'jobs.create',
  method: 'POST',
  path: '/v1/jobs',
  summary: 'Create a batch job',
  description: `Queues up to ${MAX_JOB_REQUESTS} requests of the scraping endpoints (a body of at most 4 MB), validated whole first: every problem is listed with its path (\`requests[12].params.username\`) and nothing is queued. Answers 202 with the job and its \`Location\`. An item's \`cache_max_age\` (in its params) wins over the job's. At most JOB_MAX_ACTIVE_PER_TEAM (default 10) queued or running jobs per team (more: 429). Takes an \`Idempotency-Key\` (the body is part of the request). Free: items are charged as they run.`,
  params: Type.Object({}),
  query: Type.Object({}),
  body: CreateBody,
  data: JobView,
  status: 202,
  async handle(request, reply, context) {
    const body = request.body as CreateInput;
    const details = checkRequests(body, context);
    if (details.length > 0) throw new ApiError('VALIDATION_ERROR', 'The request body is invalid; see details.', { details });
    const { caller, stores } = context;
    const job = await stores.jobs.create(
      {
        teamId: caller.team.id,
        keyId: caller.keyId,
        test: caller.test,
        label: body.label ?? null,
        cacheMaxAge: body.cache_max_age ?? null,
        maxPages: body.max_pages ?? 1,
        items: body.requests,
      },
      context.maxActivePerTeam,
      context.now,
    );
    if (!job) {
      throw new ApiError('RATE_LIMITED', `The team has ${context.maxActivePerTeam} queued or running jobs, the most it may have; wait for one to end (or cancel one).`, { headers: { 'retry-after': '30' } });
    }
    context.runner.wake();
    reply.header('location', `/v1/jobs/${job.id}`);
    sendData(reply, request, caller, JSON.stringify(jobView(job)), 202);
  },
};

const list: JobEndpoint = {
  id: 'jobs.list',
  method: 'GET',
  path: '/v1/jobs',
  summary: "List the team's batch jobs",
  description: 'Newest first, 20 per page (`limit` up to 100); `paging.cursor` leads to the next page. Jobs are kept JOB_RETENTION_DAYS (default 7) after they end.',
  params: Type.Object({}),
  query: Type.Object({ cursor: Type.Optional(CursorParam), limit: Type.Optional(LimitParam(100, JOBS_PER_PAGE)) }, { additionalProperties: false }),
  data: Obj({ jobs: Type.Array(JobView), paging: Paging }),
  status: 200,
  async handle(request, reply, context) {
    const limit = limitOf(request.query.limit, 100, JOBS_PER_PAGE);
    let page;
    try {
      page = await context.stores.jobs.list(context.caller.team.id, limit, request.query.cursor ?? null);
    } catch (error) {
      if (error instanceof RangeError) throw badCursor();
      throw error;
    }
    sendData(reply, request, context.caller, JSON.stringify({ jobs: page.jobs.map(jobView), paging: { cursor: page.next, hasMore: page.next !== null } }));
  },
};

const get: JobEndpoint = {
  id: 'jobs.get',
  method: 'GET',
  path: '/v1/jobs/{id}',
  summary: 'Get a batch job',
  description: 'The job with its counts: poll it to follow the progress (or wait for `job.completed` on a webhook).',
  params: IdParam,
  query: Type.Object({}, { additionalProperties: false }),
  data: JobView,
  status: 200,
  async handle(request, reply, context) {
    sendData(reply, request, context.caller, JSON.stringify(jobView(await ownJob(context, request.params.id as string))));
  },
};

const cancel: JobEndpoint = {
  id: 'jobs.cancel',
  method: 'POST',
  path: '/v1/jobs/{id}/cancel',
  summary: 'Cancel a batch job',
  description: 'Its items not started never run and are never charged; those running finish. A job that has ended is answered as it is.',
  params: IdParam,
  query: Type.Object({}, { additionalProperties: false }),
  data: JobView,
  status: 200,
  async handle(request, reply, context) {
    // The store's cancel is the team's own: an unknown job, or another team's, is null.
    const job = await context.stores.jobs.cancel(context.caller.team.id, request.params.id as string, context.now);
    if (!job) throw noJob(request.params.id as string);
    sendData(reply, request, context.caller, JSON.stringify(jobView(job)));
  },
};

const retry: JobEndpoint = {
  id: 'jobs.retry',
  method: 'POST',
  path: '/v1/jobs/{id}/retry',
  summary: 'Retry the failed items of a batch job',
  description: 'Queues the failed items of a job that has ended again (a listing goes on after the pages it stored); 409 `CONFLICT` while the job is queued or running.',
  params: IdParam,
  query: Type.Object({}, { additionalProperties: false }),
  data: JobView,
  status: 200,
  async handle(request, reply, context) {
    const job = await context.stores.jobs.retry(context.caller.team.id, request.params.id as string, context.now);
    if (job === null) throw noJob(request.params.id as string);
    if (job === 'running') throw new ApiError('CONFLICT', 'The job is still queued or running; retry its failed items once it has ended.');
    context.runner.wake();
    sendData(reply, request, context.caller, JSON.stringify(jobView(job)));
  },
};

const StatusParam = Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('cancelled')], { description: 'Only the items in this state.' });

/** `paging.cursor` of the results: the index of the last item of the page. */
const resultsCursor = (index: number) => Buffer.from(`i${index}`).toString('base64url');
function afterOf(cursor: string | undefined): number {
  if (cursor === undefined) return -1;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^i\d{1,6}$/.test(text)) throw badCursor();
  return Number(text.slice(1));
}

function statusOf(raw: string | undefined): 'pending' | 'succeeded' | 'failed' | 'cancelled' | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'pending' || raw === 'succeeded' || raw === 'failed' || raw === 'cancelled') return raw;
  throw new ApiError('VALIDATION_ERROR', 'The query parameters are invalid; see details.', { details: [{ path: 'status', message: 'Must be one of: pending, succeeded, failed, cancelled' }] });
}

const results: JobEndpoint = {
  id: 'jobs.results',
  method: 'GET',
  path: '/v1/jobs/{id}/results',
  summary: "A batch job's results",
  description: 'The items in their order with their results, 100 per page at most (`limit`), optionally of one `status`; `paging.cursor` leads to the next page. `results.ndjson` streams them all.',
  params: IdParam,
  query: Type.Object({ status: Type.Optional(StatusParam), cursor: Type.Optional(CursorParam), limit: Type.Optional(LimitParam(RESULTS_PER_PAGE, RESULTS_PER_PAGE)) }, { additionalProperties: false }),
  data: Obj({ results: Type.Array(ItemView), paging: Paging }),
  status: 200,
  async handle(request, reply, context) {
    const job = await ownJob(context, request.params.id as string);
    const limit = limitOf(request.query.limit, RESULTS_PER_PAGE, RESULTS_PER_PAGE);
    const status = statusOf(request.query.status);
    const after = afterOf(request.query.cursor);
    const items = await context.stores.jobs.items(job.id, { after, limit: limit + 1, status });
    const page = items.slice(0, limit);
    const more = items.length > limit;
    const cursor = more ? resultsCursor((page[page.length - 1] as JobItem).index) : null;
    sendData(reply, request, context.caller, `{"results":[${page.map(itemJson).join(',')}],"paging":${JSON.stringify({ cursor, hasMore: more })}}`);
  },
};

const ndjson: JobEndpoint = {
  id: 'jobs.results.ndjson',
  method: 'GET',
  path: '/v1/jobs/{id}/results.ndjson',
  summary: "Stream a batch job's results",
  description:
    'Every item that has ended (succeeded, failed or cancelled), one JSON object per line in item order (`application/x-ndjson`), read from the store a few items at a time, so any job streams in bounded memory; gzip when the request accepts it (`Accept-Encoding: gzip`). Items still pending are left out: stream again once the job has ended for all of them.',
  params: IdParam,
  query: Type.Object({}, { additionalProperties: false }),
  status: 200,
  async handle(request, reply, context) {
    const job = await ownJob(context, request.params.id as string);
    const { stores } = context;
    async function* lines(): AsyncGenerator<string> {
      let after = -1;
      for (;;) {
        const items = await stores.jobs.items(job.id, { after, limit: STREAM_BATCH });
        if (items.length === 0) return;
        let chunk = '';
        for (const item of items) if (item.status !== 'pending' && item.status !== 'running') chunk += `${itemJson(item)}\n`;
        if (chunk) yield chunk;
        after = (items[items.length - 1] as JobItem).index;
      }
    }
    const stream = Readable.from(lines(), { objectMode: false });
    reply.code(200).header('content-type', 'application/x-ndjson; charset=utf-8').header('vary', 'accept-encoding');
    if (acceptsGzip(request.headers['accept-encoding'])) {
      reply.header('content-encoding', 'gzip');
      const gzip = createGzip();
      stream.on('error', (error) => gzip.destroy(error));
      reply.send(stream.pipe(gzip));
    } else {
      reply.send(stream);
    }
  },
};

/** The batch job endpoints, in the order of the docs. */
export const jobEndpoints: readonly JobEndpoint[] = [create, list, get, cancel, retry, results, ndjson];
