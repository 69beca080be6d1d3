// socialnet extractors against src/platforms/socialnet/README.md: the contract's examples through a fake
// upstream that serves the fixture files and checks every request as the README specifies;
// every outcome the platform's README lists; the shared session (one bootstrap
// for concurrent requests, single-flight refresh on stale errors, rotation, home-page bootstrap);
// and the variations the platform allows, written by transforming the fixtures.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { Parser } from 'htmlparser2';
import type { ExtractContext, Extractor, ExtractResult, UpstreamPosition } from '../../src/endpoints/types.ts';
import type { Upstream, UpstreamRequest, UpstreamResponse } from '../../src/upstream/types.ts';
import { UpstreamOutcome, type OutcomeKind } from '../../src/upstream/outcomes.ts';
import { endpointsOf } from '../support/endpoints.ts';
import { withPlatformOutcomes } from '../../src/endpoints/define.ts';
import {
  MemorySessionStore,
  createSocialnetExtractors,
  socialnetExtractors,
  type SocialnetExtractors,
} from '../../src/platforms/socialnet/extract.ts';
import type { SessionStore, SocialnetSession } from '../../src/platforms/socialnet/session.ts';
import { readBlocks, scanPage } from '../../src/platforms/socialnet/html.ts';
import { pagePath } from '../../src/platforms/socialnet/pages.ts';
import { graphqlRequest, RELAY_PROVIDER_FLAGS, stripPrefix } from '../../src/platforms/socialnet/graphql.ts';
import { countFromLabel, unshim } from '../../src/platforms/socialnet/mapping.ts';
import { likesOf, usernameOf } from '../../src/platforms/socialnet/mapping-profile.ts';
import { integer, root, string, UnrecognisedData } from '../../src/platforms/shared/read.ts';

// ---------------------------------------------------------------- fixtures

const FIXTURES = new URL('../fixtures/upstream/', import.meta.url);
const fixture = (name: string): string => readFileSync(new URL(`socialnet-${name}`, FIXTURES), 'utf8');
const fixtureJson = (name: string): Record<string, unknown> => JSON.parse(fixture(name)) as Record<string, unknown>;

const PROFILE_HTML = fixture('profile.html');
const REELS_HTML = fixture('reels.html');
const ABOUT_HTML = fixture('about.html');
const GATED_HTML = fixture('gated.html');
const HOME_HTML = fixture('home.html');
const LOGIN_WALL_HTML = fixture('login-wall.html');
const NOT_FOUND_HTML = fixture('not-found.html');
const UNAVAILABLE_HTML = fixture('unavailable.html');
const TIMELINE_NDJSON = fixture('timeline-page.ndjson');
const REELS_PAGE_JSON = fixture('reels-page.json');
const REPLIES_JSON = fixture('replies.json');
const GRAPHQL_ERROR_JSON = fixture('graphql-error.json');

/** An expected file split into the extractor's `data` and `next` (`$position`, or null). */
function expected(name: string): { data: Record<string, unknown>; next: UpstreamPosition | null } {
  const { paging, ...data } = fixtureJson(`expected-${name}.json`);
  if (paging === undefined) return { data, next: null };
  const cursor = (paging as { cursor: null | { $position: UpstreamPosition } }).cursor;
  return { data, next: cursor === null ? null : cursor.$position };
}

const POSTS = expected('profile-posts');
const TIMELINE = expected('timeline-page');
const REELS = expected('reels');
const REELS_PAGE = expected('reels-page');
const REPLIES = expected('replies');
const PROFILE = expected('profile');
const PROFILE_GATED = expected('profile-gated');

const HARBOR_URL = 'https://www.socialnet.example/harborbistro';
const GATED_URL = 'https://www.socialnet.example/oldharbordistillery';
const PROFILE_ID = '100064512345678';
const PROFILE_END_CURSOR = 'Cg8Ob3JnYW5pY19jdXJzb3IJAAAAFUFRSFISv7KrrNxHUrJSVgLRtG_Fv_4P4CjK35gtdeFXzCs';
const TIMELINE_END_CURSOR = 'Cg8Ob3JnYW5pY19jdXJzb3IJAAAAFUFRSFIlHFhZ3jHbRF8-lUpqvwbbdr0wOIs8jyoEPDE6hrx';
const COLLECTION_ID = 'YXBwX2NvbGxlY3Rpb246MTAwMDY0NTEyMzQ1Njc4OjE4ODIzNDQ2NzEwODkxMjo0MTI=';
const REELS_END_CURSOR = 'QVFIUmFHM_88hROyJ7fB7Qq9P5HenQwTuqq2cesdGnCuW';
const FEEDBACK_ID = 'ZmVlZGJhY2s6MTA5MjM0NTY3ODkwMTIzNF84ODIyMDE0NTc3MzE5MDQ=';
const EXPANSION_TOKEN = 'MTpjb21tZW50OjE64iKXRAof8p6rehmbW8ENzv28V90PETgWc4Sbu85M';
const REPLIES_END_CURSOR = 'MToxNzE4NzIwMTExOgR9qsHJtZz2DqlBelw2SNEiIq';

const LSD = { profile: 'AVqGiBAdgmf', reels: 'AVqAkr8q3IO', about: 'AVq9PY4CMja', home: 'AVpDhfyhWY9' };
const DOC = {
  timeline: '8123456789012345',
  timelineRotated: '8123456789099876',
  reels: '7234567890123456',
  replies: '25123456789012345',
};
const TIMELINE_QUERY = 'ProfileCometTimelineFeedRefetchQuery';
const REELS_QUERY = 'ProfileCometAppCollectionReelsRendererPaginationQuery';
const REPLIES_QUERY = 'Depth1CommentsListPaginationQuery';
const ORIGIN = 'https://www.socialnet.example';

const RELAY_FLAGS = {
  __relay_internal__pv__CometUFIIsRTAEnabledrelayprovider: false,
  __relay_internal__pv__IsWorkUserrelayprovider: false,
  __relay_internal__pv__CometUFIReactionsEnableShortNamerelayprovider: false,
};

// ---------------------------------------------------------------- JSON helpers for variants

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Serialises JSON with the escaping styles. `<` is always `\u003c`. */
function serialise(value: unknown, style: { slash?: boolean; nonAscii?: boolean; letters?: boolean; indent?: number } = {}): string {
  const text = JSON.stringify(value, null, style.indent);
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i] as string;
    if (char === '"') inString = !inString;
    else if (inString && char === '\\') {
      out += char + (text[i + 1] ?? '');
      i += 1;
      continue;
    }
    const code = char.charCodeAt(0);
    if (char === '<') out += '\\u003c';
    else if (inString && style.slash && char === '/') out += '\\/';
    else if (inString && style.nonAscii && code > 0x7e) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else if (inString && style.letters && /[aeiou]/.test(char)) out += `\\u${code.toString(16).padStart(4, '0').toUpperCase()}`;
    else out += char;
  }
  return out;
}

/** Adds unknown keys to every object and reverses key order, recursively. */
function withUnknownKeys(value: Json): Json {
  if (Array.isArray(value)) return value.map(withUnknownKeys);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value).map(([key, inner]) => [key, withUnknownKeys(inner)] as const);
  return Object.fromEntries([['zz_unknown', { nested: [1, 'x', null] }], ...entries.reverse()]);
}

/** The block with every preloader result replaced by one whose data is empty. */
function withBrokenResults(json: Json): Json {
  const copy = structuredClone(json) as { require?: [string, string, null, { __bbox: { require: [string, string, [], [string, { __bbox: { result: Json } }]][] } }[]][] };
  for (const entry of copy.require ?? []) {
    if (entry[0] !== 'ScheduledServerJS') continue;
    for (const arg of entry[3]) {
      for (const item of arg.__bbox.require) if (item[0] === 'RelayPrefetchedStreamCache') item[3][1].__bbox.result = { data: { user: null, node: null } };
    }
  }
  return copy as Json;
}

const DATA_SJS = /<script\b([^>]*\bdata-sjs\b[^>]*)>([\s\S]*?)<\/script>/g;

/** The JSON of every data-sjs block of a fixture page, in order. */
const blocksOf = (html: string): Json[] => [...html.matchAll(DATA_SJS)].map((match) => JSON.parse(match[2] as string) as Json);

/** The page with its data-sjs blocks removed (the body's closing tags kept). */
const withoutBlocks = (html: string): string => html.replace(DATA_SJS, '');

/** Puts `blocks` (already rendered `<script>` elements) into the page: `head` ones and `body` ones. */
function withBlocks(html: string, head: string[], body: string[]): string {
  // Replacer functions: the blocks hold `$` signs that a replacement string would interpret.
  return withoutBlocks(html)
    .replace('</head>', () => `${head.join('\n')}\n</head>`)
    .replace('</body>', () => `${body.join('\n')}\n</body>`);
}

const block = (json: string, attributes = 'type="application/json" data-sjs'): string => `<script ${attributes}>${json}</script>`;

// ---------------------------------------------------------------- fake upstream

interface Recorded {
  method: string;
  path: string;
  kind: 'page' | 'api';
  headers: Record<string, string>;
  body: string | undefined;
  form: Record<string, string> | null;
  variables: Record<string, unknown> | null;
}

type Reply = Partial<UpstreamResponse> & { body?: string };
type Handler = (request: Recorded) => Reply | Promise<Reply>;

function fakeUpstream(handler: Handler): { upstream: Upstream; requests: Recorded[] } {
  const requests: Recorded[] = [];
  const upstream: Upstream = async (request: UpstreamRequest) => {
    const form = request.body !== undefined ? Object.fromEntries(new URLSearchParams(request.body)) : null;
    const recorded: Recorded = {
      method: request.method ?? 'GET',
      path: request.path,
      kind: request.kind,
      headers: Object.fromEntries(Object.entries(request.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value])),
      body: request.body,
      form,
      variables: form?.variables !== undefined ? (JSON.parse(form.variables) as Record<string, unknown>) : null,
    };
    requests.push(recorded);
    const reply = await handler(recorded);
    return { status: 200, headers: {}, path: request.path, body: '', ...reply };
  };
  return { upstream, requests };
}

const contextFor = (upstream: Upstream): ExtractContext => ({
  signal: new AbortController().signal,
  deadline: Date.now() + 30_000,
  log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
  upstream,
});

/** A GraphQL error response. */
const graphqlError = (code: number, message: string, severity = 'CRITICAL'): string =>
  JSON.stringify({ errors: [{ message, severity, code, api_error_code: null, summary: 'Query error', is_transient: false }], data: null, extensions: { is_final: true } });

const NODE_NULL = JSON.stringify({ data: { node: null }, extensions: { is_final: true } });

/** The timeline query's first page (cursor null): the profile page's story and page_info, as NDJSON. */
function timelineFirstPage(): string {
  const user = preloaderResult(PROFILE_HTML, 'adp_ProfileCometTimelineFeedQueryRelayPreloader_') as { data: { user: Record<string, Json> } };
  const { timeline_list_feed_units: units, ...profile } = user.data.user as { timeline_list_feed_units: { edges: Json[]; page_info: Json } };
  const first = { data: { node: { ...profile, timeline_list_feed_units: { edges: units.edges } } }, extensions: { is_final: false } };
  const pageInfo = {
    label: 'ProfileCometTimelineFeed_user$defer$ProfileCometTimelineFeed_user_timeline_list_feed_units$page_info',
    path: ['node', 'timeline_list_feed_units'],
    data: { page_info: units.page_info },
    extensions: { is_final: true },
  };
  return `for (;;);${JSON.stringify(first)}\n${JSON.stringify(pageInfo)}`;
}

/** An empty timeline page (no stories left). */
const EMPTY_TIMELINE = `for (;;);${JSON.stringify({ data: { node: { __typename: 'User', id: PROFILE_ID, timeline_list_feed_units: { edges: [] } } } })}\n${JSON.stringify({
  label: 'ProfileCometTimelineFeed_user$defer$ProfileCometTimelineFeed_user_timeline_list_feed_units$page_info',
  path: ['node', 'timeline_list_feed_units'],
  data: { page_info: { end_cursor: null, has_next_page: false } },
})}`;

function preloaderResult(html: string, prefix: string): unknown {
  const found = readBlocks(scanPage(html).blocks).preloaders.find((preloader) => preloader.name.startsWith(prefix));
  assert.ok(found, `fixture has ${prefix}`);
  return found.result;
}

/** The replies' last page: the third reply, no next page. */
function repliesLastPage(): string {
  const document = JSON.parse(REPLIES_JSON) as { data: { node: { replies_connection: { edges: Json[]; page_info: Record<string, Json> } } } };
  const connection = document.data.node.replies_connection;
  connection.edges = connection.edges.slice(1);
  connection.page_info = { end_cursor: null, has_next_page: false, start_cursor: null, has_previous_page: true };
  return JSON.stringify(document);
}

interface ContractOptions {
  /** Page bodies (or replies) by path, over the defaults. */
  pages?: Record<string, string | Reply>;
  /** lsd tokens the upstream accepts; default: every fixture lsd. */
  lsds?: () => Set<string>;
  /** Doc ids the upstream accepts per query; default: every fixture doc id. */
  docIds?: () => Record<string, Set<string>>;
  /** Replaces the GraphQL answer for a valid request (after the session checks). */
  graphql?: (request: Recorded, name: string) => Reply | string | undefined;
}

const DEFAULT_PAGES: Record<string, string> = {
  '/': HOME_HTML,
  '/harborbistro': PROFILE_HTML,
  '/harborbistro/reels/': REELS_HTML,
  '/harborbistro/about_contact_and_basic_info': ABOUT_HTML,
  '/oldharbordistillery': GATED_HTML,
  '/oldharbordistillery/reels/': GATED_HTML,
  '/oldharbordistillery/about_contact_and_basic_info': GATED_HTML,
};

/**
 * A contract upstream over the fixtures: pages by path (unknown paths: the not-found page with
 * 404); GraphQL checked in the order of README.md's "GraphQL" (lsd and its header, doc id of the friendly name,
 * relay flags) and answered from the fixtures by the query's variables.
 */
function contract(options: ContractOptions = {}): Handler {
  return (request) => {
    if (request.path !== '/api/graphql/') {
      assert.equal(request.method, 'GET', `page ${request.path} is a GET`);
      assert.equal(request.kind, 'page', `page ${request.path} is a navigation`);
      assert.equal(request.body, undefined);
      const page = options.pages?.[request.path] ?? DEFAULT_PAGES[request.path];
      if (page === undefined) return { status: 404, body: NOT_FOUND_HTML };
      return typeof page === 'string' ? { body: page } : page;
    }
    assert.equal(request.method, 'POST');
    assert.equal(request.kind, 'api');
    const form = request.form ?? {};
    const lsds = options.lsds?.() ?? new Set(Object.values(LSD));
    if (!lsds.has(form.lsd ?? '') || request.headers['x-sn-lsd'] !== form.lsd) return { body: `for (;;);${graphqlError(1357004, 'Invalid lsd')}` };
    const name = form.sn_api_req_friendly_name ?? '';
    const docIds = options.docIds?.() ?? {
      [TIMELINE_QUERY]: new Set([DOC.timeline, DOC.timelineRotated]),
      [REELS_QUERY]: new Set([DOC.reels]),
      [REPLIES_QUERY]: new Set([DOC.replies]),
    };
    if (!docIds[name]?.has(form.doc_id ?? '')) return { body: graphqlError(1675030, 'Unknown doc_id') };
    const variables = request.variables ?? {};
    for (const [flag, value] of Object.entries(RELAY_FLAGS)) {
      if (variables[flag] !== value) return { body: graphqlError(1675011, 'missing_required_variable_value') };
    }
    const override = options.graphql?.(request, name);
    if (override !== undefined) return typeof override === 'string' ? { body: override } : override;
    if (name === TIMELINE_QUERY) {
      if (variables.id !== PROFILE_ID) return { body: `for (;;);${NODE_NULL}` };
      if (variables.cursor === null) return { body: timelineFirstPage() };
      if (variables.cursor === PROFILE_END_CURSOR) return { body: TIMELINE_NDJSON };
      if (variables.cursor === TIMELINE_END_CURSOR) return { body: EMPTY_TIMELINE };
      return { body: graphqlError(1675012, 'invalid_variable_value') };
    }
    if (name === REELS_QUERY) {
      if (variables.id !== COLLECTION_ID) return { body: NODE_NULL };
      if (variables.cursor === REELS_END_CURSOR) return { body: REELS_PAGE_JSON };
      return { body: graphqlError(1675012, 'invalid_variable_value') };
    }
    if (name === REPLIES_QUERY) {
      if (variables.id !== FEEDBACK_ID) return { body: NODE_NULL };
      if (variables.expansionToken !== EXPANSION_TOKEN) return { body: graphqlError(1675012, 'invalid_variable_value') };
      if (variables.repliesAfterCursor === null) return { body: REPLIES_JSON };
      if (variables.repliesAfterCursor === REPLIES_END_CURSOR) return { body: repliesLastPage() };
      return { body: graphqlError(1675012, 'invalid_variable_value') };
    }
    return { body: graphqlError(1675030, 'Unknown doc_id') };
  };
}

type Extractors = SocialnetExtractors;
const socialnetEndpoints = endpointsOf('socialnet');

const run = (extractors: Extractors, name: keyof Extractors, params: Record<string, string>, position: UpstreamPosition | null, upstream: Upstream): Promise<ExtractResult> =>
  withPlatformOutcomes<Record<string, unknown>>('socialnet', extractors[name] as Extractor<Record<string, unknown>>)({ params, position }, contextFor(upstream));

const posts = (ex: Extractors, params: Record<string, string>, position: UpstreamPosition | null, upstream: Upstream) =>
  run(ex, 'posts', params, position, upstream);
const reels = (ex: Extractors, position: UpstreamPosition | null, upstream: Upstream, url = HARBOR_URL) =>
  run(ex, 'reels', { url }, position, upstream);
const replies = (ex: Extractors, position: UpstreamPosition | null, upstream: Upstream, params = { feedbackId: FEEDBACK_ID, expansionToken: EXPANSION_TOKEN }) =>
  run(ex, 'replies', params, position, upstream);
const profile = (ex: Extractors, upstream: Upstream, switches: { businessHours?: string; allowGated?: string; url?: string } = {}) =>
  run(ex, 'profile', { url: switches.url ?? HARBOR_URL, businessHours: switches.businessHours ?? 'true', allowGated: switches.allowGated ?? 'true' }, null, upstream);

/** Asserts that `promise` rejects with an UpstreamOutcome of `kind` whose message matches `message`. */
async function rejectsWith(promise: Promise<unknown>, kind: OutcomeKind, message?: RegExp): Promise<UpstreamOutcome> {
  let caught: unknown;
  await promise.then(
    () => assert.fail(`expected ${kind}`),
    (error: unknown) => {
      caught = error;
    },
  );
  assert.ok(caught instanceof UpstreamOutcome, `an UpstreamOutcome, got ${String(caught)}`);
  assert.equal(caught.kind, kind, `kind (${caught.message})`);
  assert.equal(caught.platform, 'socialnet');
  if (message) assert.match(caught.message, message);
  return caught;
}

// ---------------------------------------------------------------- schema check (what the core does)

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
const validators = new Map(socialnetEndpoints.map((endpoint) => [endpoint.id, ajv.compile(endpoint.data)]));

function assertSchema(id: string, result: ExtractResult): void {
  const validate = validators.get(id);
  assert.ok(validate);
  const paging = id === 'socialnet.profile' ? {} : { paging: { cursor: result.next ? 'sealed' : null, hasNextPage: Boolean(result.next) } };
  const data = { ...result.data, ...paging, fetchedAt: '2024-06-20T00:00:00.000Z' };
  assert.ok(validate(data), `${id} schema: ${JSON.stringify(validate.errors)}`);
}

/** Form fields and headers of a GraphQL request. */
function assertGraphqlRequest(request: Recorded | undefined, name: string, lsd: string, docId: string, variables: Record<string, unknown>): void {
  assert.ok(request);
  assert.equal(request.method, 'POST');
  assert.equal(request.path, '/api/graphql/');
  assert.equal(request.kind, 'api');
  const form = request.form ?? {};
  assert.deepEqual(
    Object.keys(form).sort(),
    ['__a', '__comet_req', '__req', '__user', 'av', 'doc_id', 'lsd', 'server_timestamps', 'sn_api_caller_class', 'sn_api_req_friendly_name', 'variables'].sort(),
  );
  assert.equal(form.av, '0');
  assert.equal(form.__user, '0');
  assert.equal(form.__a, '1');
  assert.match(form.__req ?? '', /^[0-9a-z]{1,3}$/);
  assert.equal(form.__comet_req, '15');
  assert.equal(form.lsd, lsd);
  assert.equal(form.sn_api_caller_class, 'RelayModern');
  assert.equal(form.sn_api_req_friendly_name, name);
  assert.equal(form.server_timestamps, 'true');
  assert.equal(form.doc_id, docId);
  assert.equal(form.variables, JSON.stringify(JSON.parse(form.variables ?? 'null')), 'variables are compact JSON');
  assert.deepEqual(request.variables, { ...variables, ...RELAY_FLAGS });
  assert.equal(request.headers['content-type'], 'application/x-www-form-urlencoded');
  assert.equal(request.headers['x-sn-lsd'], lsd);
  assert.equal(request.headers['x-sn-friendly-name'], name);
  assert.equal(request.headers.accept, '*/*');
  assert.equal(request.headers.origin, ORIGIN);
  assert.equal(request.headers.referer, `${ORIGIN}/`);
}

const assertPage = (request: Recorded | undefined, path: string): void => {
  assert.ok(request, `request for ${path}`);
  assert.deepEqual([request.method, request.path, request.kind, request.body], ['GET', path, 'page', undefined]);
};

/** Variables of the timeline, reels and replies queries (README.md, "Pagination"), without the relay flags. */
const timelineVariables = (id: string, cursor: string | null) => ({
  afterTime: null, beforeTime: null, count: 3, cursor, feedLocation: 'TIMELINE', feedbackSource: 0, focusCommentID: null,
  memorializedSplitTimeFilter: null, omitPinnedPost: true, postedBy: null, privacy: null,
  privacySelectorRenderLocation: 'COMET_STREAM', renderLocation: 'timeline', scale: 1, stream_count: 1, taggedInOnly: null,
  useDefaultActor: false, id,
});
const reelsVariables = (id: string, cursor: string | null) => ({
  count: 10, cursor, feedLocation: 'COMET_MEDIA_VIEWER', feedbackSource: 65, focusCommentID: null, renderLocation: null,
  scale: 1, useDefaultActor: false, id,
});
const repliesVariables = (id: string, expansionToken: string, cursor: string | null) => ({
  clientKey: null, expansionToken, feedLocation: 'POST_PERMALINK_DIALOG', focusCommentID: null, repliesAfterCount: null,
  repliesAfterCursor: cursor, repliesBeforeCount: null, repliesBeforeCursor: null, scale: 1, useDefaultActor: false, id,
});

// ================================================================ contract examples (test/fixtures/upstream)

describe('contract examples', () => {
  test('posts by url: the profile page gives the first batch, and its cursor the timeline page', async () => {
    const ex = createSocialnetExtractors();
    const { upstream, requests } = fakeUpstream(contract());
    const first = await posts(ex, { url: HARBOR_URL }, null, upstream);
    assert.equal(requests.length, 1);
    assertPage(requests[0], '/harborbistro');
    assert.deepEqual(first.data, POSTS.data);
    assert.deepEqual(first.next, POSTS.next);
    assertSchema('socialnet.profile.posts', first);

    // The cursor's position gives exactly the timeline query (README.md, "Pagination"), with the profile page's session.
    const second = await posts(ex, { url: HARBOR_URL }, first.next ?? null, upstream);
    assert.equal(requests.length, 2, 'no page is loaded again, no home page needed');
    assertGraphqlRequest(requests[1], TIMELINE_QUERY, LSD.profile, DOC.timeline, timelineVariables(PROFILE_ID, PROFILE_END_CURSOR));
    assert.deepEqual(second.data, TIMELINE.data);
    assert.deepEqual(second.next, TIMELINE.next);
    assertSchema('socialnet.profile.posts', second);

    // A cursor page with no stories ends the listing.
    const third = await posts(ex, { url: HARBOR_URL }, second.next ?? null, upstream);
    assertGraphqlRequest(requests[2], TIMELINE_QUERY, LSD.profile, DOC.timeline, timelineVariables(PROFILE_ID, TIMELINE_END_CURSOR));
    assert.deepEqual(third, { data: { posts: [], postCount: 0 }, next: null });
    assertSchema('socialnet.profile.posts', third);
  });

  test('posts by pageId: the home page gives the session, then the timeline query from the top', async () => {
    const ex = createSocialnetExtractors();
    const { upstream, requests } = fakeUpstream(contract());
    const first = await posts(ex, { pageId: PROFILE_ID }, null, upstream);
    assert.equal(requests.length, 2);
    assertPage(requests[0], '/');
    // lsd and the rotated timeline doc id come from the home page, not from any constant.
    assertGraphqlRequest(requests[1], TIMELINE_QUERY, LSD.home, DOC.timelineRotated, timelineVariables(PROFILE_ID, null));
    assert.deepEqual(first.data, POSTS.data, 'the GraphQL first page is the profile page batch');
    assert.deepEqual(first.next, POSTS.next);

    const second = await posts(ex, { pageId: PROFILE_ID }, first.next ?? null, upstream);
    assert.equal(requests.length, 3, 'the session is reused');
    assertGraphqlRequest(requests[2], TIMELINE_QUERY, LSD.home, DOC.timelineRotated, timelineVariables(PROFILE_ID, PROFILE_END_CURSOR));
    assert.deepEqual(second.data, TIMELINE.data);
    assert.deepEqual(second.next, TIMELINE.next);
  });

  test('posts by a profile.php url loads the id path', async () => {
    const ex = createSocialnetExtractors();
    const { upstream, requests } = fakeUpstream(contract({ pages: { [`/profile.php?id=${PROFILE_ID}`]: PROFILE_HTML } }));
    const result = await posts(ex, { url: `https://www.socialnet.example/profile.php?id=${PROFILE_ID}` }, null, upstream);
    assertPage(requests[0], `/profile.php?id=${PROFILE_ID}`);
    assert.deepEqual(result.data, POSTS.data);
  });

  test('reels: the reels tab, then the reels query with the collection id read from it (7)', async () => {
    const ex = createSocialnetExtractors();
    const { upstream, requests } = fakeUpstream(contract());
    const first = await reels(ex, null, upstream);
    assertPage(requests[0], '/harborbistro/reels/');
    assert.deepEqual(first.data, REELS.data);
    assert.deepEqual(first.next, REELS.next);
    assertSchema('socialnet.profile.reels', first);

    const second = await reels(ex, first.next ?? null, upstream);
    assert.equal(requests.length, 2);
    assertGraphqlRequest(requests[1], REELS_QUERY, LSD.reels, DOC.reels, reelsVariables(COLLECTION_ID, REELS_END_CURSOR));
    assert.deepEqual(second.data, REELS_PAGE.data);
    assert.equal(second.next, null);
    assertSchema('socialnet.profile.reels', second);
  });

  test('replies: session from the home page, the query with feedback id and token unchanged, then the cursor (8)', async () => {
    const ex = createSocialnetExtractors();
    const { upstream, requests } = fakeUpstream(contract());
    const first = await replies(ex, null, upstream);
    assert.equal(requests.length, 2);
    assertPage(requests[0], '/');
    assertGraphqlRequest(requests[1], REPLIES_QUERY, LSD.home, DOC.replies, repliesVariables(FEEDBACK_ID, EXPANSION_TOKEN, null));
    assert.deepEqual(first.data, REPLIES.data);
    assert.deepEqual(first.next, REPLIES.next);
    assertSchema('socialnet.post.comment.replies', first);

    const second = await replies(ex, first.next ?? null, upstream);
    assert.equal(requests.length, 3);
    assertGraphqlRequest(requests[2], REPLIES_QUERY, LSD.home, DOC.replies, repliesVariables(FEEDBACK_ID, EXPANSION_TOKEN, REPLIES_END_CURSOR));
    assert.equal(second.next, null);
    assert.equal(second.data.replyCount, 3);
    assert.equal(second.data.feedbackId, FEEDBACK_ID);
    assert.deepEqual(second.data.replies, (REPLIES.data.replies as unknown[]).slice(1));
    assertSchema('socialnet.post.comment.replies', second);
  });

  test('profile: the about tab, then the profile page for the hours', async () => {
    const ex = createSocialnetExtractors();
    const { upstream, requests } = fakeUpstream(contract());
    const result = await profile(ex, upstream);
    assert.equal(requests.length, 2);
    assertPage(requests[0], '/harborbistro/about_contact_and_basic_info');
    assertPage(requests[1], '/harborbistro');
    assert.deepEqual(result.data, PROFILE.data);
    assert.equal(result.next ?? null, null);
    assertSchema('socialnet.profile', result);
  });

  test('profile with businessHours=false skips the profile page; hours are null', async () => {
    const ex = createSocialnetExtractors();
    const { upstream, requests } = fakeUpstream(contract());
    const result = await profile(ex, upstream, { businessHours: 'false' });
    assert.equal(requests.length, 1);
    assertPage(requests[0], '/harborbistro/about_contact_and_basic_info');
    const profileData = PROFILE.data.profile as Record<string, unknown>;
    assert.deepEqual(result.data, { gated: false, profile: { ...profileData, businessHours: null } });
    assertSchema('socialnet.profile', result);
  });

  test('gated profile with allowGated=true: the limited response from the meta tags, one request', async () => {
    const ex = createSocialnetExtractors();
    const { upstream, requests } = fakeUpstream(contract());
    const result = await profile(ex, upstream, { url: GATED_URL });
    assert.equal(requests.length, 1);
    assertPage(requests[0], '/oldharbordistillery/about_contact_and_basic_info');
    assert.deepEqual(result.data, PROFILE_GATED.data);
    assertSchema('socialnet.profile', result);
  });

  test('the default instance has the four extractors, and every endpoint is declared with one', () => {
    assert.deepEqual(Object.keys(socialnetExtractors).sort(), ['posts', 'profile', 'reels', 'replies']);
    assert.deepEqual(socialnetEndpoints.map((endpoint) => typeof endpoint.extractor), ['function', 'function', 'function', 'function']);
  });
});

// ================================================================ outcomes

describe('outcomes', () => {
  const pageEndpoints = [
    { name: 'posts', call: (ex: Extractors, u: Upstream) => posts(ex, { url: HARBOR_URL }, null, u), path: '/harborbistro' },
    { name: 'reels', call: (ex: Extractors, u: Upstream) => reels(ex, null, u), path: '/harborbistro/reels/' },
    { name: 'profile', call: (ex: Extractors, u: Upstream) => profile(ex, u), path: '/harborbistro/about_contact_and_basic_info' },
  ];

  for (const endpoint of pageEndpoints) {
    test(`${endpoint.name}: login wall → blocked`, async () => {
      const { upstream } = fakeUpstream(contract({ pages: { [endpoint.path]: LOGIN_WALL_HTML } }));
      await rejectsWith(endpoint.call(createSocialnetExtractors(), upstream), 'blocked', /login wall/);
    });

    test(`${endpoint.name}: redirect to /login, /checkpoint, /recover or off the platform → blocked`, async () => {
      for (const final of ['/login/?next=%2Fharborbistro', '/checkpoint/block/?next=x', '/recover/initiate/']) {
        const { upstream } = fakeUpstream((request) => ({ path: final, body: request.path === endpoint.path ? LOGIN_WALL_HTML : '' }));
        await rejectsWith(endpoint.call(createSocialnetExtractors(), upstream), 'blocked', /redirected/);
      }
      const { upstream } = fakeUpstream(() => ({ status: 302, offPlatformLocation: 'https://captcha.example/challenge', body: '' }));
      await rejectsWith(endpoint.call(createSocialnetExtractors(), upstream), 'blocked', /off the platform/);
    });

    test(`${endpoint.name}: HTTP 429 (the client's outcome, or the status itself) and other 4xx → blocked`, async () => {
      const thrown = fakeUpstream(() => {
        throw new UpstreamOutcome('blocked', 'socialnet', 'HTTP 429 Too Many Requests');
      });
      await rejectsWith(endpoint.call(createSocialnetExtractors(), thrown.upstream), 'blocked', /429/);
      for (const status of [429, 400, 403, 405]) {
        const { upstream } = fakeUpstream(() => ({ status, body: '' }));
        await rejectsWith(endpoint.call(createSocialnetExtractors(), upstream), 'blocked', new RegExp(String(status)));
      }
    });

    test(`${endpoint.name}: transient failures are the client's outcome, passed on`, async () => {
      const { upstream } = fakeUpstream(() => {
        throw new UpstreamOutcome('transient', 'socialnet', 'upstream unavailable: HTTP 503');
      });
      await rejectsWith(endpoint.call(createSocialnetExtractors(), upstream), 'transient');
    });

    test(`${endpoint.name}: HTTP 404 (whatever the body) and unavailable pages → not found (10)`, async () => {
      for (const body of [NOT_FOUND_HTML, PROFILE_HTML, '']) {
        const { upstream } = fakeUpstream(() => ({ status: 404, body }));
        await rejectsWith(endpoint.call(createSocialnetExtractors(), upstream), 'not_found', /404/);
      }
      for (const reason of ['PRIVATE', 'REMOVED', 'NOT_FOUND']) {
        const { upstream } = fakeUpstream(() => ({ body: UNAVAILABLE_HTML.replace('PRIVATE', reason) }));
        await rejectsWith(endpoint.call(createSocialnetExtractors(), upstream), 'not_found', new RegExp(reason));
      }
    });

    test(`${endpoint.name}: a page of unknown structure → unrecognised, naming the header preloader`, async () => {
      const { upstream } = fakeUpstream(() => ({ body: '<!DOCTYPE html><html><head><title>Something else</title></head><body></body></html>' }));
      await rejectsWith(endpoint.call(createSocialnetExtractors(), upstream), 'unrecognised', /adp_ProfileCometHeaderQueryRelayPreloader_/);
    });
  }

  test('gated page: posts and reels are 404 (gated), profile with allowGated=false too', async () => {
    const { upstream } = fakeUpstream(contract());
    await rejectsWith(posts(createSocialnetExtractors(), { url: GATED_URL }, null, upstream), 'gated', /AGE_RESTRICTED/);
    await rejectsWith(reels(createSocialnetExtractors(), null, upstream, GATED_URL), 'gated', /AGE_RESTRICTED/);
    await rejectsWith(profile(createSocialnetExtractors(), upstream, { url: GATED_URL, allowGated: 'false' }), 'gated', /AGE_RESTRICTED/);
  });

  test('gated page for another reason and without al:android:url: id null', async () => {
    const html = GATED_HTML.replace('AGE_RESTRICTED', 'COUNTRY_RESTRICTED').replace(/<meta property="al:android:url"[^>]*>/, '');
    const { upstream } = fakeUpstream(contract({ pages: { '/oldharbordistillery/about_contact_and_basic_info': html } }));
    const result = await profile(createSocialnetExtractors(), upstream, { url: GATED_URL });
    const expectedProfile = { ...(PROFILE_GATED.data.profile as Record<string, unknown>), id: null };
    assert.deepEqual(result.data, { gated: true, profile: expectedProfile });
    assertSchema('socialnet.profile', result);
  });

  test('gated page without og:title → unrecognised, naming it', async () => {
    const html = GATED_HTML.replace(/<meta property="og:title"[^>]*>/, '');
    const { upstream } = fakeUpstream(contract({ pages: { '/oldharbordistillery/about_contact_and_basic_info': html } }));
    await rejectsWith(profile(createSocialnetExtractors(), upstream, { url: GATED_URL }), 'unrecognised', /og:title/);
  });

  test('the gate marker is checked before the login-wall markers', async () => {
    // The gated page has a login form; it is still gated, not a block.
    const { upstream } = fakeUpstream(contract());
    const result = await profile(createSocialnetExtractors(), upstream, { url: GATED_URL });
    assert.equal(result.data.gated, true);
  });

  test('a content page with a login form is content (11.3 step 8 before 9)', async () => {
    const html = PROFILE_HTML.replace('<body class="_9dls _2vja">', '<body><form id="login_form" action="/login/" method="post"></form>');
    const { upstream } = fakeUpstream(contract({ pages: { '/harborbistro': html } }));
    const result = await posts(createSocialnetExtractors(), { url: HARBOR_URL }, null, upstream);
    assert.deepEqual(result.data, POSTS.data);
  });

  test('profile: a block, not-found or gate on the hours page is the outcome of the request', async () => {
    const cases: [string | Reply, OutcomeKind][] = [
      [LOGIN_WALL_HTML, 'blocked'],
      [{ status: 404, body: NOT_FOUND_HTML }, 'not_found'],
      [UNAVAILABLE_HTML, 'not_found'],
      [GATED_HTML, 'gated'],
    ];
    for (const [page, kind] of cases) {
      const { upstream } = fakeUpstream(contract({ pages: { '/harborbistro': page } }));
      await rejectsWith(profile(createSocialnetExtractors(), upstream), kind);
    }
  });

  test('a content page missing a preloader its endpoint needs → unrecognised, naming it', async () => {
    const dropPreloader = (html: string, prefix: string): string =>
      html.replace(new RegExp(`${prefix}[0-9a-f]+`), 'adp_SomethingElseQueryRelayPreloader_0123456789abcdef');
    const cases: { prefix: string; path: string; html: string; call: (ex: Extractors, u: Upstream) => Promise<unknown> }[] = [
      { prefix: 'adp_ProfileCometTimelineFeedQueryRelayPreloader_', path: '/harborbistro', html: PROFILE_HTML, call: (ex, u) => posts(ex, { url: HARBOR_URL }, null, u) },
      { prefix: 'adp_ProfileCometAppCollectionReelsRendererQueryRelayPreloader_', path: '/harborbistro/reels/', html: REELS_HTML, call: (ex, u) => reels(ex, null, u) },
      { prefix: 'adp_ProfileCometAboutAppSectionQueryRelayPreloader_', path: '/harborbistro/about_contact_and_basic_info', html: ABOUT_HTML, call: (ex, u) => profile(ex, u) },
      { prefix: 'adp_ProfilePlusCometLoggedOutRootQueryRelayPreloader_', path: '/harborbistro', html: PROFILE_HTML, call: (ex, u) => profile(ex, u) },
    ];
    for (const { prefix, path, html, call } of cases) {
      const { upstream } = fakeUpstream(contract({ pages: { [path]: dropPreloader(html, prefix) } }));
      await rejectsWith(call(createSocialnetExtractors(), upstream), 'unrecognised', new RegExp(prefix));
    }
  });

  test('a story missing a mapped field → unrecognised, naming the path; never half-filled data', async () => {
    const html = PROFILE_HTML.replace('"post_id":"1092345678901234",', '');
    const { upstream } = fakeUpstream(contract({ pages: { '/harborbistro': html } }));
    await rejectsWith(posts(createSocialnetExtractors(), { url: HARBOR_URL }, null, upstream), 'unrecognised', /post_id/);
    const ndjson = TIMELINE_NDJSON.replace('"reaction_count":{"count":233,"is_empty":false}', '"reaction_count":{"is_empty":false}');
    const timeline = fakeUpstream(contract({ graphql: () => ndjson }));
    await rejectsWith(posts(createSocialnetExtractors(), {}, { profileId: PROFILE_ID, cursor: PROFILE_END_CURSOR }, timeline.upstream), 'unrecognised', /reaction_count\.count/);
    const reelsPage = REELS_PAGE_JSON.replace(/"play_count_reduced":\s*"[^"]*",?/, '');
    const reelsUp = fakeUpstream(contract({ graphql: () => reelsPage }));
    await rejectsWith(reels(createSocialnetExtractors(), { profileId: PROFILE_ID, collectionId: COLLECTION_ID, cursor: REELS_END_CURSOR }, reelsUp.upstream), 'unrecognised', /play_count_reduced/);
  });

  describe('posts', () => {
    test('profile page with an empty timeline → not found (no public posts)', async () => {
      const html = PROFILE_HTML.replace(/"timeline_list_feed_units":\{"edges":\[.*\],"page_info":\{[^}]*\}\}/, '"timeline_list_feed_units":{"edges":[],"page_info":{"end_cursor":null,"has_next_page":false}}');
      assert.notEqual(html, PROFILE_HTML);
      const { upstream } = fakeUpstream(contract({ pages: { '/harborbistro': html } }));
      await rejectsWith(posts(createSocialnetExtractors(), { url: HARBOR_URL }, null, upstream), 'not_found', /no public posts/);
    });

    test('pageId whose first GraphQL page is empty → not found; a later empty page → 200 []', async () => {
      const { upstream } = fakeUpstream(contract({ graphql: () => EMPTY_TIMELINE }));
      const ex = createSocialnetExtractors();
      await rejectsWith(posts(ex, { pageId: PROFILE_ID }, null, upstream), 'not_found', /no public posts/);
      const later = await posts(ex, { pageId: PROFILE_ID }, { profileId: PROFILE_ID, cursor: TIMELINE_END_CURSOR }, upstream);
      assert.deepEqual(later, { data: { posts: [], postCount: 0 }, next: null });
    });

    test('data.node null → not found (unknown pageId)', async () => {
      const { upstream } = fakeUpstream(contract());
      await rejectsWith(posts(createSocialnetExtractors(), { pageId: '100000000000001' }, null, upstream), 'not_found', /data\.node/);
    });

    test('1675012 on the cursor → rejected cursor', async () => {
      const { upstream } = fakeUpstream(contract());
      await rejectsWith(posts(createSocialnetExtractors(), {}, { profileId: PROFILE_ID, cursor: 'Cg8Ob3JnYW5pY19jdXJzb3IJAAAAbogus' }, upstream), 'rejected_cursor', /1675012/);
    });

    test('GraphQL rate limit (1675004) in the first NDJSON line → blocked', async () => {
      const compact = JSON.stringify(JSON.parse(GRAPHQL_ERROR_JSON));
      for (const body of [compact, `for (;;);${compact}`]) {
        const { upstream } = fakeUpstream(contract({ graphql: () => body }));
        await rejectsWith(posts(createSocialnetExtractors(), { pageId: PROFILE_ID }, null, upstream), 'blocked', /1675004/);
      }
    });

    test('an NDJSON response without its page_info line, or cut off → transient', async () => {
      const lines = TIMELINE_NDJSON.trimEnd().split('\n');
      for (const body of [lines.slice(0, -1).join('\n'), `${lines.slice(0, -1).join('\n')}\n${(lines.at(-1) ?? '').slice(0, 40)}`]) {
        const { upstream } = fakeUpstream(contract({ graphql: () => body }));
        await rejectsWith(posts(createSocialnetExtractors(), {}, { profileId: PROFILE_ID, cursor: PROFILE_END_CURSOR }, upstream), 'transient', /page_info|cut off/);
      }
    });

    test('those transient answers are judged inside the client\'s retry loop: the retry\'s complete answer is read', async () => {
      const lines = TIMELINE_NDJSON.trimEnd().split('\n');
      const transient = {
        empty: 'for (;;);\n',
        'no page_info line': lines.slice(0, -1).join('\n'),
        'cut off': `${lines.slice(0, -1).join('\n')}\n${(lines.at(-1) ?? '').slice(0, 40)}`,
      };
      for (const [shape, body] of Object.entries(transient)) {
        const { upstream: fake, requests } = fakeUpstream(contract({ graphql: (request) => (requests.filter((r) => r.path === request.path).length === 1 ? body : undefined) }));
        // As the real client does: `classify` on each answer, a transient one asked again.
        const classified: string[] = [];
        const retrying: Upstream = async (request) => {
          for (;;) {
            const response = await fake(request);
            try {
              request.classify?.(response);
              classified.push(`${request.path} accepted`);
              return response;
            } catch (error) {
              if (!(error instanceof UpstreamOutcome && error.kind === 'transient')) throw error;
              classified.push(`${request.path} transient`);
            }
          }
        };
        const result = await posts(createSocialnetExtractors(), {}, { profileId: PROFILE_ID, cursor: PROFILE_END_CURSOR }, retrying);
        const direct = await posts(createSocialnetExtractors(), {}, { profileId: PROFILE_ID, cursor: PROFILE_END_CURSOR }, fakeUpstream(contract()).upstream);
        assert.deepEqual(result, direct, `${shape}: the same page as without the transient answer`);
        assert.deepEqual(classified, ['/ accepted', '/api/graphql/ transient', '/api/graphql/ accepted'], shape);
        const graphql = requests.filter((request) => request.path === '/api/graphql/');
        assert.equal(graphql.length, 2, shape);
        assert.equal(graphql[0]?.body, graphql[1]?.body, `${shape}: the same request again`);
      }
    });

    test('a position without its fields → rejected cursor', async () => {
      const { upstream } = fakeUpstream(contract());
      await rejectsWith(posts(createSocialnetExtractors(), {}, { cursor: PROFILE_END_CURSOR }, upstream), 'rejected_cursor', /profileId/);
    });
  });

  describe('reels', () => {
    test('reels tab with an empty first batch → 200 [] and the end of the listing', async () => {
      const html = REELS_HTML.replace(/"aggregated_sn_shorts":\{"edges":\[.*\],"page_info":\{[^}]*\}\}/, '"aggregated_sn_shorts":{"edges":[],"page_info":{"end_cursor":null,"has_next_page":false}}');
      assert.notEqual(html, REELS_HTML);
      const { upstream } = fakeUpstream(contract({ pages: { '/harborbistro/reels/': html } }));
      const result = await reels(createSocialnetExtractors(), null, upstream);
      assert.deepEqual(result, { data: { reels: [], reelCount: 0 }, next: null });
      assertSchema('socialnet.profile.reels', result);
    });

    test('data.node null on a cursor page → not found; 1675012 → rejected cursor', async () => {
      const { upstream } = fakeUpstream(contract());
      await rejectsWith(reels(createSocialnetExtractors(), { profileId: PROFILE_ID, collectionId: 'YXBwX2NvbGxlY3Rpb246Z29uZQ==', cursor: REELS_END_CURSOR }, upstream), 'not_found');
      await rejectsWith(reels(createSocialnetExtractors(), { profileId: PROFILE_ID, collectionId: COLLECTION_ID, cursor: 'QVFIbogus' }, upstream), 'rejected_cursor');
    });

    test('an end_cursor without has_next_page, or has_next_page with an empty cursor, ends the listing', async () => {
      for (const pageInfo of ['{"end_cursor":"QVFIUmore","has_next_page":false}', '{"end_cursor":"","has_next_page":true}', '{"end_cursor":null,"has_next_page":true}']) {
        const html = REELS_HTML.replace(/"page_info":\{"end_cursor":"[^"]*","has_next_page":true\}/, `"page_info":${pageInfo}`);
        assert.notEqual(html, REELS_HTML);
        const { upstream } = fakeUpstream(contract({ pages: { '/harborbistro/reels/': html } }));
        const result = await reels(createSocialnetExtractors(), null, upstream);
        assert.equal(result.next, null);
        assert.deepEqual(result.data, REELS.data);
      }
    });
  });

  describe('replies', () => {
    test('data.node null → not found', async () => {
      const { upstream } = fakeUpstream(contract());
      await rejectsWith(replies(createSocialnetExtractors(), null, upstream, { feedbackId: 'ZmVlZGJhY2s6MTIzXzQ1Ng==', expansionToken: EXPANSION_TOKEN }), 'not_found');
    });

    test('a token not issued for the comment, or a cursor not accepted → rejected cursor (1675012)', async () => {
      const { upstream } = fakeUpstream(contract());
      await rejectsWith(replies(createSocialnetExtractors(), null, upstream, { feedbackId: FEEDBACK_ID, expansionToken: 'MTpjb21tZW50OjE6other' }), 'rejected_cursor');
      await rejectsWith(replies(createSocialnetExtractors(), { feedbackId: FEEDBACK_ID, expansionToken: EXPANSION_TOKEN, cursor: 'MToxbogus' }, upstream), 'rejected_cursor');
    });

    test('a comment with no replies → 200 [] with replyCount 0', async () => {
      const empty = JSON.stringify({
        data: { node: { __typename: 'Feedback', id: FEEDBACK_ID, replies_fields: { total_count: 0, count: 0 }, replies_connection: { edges: [], page_info: { end_cursor: null, has_next_page: false, start_cursor: null, has_previous_page: false } } } },
        extensions: { is_final: true },
      });
      const { upstream } = fakeUpstream(contract({ graphql: () => empty }));
      const result = await replies(createSocialnetExtractors(), null, upstream);
      assert.deepEqual(result, { data: { replies: [], replyCount: 0, feedbackId: FEEDBACK_ID }, next: null });
      assertSchema('socialnet.post.comment.replies', result);
    });
  });

  describe('GraphQL errors and framing', () => {
    const query = (ex: Extractors, u: Upstream) => replies(ex, null, u);

    test('1675004 rate limit → blocked (the example file)', async () => {
      const { upstream } = fakeUpstream(contract({ graphql: () => GRAPHQL_ERROR_JSON }));
      await rejectsWith(query(createSocialnetExtractors(), upstream), 'blocked', /1675004/);
    });

    test('1675011 and unknown codes → unrecognised', async () => {
      for (const code of [1675011, 1999999]) {
        const { upstream } = fakeUpstream(contract({ graphql: () => graphqlError(code, 'whatever') }));
        await rejectsWith(query(createSocialnetExtractors(), upstream), 'unrecognised', new RegExp(String(code)));
      }
    });

    test('WARNING errors beside data are ignored; only the first CRITICAL error decides', async () => {
      const document = JSON.parse(REPLIES_JSON) as Record<string, unknown>;
      const warned = JSON.stringify({ errors: [{ message: 'Slow query', severity: 'WARNING', code: 1675004 }], ...document });
      const { upstream } = fakeUpstream(contract({ graphql: () => warned }));
      const result = await query(createSocialnetExtractors(), upstream);
      assert.deepEqual(result.data, REPLIES.data);
      const mixed = JSON.stringify({
        errors: [{ message: 'w', severity: 'WARNING', code: 1675004 }, { message: 'x', severity: 'CRITICAL', code: 1675012 }, { message: 'y', severity: 'CRITICAL', code: 1675004 }],
        data: null,
      });
      const second = fakeUpstream(contract({ graphql: () => mixed }));
      await rejectsWith(query(createSocialnetExtractors(), second.upstream), 'rejected_cursor');
    });

    test('an empty body (after the prefix) → transient', async () => {
      for (const body of ['', '   \n', 'for (;;);', '  for (;;);  \n']) {
        const { upstream } = fakeUpstream(contract({ graphql: () => ({ body }) }));
        await rejectsWith(query(createSocialnetExtractors(), upstream), 'transient', /empty/);
      }
    });

    test('HTML instead of JSON: the login wall is a block, anything else unrecognised', async () => {
      const wall = fakeUpstream(contract({ graphql: () => LOGIN_WALL_HTML }));
      await rejectsWith(query(createSocialnetExtractors(), wall.upstream), 'blocked', /login wall/);
      const other = fakeUpstream(contract({ graphql: () => '<html><body>Sorry, something went wrong.</body></html>' }));
      await rejectsWith(query(createSocialnetExtractors(), other.upstream), 'unrecognised', /not JSON/);
      const timeline = fakeUpstream(contract({ graphql: () => `for (;;);${LOGIN_WALL_HTML}` }));
      await rejectsWith(posts(createSocialnetExtractors(), { pageId: PROFILE_ID }, null, timeline.upstream), 'blocked', /login wall/);
    });

    test('non-200 statuses, redirects and 429 → blocked', async () => {
      for (const reply of [{ status: 403 }, { status: 404 }, { status: 400 }, { status: 429 }, { path: '/login/?next=%2Fapi%2Fgraphql%2F' }, { status: 302, offPlatformLocation: 'https://elsewhere.example/' }] as Reply[]) {
        const { upstream } = fakeUpstream(contract({ graphql: () => ({ body: '', ...reply }) }));
        await rejectsWith(query(createSocialnetExtractors(), upstream), 'blocked');
      }
    });

    test('stale lsd or doc id again after one refresh → blocked', async () => {
      for (const code of [1357004, 1675030]) {
        const { upstream, requests } = fakeUpstream(contract({ graphql: () => graphqlError(code, 'stale') }));
        await rejectsWith(query(createSocialnetExtractors(), upstream), 'blocked', new RegExp(String(code)));
        assert.deepEqual(requests.map((r) => r.path), ['/', '/api/graphql/', '/', '/api/graphql/']);
      }
    });
  });

  describe('home page', () => {
    test('a home page without lsd or CometRelayDocIds is a block; the login wall too', async () => {
      const noLsd = HOME_HTML.replace(/<script id="__eqmc"[^>]*>[^<]*<\/script>/, '');
      const noDocIds = HOME_HTML.replace(/\["CometRelayDocIds",\[\],\{"ids":\{[^}]*\},"rev":[0-9]+\},[0-9]+\],?/, '');
      assert.notEqual(noLsd, HOME_HTML);
      assert.notEqual(noDocIds, HOME_HTML);
      for (const home of [noLsd, noDocIds, LOGIN_WALL_HTML]) {
        const { upstream } = fakeUpstream(contract({ pages: { '/': home } }));
        await rejectsWith(replies(createSocialnetExtractors(), null, upstream), 'blocked', /home page/);
      }
    });

    test('a doc-id map lacking a query the extractor needs → unrecognised, naming it', async () => {
      const home = HOME_HTML.replace('"Depth1CommentsListPaginationQuery":"25123456789012345",', '');
      const { upstream } = fakeUpstream(contract({ pages: { '/': home } }));
      await rejectsWith(replies(createSocialnetExtractors(), null, upstream), 'unrecognised', /Depth1CommentsListPaginationQuery/);
    });

    test('a home page that redirects to /checkpoint or answers 403 → blocked', async () => {
      const checkpoint = fakeUpstream(() => ({ path: '/checkpoint/?next=%2F', body: LOGIN_WALL_HTML }));
      await rejectsWith(replies(createSocialnetExtractors(), null, checkpoint.upstream), 'blocked', /checkpoint/);
      const forbidden = fakeUpstream(() => ({ status: 403, body: '' }));
      await rejectsWith(replies(createSocialnetExtractors(), null, forbidden.upstream), 'blocked', /403/);
    });
  });
});

// ================================================================ session

describe('session', () => {
  test('concurrent first requests share one home-page load', async () => {
    const ex = createSocialnetExtractors();
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const handler = contract();
    const { upstream, requests } = fakeUpstream(async (request) => {
      if (request.path === '/') await gate;
      return handler(request);
    });
    const pending = [replies(ex, null, upstream), replies(ex, null, upstream), posts(ex, { pageId: PROFILE_ID }, null, upstream), replies(ex, null, upstream)];
    await new Promise((resolve) => setTimeout(resolve, 10));
    release();
    const results = await Promise.all(pending);
    assert.equal(requests.filter((r) => r.path === '/').length, 1);
    assert.equal(requests.filter((r) => r.path === '/api/graphql/').length, 4);
    for (const request of requests.filter((r) => r.path === '/api/graphql/')) assert.equal(request.form?.lsd, LSD.home);
    assert.deepEqual(results[0]?.data, REPLIES.data);
    assert.deepEqual(results[2]?.data, POSTS.data);
  });

  test('a stale session is refreshed once for all the requests that met it, and each retries', async () => {
    const store = new MemorySessionStore();
    const old: SocialnetSession = {
      lsd: 'AVqOLDlsdTOKEN',
      docIds: { [TIMELINE_QUERY]: DOC.timeline, [REELS_QUERY]: DOC.reels, [REPLIES_QUERY]: DOC.replies } as SocialnetSession['docIds'],
      obtainedAt: Date.now(),
    };
    await store.set(old);
    const ex = createSocialnetExtractors({ sessions: store });
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const handler = contract();
    const { upstream, requests } = fakeUpstream(async (request) => {
      if (request.path === '/') await gate;
      return handler(request);
    });
    const pending = [replies(ex, null, upstream), replies(ex, null, upstream), replies(ex, null, upstream)];
    await new Promise((resolve) => setTimeout(resolve, 10));
    release();
    for (const result of await Promise.all(pending)) assert.deepEqual(result.data, REPLIES.data);
    assert.equal(requests.filter((r) => r.path === '/').length, 1, 'one refresh');
    const graphql = requests.filter((r) => r.path === '/api/graphql/');
    assert.deepEqual(graphql.map((r) => r.form?.lsd), [old.lsd, old.lsd, old.lsd, LSD.home, LSD.home, LSD.home]);
    assert.equal((await store.get())?.lsd, LSD.home, 'the new session is stored');

    // A request that meets the same stale session later reuses the refreshed one: no new load.
    const late = await replies(ex, null, upstream);
    assert.deepEqual(late.data, REPLIES.data);
    assert.equal(requests.filter((r) => r.path === '/').length, 1);
  });

  test('doc ids that rotate between two pages of one listing are picked up', async () => {
    // The profile page shows timeline doc id 8123456789012345; the upstream then retires it
    // and only accepts the home page's 8123456789099876.
    let retired = false;
    const ex = createSocialnetExtractors();
    const { upstream, requests } = fakeUpstream(
      contract({
        docIds: () => ({
          [TIMELINE_QUERY]: new Set(retired ? [DOC.timelineRotated] : [DOC.timeline, DOC.timelineRotated]),
          [REELS_QUERY]: new Set([DOC.reels]),
          [REPLIES_QUERY]: new Set([DOC.replies]),
        }),
      }),
    );
    const first = await posts(ex, { url: HARBOR_URL }, null, upstream);
    retired = true;
    const second = await posts(ex, { url: HARBOR_URL }, first.next ?? null, upstream);
    assert.deepEqual(second.data, TIMELINE.data);
    assert.deepEqual(requests.map((r) => [r.path, r.form?.doc_id ?? null]), [
      ['/harborbistro', null],
      ['/api/graphql/', DOC.timeline],
      ['/', null],
      ['/api/graphql/', DOC.timelineRotated],
    ]);
    assert.equal(requests[3]?.form?.lsd, LSD.home);

    // A page loaded later that shows other doc ids replaces the session at once.
    const rotatedPage = REELS_HTML.replaceAll('"ProfileCometTimelineFeedRefetchQuery":"8123456789012345"', '"ProfileCometTimelineFeedRefetchQuery":"9000000000000001"');
    const next = fakeUpstream(
      contract({
        pages: { '/harborbistro/reels/': rotatedPage },
        docIds: () => ({ [TIMELINE_QUERY]: new Set(['9000000000000001']), [REELS_QUERY]: new Set([DOC.reels]), [REPLIES_QUERY]: new Set([DOC.replies]) }),
      }),
    );
    await reels(ex, null, next.upstream);
    const third = await posts(ex, { url: HARBOR_URL }, first.next ?? null, next.upstream);
    assert.deepEqual(third.data, TIMELINE.data);
    assert.deepEqual(next.requests.map((r) => [r.path, r.form?.doc_id ?? null, r.form?.lsd ?? null]), [
      ['/harborbistro/reels/', null, null],
      ['/api/graphql/', '9000000000000001', LSD.reels],
    ]);
  });

  test('an upstream that retired everything (restart): the stale lsd is replaced from the home page', async () => {
    let accepted = new Set([LSD.profile]);
    const ex = createSocialnetExtractors();
    const { upstream, requests } = fakeUpstream(contract({ lsds: () => accepted }));
    const first = await posts(ex, { url: HARBOR_URL }, null, upstream);
    accepted = new Set([LSD.home]);
    const second = await posts(ex, { url: HARBOR_URL }, first.next ?? null, upstream);
    assert.deepEqual(second.data, TIMELINE.data);
    assert.deepEqual(requests.map((r) => r.form?.lsd ?? r.path), ['/harborbistro', LSD.profile, '/', LSD.home]);
  });

  test('a session is reused across requests for 15 minutes, then loaded again', async () => {
    let now = 1_718_000_000_000;
    const ex = createSocialnetExtractors({ now: () => now });
    const { upstream, requests } = fakeUpstream(contract());
    await replies(ex, null, upstream);
    now += 14 * 60 * 1000;
    await replies(ex, null, upstream);
    assert.equal(requests.filter((r) => r.path === '/').length, 1);
    now += 2 * 60 * 1000;
    await replies(ex, null, upstream);
    assert.equal(requests.filter((r) => r.path === '/').length, 2);
  });

  test('sessions live behind a SessionStore of serialisable values, shareable between instances', async () => {
    const saved: string[] = [];
    let stored: string | null = null;
    const jsonStore: SessionStore = {
      async get() {
        return stored === null ? null : (JSON.parse(stored) as SocialnetSession);
      },
      async set(session) {
        stored = session === null ? null : JSON.stringify(session);
        if (stored !== null) saved.push(stored);
      },
    };
    const nodeA = createSocialnetExtractors({ sessions: jsonStore });
    const nodeB = createSocialnetExtractors({ sessions: jsonStore });
    const a = fakeUpstream(contract());
    await reels(nodeA, null, a.upstream);
    assert.equal(saved.length, 1);
    const session = JSON.parse(saved[0] ?? '{}') as SocialnetSession;
    assert.equal(session.lsd, LSD.reels);
    assert.deepEqual(session.docIds, { [TIMELINE_QUERY]: DOC.timeline, [REELS_QUERY]: DOC.reels, [REPLIES_QUERY]: DOC.replies });
    assert.equal(typeof session.obtainedAt, 'number');
    // Another instance (another node) uses the stored session: no home page.
    const b = fakeUpstream(contract());
    const result = await replies(nodeB, null, b.upstream);
    assert.deepEqual(result.data, REPLIES.data);
    assert.deepEqual(b.requests.map((r) => r.form?.lsd ?? r.path), [LSD.reels]);
  });

  test('a failed home-page load is the outcome of every request waiting for it; the next request tries again', async () => {
    const ex = createSocialnetExtractors();
    let blocked = true;
    const handler = contract();
    const { upstream, requests } = fakeUpstream((request) => (request.path === '/' && blocked ? { body: LOGIN_WALL_HTML } : handler(request)));
    const outcomes = await Promise.allSettled([replies(ex, null, upstream), replies(ex, null, upstream)]);
    for (const outcome of outcomes) {
      assert.equal(outcome.status, 'rejected');
      assert.equal((outcome.reason as UpstreamOutcome).kind, 'blocked');
    }
    assert.equal(requests.length, 1);
    blocked = false;
    const result = await replies(ex, null, upstream);
    assert.deepEqual(result.data, REPLIES.data);
  });

  test('a request joining a load that ran out of another request\'s budget tries with its own', async () => {
    const ex = createSocialnetExtractors();
    let homeCalls = 0;
    const handler = contract();
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { upstream } = fakeUpstream(async (request) => {
      if (request.path === '/') {
        homeCalls += 1;
        if (homeCalls === 1) {
          await gate;
          throw new UpstreamOutcome('transient', 'socialnet', 'upstream unavailable: the time budget ran out');
        }
      }
      return handler(request);
    });
    const first = replies(ex, null, upstream);
    const second = replies(ex, null, upstream);
    await new Promise((resolve) => setTimeout(resolve, 10));
    release();
    await rejectsWith(first, 'transient');
    assert.deepEqual((await second).data, REPLIES.data);
    assert.equal(homeCalls, 2);
  });
});

// ================================================================ variations (12)

describe('variations', () => {
  /** Every page variant must give the same result as the fixture. */
  async function samePosts(html: string): Promise<void> {
    const { upstream } = fakeUpstream(contract({ pages: { '/harborbistro': html } }));
    const ex = createSocialnetExtractors();
    const result = await posts(ex, { url: HARBOR_URL }, null, upstream);
    assert.deepEqual(result.data, POSTS.data);
    assert.deepEqual(result.next, POSTS.next);
    // The session read from the variant page serves the cursor call.
    const { upstream: next, requests } = fakeUpstream(contract());
    await posts(ex, { url: HARBOR_URL }, result.next ?? null, next);
    assert.equal(requests[0]?.form?.lsd, LSD.profile);
    assert.equal(requests[0]?.form?.doc_id, DOC.timeline);
  }

  async function sameProfile(about: string, main = PROFILE_HTML): Promise<void> {
    const { upstream } = fakeUpstream(contract({ pages: { '/harborbistro/about_contact_and_basic_info': about, '/harborbistro': main } }));
    const result = await profile(createSocialnetExtractors(), upstream);
    assert.deepEqual(result.data, PROFILE.data);
  }

  async function sameReels(html: string): Promise<void> {
    const { upstream } = fakeUpstream(contract({ pages: { '/harborbistro/reels/': html } }));
    const result = await reels(createSocialnetExtractors(), null, upstream);
    assert.deepEqual(result.data, REELS.data);
    assert.deepEqual(result.next, REELS.next);
  }

  const pages = { profile: PROFILE_HTML, reels: REELS_HTML, about: ABOUT_HTML };

  /** Runs the endpoint that reads `page` on a variant of it. */
  const same = (page: keyof typeof pages, html: string): Promise<void> =>
    page === 'profile' ? samePosts(html).then(() => sameProfile(ABOUT_HTML, html)) : page === 'reels' ? sameReels(html) : sameProfile(html);

  for (const page of Object.keys(pages) as (keyof typeof pages)[]) {
    const html = pages[page];

    test(`${page}: blocks reversed, moved to head, one per entry, with unrelated blocks and entries`, async () => {
      const blocks = blocksOf(html);
      const unrelated = [
        block('{"require":[["TimeSliceImpl","guard",null,[]],["ScheduledServerJS","handle",null,[{"__bbox":{"require":[["CometSSRMergedContentInjector","onPayload",[],[]]]}}]]]}'),
        block('{"define":[["SiteData",[],{"server_revision":1},317]]}'),
        block('{"something":"else"}'),
        block('not json at all'),
      ];
      const rendered = blocks.map((json) => block(serialise(json))).reverse();
      await same(page, withBlocks(html, [unrelated[0] as string, ...rendered.slice(0, 1)], [...rendered.slice(1), ...unrelated.slice(1)]));
      // Split: every define entry and every preloader in a block of its own.
      const split: string[] = [];
      for (const json of blocks as { define?: Json[]; require?: Json[] }[]) {
        for (const entry of json.define ?? []) split.push(block(serialise({ define: [entry] })));
        for (const entry of json.require ?? []) {
          const args = (entry as Json[])[3] as { __bbox: { require: Json[] } }[];
          for (const arg of args) for (const item of arg.__bbox.require) split.push(block(serialise({ require: [['ScheduledServerJS', 'handle', null, [{ __bbox: { require: [item] } }]]] })));
        }
      }
      await same(page, withBlocks(html, split.filter((_, i) => i % 2 === 0), split.filter((_, i) => i % 2 === 1).reverse()));
    });

    test(`${page}: all blocks grouped into one (define and require together)`, async () => {
      const blocks = blocksOf(html) as { define?: Json[]; require?: Json[] }[];
      const merged = { require: blocks.flatMap((b) => b.require ?? []), define: blocks.flatMap((b) => b.define ?? []) };
      await same(page, withBlocks(html, [], [block(serialise(merged))]));
    });

    test(`${page}: escaping styles (\\/, \\uXXXX for non-ASCII and letters), whitespace, unknown keys, key order`, async () => {
      const blocks = blocksOf(html);
      for (const style of [{ slash: true }, { nonAscii: true }, { letters: true, slash: true, nonAscii: true }, { indent: 2 }, { indent: 1, slash: true }]) {
        await same(page, withBlocks(html, [], blocks.map((json) => block(serialise(json, style)))));
      }
      await same(page, withBlocks(html, [], blocks.map((json) => block(serialise(withUnknownKeys(json), { nonAscii: true })))));
    });

    test(`${page}: script attributes in any order and quoting, data-sjs="", extra attributes, no data-content-len`, async () => {
      const blocks = blocksOf(html);
      const attributeStyles = [
        "data-sjs='' type='application/json'",
        'type=application/json data-sjs nonce=q3Xw9t1L class="x1 y2" id=blk',
        'data-content-len="999999" data-sjs="" type="application/json"',
        'DATA-SJS TYPE="application/json"',
      ];
      for (const attributes of attributeStyles) await same(page, withBlocks(html, [], blocks.map((json) => block(serialise(json), attributes))));
      // __eqmc with other attributes, other keys, and attributes in another order.
      const eqmc = html.replace(/<script id="__eqmc"[^>]*>[^<]*<\/script>/, (found) => {
        const lsd = /"l":"([^"]+)"/.exec(found)?.[1] ?? '';
        return `<script nonce='abc' type=application/json data-x="1" id='__eqmc'>{"z":[1,2],"l":"${lsd}","u":"\\/ajax\\/qm\\/"}</script>`;
      });
      await same(page, eqmc);
    });

    test(`${page}: new preloader suffixes of 8 to 32 hex characters, unrelated preloaders, a repeated prefix (first wins)`, async () => {
      let n = 0;
      const suffixes = ['0a1b2c3d', '0123456789abcdef0123456789abcdef', 'deadbeefcafe'];
      const renamed = html.replace(/(adp_[A-Za-z]+QueryRelayPreloader_)[0-9a-f]+/g, (_, prefix: string) => `${prefix}${suffixes[n++ % suffixes.length]}`);
      await same(page, renamed);
      const blocks = blocksOf(html);
      const extra = block(serialise({ require: [['ScheduledServerJS', 'handle', null, [{ __bbox: { require: [['RelayPrefetchedStreamCache', 'next', [], ['adp_CometLoggedOutUpsellQueryRelayPreloader_abcdef0123', { __bbox: { complete: true, result: { data: { viewer: null } } } }]]] } }]]] }));
      // A later duplicate of every preloader with broken content must be ignored.
      const duplicates = blocks.map((json) => block(serialise(withBrokenResults(json))));
      await same(page, withBlocks(html, [], [extra, ...blocks.map((json) => block(serialise(json))), ...duplicates]));
    });

    test(`${page}: meta attributes with named, decimal, hex references and other quoting`, async () => {
      const variant = html
        .replace(/&#xb7;/g, (_, offset: number) => (offset % 2 === 0 ? '&middot;' : '&#183;'))
        .replace(/&amp;/g, '&#38;')
        .replace('<meta property="og:description" content="', "<meta data-x=1 content='")
        .replace(/(content='[^']*)" \/>/, "$1' property=og:description />");
      assert.notEqual(variant, html);
      await same(page, variant);
    });

    test(`${page}: a hidden login form on the content page, and whitespace between tags`, async () => {
      const variant = html
        .replace('<body', '<body data-y="1"')
        .replace(/<\/div>/, '</div>\n<div hidden><form id="login_form" method="post" action="/login/"></form></div>\n   ')
        .replace(/>\n</g, '>\n\n  \t<');
      await same(page, variant);
    });
  }

  test('profile page with 0 stories in the timeline preloader and intro tiles elsewhere still gives hours', async () => {
    const html = PROFILE_HTML.replace(/"timeline_list_feed_units":\{"edges":\[.*\],"page_info":\{[^}]*\}\}/, '"timeline_list_feed_units":{"edges":[],"page_info":{"end_cursor":null,"has_next_page":false}}');
    await sameProfile(ABOUT_HTML, html);
  });

  test('social-context URIs however URL parsing reads them: relative, a tab inside the word, other items first', async () => {
    const variant = ABOUT_HTML.replace(
      '{"text":{"text":"51K followers"},"uri":"https:\\/\\/www.socialnet.example\\/harborbistro\\/followers\\/"},{"text":{"text":"86 following"},"uri":"https:\\/\\/www.socialnet.example\\/harborbistro\\/following\\/"}',
      '{"text":{"text":"12 reviews"},"uri":"https:\\/\\/www.socialnet.example\\/harborbistro\\/reviews\\/"},{"text":{"text":"51K followers"},"uri":"\\/harborbistro\\/follo\\twers\\/"},{"text":{"text":"86 following"},"uri":"\\/harborbistro\\/following"}',
    );
    assert.notEqual(variant, ABOUT_HTML);
    await sameProfile(variant);
  });

  test('comments and other markup do not confuse the scan', async () => {
    const variant = PROFILE_HTML.replace('<body', '<!-- <script data-sjs type="application/json">{"define":[["CometRelayDocIds",[],{"ids":{}},1]]}</script> -->\n<style>p > a { color: red } </style><body');
    await samePosts(variant);
  });

  test('timeline NDJSON: with or without the prefix, CRLF, blank lines, leading whitespace, extra labelled lines', async () => {
    const lines = stripPrefix(TIMELINE_NDJSON).trimEnd().split('\n');
    const extra = JSON.stringify({ label: 'ProfileCometTimelineFeed_user$defer$ProfileCometTimelineFeed_user_something_else', path: ['node'], data: { x: 1 }, extensions: { is_final: false } });
    const variants = [
      lines.join('\n'),
      `for (;;);${lines.join('\n')}\n`,
      `  \n for (;;);${lines.join('\r\n')}\r\n`,
      `${lines[0]}\n\n${lines.slice(1, 3).join('\n\n')}\n${extra}\n\n${lines[3]}`,
      `for (;;);${[lines[0], extra, lines[1], lines[2], extra, lines[3]].join('\n')}`,
    ];
    for (const body of variants) {
      const { upstream } = fakeUpstream(contract({ graphql: () => body }));
      const result = await posts(createSocialnetExtractors(), {}, { profileId: PROFILE_ID, cursor: PROFILE_END_CURSOR }, upstream);
      assert.deepEqual(result.data, TIMELINE.data);
      assert.deepEqual(result.next, TIMELINE.next);
    }
  });

  test('timeline NDJSON: the first line with 0 or all edges (page sizes), unknown keys, escaping', async () => {
    const documents = stripPrefix(TIMELINE_NDJSON).trimEnd().split('\n').map((line) => JSON.parse(line) as { data: Record<string, Json>; label?: string });
    const [first, ...rest] = documents as [{ data: { node: { timeline_list_feed_units: { edges: Json[] } } } }, ...{ data: Json; label?: string }[]];
    const streamLabel = rest[0]?.label ?? '';
    const pageInfo = rest.at(-1);
    const streams = rest.slice(0, -1);
    // 0 edges in the first line: every story streamed.
    const noEdges = structuredClone(first);
    const movedEdge = noEdges.data.node.timeline_list_feed_units.edges.splice(0, 1)[0];
    const allStreamed = [noEdges, { label: streamLabel, path: ['node', 'timeline_list_feed_units', 'edges', 0], data: movedEdge }, ...streams, pageInfo];
    // All edges in the first line: no stream lines.
    const allFirst = structuredClone(first);
    allFirst.data.node.timeline_list_feed_units.edges.push(...streams.map((line) => line.data));
    for (const lines of [allStreamed, [allFirst, pageInfo]]) {
      for (const style of [{}, { slash: true, nonAscii: true }]) {
        const body = lines.map((line) => serialise(withUnknownKeys(line as Json), style)).join('\n');
        const { upstream } = fakeUpstream(contract({ graphql: () => body }));
        const result = await posts(createSocialnetExtractors(), {}, { profileId: PROFILE_ID, cursor: PROFILE_END_CURSOR }, upstream);
        assert.deepEqual(result.data, TIMELINE.data);
        assert.deepEqual(result.next, TIMELINE.next);
      }
    }
  });

  test('reels and replies JSON: prefix or not, compact or pretty, escaping, unknown keys, content type', async () => {
    for (const transform of [
      (text: string) => text,
      (text: string) => `for (;;);${JSON.stringify(JSON.parse(text))}`,
      (text: string) => `\n  for (;;);\n${serialise(withUnknownKeys(JSON.parse(text) as Json), { indent: 3, slash: true, nonAscii: true })}\n`,
      (text: string) => serialise(JSON.parse(text), { letters: true }),
    ]) {
      const reelsUp = fakeUpstream(contract({ graphql: (_, name) => (name === REELS_QUERY ? { body: transform(REELS_PAGE_JSON), headers: { 'content-type': 'application/json' } } : undefined) }));
      const reelsResult = await reels(createSocialnetExtractors(), REELS.next, reelsUp.upstream);
      assert.deepEqual(reelsResult.data, REELS_PAGE.data);
      const repliesUp = fakeUpstream(contract({ graphql: (_, name) => (name === REPLIES_QUERY ? transform(REPLIES_JSON) : undefined) }));
      const repliesResult = await replies(createSocialnetExtractors(), null, repliesUp.upstream);
      assert.deepEqual(repliesResult.data, REPLIES.data);
      assert.deepEqual(repliesResult.next, REPLIES.next);
    }
  });

  test('page sizes: one reel, one reply, one story per timeline page', async () => {
    const one = REELS_HTML.replace(/("aggregated_sn_shorts":\{"edges":\[)(\{"cursor".*?\}\}\}\}),\{"cursor".*\](,"page_info")/, '$1$2]$3');
    assert.notEqual(one, REELS_HTML);
    const { upstream } = fakeUpstream(contract({ pages: { '/harborbistro/reels/': one } }));
    const result = await reels(createSocialnetExtractors(), null, upstream);
    assert.deepEqual(result.data, { reels: (REELS.data.reels as unknown[]).slice(0, 1), reelCount: 1 });

    const replyPage = fakeUpstream(contract({ graphql: () => repliesLastPage() }));
    const replyResult = await replies(createSocialnetExtractors(), null, replyPage.upstream);
    assert.equal((replyResult.data.replies as unknown[]).length, 1);
    assert.equal(replyResult.data.replyCount, 3);

    const lines = stripPrefix(TIMELINE_NDJSON).trimEnd().split('\n');
    const timelineUp = fakeUpstream(contract({ graphql: () => `${lines[0]}\n${lines[3]}` }));
    const timelineResult = await posts(createSocialnetExtractors(), {}, { profileId: PROFILE_ID, cursor: PROFILE_END_CURSOR }, timelineUp.upstream);
    assert.deepEqual(timelineResult.data, { posts: (TIMELINE.data.posts as unknown[]).slice(0, 1), postCount: 1 });
  });

  test('a redirect from the id path to the vanity path (followed by the client) gives the same data', async () => {
    const { upstream, requests } = fakeUpstream((request) => {
      if (request.path === `/profile.php?id=${PROFILE_ID}`) return { path: '/harborbistro', body: PROFILE_HTML };
      return contract()(request);
    });
    const result = await posts(createSocialnetExtractors(), { url: `https://www.socialnet.example/profile.php?id=${PROFILE_ID}` }, null, upstream);
    assert.deepEqual(result.data, POSTS.data);
    assert.equal(requests.length, 1);
  });

  test('ids of mixed lengths (15 to 17 digits) are copied as strings', async () => {
    const html = PROFILE_HTML.replaceAll('100012345678901', '61552345678901234').replaceAll('1092345678901234', '109234567890123');
    const { upstream } = fakeUpstream(contract({ pages: { '/harborbistro': html } }));
    const result = await posts(createSocialnetExtractors(), { url: HARBOR_URL }, null, upstream);
    const post = (result.data.posts as { postId: string; topComments: { author: { id: string } }[] }[])[0];
    assert.equal(post?.postId, '109234567890123');
    assert.equal(post?.topComments[0]?.author.id, '61552345678901234');
  });
});

// ================================================================ building blocks

describe('building blocks', () => {
  test('page paths of 2.5 for vanity and id references', () => {
    const vanity = { kind: 'vanity', vanity: 'harborbistro' } as const;
    const id = { kind: 'id', id: PROFILE_ID } as const;
    assert.equal(pagePath(vanity, 'profile'), '/harborbistro');
    assert.equal(pagePath(vanity, 'reels'), '/harborbistro/reels/');
    assert.equal(pagePath(vanity, 'about'), '/harborbistro/about_contact_and_basic_info');
    assert.equal(pagePath(id, 'profile'), `/profile.php?id=${PROFILE_ID}`);
    assert.equal(pagePath(id, 'reels'), `/profile.php?id=${PROFILE_ID}&sk=reels_tab`);
    assert.equal(pagePath(id, 'about'), `/profile.php?id=${PROFILE_ID}&sk=about_contact_and_basic_info`);
  });

  test('count labels, likes, link shim, username', () => {
    assert.equal(countFromLabel('51K followers'), 51_000);
    assert.equal(countFromLabel('1.2M followers'), 1_200_000);
    assert.equal(countFromLabel('48,213 likes'), 48_213);
    assert.equal(countFromLabel('2B'), 2_000_000_000);
    assert.equal(countFromLabel('1.25K views'), 1_250);
    assert.equal(countFromLabel('followers'), null);
    assert.deepEqual(likesOf('A, B. 1 like · 3 talking about this. x'), { count: 1, label: '1 like' });
    assert.deepEqual(likesOf('A. 12.5K likes · 3 talking about this · 9 were here. x'), { count: 12_500, label: '12.5K likes' });
    assert.equal(likesOf('Jane Doe is on socialnet.'), null);
    assert.equal(likesOf(null), null);
    assert.equal(unshim('https://www.socialnet.example/l.php?u=https%3A%2F%2Fharborbistro.example%2F&h=AT1'), 'https://harborbistro.example/');
    assert.equal(unshim('https://m.socialnet.example/l.php?u=https%3A%2F%2Fa.example%2F%3Fq%3D1%26r%3D2&h=AT'), 'https://a.example/?q=1&r=2');
    assert.equal(unshim('https://other.example/l.php?u=https%3A%2F%2Fa.example%2F'), 'https://other.example/l.php?u=https%3A%2F%2Fa.example%2F');
    assert.equal(unshim('https://www.socialnet.example/maps/place/?id=1'), 'https://www.socialnet.example/maps/place/?id=1');
    assert.equal(usernameOf('https://www.socialnet.example/HarborBistro'), 'HarborBistro');
    assert.equal(usernameOf(`https://www.socialnet.example/profile.php?id=${PROFILE_ID}`), null);
    assert.equal(usernameOf(`https://www.socialnet.example/people/Jane-Doe/${PROFILE_ID}`), null);
  });

  test('the page scan agrees with htmlparser2 on the fixtures and their variants', () => {
    const reference = (html: string) => {
      const found = { title: null as string | null, meta: new Map<string, string>(), markers: new Set<string>(), eqmc: null as string | null, blocks: [] as string[] };
      let capture: string | null = null;
      let text = '';
      const parser = new Parser(
        {
          onopentag(name, attributes) {
            if (attributes.id !== undefined && ['content_gate', 'content_unavailable', 'login_form'].includes(attributes.id)) found.markers.add(attributes.id);
            if (name === 'meta') {
              const key = attributes.property ?? attributes.name;
              if (key !== undefined && attributes.content !== undefined && !found.meta.has(key)) found.meta.set(key, attributes.content);
            }
            capture = name === 'title' && found.title === null ? 'title' : name === 'script' ? (attributes.id === '__eqmc' ? 'eqmc' : 'data-sjs' in attributes ? 'sjs' : null) : null;
            text = '';
          },
          ontext(chunk) {
            if (capture !== null) text += chunk;
          },
          onclosetag() {
            if (capture === 'title') found.title = text.trim();
            else if (capture === 'eqmc') found.eqmc ??= text;
            else if (capture === 'sjs') found.blocks.push(text);
            capture = null;
          },
        },
        { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
      );
      parser.write(html);
      parser.end();
      return found;
    };
    const variants = [
      PROFILE_HTML, REELS_HTML, ABOUT_HTML, GATED_HTML, HOME_HTML, LOGIN_WALL_HTML, NOT_FOUND_HTML, UNAVAILABLE_HTML,
      PROFILE_HTML.replace(/&#xb7;/g, '&middot;').replace('<title>', '<TITLE data-a=">">').replace('</title>', '</TITLE >'),
      GATED_HTML.replace(/"/g, "'").replace('&#039;', '&apos;'),
      '<html><head><meta name=x content=a&amp;b&lt;&#x41;&#65;&copy;&notin;></head><body><p id=login_form class=a/></body></html>',
    ];
    for (const html of variants) {
      const ours = scanPage(html);
      const theirs = reference(html);
      assert.equal(ours.title, theirs.title);
      assert.deepEqual([...ours.meta], [...theirs.meta]);
      assert.deepEqual(new Set(ours.markers.keys()), theirs.markers);
      assert.equal(ours.eqmc, theirs.eqmc);
      assert.deepEqual(ours.blocks, theirs.blocks);
    }
  });

  test('attribute values are decoded as HTML decodes them', () => {
    for (const [raw, decoded] of [
      ['a &amp; b', 'a & b'],
      ['x&#xb7;y&#183;z&middot;', 'x·y·z·'],
      ['&copy;&hellip;&notin;', '©…∉'],
      ['Q&A=1&b', 'Q&A=1&b'],
      ['&#x1F980;&#128;', '🦀€'],
      ['plain', 'plain'],
    ]) {
      assert.equal(scanPage(`<meta name=x content="${raw}">`).meta.get('x'), decoded);
    }
  });

  test('the GraphQL form body is what URLSearchParams makes of the fields, in order', () => {
    const session: SocialnetSession = {
      lsd: 'AVq-3_zZ',
      docIds: {
        ProfileCometTimelineFeedRefetchQuery: '9876543210 (x)~',
        ProfileCometAppCollectionReelsRendererPaginationQuery: '1',
        Depth1CommentsListPaginationQuery: '2',
      },
      obtainedAt: 0,
    };
    const name = 'ProfileCometTimelineFeedRefetchQuery';
    const variables = { cursor: "a+b/c= d!'()*~-._%", text: 'é€😀\ud800"<>&', id: PROFILE_ID, count: 3, nothing: null };
    const request = graphqlRequest(session, name, variables, 'https://www.socialnet.example');
    const req = new URLSearchParams(request.body).get('__req') ?? '';
    const reference = new URLSearchParams({
      av: '0',
      __user: '0',
      __a: '1',
      __req: req,
      __comet_req: '15',
      lsd: session.lsd,
      sn_api_caller_class: 'RelayModern',
      sn_api_req_friendly_name: name,
      variables: JSON.stringify({ ...variables, ...RELAY_PROVIDER_FLAGS }),
      server_timestamps: 'true',
      doc_id: session.docIds[name],
    });
    assert.match(req, /^[0-9a-z]{1,2}$/);
    assert.equal(request.body, reference.toString());
  });

  test('unshim reads l.php however URL parsing spells it, and leaves anything else alone', () => {
    assert.equal(unshim('https://www.socialnet.example/l.p\thp?u=https%3A%2F%2Fa.example%2F'), 'https://a.example/');
    assert.equal(unshim('https://www.socialnet.example/x/../l.php?u=b'), 'b');
    assert.equal(unshim('https://www.socialnet.example/L.php?u=b'), 'https://www.socialnet.example/L.php?u=b');
    assert.equal(unshim('https://www.socialnet.example/l.php?h=1'), 'https://www.socialnet.example/l.php?h=1');
    assert.equal(unshim('https://harborbistro.example/menu'), 'https://harborbistro.example/menu');
    assert.equal(unshim('not a url l.php'), 'not a url l.php');
    // the query read as URLSearchParams reads it
    assert.equal(unshim('https://m.socialnet.example/l.php?x=1&&u=a%2Bb+c&u=second#frag'), 'a+b c');
    assert.equal(unshim('http://socialnet.example/l.php?%75=x'), 'x');
    assert.equal(unshim('https://www.socialnet.example/l.php?u=%C3%A9%zz'), 'é%zz');
    assert.equal(unshim('https://www.socialnet.example/l.php?u=%FF'), '\ufffd');
    assert.equal(unshim('https://www.socialnet.example/l.php?u'), '');
    assert.equal(unshim('https://www.socialnet.example/l.php?u=a b'), 'a b');
    assert.equal(unshim('https://www.socialnet.example/l.php?u=é'), 'é');
  });

  test('a missing member is named by its whole path, list indexes included', () => {
    const document = root({ data: { edges: [{ node: {} }, { node: { id: 7 } }] } }, 'timeline line 1');
    const [, second] = document.node('data').list('edges');
    assert.throws(() => second?.node('node').get('id', string), (error: unknown) => {
      assert.ok(error instanceof UnrecognisedData);
      assert.match(error.message, /^timeline line 1\.data\.edges\[1\]\.node\.id: expected a string, found a number/);
      return true;
    });
    assert.throws(() => document.list('data.edges.0.node.more'), /timeline line 1\.data\.edges\[0\]\.node\.more: expected an array, found nothing$/);
    assert.deepEqual(document.listOrEmpty('data.edges.0.node.more'), []);
    assert.equal(document.orNull('data.edges.1.node.id', integer), 7);
    assert.equal(document.orNull('data.edges.0.node.toString', string), null);
  });

  test('stripPrefix removes leading whitespace and one for (;;);', () => {
    assert.equal(stripPrefix('for (;;);{"a":1}'), '{"a":1}');
    assert.equal(stripPrefix('  \nfor (;;);{"a":1}'), '{"a":1}');
    assert.equal(stripPrefix('{"a":1}'), '{"a":1}');
    assert.equal(stripPrefix('for (;;);'), '');
  });
});
