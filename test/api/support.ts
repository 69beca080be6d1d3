// Shared checks for the API tests of errors, races, cache and cursors: the error envelope,
// the ledger invariants, distinct valid targets per endpoint, listings for paging, and stores
// that can be made to fail.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { generateKey } from '../../src/server/keys.ts';
import type { EndpointDeclaration, ExtractResult, UpstreamPosition } from '../../src/endpoints/types.ts';
import { StoreUnavailableError, type Stores } from '../../src/store/types.ts';
import { exampleQuery, fixtureResult, type Harness } from './harness.ts';

export type Response = Awaited<ReturnType<Harness['get']>>;

export const JSON_TYPE = 'application/json; charset=utf-8';
export const REQUEST_ID = /^req_[A-Za-z0-9_-]{24,}$/;

export interface ErrorBody {
  code: string;
  message: string;
  requestId: string;
  details?: { path: string; message: string }[];
}

/** The success body. */
export interface Success {
  data: Record<string, unknown>;
  meta: { requestId: string; creditsCharged: number; creditsRemaining: number; cached: boolean; cachedAt?: string; stale?: boolean; test?: boolean };
}

export const success = (response: Response): Success => {
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(response.headers['content-type'], JSON_TYPE);
  const body = response.json() as Success;
  assert.equal(body.meta.requestId, response.headers['x-request-id']);
  assert.match(body.meta.requestId, REQUEST_ID);
  return body;
};

/** Asserts the rate-limit headers of an authenticated request. */
export function assertRateHeaders(response: Response): void {
  for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
    assert.match(String(response.headers[name]), /^\d+$/, `${name} on a ${response.statusCode}`);
  }
}

/**
 * Asserts an error answer: status, content type, the exact envelope (`details` on 422 only),
 * the request id in body and header, and the rate-limit headers when the request was
 * authenticated (`authed: true`), their absence when it was not (`false`), or neither (`null`).
 * A HEAD answer has no body. Returns the `error` object.
 */
export function expectError(response: Response, status: number, code: string, options: { authed: boolean | null; head?: boolean }): ErrorBody {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(response.headers['content-type'], JSON_TYPE);
  const requestId = response.headers['x-request-id'];
  assert.match(String(requestId), REQUEST_ID);
  if (options.head) {
    assert.equal(response.body, '');
    return { code, message: '', requestId: String(requestId) };
  }
  const body = response.json() as { error: ErrorBody };
  assert.deepEqual(Object.keys(body), ['error']);
  const keys = status === 422 ? ['code', 'message', 'requestId', 'details'] : ['code', 'message', 'requestId'];
  assert.deepEqual(Object.keys(body.error), keys);
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, 'string');
  assert.ok(body.error.message.length > 0);
  assert.equal(body.error.requestId, requestId);
  if (status === 422) {
    assert.ok(Array.isArray(body.error.details) && body.error.details.length > 0);
    for (const detail of body.error.details) {
      assert.deepEqual(Object.keys(detail), ['path', 'message']);
      assert.equal(typeof detail.path, 'string');
      assert.equal(typeof detail.message, 'string');
    }
  }
  if (options.authed === true) assertRateHeaders(response);
  else if (options.authed === false) assert.equal(response.headers['x-ratelimit-limit'], undefined);
  return body.error;
}

/** Balance, ledger rows and pending reservations of one team, for before/after comparisons. */
export async function ledgerState(h: Harness, teamId: string) {
  const balance = await h.balance(teamId);
  const entries = await h.stores.ledger.entries(teamId, 1_000_000);
  const usage = await h.stores.ledger.usage(teamId);
  return { balance, sum: entries.reduce((total, entry) => total + entry.amount, 0), rows: entries.length, pending: usage?.pending ?? Number.NaN };
}

/** Asserts that a non-200 left the team's balance as it was, the ledger consistent and nothing pending. */
export async function assertNotCharged(h: Harness, teamId: string, before: number): Promise<void> {
  const state = await ledgerState(h, teamId);
  assert.equal(state.balance, before, 'balance unchanged');
  assert.equal(state.sum, state.balance, 'ledger sum equals balance');
  assert.equal(state.pending, 0, 'no reservation pending');
}

/** A distinct valid target of each endpoint (never the example one). */
export function variantQuery(endpoint: EndpointDeclaration, tag: string | number): Record<string, string> {
  const word = `variant${tag}x`.toLowerCase();
  switch (endpoint.id) {
    case 'socialnet.profile.posts':
    case 'socialnet.profile.reels':
    case 'socialnet.profile':
      return { url: `https://www.socialnet.example/${word}` };
    case 'socialnet.post.comment.replies':
      return { ...endpoint.exampleQuery, feedbackId: `${word}feedback` };
    case 'snapmsg.profile':
      return { username: `v${String(tag).slice(0, 12)}x` };
    case 'snapmsg.spotlight.comments':
      return { url: `https://www.snapmsg.example/spotlight/${word}abcdefghijklmnop` };
    case 'linkpage-a.profile':
      return { url: `https://linkpage-a.example/${word}` };
    case 'linkpage-b.page':
      return { url: `https://linkpage-b.example/${word}` };
    case 'shopfront.shop':
      return { url: `https://www.shopfront.example/shop/${word}` };
    default:
      throw new Error(`no variant for ${endpoint.id}`);
  }
}

/** `path?query` of an endpoint with its example query (or `query`) plus `extra`. */
export const urlOf = (endpoint: EndpointDeclaration, extra: Record<string, string> = {}, query?: Record<string, string>): string =>
  `${endpoint.path}?${query ? new URLSearchParams({ ...query, ...extra }).toString() : exampleQuery(endpoint, extra)}`;

/** The listing of each paging endpoint: its items, the item's identifying field and the page's count field. */
export const LISTING: Record<string, { items: string; id: string; count: string | null }> = {
  'socialnet.profile.posts': { items: 'posts', id: 'postId', count: 'postCount' },
  'snapmsg.spotlight.comments': { items: 'comments', id: 'id', count: 'count' },
  'socialnet.post.comment.replies': { items: 'replies', id: 'id', count: null },
  'socialnet.profile.reels': { items: 'reels', id: 'videoId', count: 'reelCount' },
  'shopfront.shop': { items: 'posts', id: 'id', count: 'postCount' },
};

/** Marker carried in every scripted position; must never be readable in a token. */
export const POSITION_MARKER = 'upstream-position-marker';

export const positionOf = (page: number): UpstreamPosition => ({ page, marker: POSITION_MARKER, flag: true, none: null });

/**
 * A listing of `pages` pages of two items each, served by position: the first page for no
 * position, page n for `{page: n}`. Item ids are `p{n}-{i}`.
 */
export function pagedResult(endpoint: EndpointDeclaration, position: UpstreamPosition | null, pages = 3): ExtractResult {
  const listing = LISTING[endpoint.id];
  if (!listing) throw new Error(`${endpoint.id} does not page`);
  const base = fixtureResult(endpoint);
  const page = position === null ? 1 : Number(position.page);
  const template = (base.data[listing.items] as Record<string, unknown>[])[0];
  const items = [0, 1].map((i) => ({ ...structuredClone(template), [listing.id]: `p${page}-${i}` }));
  const data: Record<string, unknown> = { ...base.data, [listing.items]: items };
  if (listing.count) data[listing.count] = items.length;
  return { data, next: page < pages ? positionOf(page + 1) : null };
}

export const itemIds = (endpoint: EndpointDeclaration, data: Record<string, unknown>): string[] => {
  const listing = LISTING[endpoint.id];
  if (!listing) throw new Error(`${endpoint.id} does not page`);
  return (data[listing.items] as Record<string, unknown>[]).map((item) => String(item[listing.id]));
};

/** The token of `data.paging` (cursor or page token). */
export const tokenOf = (endpoint: EndpointDeclaration, data: Record<string, unknown>): unknown =>
  (data.paging as Record<string, unknown>)[endpoint.paging?.field ?? 'cursor'];

/** Names of store methods (`ledger.reserve`) that throw StoreUnavailableError while listed. */
export function failingStores(failing: Set<string>): (stores: Stores) => Stores {
  const wrap = <T extends object>(name: string, target: T): T =>
    new Proxy(target, {
      get(object, property) {
        const value: unknown = Reflect.get(object, property, object);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (failing.has(`${name}.${String(property)}`)) {
            return Promise.reject(new StoreUnavailableError(`${name} unreachable: connect ECONNREFUSED 10.9.8.7:5432`));
          }
          return (value as (...a: unknown[]) => unknown).apply(object, args);
        };
      },
    });
  return (stores) => ({
    accounts: wrap('accounts', stores.accounts),
    users: wrap('users', stores.users),
    drift: wrap('drift', stores.drift),
    idempotency: wrap('idempotency', stores.idempotency),
    events: wrap('events', stores.events),
    webhooks: wrap('webhooks', stores.webhooks),
    monitors: wrap('monitors', stores.monitors),
    jobs: wrap('jobs', stores.jobs),
    ledger: wrap('ledger', stores.ledger),
    cache: wrap('cache', stores.cache),
    requests: wrap('requests', stores.requests),
    limiter: wrap('limiter', stores.limiter),
    ping: () => stores.ping(),
    probeWrite: () => stores.probeWrite(),
    backends: () => stores.backends(),
    close: () => stores.close(),
  });
}

/** A 503 from /readyz: the error envelope, with `status` and the state of each backend beside it. */
export function expectNotReady(response: Response, backends: Record<string, 'up' | 'down'>): void {
  assert.equal(response.statusCode, 503, response.body);
  assert.equal(response.headers['content-type'], JSON_TYPE);
  assert.match(String(response.headers['retry-after']), /^[1-9]\d*$/);
  const body = response.json() as { status: string; backends: unknown; error: ErrorBody };
  assert.deepEqual(Object.keys(body), ['status', 'backends', 'error']);
  assert.equal(body.status, 'not ready');
  assert.deepEqual(body.backends, backends);
  assert.deepEqual(Object.keys(body.error), ['code', 'message', 'requestId']);
  assert.equal(body.error.code, 'SERVICE_UNAVAILABLE');
  assert.equal(body.error.requestId, response.headers['x-request-id']);
}

/** A promise the test releases when it chooses. */
/** A key of the team made in the dashboard by a new user of `role` (a member's key or an owner's). */
export async function keyMadeBy(h: Harness, teamId: string, role: 'member' | 'owner'): Promise<string> {
  const user = await h.stores.users.createUser({ teamId, email: `${role}-${randomUUID()}@example.com`, role });
  const made = generateKey();
  await h.stores.accounts.createKey({ teamId, name: role, hash: made.hash, prefix: made.prefix, last4: made.last4, createdBy: user.id });
  return made.key;
}

export function gate(): { opened: Promise<void>; release: () => void } {
  let release!: () => void;
  const opened = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { opened, release };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Scrapes that joined an identical one already in flight on this node (api_single_flight_shared_total, every endpoint). */
export async function flightShares(h: Harness): Promise<number> {
  const text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
  let sum = 0;
  for (const match of text.matchAll(/^api_single_flight_shared_total\{[^}]*\} (\d+)$/gm)) sum += Number(match[1]);
  return sum;
}

/** Polls `condition` every 5 ms until it holds or `timeoutMs` passes. */
export async function until(condition: () => Promise<boolean> | boolean, timeoutMs = 3000): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await condition()) return true;
    await sleep(5);
  }
  return condition();
}
