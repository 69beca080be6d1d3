// The monitors' endpoints, one declaration each (method, path, path parameters, query, body,
// data, an example), so that the route, its validation, its OpenAPI entry, the docs and the SDK
// come from one place. Team-scoped: another team's monitor is 404. Free; a run asked for now is
// charged like any live scrape.
import { Type, type Static, type TObject, type TSchema } from 'typebox';
import { Bool, DateTime, Int, Nullable, Obj, Str } from '../../endpoints/schemas/common.ts';
import type { ValidationDetail } from '../../endpoints/types.ts';
import { ApiError } from '../../server/errors.ts';
import type { Caller } from '../../server/plugins/auth.ts';
import type { EndpointRuntime } from '../../server/scrape.ts';
import type { MonitorChanges, MonitorRecord, MonitorRun, MonitorSchedule, Stores } from '../../store/types.ts';
import { POINTER_PATTERN } from './diff.ts';
import type { MonitorRunner, MonitorSettings } from './runner.ts';
import { cronProblem, DURATION_PATTERN, durationSeconds, durationText, MAX_INTERVAL_S, nextSlot, validTimeZone } from './schedule.ts';

export const MONITORS_TAG = {
  name: 'monitors',
  description:
    'Pages watched on a schedule: each run is a live scrape (1 credit when kept), compared with the last successful run as an RFC 6902 JSON Patch; a change records `monitor.changed`, a third failure in a row `monitor.failed` (sent to webhooks).',
};

export interface MonitorContext {
  caller: Caller;
  stores: Stores;
  runner: MonitorRunner;
  settings: MonitorSettings;
  /** The scraping endpoints' runtimes by path. */
  runtimes: ReadonlyMap<string, EndpointRuntime>;
  /** Epoch ms. */
  now: number;
}

export interface MonitorOperation {
  id: string;
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** The OpenAPI path, its parameters in braces. */
  path: string;
  summary: string;
  description: string;
  params: TObject;
  query: TObject;
  /** The JSON body, for POST and PATCH. */
  body: TObject | null;
  data: TSchema;
  /** 201 for a creation. */
  status: 200 | 201;
  example: { params: Record<string, string>; query: Record<string, string>; body: Record<string, unknown> | null };
  apply: (input: { params: Record<string, string>; query: Record<string, string>; body: Record<string, unknown> }, context: MonitorContext) => Promise<{ data: unknown; location?: string; creditsCharged?: number }>;
}

const PAGE_DEFAULT = 20;
const MAX_WATCH = 20;
const MAX_PARAMS = 20;

const Interval = Type.String({ pattern: DURATION_PATTERN, description: 'Time between runs: a whole number and a unit, `s`, `m`, `h` or `d` (`"30s"`, `"15m"`, `"6h"`, `"1d"`); at least the minimum interval (15 minutes by default).' });
const Cron = Type.String({ minLength: 1, maxLength: 200, description: 'A cron expression (5 fields, or 6 with seconds first) read in `timezone`; its runs at least the minimum interval apart. Give `interval` or `cron`, not both.' });
const TimeZone = Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone of `cron` (`Europe/Paris`); default `UTC`.' });
const Watch = Type.Array(Type.String({ maxLength: 512, pattern: POINTER_PATTERN, description: 'A JSON Pointer into `data`, e.g. `/profile/followers`.' }), {
  maxItems: MAX_WATCH,
  description: 'Only changes at or under one of these JSON Pointers count (send `monitor.changed`, are kept in the run); empty or absent: every change.',
});
const Label = Nullable(Type.String({ maxLength: 200, description: 'Your own name for it.' }));

export const MonitorView = Obj({
  id: Str({ description: '`mon_…`.' }),
  endpoint: Str({ description: 'The endpoint it scrapes, e.g. `/v1/snapmsg/profile`.' }),
  params: Type.Record(Type.String(), Type.String(), { description: "The endpoint's query parameters." }),
  interval: Nullable(Str({ description: 'Time between runs (`"1h"`); null with a cron expression.' })),
  cron: Nullable(Str()),
  timezone: Str(),
  watch: Type.Array(Str()),
  label: Nullable(Str()),
  status: Type.Union([Type.Literal('active'), Type.Literal('paused')]),
  createdAt: DateTime(),
  lastRunAt: Nullable(DateTime('When its last run started.')),
  nextRunAt: Nullable(DateTime('The slot of its next run; null while paused.')),
  lastChangeAt: Nullable(DateTime('When its last change was found.')),
  runs: Int({ description: 'Runs so far.' }),
  consecutiveFailures: Int({ description: 'Failed runs in a row (the third sends `monitor.failed`).' }),
});

const PatchOperation = Type.Object(
  { op: Str({ description: '`add`, `remove` or `replace`.' }), path: Str({ description: 'JSON Pointer into `data`.' }), value: Type.Optional(Type.Unknown()), from: Type.Optional(Str()) },
  { additionalProperties: false, description: 'An RFC 6902 operation.' },
);

export const RunView = Obj({
  id: Str({ description: '`run_…`.' }),
  at: DateTime('The slot it ran for (the time asked for a run made now).'),
  startedAt: DateTime(),
  finishedAt: DateTime(),
  status: Type.Union([Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('skipped')], { description: '`skipped`: no credits (not charged).' }),
  creditsCharged: Int(),
  changed: Bool({ description: 'Its patch is not empty (a `monitor.changed` was sent).' }),
  patch: Nullable(Type.Array(PatchOperation, { description: "RFC 6902 operations from the last successful run's data to this one's (watched ones only); null on the first successful run and on failed or skipped ones." })),
  error: Nullable(Obj({ code: Str(), message: Str() })),
});

export const Paging = Obj({ cursor: Nullable(Str({ description: 'Pass as `cursor` for the next page; null on the last.' })), hasMore: Bool() });

type MonitorViewT = Static<typeof MonitorView>;
type RunViewT = Static<typeof RunView>;

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export const monitorView = (m: MonitorRecord): MonitorViewT => ({
  id: m.id,
  endpoint: m.endpoint,
  params: m.params,
  interval: m.interval === null ? null : durationText(m.interval),
  cron: m.cron,
  timezone: m.timezone,
  watch: m.watch,
  label: m.label,
  status: m.status,
  createdAt: iso(m.createdAt) as string,
  lastRunAt: iso(m.lastRunAt),
  nextRunAt: m.status === 'paused' ? null : iso(m.nextRunAt),
  lastChangeAt: iso(m.lastChangeAt),
  runs: m.runs,
  consecutiveFailures: m.consecutiveFailures,
});

export const runView = (r: MonitorRun): RunViewT => ({
  id: r.id,
  at: iso(r.at) as string,
  startedAt: iso(r.startedAt) as string,
  finishedAt: iso(r.finishedAt) as string,
  status: r.status,
  creditsCharged: r.creditsCharged,
  changed: r.changed,
  patch: r.patch as RunViewT['patch'],
  error: r.error,
});

const IdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, description: 'The monitor id (`mon_…`).' }) });
const PageQuery = Type.Object(
  {
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: '`paging.cursor` of the page before.' })),
    limit: Type.Optional(Type.String({ pattern: '^([1-9]|[1-9][0-9]|100)$', description: `Items per page, 1 to 100; default ${PAGE_DEFAULT}.` })),
  },
  { additionalProperties: false },
);

const notFound = (id: string) => new ApiError('NOT_FOUND', `The team has no monitor ${id.length > 100 ? `${id.slice(0, 100)}…` : id}.`);
const invalid = (details: ValidationDetail[]) => new ApiError('VALIDATION_ERROR', 'The request body is invalid; see details.', { details });

function pageOf(query: Record<string, string>): { limit: number; cursor: string | undefined } {
  return { limit: query.limit === undefined ? PAGE_DEFAULT : Number(query.limit), cursor: query.cursor };
}

const encodeCursor = (value: string | number): string => Buffer.from(JSON.stringify(value)).toString('base64url');
function decodeCursor<T extends 'string' | 'number'>(cursor: string, kind: T): T extends 'string' ? string : number {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString());
  } catch {
    value = undefined;
  }
  if (typeof value !== kind || (kind === 'number' && !Number.isSafeInteger(value))) throw new ApiError('BAD_REQUEST', 'The cursor is malformed or was not issued by this service.');
  return value as T extends 'string' ? string : number;
}

/** The schedule a body asks for, checked; problems go to `details`. */
function scheduleOf(
  body: { interval?: string; cron?: string; timezone?: string },
  current: MonitorSchedule | null,
  settings: MonitorSettings,
  now: number,
  details: ValidationDetail[],
): MonitorSchedule | null {
  if (body.interval !== undefined && body.cron !== undefined) {
    details.push({ path: 'cron', message: 'Give interval or cron, not both' });
    return null;
  }
  if (body.interval === undefined && body.cron === undefined && body.timezone === undefined) {
    if (current === null) details.push({ path: 'interval', message: 'Required: give interval or cron' });
    return null;
  }
  const timezone = body.timezone ?? current?.timezone ?? 'UTC';
  if (!validTimeZone(timezone)) {
    details.push({ path: 'timezone', message: 'Is not an IANA time zone' });
    return null;
  }
  if (body.interval !== undefined) {
    const seconds = durationSeconds(body.interval) as number;
    if (seconds < settings.minIntervalS) details.push({ path: 'interval', message: `Must be at least ${durationText(settings.minIntervalS)}` });
    else if (seconds > MAX_INTERVAL_S) details.push({ path: 'interval', message: `Must be at most ${durationText(MAX_INTERVAL_S)}` });
    else return { interval: seconds, cron: null, timezone };
    return null;
  }
  const cron = body.cron ?? current?.cron ?? null;
  if (cron === null) {
    // A time zone alone for an interval monitor: kept for a later cron.
    return current === null ? null : { ...current, timezone } as MonitorSchedule;
  }
  const problem = cronProblem(cron, timezone, settings.minIntervalS, now);
  if (problem) {
    details.push({ path: 'cron', message: problem });
    return null;
  }
  return { interval: null, cron, timezone };
}

/** The endpoint's runtime and its parameters, checked by the endpoint's own declaration. */
function targetOf(endpoint: string, params: Record<string, string>, runtimes: ReadonlyMap<string, EndpointRuntime>, details: ValidationDetail[]): void {
  const runtime = runtimes.get(endpoint);
  if (!runtime) {
    details.push({ path: 'endpoint', message: `Is not a scraping endpoint of this service; one of: ${[...runtimes.keys()].join(', ')}` });
    return;
  }
  const own = runtime.endpoint;
  const refused = new Set(['cache_max_age', 'stale_if_error', ...(own.paging ? [own.paging.param] : [])]);
  const given: Record<string, string> = {};
  for (const [name, value] of Object.entries(params)) {
    if (refused.has(name)) details.push({ path: `params.${name}`, message: 'A monitor always scrapes live, on the first page: not accepted' });
    else given[name] = value;
  }
  const checked = runtime.query.check(given);
  if ('error' in checked) for (const detail of checked.error.details ?? []) details.push({ path: `params.${detail.path}`, message: detail.message });
}

export const CreateBody = Obj({
  endpoint: Type.String({ minLength: 1, maxLength: 200, description: 'The path of a scraping endpoint, e.g. `/v1/snapmsg/profile` (a listing is monitored on its first page).' }),
  params: Type.Record(Type.String(), Type.String({ maxLength: 4096 }), {
    maxProperties: MAX_PARAMS,
    description: "The endpoint's own query parameters, checked as the endpoint checks them (not `cache_max_age`, `stale_if_error` or a cursor).",
  }),
  interval: Type.Optional(Interval),
  cron: Type.Optional(Cron),
  timezone: Type.Optional(TimeZone),
  watch: Type.Optional(Watch),
  label: Type.Optional(Label),
});

export const UpdateBody = Type.Object(
  {
    interval: Type.Optional(Interval),
    cron: Type.Optional(Cron),
    timezone: Type.Optional(TimeZone),
    watch: Type.Optional(Watch),
    label: Type.Optional(Label),
    status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('paused')], { description: '`paused` stops its runs; `active` resumes them (a run at once, then on schedule).' })),
  },
  { additionalProperties: false, minProperties: 1 },
);

const create: MonitorOperation = {
  id: 'monitors.create',
  method: 'POST',
  path: '/v1/monitors',
  summary: 'Create a monitor',
  description:
    'Watches a page: its first run is at once (the baseline), then every `interval` or at the times of `cron` in `timezone`. Each run is a live scrape charged like any (1 credit when kept; none when it fails or when there are no credits, `skipped`), compared with the last successful run as an RFC 6902 JSON Patch without `fetchedAt` and cursors; with `watch`, only changes at or under those pointers count. A change sends `monitor.changed`, the third failure in a row `monitor.failed` (webhooks). At most 100 per team (MONITOR_MAX_PER_TEAM). Accepts `Idempotency-Key`. Free.',
  params: Type.Object({}),
  query: Type.Object({}, { additionalProperties: false }),
  body: CreateBody,
  data: MonitorView,
  status: 201,
  example: { params: {}, query: {}, body: { endpoint: '/v1/snapmsg/profile', params: { username: 'lunavoss' }, interval: '1h', watch: ['/profile/subscriberCount'], label: 'Luna' } },
  async apply({ body }, { caller, stores, settings, runtimes, now }) {
    const given = body as Static<typeof CreateBody>;
    const details: ValidationDetail[] = [];
    targetOf(given.endpoint, given.params, runtimes, details);
    const schedule = scheduleOf(given, null, settings, now, details);
    if (details.length > 0 || schedule === null) throw invalid(details);
    const created = await stores.monitors.create(
      {
        teamId: caller.team.id,
        test: caller.test,
        keyId: caller.keyId,
        endpoint: given.endpoint,
        params: given.params,
        schedule,
        watch: given.watch ?? [],
        label: given.label ?? null,
        createdAt: now,
        nextRunAt: now,
      },
      settings.maxPerTeam,
    );
    if (!created) throw new ApiError('CONFLICT', `The team has ${settings.maxPerTeam} monitors, the most it may have; delete one first.`);
    return { data: monitorView(created), location: `/v1/monitors/${created.id}` };
  },
};

const list: MonitorOperation = {
  id: 'monitors.list',
  method: 'GET',
  path: '/v1/monitors',
  summary: "The team's monitors",
  description: 'Newest first, a page at a time (`paging.cursor`). Free.',
  params: Type.Object({}),
  query: PageQuery,
  body: null,
  data: Obj({ monitors: Type.Array(MonitorView), paging: Paging }),
  status: 200,
  example: { params: {}, query: { limit: '20' }, body: null },
  async apply({ query }, { caller, stores }) {
    const { limit, cursor } = pageOf(query);
    const after = cursor === undefined ? undefined : decodeCursor(cursor, 'string');
    const found = await stores.monitors.list(caller.team.id, limit + 1, after);
    const page = found.slice(0, limit);
    const more = found.length > limit;
    return { data: { monitors: page.map(monitorView), paging: { cursor: more ? encodeCursor((page.at(-1) as MonitorRecord).id) : null, hasMore: more } } };
  },
};

const show: MonitorOperation = {
  id: 'monitors.get',
  method: 'GET',
  path: '/v1/monitors/{id}',
  summary: 'A monitor',
  description: 'One of the team’s monitors (another team’s is 404). Free.',
  params: IdParam,
  query: Type.Object({}, { additionalProperties: false }),
  body: null,
  data: MonitorView,
  status: 200,
  example: { params: { id: 'mon_3q2VbX9kT0mW7yZ1aC4dE6fG' }, query: {}, body: null },
  async apply({ params }, { caller, stores }) {
    const found = await stores.monitors.get(caller.team.id, params.id as string);
    if (!found) throw notFound(params.id as string);
    return { data: monitorView(found) };
  },
};

const update: MonitorOperation = {
  id: 'monitors.update',
  method: 'PATCH',
  path: '/v1/monitors/{id}',
  summary: 'Change, pause or resume a monitor',
  description:
    'Changes its schedule (`interval`, or `cron` and `timezone`), `watch` or `label`, or pauses (`status: "paused"`) and resumes it (`"active"`: a run at once, collapsing the slots missed while paused, then on schedule). A new schedule takes effect from now. Free.',
  params: IdParam,
  query: Type.Object({}, { additionalProperties: false }),
  body: UpdateBody,
  data: MonitorView,
  status: 200,
  example: { params: { id: 'mon_3q2VbX9kT0mW7yZ1aC4dE6fG' }, query: {}, body: { status: 'paused' } },
  async apply({ params, body }, { caller, stores, settings, now }) {
    const id = params.id as string;
    const found = await stores.monitors.get(caller.team.id, id);
    if (!found) throw notFound(id);
    const given = body as Static<typeof UpdateBody>;
    const details: ValidationDetail[] = [];
    const current = (found.interval !== null ? { interval: found.interval, cron: null, timezone: found.timezone } : { interval: null, cron: found.cron as string, timezone: found.timezone }) as MonitorSchedule;
    const schedule = scheduleOf(given, current, settings, now, details);
    if (details.length > 0) throw invalid(details);
    const changes: MonitorChanges = {};
    if (schedule) {
      changes.schedule = schedule;
      changes.nextRunAt = schedule.interval !== null ? now + schedule.interval * 1000 : nextSlot(schedule, now);
    }
    if (given.watch !== undefined) changes.watch = given.watch;
    if (given.label !== undefined) changes.label = given.label;
    if (given.status !== undefined && given.status !== found.status) {
      changes.status = given.status;
      // Resumed: the slots missed while paused collapse into one run, now.
      if (given.status === 'active') changes.nextRunAt = now;
    }
    const updated = await stores.monitors.update(caller.team.id, id, changes);
    if (!updated) throw notFound(id);
    return { data: monitorView(updated) };
  },
};

const remove: MonitorOperation = {
  id: 'monitors.delete',
  method: 'DELETE',
  path: '/v1/monitors/{id}',
  summary: 'Delete a monitor',
  description: 'Deletes it and its runs; a run in progress is not recorded (and not charged). Free.',
  params: IdParam,
  query: Type.Object({}, { additionalProperties: false }),
  body: null,
  data: Obj({ id: Str(), deleted: Bool() }),
  status: 200,
  example: { params: { id: 'mon_3q2VbX9kT0mW7yZ1aC4dE6fG' }, query: {}, body: null },
  async apply({ params }, { caller, stores }) {
    const id = params.id as string;
    if (!(await stores.monitors.delete(caller.team.id, id))) throw notFound(id);
    return { data: { id, deleted: true } };
  },
};

const runs: MonitorOperation = {
  id: 'monitors.runs',
  method: 'GET',
  path: '/v1/monitors/{id}/runs',
  summary: "A monitor's runs",
  description: `Newest first, a page at a time: each run's slot, outcome, credits, whether it found a change and its patch, and its error. Kept 30 days (MONITOR_RUN_RETENTION_DAYS). Free.`,
  params: IdParam,
  query: PageQuery,
  body: null,
  data: Obj({ runs: Type.Array(RunView), paging: Paging }),
  status: 200,
  example: { params: { id: 'mon_3q2VbX9kT0mW7yZ1aC4dE6fG' }, query: { limit: '20' }, body: null },
  async apply({ params, query }, { caller, stores }) {
    const id = params.id as string;
    if (!(await stores.monitors.get(caller.team.id, id))) throw notFound(id);
    const { limit, cursor } = pageOf(query);
    const before = cursor === undefined ? undefined : decodeCursor(cursor, 'number');
    const found = await stores.monitors.runs(caller.team.id, id, limit + 1, before);
    const page = found.slice(0, limit);
    const more = found.length > limit;
    return { data: { runs: page.map(runView), paging: { cursor: more ? encodeCursor((page.at(-1) as MonitorRun).at) : null, hasMore: more } } };
  },
};

const runNow: MonitorOperation = {
  id: 'monitors.run',
  method: 'POST',
  path: '/v1/monitors/{id}/run',
  summary: 'Run a monitor now',
  description:
    'Runs it at once, paused or not, and answers with the run when it ends (charged like any run: `meta.creditsCharged`). An interval monitor then counts its interval from now. 409 `CONFLICT` while a run of it is in progress. Accepts `Idempotency-Key`.',
  params: IdParam,
  query: Type.Object({}, { additionalProperties: false }),
  body: null,
  data: RunView,
  status: 200,
  example: { params: { id: 'mon_3q2VbX9kT0mW7yZ1aC4dE6fG' }, query: {}, body: null },
  async apply({ params }, { caller, runner }) {
    const id = params.id as string;
    const run = await runner.runNow(caller.team.id, id);
    if (run === null) throw notFound(id);
    if (run === 'running') throw new ApiError('CONFLICT', 'A run of this monitor is in progress; read its runs in a moment.', { headers: { 'retry-after': '5' } });
    return { data: runView(run), creditsCharged: run.creditsCharged };
  },
};

/** The monitors' endpoints, in the order of the docs. */
export const monitorOperations: readonly MonitorOperation[] = [create, list, show, update, remove, runs, runNow];
