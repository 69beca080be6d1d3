// The account endpoints: what the calling key's team has and has done. One declaration each,
// like the scraping endpoints': path, query schema, data schema, paging and a sample query
// drive the route, its validation, its OpenAPI entry and the docs; `answer` builds `data`.
// Authenticated and rate-limited like every endpoint, and free.
import { Type, type Static, type TObject } from 'typebox';
import type { ApiEndpoint, RawQuery, ValidationDetail } from '../endpoints/types.ts';
import { DateTime, Int, NStr, Nullable, Obj, QueryText, Str, TokenParam } from '../endpoints/schemas/common.ts';
import type { Caller } from '../server/plugins/auth.ts';
import type { CursorSealer } from '../server/cursors.ts';
import { ApiError } from '../server/errors.ts';
import { spentOn, utcDay, type Stores, type Team } from '../store/types.ts';

export interface AccountContext {
  caller: Caller;
  stores: Stores;
  sealer: CursorSealer;
  /** Epoch ms. */
  now: number;
}

export interface AccountEndpoint<D extends TObject = TObject> extends ApiEndpoint {
  data: D;
  /** Cross-field rules, after the schema check: the problems, none when the query is valid. */
  check?: (query: RawQuery, now: number) => ValidationDetail[];
  answer: (query: RawQuery, context: AccountContext) => Promise<Static<D>>;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** Request records per page of `/v1/account/requests`. */
const RECORDS_PER_PAGE = 50;
/** The longest span `/v1/account/usage` totals at once. */
const MAX_USAGE_DAYS = 366;
const DEFAULT_USAGE_DAYS = 30;

const Totals = { requests: Int(), credits: Int({ description: 'Credits charged.' }), cached: Int({ description: 'Requests answered from the cache.' }) };

const DayParam = (description: string) => Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: `${description} A UTC day, \`YYYY-MM-DD\`.` });

/** The account as `GET /v1/account` (and `PATCH /v1/account`) shows it. */
export const AccountData = Obj({
  team: Obj({ id: Str(), name: Str() }),
  balance: Int({ description: 'Credits left.' }),
  lowBalanceAlert: Nullable(
    Int({ description: 'The balance under which the team is warned (`credits.low` once per crossing; the dashboard shows a banner meanwhile); null: none.' }),
  ),
  rateLimit: Obj({ limit: Int({ description: 'Requests admitted per rolling window.' }), windowSeconds: Int() }),
  key: Obj(
    {
      id: Str(),
      name: Str(),
      dailyCreditLimit: Nullable(Int({ description: 'Credits this key may spend on live scrapes per UTC day; null: no limit of its own.' })),
      spentToday: Int({ description: 'Credits this key has spent today (UTC), live scrapes in flight included.' }),
    },
    'The key this request was made with.',
  ),
});

/** The account of `team` seen by the calling key. */
export async function accountData(team: Team, { caller, stores, now }: Pick<AccountContext, 'caller' | 'stores' | 'now'>): Promise<Static<typeof AccountData>> {
  // Read afresh: what the request's admission remembered of the key may predate its spending.
  const key = await stores.accounts.getKey(caller.keyId);
  return {
    team: { id: team.id, name: team.name },
    balance: team.credits,
    lowBalanceAlert: team.lowBalanceAlert,
    rateLimit: { limit: team.rateLimit, windowSeconds: 60 },
    key: { id: caller.keyId, name: caller.keyName, dailyCreditLimit: key?.dailyCreditLimit ?? null, spentToday: key ? spentOn(key, utcDay(now)) : 0 },
  };
}

const account: AccountEndpoint = {
  id: 'account',
  path: '/v1/account',
  summary: 'The calling key, its team, balance and rate limit',
  description: "Free, and counted by the rate limit like every request. The key's daily credit limit and what it spent today are the calling key's.",
  query: Type.Object({}, { additionalProperties: false }),
  data: AccountData,
  exampleQuery: {},
  answer: async (_query, context) => accountData(context.caller.team, context),
};

const dayStart = (day: string): number => Date.parse(`${day}T00:00:00.000Z`);

/** The span of a usage query: `to` defaults to today (UTC), `from` to 29 days before `to`. */
function usageSpan(query: RawQuery, now: number): { from: string; to: string } {
  const to = query.to ?? utcDay(now);
  return { from: query.from ?? utcDay(dayStart(to) - (DEFAULT_USAGE_DAYS - 1) * DAY_MS), to };
}

const usage: AccountEndpoint = {
  id: 'account.usage',
  path: '/v1/account/usage',
  summary: "The team's requests, credits and cache hits per day and per endpoint",
  description: `From the request records (kept for REQUEST_RECORDS_DAYS, 90 by default). Days are UTC; both ends are included; at most ${MAX_USAGE_DAYS} days at once, the last ${DEFAULT_USAGE_DAYS} by default. Every day of the span is listed, with zeros when nothing happened.`,
  query: Type.Object(
    {
      from: Type.Optional(DayParam(`First day; by default ${DEFAULT_USAGE_DAYS - 1} days before \`to\`.`)),
      to: Type.Optional(DayParam('Last day; by default today.')),
    },
    { additionalProperties: false },
  ),
  data: Obj({
    from: Str({ description: 'First day (UTC).' }),
    to: Str({ description: 'Last day (UTC), included.' }),
    totals: Obj(Totals),
    days: Type.Array(Obj({ day: Str(), ...Totals })),
    endpoints: Type.Array(Obj({ endpoint: Str({ description: 'The path, e.g. `/v1/shopfront/shop`.' }), ...Totals })),
  }),
  exampleQuery: { from: '2026-11-01', to: '2026-11-30' },
  check(query, now) {
    const details: ValidationDetail[] = [];
    for (const name of ['from', 'to'] as const) {
      const value = query[name];
      if (value !== undefined && (Number.isNaN(dayStart(value)) || utcDay(dayStart(value)) !== value)) details.push({ path: name, message: 'Is not a calendar day' });
    }
    if (details.length > 0) return details;
    const { from, to } = usageSpan(query, now);
    const days = (dayStart(to) - dayStart(from)) / DAY_MS + 1;
    if (days < 1) details.push({ path: 'from', message: 'Must not be after to' });
    else if (days > MAX_USAGE_DAYS) details.push({ path: 'from', message: `The span must be at most ${MAX_USAGE_DAYS} days` });
    return details;
  },
  async answer(query, { caller, stores, now }) {
    const { from, to } = usageSpan(query, now);
    const found = await stores.requests.totals(caller.team.id, dayStart(from), dayStart(to) + DAY_MS);
    const byDay = new Map(found.days.map((day) => [day.day, day]));
    const days = [];
    for (let at = dayStart(from); at <= dayStart(to); at += DAY_MS) {
      const day = utcDay(at);
      days.push(byDay.get(day) ?? { day, requests: 0, credits: 0, cached: 0 });
    }
    const sum = (field: 'requests' | 'credits' | 'cached') => found.days.reduce((total, day) => total + day[field], 0);
    return { from, to, totals: { requests: sum('requests'), credits: sum('credits'), cached: sum('cached') }, days, endpoints: found.endpoints };
  },
};

const requestsPaging = { param: 'cursor', field: 'cursor', flag: 'hasNextPage', end: null, items: 'requests' } as const;

const requests: AccountEndpoint = {
  id: 'account.requests',
  path: '/v1/account/requests',
  summary: "The team's request records, newest first",
  description: `One record per request made with any of the team's keys, ${RECORDS_PER_PAGE} per page, newest first; follow \`data.paging.cursor\` for older ones. Records are written within seconds of the answer.`,
  query: Type.Object(
    {
      cursor: Type.Optional(TokenParam('`data.paging.cursor` of the page before; give the same `endpoint` and `status` again.')),
      endpoint: Type.Optional(QueryText(200, 'Only requests to this path, e.g. `/v1/shopfront/shop`.')),
      status: Type.Optional(Type.String({ pattern: '^[1-5]\\d\\d$', description: 'Only requests answered with this HTTP status, e.g. `200` or `502`.' })),
    },
    { additionalProperties: false },
  ),
  data: Obj({
    requests: Type.Array(
      Obj({
        requestId: Str(),
        at: DateTime('When the request arrived.'),
        keyId: Str({ description: 'The key it was made with.' }),
        endpoint: Str(),
        status: Int(),
        errorCode: Nullable(Str({ description: 'The error code; null for a 200.' })),
        credits: Int({ description: 'Credits charged.' }),
        cached: Type.Boolean(),
        durationMs: Type.Number(),
      }),
    ),
    paging: Obj({ cursor: NStr(), hasNextPage: Type.Boolean() }),
  }),
  paging: requestsPaging,
  exampleQuery: { status: '200' },
  async answer(query, { caller, stores, sealer, now }) {
    const filter = { team: caller.team.id, endpoint: query.endpoint ?? '', status: query.status ?? '' };
    let position: string | null = null;
    if (query.cursor !== undefined) {
      const opened = sealer.open(query.cursor, 'account.requests', filter);
      if (!opened.ok) {
        throw new ApiError(
          'BAD_REQUEST',
          opened.problem === 'foreign' ? 'The cursor was issued for other filters; give the same endpoint and status as the first call.' : 'The cursor is malformed or was not issued by this service.',
        );
      }
      position = String(opened.cursor.position.records);
    }
    const page = await stores.requests.list({
      teamId: caller.team.id,
      endpoint: query.endpoint,
      status: query.status === undefined ? undefined : Number(query.status),
      limit: RECORDS_PER_PAGE,
      cursor: position,
    });
    return {
      requests: page.records.map(({ teamId: _team, ...record }) => ({ ...record, at: new Date(record.at).toISOString() })),
      paging: {
        cursor: page.next === null ? null : sealer.seal('account.requests', filter, { records: page.next }, now),
        hasNextPage: page.next !== null,
      },
    };
  },
};

/** The account endpoints, in the order of the docs. */
export const accountEndpoints: readonly AccountEndpoint[] = [account, usage, requests];

/** The OpenAPI tag of the account endpoints. */
export const ACCOUNT_TAG = { name: 'account', description: "The calling key's team: balance, rate limit, usage and request records. Free; counted by the rate limit." };
