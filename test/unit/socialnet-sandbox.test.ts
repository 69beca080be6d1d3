// The socialnet sandbox upstream against src/platforms/socialnet/README.md: page structures (data-sjs
// blocks, preloaders with the fields the mapping tables read), sessions (rotation, validity,
// stale values), GraphQL checks and framing, pagination to the end, redirects, gated,
// unavailable and not-found pages, blocks, faults, determinism, escaping, and every catalogue
// entry's documented outcome through a small client that follows the contract's flows.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { SandboxPlatform, SandboxResponse } from '../../sandbox/common.ts';
import { createSocialnetSandbox, socialnetSandbox } from '../../sandbox/platforms/socialnet.ts';
import { ACCOUNTS, accountNamed } from '../../sandbox/platforms/socialnet/accounts.ts';
import { commentFeedbackId, expansionTokenOf, legacyIdOf, postIdOf, profileIdOf } from '../../sandbox/platforms/socialnet/ids.ts';
import { DOC_ID_ROTATION, VALIDITY_MS } from '../../sandbox/platforms/socialnet/session.ts';
import { parseSocialnetUrl } from '../../src/platforms/socialnet/urls.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

// ---------------------------------------------------------------------------------------
// Transport: calls the handler directly, counting attempts per exact request like the server

const NAV = {
  'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36',
  'accept-language': 'en-US,en;q=0.9',
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
  'sec-fetch-mode': 'navigate',
  'sec-fetch-dest': 'document',
  'sec-fetch-site': 'none',
};
const API = {
  'user-agent': NAV['user-agent'],
  'accept-language': 'en-US,en;q=0.9',
  accept: '*/*',
  'content-type': 'application/x-www-form-urlencoded',
  'sec-fetch-mode': 'cors',
  'sec-fetch-dest': 'empty',
  'sec-fetch-site': 'same-origin',
};

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  delayMs: number;
  reset: boolean;
}

class Transport {
  readonly platform: SandboxPlatform;
  readonly seed: string;
  readonly #attempts = new Map<string, number>();
  maxDelay = 0;

  constructor(platform: SandboxPlatform = createSocialnetSandbox(), seed = 'test') {
    this.platform = platform;
    this.seed = seed;
  }

  async send(method: string, target: string, headers: Record<string, string>, body = ''): Promise<Answer> {
    const url = new URL(target, 'http://sandbox.invalid');
    const key = `${method} ${url.pathname}${url.search} ${body}`;
    const attempt = (this.#attempts.get(key) ?? 0) + 1;
    this.#attempts.set(key, attempt);
    const response: SandboxResponse = await this.platform.handle(
      { method, path: url.pathname, query: url.searchParams, headers, body },
      { seed: this.seed, attempt, slowMs: 1_234 },
    );
    if ('reset' in response) return { status: 0, headers: {}, body: '', delayMs: 0, reset: true };
    this.maxDelay = Math.max(this.maxDelay, response.delayMs ?? 0);
    return { status: response.status, headers: response.headers ?? {}, body: String(response.body), delayMs: response.delayMs ?? 0, reset: false };
  }

  page(target: string, headers: Record<string, string> = NAV): Promise<Answer> {
    return this.send('GET', target, headers);
  }
}

// ---------------------------------------------------------------------------------------
// HTML reading

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", middot: '·' };
const decodeEntities = (text: string): string =>
  text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (match, entity: string) => {
    if (entity[0] !== '#') return ENTITIES[entity] ?? match;
    return String.fromCodePoint(entity[1]!.toLowerCase() === 'x' ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10));
  });

function attributes(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const match of text.matchAll(/([^\s=/]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g)) {
    out[match[1]!.toLowerCase()] = match[2] ?? match[3] ?? match[4] ?? '';
  }
  return out;
}

const scripts = (html: string) =>
  [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)].map((match) => ({ attributes: attributes(match[1]!), text: match[2]! }));

/** The data-sjs blocks' texts. */
const sjsTexts = (html: string): string[] =>
  scripts(html)
    .filter((script) => 'data-sjs' in script.attributes && script.attributes.type === 'application/json')
    .map((script) => script.text);

const sjsBlocks = (html: string): Json[] => sjsTexts(html).map((text) => JSON.parse(text) as Json);

/** Preloader name -> result, scanning every block and entry. */
function preloaders(html: string): [string, Json][] {
  const out: [string, Json][] = [];
  for (const block of sjsBlocks(html)) {
    for (const entry of (block.require ?? []) as unknown[][]) {
      if (entry[0] !== 'ScheduledServerJS' || entry[1] !== 'handle') continue;
      for (const element of entry[3] as Json[]) {
        for (const inner of (element.__bbox?.require ?? []) as unknown[][]) {
          if (inner[0] !== 'RelayPrefetchedStreamCache' || inner[1] !== 'next') continue;
          const [name, payload] = inner[3] as [string, Json];
          assert.equal(payload.__bbox.complete, true);
          out.push([name, payload.__bbox.result as Json]);
        }
      }
    }
  }
  return out;
}

const PREFIX = {
  header: 'adp_ProfileCometHeaderQueryRelayPreloader_',
  timeline: 'adp_ProfileCometTimelineFeedQueryRelayPreloader_',
  tiles: 'adp_ProfilePlusCometLoggedOutRootQueryRelayPreloader_',
  reels: 'adp_ProfileCometAppCollectionReelsRendererQueryRelayPreloader_',
  about: 'adp_ProfileCometAboutAppSectionQueryRelayPreloader_',
  login: 'adp_useCometLogInFormQueryRelayPreloader_',
};

/** The result of the preloader with this prefix; checks the suffix and that it appears once. */
function preloader(html: string, prefix: string): Json | null {
  const found = preloaders(html).filter(([name]) => name.startsWith(prefix));
  if (found.length === 0) return null;
  assert.equal(found.length, 1, `${prefix} appears once`);
  assert.match(found[0]![0].slice(prefix.length), /^[0-9a-f]{8,32}$/);
  return found[0]![1];
}

function docIds(html: string): Record<string, string> | null {
  for (const block of sjsBlocks(html)) {
    for (const entry of (block.define ?? []) as unknown[][]) if (entry[0] === 'CometRelayDocIds') return (entry[2] as Json).ids as Record<string, string>;
  }
  return null;
}

function lsdOf(html: string): string | null {
  const script = scripts(html).find((candidate) => candidate.attributes.id === '__eqmc');
  return script ? ((JSON.parse(script.text) as Json).l as string) : null;
}

function meta(html: string, key: string): string | null {
  for (const match of html.matchAll(/<meta\b([^>]*?)\/?>/g)) {
    const attrs = attributes(match[1]!);
    if ((attrs.property ?? attrs.name) === key) return decodeEntities(attrs.content ?? '');
  }
  return null;
}

const title = (html: string): string | null => {
  const match = /<title>([\s\S]*?)<\/title>/.exec(html);
  return match ? decodeEntities(match[1]!) : null;
};
const hasId = (html: string, id: string): boolean => new RegExp(`\\bid=["']?${id}["' >]`).test(html);

// ---------------------------------------------------------------------------------------
// GraphQL

const FRIENDLY = {
  timeline: 'ProfileCometTimelineFeedRefetchQuery',
  reels: 'ProfileCometAppCollectionReelsRendererPaginationQuery',
  replies: 'Depth1CommentsListPaginationQuery',
} as const;
const FLAGS = {
  __relay_internal__pv__CometUFIIsRTAEnabledrelayprovider: false,
  __relay_internal__pv__IsWorkUserrelayprovider: false,
  __relay_internal__pv__CometUFIReactionsEnableShortNamerelayprovider: false,
};
const timelineVars = (id: string, cursor: string | null, count = 3): Json => ({
  afterTime: null, beforeTime: null, count, cursor, feedLocation: 'TIMELINE', feedbackSource: 0, focusCommentID: null,
  memorializedSplitTimeFilter: null, omitPinnedPost: true, postedBy: null, privacy: null, privacySelectorRenderLocation: 'COMET_STREAM',
  renderLocation: 'timeline', scale: 1, stream_count: 1, taggedInOnly: null, useDefaultActor: false, id, ...FLAGS,
});
const reelsVars = (id: string, cursor: string | null, count = 10): Json => ({
  count, cursor, feedLocation: 'COMET_MEDIA_VIEWER', feedbackSource: 65, focusCommentID: null, renderLocation: null, scale: 1, useDefaultActor: false, id, ...FLAGS,
});
const repliesVars = (id: string, expansionToken: string, cursor: string | null): Json => ({
  clientKey: null, expansionToken, feedLocation: 'POST_PERMALINK_DIALOG', focusCommentID: null, repliesAfterCount: null,
  repliesAfterCursor: cursor, repliesBeforeCount: null, repliesBeforeCursor: null, scale: 1, useDefaultActor: false, id, ...FLAGS,
});

interface Session {
  lsd: string;
  ids: Record<string, string>;
}

let requestCounter = 0;
function graphqlBody(friendly: string, variables: Json, session: Session, overrides: Record<string, string> = {}): string {
  requestCounter += 1;
  return new URLSearchParams({
    av: '0', __user: '0', __a: '1', __req: requestCounter.toString(36), __comet_req: '15', lsd: session.lsd,
    sn_api_caller_class: 'RelayModern', sn_api_req_friendly_name: friendly, variables: JSON.stringify(variables),
    server_timestamps: 'true', doc_id: session.ids[friendly] ?? '', ...overrides,
  }).toString();
}

async function graphql(transport: Transport, friendly: string, variables: Json, session: Session, headers: Record<string, string> = {}, overrides: Record<string, string> = {}) {
  const body = graphqlBody(friendly, variables, session, overrides);
  return transport.send('POST', '/api/graphql/', { ...API, 'x-sn-lsd': session.lsd, 'x-sn-friendly-name': friendly, ...headers }, body);
}

/** Strips `for (;;);`; the timeline's NDJSON lines or the single document. */
function parseGraphql(body: string, timeline: boolean): Json[] {
  let text = body.trimStart();
  if (text.startsWith('for (;;);')) text = text.slice('for (;;);'.length);
  if (!timeline) return [JSON.parse(text) as Json];
  return text.split(/\r?\n/).filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as Json);
}

/** A timeline whose first line is JSON and whose last line is not: cut off. */
function isCutOff(body: string): boolean {
  const lines = body.trimStart().replace(/^for \(;;\);/, '').split(/\r?\n/).filter((line) => line.trim() !== '');
  const parses = (line: string) => {
    try {
      JSON.parse(line);
      return true;
    } catch {
      return false;
    }
  };
  return lines.length > 1 && parses(lines[0]!) && lines.slice(1, -1).every(parses) && !parses(lines.at(-1)!);
}

const criticalCode = (document: Json): number | null =>
  ((document.errors ?? []) as Json[]).find((error) => error.severity === 'CRITICAL')?.code ?? null;

async function homeSession(transport: Transport): Promise<Session> {
  const home = await transport.page('/');
  const lsd = lsdOf(home.body);
  const ids = docIds(home.body);
  assert.ok(lsd && ids, 'home page carries a session');
  return { lsd, ids };
}

/** Timeline page from NDJSON lines. */
function timelinePage(lines: Json[]): { node: Json | null; stories: Json[]; pageInfo: Json | null } {
  const [first, ...rest] = lines;
  assert.ok(first && first.label === undefined, 'first line has no label');
  const node = first.data?.node ?? null;
  if (node === null) return { node: null, stories: [], pageInfo: null };
  const stories = ((node.timeline_list_feed_units.edges ?? []) as Json[]).map((edge) => edge.node as Json);
  let pageInfo: Json | null = null;
  for (const [position, line] of rest.entries()) {
    assert.equal(pageInfo, null, 'page_info is the last line');
    if ((line.label as string).includes('$stream$')) stories.push(line.data.node as Json);
    else if ((line.label as string).endsWith('$page_info')) pageInfo = line.data.page_info as Json;
    assert.ok(position >= 0);
  }
  return { node, stories, pageInfo };
}

// ---------------------------------------------------------------------------------------
// A small client that follows the platform's flows (src/platforms/socialnet/README.md)

type Outcome =
  | { kind: 'content'; data: Json }
  | { kind: 'gated'; html: string }
  | { kind: 'not-found' }
  | { kind: 'blocked'; why: string }
  | { kind: 'bad-request' }
  | { kind: 'transient' }
  | { kind: 'unrecognised'; why: string };

class Flows {
  readonly transport: Transport;
  session: Session | null = null;
  staleRetries = 0;
  /** GraphQL answers classified transient and asked again. */
  transientAnswers = 0;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  /** One request with retries of transient failures (5xx, reset). */
  async #send(method: string, target: string, headers: Record<string, string>, body?: string): Promise<Answer | null> {
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const answer = await this.transport.send(method, target, headers, body);
      if (!answer.reset && answer.status < 500) return answer;
    }
    return null;
  }

  /** GET a page, follow redirects, classify; keeps the session of a content page. */
  async page(path: string, kind: 'profile' | 'reels' | 'about' | 'home'): Promise<Outcome> {
    let target = path;
    for (let hop = 0; hop <= 5; hop += 1) {
      const answer = await this.#send('GET', target, NAV);
      if (answer === null) return { kind: 'transient' };
      if (answer.status === 429) return { kind: 'blocked', why: '429' };
      if (answer.status >= 300 && answer.status < 400) {
        const location = answer.headers.location ?? '';
        const url = new URL(location, 'https://www.socialnet.example/');
        if (!['www.socialnet.example', 'socialnet.example', 'm.socialnet.example', 'web.socialnet.example'].includes(url.hostname)) return { kind: 'blocked', why: 'off-platform' };
        if (/^\/(login|checkpoint|recover)/.test(url.pathname)) return { kind: 'blocked', why: url.pathname };
        target = `${url.pathname}${url.search}`;
        continue;
      }
      if (answer.status === 404) return { kind: 'not-found' };
      if (answer.status !== 200) return { kind: 'blocked', why: String(answer.status) };
      const html = answer.body;
      if (hasId(html, 'content_gate')) return { kind: 'gated', html };
      if (hasId(html, 'content_unavailable')) return { kind: 'not-found' };
      const lsd = lsdOf(html);
      const ids = docIds(html);
      if (kind === 'home') {
        if (lsd && ids) {
          this.session = { lsd, ids };
          return { kind: 'content', data: {} };
        }
        return { kind: 'blocked', why: 'home without session' };
      }
      const header = preloader(html, PREFIX.header);
      if (header) {
        const needed = kind === 'profile' ? [PREFIX.timeline, PREFIX.tiles] : kind === 'reels' ? [PREFIX.reels] : [PREFIX.about];
        const data: Json = { html, header };
        for (const prefix of needed) {
          const result = preloader(html, prefix);
          if (!result) return { kind: 'unrecognised', why: `missing ${prefix}` };
          data[prefix] = result;
        }
        if (lsd && ids) this.session = { lsd, ids };
        return { kind: 'content', data };
      }
      if (title(html) === 'socialnet - log in or sign up' || hasId(html, 'login_form')) return { kind: 'blocked', why: 'login wall' };
      return { kind: 'unrecognised', why: 'no marker' };
    }
    return { kind: 'blocked', why: 'too many redirects' };
  }

  /** A GraphQL query with the session refresh of README.md's "GraphQL", classified as its "Signals" say. */
  async graphql(friendly: string, variables: Json): Promise<Outcome> {
    const timeline = friendly === FRIENDLY.timeline;
    for (let round = 0; round < 2; round += 1) {
      if (this.session === null) {
        const home = await this.page('/', 'home');
        if (home.kind !== 'content') return home;
      }
      const session = this.session!;
      const body = graphqlBody(friendly, variables, session);
      // an empty body after `for (;;);`, or a timeline cut off or without its page_info
      // line, is transient: the same request is sent again, as for a 5xx.
      let answer: Answer | null = null;
      let documents: Json[] = [];
      for (let attempt = 0; attempt < 5; attempt += 1) {
        answer = await this.#send('POST', '/api/graphql/', { ...API, 'x-sn-lsd': session.lsd, 'x-sn-friendly-name': friendly }, body);
        if (answer === null || answer.status !== 200) break;
        const stripped = answer.body.trim().replace(/^for \(;;\);/, '').trim();
        if (stripped === '') {
          this.transientAnswers += 1;
          answer = null;
          continue;
        }
        try {
          documents = parseGraphql(answer.body, timeline);
        } catch {
          if (title(answer.body) === 'socialnet - log in or sign up') return { kind: 'blocked', why: 'login wall' };
          if (timeline && isCutOff(answer.body)) {
            this.transientAnswers += 1;
            answer = null;
            continue;
          }
          return { kind: 'unrecognised', why: 'not JSON' };
        }
        if (timeline && criticalCode(documents[0]!) === null && documents[0]!.data?.node !== null && timelinePage(documents).pageInfo === null) {
          this.transientAnswers += 1;
          answer = null;
          continue;
        }
        break;
      }
      if (answer === null) return { kind: 'transient' };
      if (answer.status !== 200) return { kind: 'blocked', why: String(answer.status) };
      const code = criticalCode(documents[0]!);
      if (code === 1357004 || code === 1675030) {
        this.session = null;
        this.staleRetries += 1;
        continue;
      }
      if (code === 1675004) return { kind: 'blocked', why: 'graphql rate limit' };
      if (code === 1675012) return { kind: 'bad-request' };
      if (code !== null) return { kind: 'unrecognised', why: `error ${code}` };
      if (documents[0]!.data?.node === null) return { kind: 'not-found' };
      if (timeline) {
        const page = timelinePage(documents);
        if (page.pageInfo === null) return { kind: 'transient' };
        return { kind: 'content', data: { items: page.stories, pageInfo: page.pageInfo } };
      }
      const node = documents[0]!.data.node as Json;
      if (friendly === FRIENDLY.reels) return { kind: 'content', data: { items: node.aggregated_sn_shorts.edges, pageInfo: node.aggregated_sn_shorts.page_info } };
      return { kind: 'content', data: { items: node.replies_connection.edges, pageInfo: node.replies_connection.page_info, node } };
    }
    return { kind: 'blocked', why: 'stale session after refresh' };
  }
}

const pathOf = (url: string, tab: 'profile' | 'reels' | 'about'): string => {
  const parsed = parseSocialnetUrl(url);
  assert.ok(parsed.ok, `valid url ${url}`);
  const ref = parsed.reference;
  if (ref.kind === 'vanity') return tab === 'profile' ? `/${ref.vanity}` : tab === 'reels' ? `/${ref.vanity}/reels/` : `/${ref.vanity}/about_contact_and_basic_info`;
  return tab === 'profile' ? `/profile.php?id=${ref.id}` : tab === 'reels' ? `/profile.php?id=${ref.id}&sk=reels_tab` : `/profile.php?id=${ref.id}&sk=about_contact_and_basic_info`;
};

/** HTTP status the API would answer for an outcome. */
const apiStatus = (outcome: Outcome): number =>
  ({ content: 200, gated: 404, 'not-found': 404, blocked: 502, 'bad-request': 400, transient: 502, unrecognised: 502 })[outcome.kind];

const apiCode = (outcome: Outcome): string | undefined =>
  ({ content: undefined, gated: 'NOT_FOUND', 'not-found': 'NOT_FOUND', blocked: 'UPSTREAM_BLOCKED', 'bad-request': 'BAD_REQUEST', transient: 'UPSTREAM_BLOCKED', unrecognised: 'UPSTREAM_UNRECOGNISED' })[outcome.kind];
const failed = (outcome: Outcome): ApiResult => ({ status: apiStatus(outcome), code: apiCode(outcome) });
const NO_POSTS: ApiResult = { status: 404, code: 'NOT_FOUND' };

interface ApiResult {
  status: number;
  code?: string;
  items?: number;
  gated?: boolean;
  hasNext?: boolean;
}

/** Runs one API call as the service would, then follows up to `follow` next pages. */
async function runApiCall(flows: Flows, endpoint: string, query: URLSearchParams, follow = 1): Promise<ApiResult> {
  const url = query.get('url');
  const pageInfoNext = (pageInfo: Json | null) => pageInfo !== null && pageInfo.has_next_page === true && typeof pageInfo.end_cursor === 'string' && pageInfo.end_cursor !== '';
  const followPages = async (items: number, pageInfo: Json, next: (cursor: string) => Promise<Outcome>): Promise<ApiResult> => {
    const hasNext = pageInfoNext(pageInfo);
    for (let page = 0; page < follow && pageInfoNext(pageInfo); page += 1) {
      const outcome = await next(pageInfo.end_cursor as string);
      if (outcome.kind !== 'content') return failed(outcome);
      items += outcome.data.items.length as number;
      pageInfo = outcome.data.pageInfo as Json;
    }
    return { status: 200, items, hasNext };
  };

  if (endpoint === '/v1/socialnet/profile/posts') {
    let profileId: string;
    let pageInfo: Json;
    let items: number;
    if (url !== null) {
      const outcome = await flows.page(pathOf(url, 'profile'), 'profile');
      if (outcome.kind !== 'content') return failed(outcome);
      const user = outcome.data[PREFIX.timeline].data.user as Json;
      items = user.timeline_list_feed_units.edges.length;
      if (items === 0) return NO_POSTS;
      profileId = user.id as string;
      pageInfo = user.timeline_list_feed_units.page_info as Json;
    } else {
      profileId = query.get('pageId')!;
      const outcome = await flows.graphql(FRIENDLY.timeline, timelineVars(profileId, null));
      if (outcome.kind !== 'content') return failed(outcome);
      items = outcome.data.items.length;
      if (items === 0) return NO_POSTS;
      pageInfo = outcome.data.pageInfo as Json;
    }
    return followPages(items, pageInfo, (cursor) => flows.graphql(FRIENDLY.timeline, timelineVars(profileId, cursor)));
  }

  if (endpoint === '/v1/socialnet/profile/reels') {
    const outcome = await flows.page(pathOf(url!, 'reels'), 'reels');
    if (outcome.kind !== 'content') return failed(outcome);
    const node = outcome.data[PREFIX.reels].data.node as Json;
    const items = node.aggregated_sn_shorts.edges.length as number;
    const pageInfo = node.aggregated_sn_shorts.page_info as Json;
    return followPages(items, pageInfo, (cursor) => flows.graphql(FRIENDLY.reels, reelsVars(node.id as string, cursor)));
  }

  if (endpoint === '/v1/socialnet/post/comment/replies') {
    const feedbackId = query.get('feedbackId')!;
    const token = query.get('expansionToken')!;
    const outcome = await flows.graphql(FRIENDLY.replies, repliesVars(feedbackId, token, null));
    if (outcome.kind !== 'content') return failed(outcome);
    assert.equal(outcome.data.node.id, feedbackId);
    return followPages(outcome.data.items.length as number, outcome.data.pageInfo as Json, (cursor) => flows.graphql(FRIENDLY.replies, repliesVars(feedbackId, token, cursor)));
  }

  assert.equal(endpoint, '/v1/socialnet/profile');
  const about = await flows.page(pathOf(url!, 'about'), 'about');
  if (about.kind === 'gated') return query.get('allowGated') === 'false' ? NO_POSTS : { status: 200, gated: true };
  if (about.kind !== 'content') return failed(about);
  if (query.get('businessHours') !== 'false') {
    const profilePage = await flows.page(pathOf(url!, 'profile'), 'profile');
    if (profilePage.kind !== 'content') return failed(profilePage);
  }
  return { status: 200, gated: false };
}

// ---------------------------------------------------------------------------------------
// Shapes the mapping tables read

const has = (object: Json, path: string): boolean => {
  let current: unknown = object;
  for (const key of path.split('.')) {
    if (current === null || typeof current !== 'object' || !(key in (current as Json))) return false;
    current = (current as Json)[key];
  }
  return true;
};
const get = (object: Json, path: string): any => path.split('.').reduce<any>((current, key) => current?.[key], object); // eslint-disable-line @typescript-eslint/no-explicit-any
const assertPaths = (object: Json, paths: string[], what: string) => {
  for (const path of paths) assert.ok(has(object, path), `${what}: ${path}`);
};
const ID = /^[1-9][0-9]{14,16}$/;
const F_PATH = 'comet_sections.feedback.story.story_ufi_container.story.feedback_context.feedback_target_with_context.comet_ufi_summary_and_actions_renderer.feedback';

function checkComment(comment: Json, depth: number) {
  assert.equal(comment.__typename, 'Comment');
  assert.equal(comment.depth, depth);
  assertPaths(comment, ['id', 'legacy_snid', 'created_time', 'body', 'author.__typename', 'author.id', 'author.name', 'author.short_name', 'author.url',
    'author.is_verified', 'author.gender', 'author.profile_picture_depth_0.uri', 'url', 'is_author_original_poster', 'attachments',
    'feedback.id', 'feedback.expansion_info.expansion_token', 'feedback.replies_fields.total_count', 'feedback.reactors.count', 'feedback.top_reactions.edges'], 'comment');
  assert.match(comment.legacy_snid, ID);
  assert.ok(['User', 'Page'].includes(comment.author.__typename));
  assert.ok(['MALE', 'FEMALE', 'NEUTER', 'UNKNOWN'].includes(comment.author.gender));
  if (comment.author.__typename === 'Page') assert.equal(comment.author.gender, 'NEUTER');
  assert.ok(comment.body === null || typeof comment.body.text === 'string');
  assert.equal(Buffer.from(comment.feedback.id, 'base64').toString().startsWith('feedback:'), true);
  for (const attachment of comment.attachments as Json[]) assert.ok(has(attachment, 'style_type_renderer.__typename'));
  checkReactions(comment.feedback.top_reactions);
}

function checkReactions(topReactions: Json) {
  const edges = topReactions.edges as Json[];
  assert.ok(edges.length <= 3);
  for (const edge of edges) {
    assert.ok(['Like', 'Love', 'Care', 'Haha', 'Wow', 'Sad', 'Angry'].includes(edge.node.localized_name));
    assert.ok(Number.isInteger(edge.reaction_count));
  }
  for (let i = 1; i < edges.length; i += 1) assert.ok(edges[i - 1]!.reaction_count >= edges[i]!.reaction_count, 'largest first');
}

function checkStory(story: Json, nested = false): string {
  assert.equal(story.__typename, 'Story');
  assertPaths(story, ['id', 'post_id', 'creation_time', 'permalink_url', 'actors', 'attached_story', 'attachments', 'comet_sections.context_layout.story.comet_sections.actor_photo.story.actors',
    'comet_sections.context_layout.story.comet_sections.title', `${F_PATH}.reaction_count.count`, `${F_PATH}.top_reactions.edges`,
    `${F_PATH}.comment_rendering_instance.comments.total_count`, `${F_PATH}.share_count.count`, `${F_PATH}.video_view_count`, `${F_PATH}.i18n_video_view_count`], 'story');
  assert.match(story.post_id, ID);
  assert.ok(Number.isInteger(story.creation_time));
  assertPaths(story.actors[0], ['id', 'name', 'url'], 'actor');
  assert.ok(typeof get(story, 'comet_sections.context_layout.story.comet_sections.actor_photo.story.actors.0.profile_picture.uri') === 'string');
  const content = story.comet_sections.content;
  assert.ok(content === null || content.story.message === null || typeof content.story.message.text === 'string');
  const feedback = get(story, F_PATH) as Json;
  checkReactions(feedback.top_reactions);
  const edges = (feedback.comment_rendering_instance.comments.edges ?? []) as Json[];
  assert.ok(edges.length <= 2);
  if (nested) assert.equal(edges.length, 0);
  for (const edge of edges) checkComment(edge.node, 0);
  const styles = (story.attachments as Json[]).map((attachment) => attachment.styles.__typename as string);
  const media = (story.attachments as Json[]).find((attachment) => /(Photo|Album|Video)StyleRenderer$/.test(attachment.styles.__typename));
  if (media?.styles.__typename === 'StoryAttachmentPhotoStyleRenderer') assertPaths(media.styles.attachment.media, ['id', 'photo_image.uri', 'photo_image.width', 'photo_image.height'], 'photo');
  if (media?.styles.__typename === 'StoryAttachmentAlbumStyleRenderer') {
    const album = media.styles.attachment.all_subattachments;
    assert.ok(album.count >= album.nodes.length);
    for (const node of album.nodes as Json[]) assertPaths(node, ['media.viewer_image.uri', 'media.viewer_image.width'], 'album node');
  }
  if (media?.styles.__typename === 'StoryAttachmentVideoStyleRenderer') {
    assertPaths(media.styles.attachment.media, ['id', 'playable_url', 'width', 'height', 'length_in_second', 'preferred_thumbnail.image.uri',
      'videoDeliveryLegacyFields.browser_native_hd_url', 'videoDeliveryLegacyFields.browser_native_sd_url', 'soundtrack_info'], 'video');
    assert.ok(Number.isInteger(feedback.video_view_count) && typeof feedback.i18n_video_view_count === 'string');
  }
  const share = (story.attachments as Json[]).find((attachment) => attachment.styles.__typename === 'StoryAttachmentShareStyleRenderer');
  if (share) {
    assert.match(share.styles.attachment.url, /^https:\/\/www\.socialnet\.example\/l\.php\?u=https%3A%2F%2F/);
    assertPaths(share.styles.attachment, ['title_with_entities.text', 'description', 'source', 'media'], 'share');
  }
  if (story.attached_story !== null) {
    assert.equal(nested, false, 'an attached story has no attached story');
    checkStory(story.attached_story, true);
    assert.equal(story.attached_story.attached_story, null);
    return 'reshare';
  }
  if (media) return media.styles.__typename.replace(/^StoryAttachment|StyleRenderer$/g, '').toLowerCase();
  if (share) return 'link';
  assert.ok(styles.every((style) => !/(Photo|Album|Video|Share)StyleRenderer$/.test(style)));
  return 'text';
}

function checkReelEdge(edge: Json, ownerId: string) {
  assert.equal(typeof edge.cursor, 'string');
  const reel = edge.profile_reel_node.node as Json;
  assertPaths(reel, ['id', 'post_id', 'creation_time', 'message', 'video.id', 'short_form_video_context.shareable_url', 'short_form_video_context.play_count_reduced',
    'short_form_video_context.video_owner.id', 'short_form_video_context.video_owner.name', 'short_form_video_context.video_owner.url',
    'short_form_video_context.video_owner.is_verified', 'short_form_video_context.video_owner.profile_picture.uri', 'short_form_video_context.playback_video.id',
    'short_form_video_context.playback_video.width', 'short_form_video_context.playback_video.height', 'short_form_video_context.playback_video.length_in_second',
    'short_form_video_context.playback_video.browser_native_hd_url', 'short_form_video_context.playback_video.browser_native_sd_url',
    'short_form_video_context.playback_video.image.uri', 'short_form_video_context.soundtrack_info', 'feedback.id', 'feedback.reaction_count.count',
    'feedback.comment_rendering_instance.comments.total_count', 'feedback.i18n_share_count'], 'reel');
  const video = reel.short_form_video_context.playback_video;
  assert.equal(video.id, reel.video.id);
  assert.ok(video.browser_native_hd_url !== null || video.browser_native_sd_url !== null);
  assert.equal(reel.short_form_video_context.video_owner.id, ownerId);
}

const FIELDS_OF_HEADER = ['__typename', 'id', 'name', 'alternate_name', 'url', 'gender', 'show_verified_badge_on_profile', 'profilePicSmall.uri', 'profilePicMedium.uri',
  'profilePicLarge.uri', 'cover_photo', 'delegate_page', 'profile_intro_card', 'profile_social_context.content'];

// ---------------------------------------------------------------------------------------
// Tests

const idOf = (vanity: string) => profileIdOf(accountNamed(vanity).no);
const topComment = (vanity: string, which = 0) => {
  const postId = postIdOf('post', accountNamed(vanity).no, 0);
  const feedbackId = commentFeedbackId(postId, legacyIdOf(postId, which, -1));
  return { feedbackId, token: expansionTokenOf(feedbackId) };
};

describe('pages', () => {
  test('the home page is the login page plus a session', async () => {
    const transport = new Transport();
    const home = await transport.page('/');
    assert.equal(home.status, 200);
    assert.match(home.headers['content-type']!, /^text\/html; charset="?utf-8"?$/);
    assert.equal(title(home.body), 'socialnet - log in or sign up');
    assert.ok(hasId(home.body, 'login_form'));
    assert.match(lsdOf(home.body)!, /^[A-Za-z0-9_-]{6,64}$/);
    const ids = docIds(home.body)!;
    for (const name of Object.values(FRIENDLY)) assert.match(ids[name]!, ID);
    assert.ok(preloader(home.body, PREFIX.login));
    assert.equal(preloader(home.body, PREFIX.header), null);
  });

  test('the profile page carries header, intro tiles and timeline preloaders with the mapped fields', async () => {
    const transport = new Transport();
    const spec = accountNamed('tidewaterkitchen');
    const answer = await transport.page('/tidewaterkitchen');
    assert.equal(answer.status, 200);
    const html = answer.body;
    assert.match(html, /^<!DOCTYPE html>\n<html id="sn" lang="en" dir="ltr">/);
    assert.ok(/<div id="mount_0_0_[A-Za-z]{2}"[^>]*><\/div>/.test(html), 'empty root div');
    assert.equal(meta(html, 'og:title'), spec.name);
    assert.equal(meta(html, 'og:url'), 'https://www.socialnet.example/tidewaterkitchen');
    assert.equal(meta(html, 'og:type'), 'profile');
    assert.equal(meta(html, 'al:android:url'), `socialnet://profile/${idOf('tidewaterkitchen')}`);
    assert.match(meta(html, 'og:image')!, /^https:\/\/scontent\.socialnet-cdn\.example\/.*s480x480&_nc_cat=/);
    assert.match(meta(html, 'og:description')!, /([0-9][0-9,]*(\.[0-9]+)?[KMB]?) (likes?) ·/);
    assert.match(lsdOf(html)!, /^[A-Za-z0-9_-]{6,64}$/);
    assert.ok(docIds(html));

    const header = preloader(html, PREFIX.header)!;
    const user = header.data.user.profile_header_renderer.user as Json;
    assertPaths(user, FIELDS_OF_HEADER, 'header');
    assert.equal(user.id, idOf('tidewaterkitchen'));
    assert.equal(user.gender, 'NEUTER');
    assert.equal(user.delegate_page.is_business_page_active, true);
    const followers = (user.profile_social_context.content as Json[]).find((item) => /\/followers\/$/.test(item.uri));
    assert.match(followers!.text.text, /^[0-9][0-9,]*(\.[0-9]+)?[KMB]? followers$/);

    const timeline = preloader(html, PREFIX.timeline)!.data.user as Json;
    assert.equal(timeline.id, idOf('tidewaterkitchen'));
    const edges = timeline.timeline_list_feed_units.edges as Json[];
    assert.equal(edges.length, 1);
    checkStory(edges[0]!.node);
    assert.deepEqual(Object.keys(timeline.timeline_list_feed_units.page_info).sort(), ['end_cursor', 'has_next_page']);
    assert.equal(timeline.timeline_list_feed_units.page_info.has_next_page, true);
    assert.match(timeline.timeline_list_feed_units.page_info.end_cursor, /^[A-Za-z0-9_-]+$/);
    const comments = get(edges[0]!.node, `${F_PATH}.comment_rendering_instance.comments.edges`) as Json[];
    assert.equal(comments.length, 2, 'the newest post shows two top comments');
    assert.equal(comments[0]!.node.feedback.id, topComment('tidewaterkitchen').feedbackId);
    assert.equal(comments[0]!.node.feedback.expansion_info.expansion_token, topComment('tidewaterkitchen').token);

    const tiles = preloader(html, PREFIX.tiles)!.data.user.profile_tile_sections.edges as Json[];
    const intro = tiles.find((edge) => edge.node.profile_tile_section_type === 'INTRO')!;
    const items = (intro.node.profile_tile_views.nodes as Json[]).flatMap((view) => view.view_style_renderer.view.profile_tile_items.nodes as Json[]);
    const hours = items.find((item) => item.node.timeline_context_item?.timeline_context_list_item_type === 'INTRO_CARD_BUSINESS_HOURS');
    assert.equal(hours!.node.timeline_context_item.renderer.context_item.title.text, 'Open now');
  });

  test('every hours status of 9.4 is shown by some page, and persons show none', async () => {
    const transport = new Transport();
    const seen = new Set<string>();
    for (const spec of ACCOUNTS.filter((account) => account.vanity !== null && !account.fault && ['ok', 'graphql-rate-limit', 'rotating'].includes(account.state))) {
      const html = (await transport.page(`/${spec.vanity}`)).body;
      const sections = preloader(html, PREFIX.tiles)!.data.user.profile_tile_sections.edges as Json[];
      const statuses = sections
        .filter((edge) => edge.node.profile_tile_section_type === 'INTRO')
        .flatMap((edge) => edge.node.profile_tile_views.nodes as Json[])
        .flatMap((view) => view.view_style_renderer.view.profile_tile_items.nodes as Json[])
        .filter((item) => item.node.timeline_context_item?.timeline_context_list_item_type === 'INTRO_CARD_BUSINESS_HOURS')
        .map((item) => item.node.timeline_context_item.renderer.context_item.title.text as string);
      if (spec.kind === 'person') assert.deepEqual(statuses, []);
      statuses.forEach((status) => seen.add(status));
    }
    assert.deepEqual([...seen].sort(), ['Always open', 'Closed now', 'Closes soon', 'Open now', 'Opens soon', 'Permanently closed', 'Temporarily closed']);
  });

  test('the reels tab carries the header and the reels collection', async () => {
    const transport = new Transport();
    const html = (await transport.page('/tidewaterkitchen/reels/')).body;
    assert.ok(preloader(html, PREFIX.header));
    assert.equal(preloader(html, PREFIX.timeline), null);
    const node = preloader(html, PREFIX.reels)!.data.node as Json;
    assert.equal(node.__typename, 'AppCollection');
    assert.match(Buffer.from(node.id, 'base64').toString(), new RegExp(`^app_collection:${idOf('tidewaterkitchen')}:[0-9]+:[0-9]+$`));
    const edges = node.aggregated_sn_shorts.edges as Json[];
    assert.ok(edges.length >= 1 && edges.length <= 10);
    for (const edge of edges) checkReelEdge(edge, idOf('tidewaterkitchen'));
    assert.equal(node.aggregated_sn_shorts.page_info.has_next_page, true);
    // Other collections differ in appId/collectionType.
    const other = preloader((await transport.page('/lunavoss/reels')).body, PREFIX.reels)!.data.node.id as string;
    const [, , appA, typeA] = Buffer.from(node.id, 'base64').toString().split(':');
    const [, , appB, typeB] = Buffer.from(other, 'base64').toString().split(':');
    assert.ok(appA !== appB || typeA !== typeB);
  });

  test('the about tab carries the header and every kind of about field', async () => {
    const transport = new Transport();
    const html = (await transport.page('/metrodailynews/about_contact_and_basic_info')).body;
    assert.ok(preloader(html, PREFIX.header));
    const sections = preloader(html, PREFIX.about)!.data.user.about_app_sections.nodes as Json[];
    const fields = sections
      .flatMap((section) => section.activeCollections.nodes as Json[])
      .flatMap((collection) => collection.style_renderer.profile_field_sections as Json[])
      .flatMap((section) => section.profile_fields.nodes as Json[]);
    for (const field of fields) assertPaths(field, ['field_type', 'title.text', 'subtitle', 'link_url', 'icon'], 'about field');
    const types = fields.map((field) => field.field_type as string);
    for (const type of ['category', 'address', 'profile_phone', 'profile_email', 'website', 'social_link', 'rating', 'price_range']) assert.ok(types.includes(type), type);
    assert.equal(types.filter((type) => type === 'profile_phone').length, 2, 'a later duplicate phone');
    assert.equal(types.filter((type) => type === 'website').length, 2, 'an extra website');
    for (const field of fields.filter((candidate) => candidate.field_type === 'website' || candidate.field_type === 'social_link')) {
      assert.match(field.link_url, /^https:\/\/www\.socialnet\.example\/l\.php\?u=https%3A%2F%2F/);
    }
    assert.ok(fields.filter((field) => field.field_type === 'social_link').every((field) => /^[A-Z]+$/.test(field.social_link_type)));
    // Alternate paths serve the same page kind.
    for (const path of ['/metrodailynews/about', `/profile.php?id=${profileIdOf(9)}&sk=about`]) {
      assert.ok(preloader((await transport.page(path)).body, PREFIX.about), path);
    }
  });

  test('absent optional fields: no cover, bio card, followers; text-only stories; bare reels', async () => {
    const transport = new Transport();
    const about = (await transport.page('/quietcorner/about')).body;
    const user = preloader(about, PREFIX.header)!.data.user.profile_header_renderer.user as Json;
    assert.equal(user.cover_photo, null);
    assert.equal(user.profile_intro_card, null);
    assert.equal(user.delegate_page, null);
    assert.deepEqual(user.profile_social_context.content, []);
    const flows = new Flows(transport);
    const page = await flows.graphql(FRIENDLY.timeline, timelineVars(idOf('quietcorner'), null, 10));
    assert.equal(page.kind, 'content');
    const stories = (page as { data: Json }).data.items as Json[];
    assert.ok(stories.every((story) => checkStory(story) === 'text'));
    assert.ok(stories.some((story) => story.comet_sections.context_layout.story.comet_sections.title === null), 'verified unknown');
    const reels = preloader((await transport.page('/quietcorner/reels/')).body, PREFIX.reels)!.data.node.aggregated_sn_shorts.edges as Json[];
    assert.ok(reels.length > 0);
    for (const edge of reels) {
      const reel = edge.profile_reel_node.node as Json;
      assert.equal(reel.message, null);
      assert.equal(reel.short_form_video_context.soundtrack_info, null);
      assert.equal(reel.short_form_video_context.playback_video.browser_native_hd_url, null);
    }
    const card = preloader((await transport.page('/sakura.kato')).body, PREFIX.header)!.data.user.profile_header_renderer.user.profile_intro_card;
    assert.deepEqual(card, { bio: null });
  });

  test('a profile without a vanity uses id URLs, permalink.php and /people/ social links', async () => {
    const transport = new Transport();
    const id = profileIdOf(9);
    const html = (await transport.page(`/profile.php?id=${id}`)).body;
    const user = preloader(html, PREFIX.header)!.data.user.profile_header_renderer.user as Json;
    assert.equal(user.url, `https://www.socialnet.example/profile.php?id=${id}`);
    assert.match(user.profile_social_context.content[0].uri, new RegExp(`^https://www\\.socialnet\\.example/people/Rui-Silva/${id}/followers/$`));
    const story = preloader(html, PREFIX.timeline)!.data.user.timeline_list_feed_units.edges[0].node as Json;
    assert.equal(story.permalink_url, `https://www.socialnet.example/permalink.php?story_snid=${story.post_id}&id=${id}`);
    assert.ok(preloader((await transport.page(`/profile.php?id=${id}&sk=reels_tab`)).body, PREFIX.reels));
  });

  test('a request without the browser navigation headers gets the login wall', async () => {
    const transport = new Transport();
    const { 'sec-fetch-mode': _mode, ...withoutMode } = NAV;
    for (const path of ['/', '/tidewaterkitchen', '/tidewaterkitchen/reels/', '/tidewaterkitchen/about_contact_and_basic_info', '/velvetcellar', `/profile.php?id=${idOf('lunavoss')}`]) {
      for (const headers of [withoutMode, { 'user-agent': 'curl/8.0', accept: '*/*' }]) {
        const answer = await transport.page(path, headers);
        assert.equal(answer.status, 200, path);
        assert.equal(title(answer.body), 'socialnet - log in or sign up');
        assert.ok(hasId(answer.body, 'login_form'));
        assert.equal(lsdOf(answer.body), null);
        assert.equal(docIds(answer.body), null);
        assert.equal(preloader(answer.body, PREFIX.header), null);
        assert.ok(!hasId(answer.body, 'content_gate') && !hasId(answer.body, 'content_unavailable'));
        assert.equal(meta(answer.body, 'og:url'), 'https://www.socialnet.example/');
      }
    }
  });

  test('redirects of 2.5/2.6: id paths and other vanity cases go to the vanity path; /people/ to profile.php', async () => {
    const transport = new Transport();
    const luna = idOf('lunavoss');
    const cases: [string, number, string][] = [
      [`/profile.php?id=${luna}`, 302, '/lunavoss'],
      [`/profile.php?id=${luna}&sk=reels_tab`, 302, '/lunavoss/reels/'],
      [`/profile.php?id=${luna}&sk=about_contact_and_basic_info`, 302, '/lunavoss/about_contact_and_basic_info'],
      [`/profile.php?id=${idOf('MarinaGallery')}`, 301, '/MarinaGallery'],
      ['/marinagallery', 301, '/MarinaGallery'],
      ['/MARINAGALLERY/reels/', 301, '/MarinaGallery/reels/'],
      ['/LunaVoss/about_contact_and_basic_info', 301, '/lunavoss/about_contact_and_basic_info'],
      [`/people/Luna-Voss/${luna}/`, 301, `/profile.php?id=${luna}`],
    ];
    for (const [path, status, location] of cases) {
      const answer = await transport.page(path);
      assert.equal(answer.status, status, path);
      assert.equal(answer.headers.location, location, path);
    }
    for (const path of ['/lunavoss/', '/lunavoss/reels', '/MarinaGallery', '/MarinaGallery/about']) assert.equal((await transport.page(path)).status, 200, path);
  });

  test('gated, unavailable and not-found pages carry their markers and nothing else', async () => {
    const transport = new Transport();
    for (const [vanity, reason] of [['velvetcellar', 'AGE_RESTRICTED'], ['borderlandradio', 'COUNTRY_RESTRICTED'], ['membersonlyclub', 'LOGGED_OUT_UNAVAILABLE']] as const) {
      for (const path of [`/${vanity}`, `/${vanity}/reels/`, `/${vanity}/about_contact_and_basic_info`]) {
        const answer = await transport.page(path);
        assert.equal(answer.status, 200);
        assert.match(answer.body, new RegExp(`<div id="content_gate" data-gate-reason="${reason}"`));
        assert.equal(title(answer.body), 'socialnet');
        assert.equal(meta(answer.body, 'og:title'), accountNamed(vanity).name);
        assert.equal(meta(answer.body, 'og:url'), `https://www.socialnet.example/${vanity}`);
        assert.match(meta(answer.body, 'og:image')!, /^https:\/\/scontent\./);
        assert.equal(meta(answer.body, 'al:android:url'), `socialnet://profile/${idOf(vanity)}`);
        assert.equal(meta(answer.body, 'og:description'), null);
        assert.equal(lsdOf(answer.body), null);
        assert.equal(preloaders(answer.body).length, 0);
      }
    }
    for (const [vanity, reason] of [['privatejournal', 'PRIVATE'], ['closedshop', 'REMOVED']] as const) {
      const answer = await transport.page(`/${vanity}`);
      assert.equal(answer.status, 200);
      assert.match(answer.body, new RegExp(`<div id="content_unavailable" data-reason="${reason}"`));
      assert.equal(meta(answer.body, 'og:title'), null);
      assert.equal(lsdOf(answer.body), null);
    }
    for (const path of ['/nosuchprofile', '/profile.php?id=100999912345678', '/groups/whatever', '/tidewaterkitchen/posts/123']) {
      const answer = await transport.page(path);
      assert.equal(answer.status, 404, path);
      assert.match(answer.body, /<div id="content_unavailable" data-reason="NOT_FOUND"/);
      assert.equal(title(answer.body), 'Page not found | socialnet');
    }
  });

  test('blocks: login wall, checkpoint redirect, HTTP 429 (11)', async () => {
    const transport = new Transport();
    const wall = await transport.page('/walledgarden');
    assert.equal(wall.status, 200);
    assert.equal(title(wall.body), 'socialnet - log in or sign up');
    assert.match(wall.body, /<form id="login_form" action="\/login\/\?login_attempt=1&amp;next=https%3A%2F%2Fwww\.socialnet\.example%2Fwalledgarden"/);
    const checkpoint = await transport.page('/checkpointed/reels/');
    assert.equal(checkpoint.status, 302);
    assert.match(checkpoint.headers.location!, /^\/checkpoint\//);
    const limited = await transport.page('/ratelimited/about_contact_and_basic_info');
    assert.equal(limited.status, 429);
    assert.equal(limited.headers['retry-after'], '60');
  });

  test('account faults: slow, flaky (503, reset, answer), down (503) on pages and GraphQL', async () => {
    const transport = new Transport();
    const slow = await transport.page('/slow.tidewater');
    assert.equal(slow.status, 200);
    assert.equal(slow.delayMs, 1_234);
    const flaky = [await transport.page('/flaky.tidewater'), await transport.page('/flaky.tidewater'), await transport.page('/flaky.tidewater')];
    assert.deepEqual(flaky.map((answer) => (answer.reset ? 'reset' : answer.status)), [503, 'reset', 200]);
    assert.equal((await transport.page('/down.tidewater/reels/')).status, 503);
    const session = await homeSession(transport);
    const down = await graphql(transport, FRIENDLY.timeline, timelineVars(profileIdOf(accountNamed('down.tidewater').no), null), session);
    assert.equal(down.status, 503);
    const slowQuery = await graphql(transport, FRIENDLY.timeline, timelineVars(profileIdOf(accountNamed('slow.tidewater').no), null), session);
    assert.equal(slowQuery.status, 200);
    assert.equal(slowQuery.delayMs, 1_234);
  });
});

describe('sessions and GraphQL checks', () => {
  test('lsd rotates per page load, doc ids per generation; earlier values stay accepted', async () => {
    const transport = new Transport();
    const sessions: Session[] = [];
    for (let load = 0; load < 3 * DOC_ID_ROTATION; load += 1) {
      const html = (await transport.page(load % 2 === 0 ? '/tidewaterkitchen' : '/')).body;
      sessions.push({ lsd: lsdOf(html)!, ids: docIds(html)! });
    }
    assert.equal(new Set(sessions.map((session) => session.lsd)).size, sessions.length, 'a new lsd per load');
    const generations = new Set(sessions.map((session) => session.ids[FRIENDLY.timeline]));
    assert.equal(generations.size, 3, 'doc ids rotate');
    assert.deepEqual(sessions.slice(0, DOC_ID_ROTATION).map((session) => session.ids), Array(DOC_ID_ROTATION).fill(sessions[0]!.ids));
    // Any accepted lsd works with any accepted doc id.
    for (const [a, b] of [[0, sessions.length - 1], [sessions.length - 1, 0], [1, 4]] as const) {
      const mixed = { lsd: sessions[a]!.lsd, ids: sessions[b]!.ids };
      const answer = await graphql(transport, FRIENDLY.timeline, timelineVars(idOf('lunavoss'), null), mixed);
      assert.equal(criticalCode(parseGraphql(answer.body, true)[0]!), null);
    }
  });

  test('stale, unknown or mismatched lsd and doc ids get 1357004 / 1675030, in the order of 4.7', async () => {
    const transport = new Transport();
    const session = await homeSession(transport);
    const vars = timelineVars(idOf('lunavoss'), null);
    const codeOf = async (s: Session, headers: Record<string, string> = {}, overrides: Record<string, string> = {}, friendly: string = FRIENDLY.timeline, variables = vars) => {
      const answer = await graphql(transport, friendly, variables, s, headers, overrides);
      assert.equal(answer.status, 200);
      const document = parseGraphql(answer.body, friendly === FRIENDLY.timeline)[0]!;
      if (document.errors) assert.equal(document.data, null);
      return criticalCode(document);
    };
    assert.equal(await codeOf(session), null);
    assert.equal(await codeOf({ ...session, lsd: 'AVqGiBAdgmf' }), 1357004, 'never issued');
    assert.equal(await codeOf(session, { 'x-sn-lsd': 'AVqGiBAdgmf' }), 1357004, 'header differs from form');
    assert.equal(await codeOf(session, {}, { lsd: '' }), 1357004, 'missing');
    assert.equal(await codeOf(session, {}, { doc_id: '8123456789012345' }), 1675030, 'unknown doc id');
    assert.equal(await codeOf(session, {}, { doc_id: session.ids[FRIENDLY.reels]! }), 1675030, 'doc id of another query');
    assert.equal(await codeOf(session, {}, { sn_api_req_friendly_name: 'CometNotificationsDropdownQuery', doc_id: session.ids.CometNotificationsDropdownQuery! }), 1675030);
    assert.equal(await codeOf({ ...session, lsd: 'AVnope' }, {}, { doc_id: '8123456789012345' }), 1357004, 'lsd before doc id');
    assert.equal(await codeOf(session, {}, { doc_id: '8123456789012345' }, FRIENDLY.timeline, {}), 1675030, 'doc id before variables');
  });

  test('values expire after the validity window; a fresh page gives a working session', async () => {
    let clock = 1_750_000_000_000;
    const transport = new Transport(createSocialnetSandbox({ now: () => clock }));
    const old = await homeSession(transport);
    clock += 30 * 60 * 1_000;
    const vars = timelineVars(idOf('lunavoss'), null);
    assert.equal(criticalCode(parseGraphql((await graphql(transport, FRIENDLY.timeline, vars, old)).body, true)[0]!), null, 'accepted after 30 minutes');
    clock += VALIDITY_MS;
    assert.equal(criticalCode(parseGraphql((await graphql(transport, FRIENDLY.timeline, vars, old)).body, true)[0]!), 1357004);
    const fresh = await homeSession(transport);
    assert.equal(criticalCode(parseGraphql((await graphql(transport, FRIENDLY.timeline, vars, { lsd: fresh.lsd, ids: old.ids })).body, true)[0]!), 1675030);
    assert.equal(criticalCode(parseGraphql((await graphql(transport, FRIENDLY.timeline, vars, fresh)).body, true)[0]!), null);
  });

  test('the rotating account retires sessions after each successful query; one refresh recovers', async () => {
    const transport = new Transport();
    const id = idOf('rotating.sessions');
    const codeFor = async (session: Session, cursor: string | null) => {
      const answer = await graphql(transport, FRIENDLY.timeline, timelineVars(id, cursor), session);
      const lines = parseGraphql(answer.body, true);
      return { code: criticalCode(lines[0]!), page: timelinePage(lines) };
    };
    let session = await homeSession(transport);
    const first = await codeFor(session, null);
    assert.equal(first.code, null);
    const cursor = first.page.pageInfo!.end_cursor as string;
    assert.equal((await codeFor(session, cursor)).code, 1357004, 'lsd retired');
    session = await homeSession(transport);
    assert.equal((await codeFor(session, cursor)).code, null);
    assert.equal((await codeFor(session, cursor)).code, 1675030, 'doc ids retired');
    session = await homeSession(transport);
    assert.equal((await codeFor(session, cursor)).code, null);
    // Other accounts are not affected by the rotating account's retirements.
    assert.equal(criticalCode(parseGraphql((await graphql(transport, FRIENDLY.timeline, timelineVars(idOf('lunavoss'), null), session)).body, true)[0]!), null);
    // A client following README.md's "GraphQL" pages through to the end with one refresh per stale page.
    const flows = new Flows(transport);
    let pageInfo = (await flows.graphql(FRIENDLY.timeline, timelineVars(id, null))) as { data: Json };
    let count = pageInfo.data.items.length as number;
    while (pageInfo.data.pageInfo.has_next_page) {
      const next = await flows.graphql(FRIENDLY.timeline, timelineVars(id, pageInfo.data.pageInfo.end_cursor));
      assert.equal(next.kind, 'content');
      pageInfo = next as { data: Json };
      count += pageInfo.data.items.length;
    }
    assert.equal(count, accountNamed('rotating.sessions').posts);
    assert.ok(flows.staleRetries > 5);
  });

  test('required variables (1675011), node ids (data.node null), cursors and tokens (1675012)', async () => {
    const transport = new Transport();
    const session = await homeSession(transport);
    const ask = async (friendly: string, variables: Json) => parseGraphql((await graphql(transport, friendly, variables, session)).body, friendly === FRIENDLY.timeline)[0]!;
    const luna = idOf('lunavoss');
    const { __relay_internal__pv__IsWorkUserrelayprovider: _flag, ...withoutFlag } = timelineVars(luna, null);
    assert.equal(criticalCode(await ask(FRIENDLY.timeline, withoutFlag)), 1675011);
    assert.equal(criticalCode(await ask(FRIENDLY.timeline, { ...timelineVars(luna, null), count: '3' })), 1675011);
    const { cursor: _cursor, ...withoutCursor } = timelineVars(luna, null);
    assert.equal(criticalCode(await ask(FRIENDLY.timeline, withoutCursor)), 1675011);
    assert.equal(criticalCode(await ask(FRIENDLY.replies, { ...repliesVars(topComment('lunavoss').feedbackId, 'x', null), expansionToken: undefined })), 1675011);

    const profileHtml = (await transport.page('/lunavoss')).body;
    const cursor = preloader(profileHtml, PREFIX.timeline)!.data.user.timeline_list_feed_units.page_info.end_cursor as string;
    assert.equal(criticalCode(await ask(FRIENDLY.timeline, timelineVars(luna, cursor))), null);
    assert.equal(criticalCode(await ask(FRIENDLY.timeline, timelineVars(luna, `${cursor.slice(0, -1)}${cursor.endsWith('A') ? 'B' : 'A'}`))), 1675012, 'altered cursor');
    assert.equal(criticalCode(await ask(FRIENDLY.timeline, timelineVars(idOf('tidewaterkitchen'), cursor))), 1675012, 'cursor of another profile');
    assert.equal(criticalCode(await ask(FRIENDLY.timeline, timelineVars(luna, ''))), 1675012);

    assert.equal((await ask(FRIENDLY.timeline, timelineVars('100999912345678', null))).data.node, null, 'unknown id');
    assert.equal((await ask(FRIENDLY.timeline, timelineVars('100999912345678', 'garbage'))).data.node, null, 'node before cursor');
    for (const vanity of ['velvetcellar', 'privatejournal', 'closedshop']) {
      assert.equal((await ask(FRIENDLY.timeline, timelineVars(idOf(vanity), null))).data.node, null, vanity);
      const { feedbackId, token } = topComment(vanity);
      assert.equal((await ask(FRIENDLY.replies, repliesVars(feedbackId, token, null))).data.node, null, vanity);
    }
    assert.equal((await ask(FRIENDLY.reels, reelsVars('YXBwX2NvbGxlY3Rpb246MTAwMDY0NTEyMzQ1Njc4OjE4ODIzNDQ2NzEwODkxMjo0MTI=', null))).data.node, null);

    const { feedbackId, token } = topComment('lunavoss');
    assert.equal(criticalCode(await ask(FRIENDLY.replies, repliesVars(feedbackId, topComment('tidewaterkitchen').token, null))), 1675012, 'token of another comment');
    assert.equal(criticalCode(await ask(FRIENDLY.replies, repliesVars(feedbackId, token, 'MToxNzE4bogus'))), 1675012);
    assert.equal((await ask(FRIENDLY.replies, repliesVars(topComment('lunavoss', 5).feedbackId, token, null))).data.node, null, 'no such comment');
    assert.equal((await ask(FRIENDLY.replies, repliesVars('not-base64!', token, null))).data.node, null);

    // A reply is itself a comment: its own feedback lists its (zero) replies.
    const first = await ask(FRIENDLY.replies, repliesVars(feedbackId, token, null));
    const reply = first.data.node.replies_connection.edges[0].node as Json;
    const own = await ask(FRIENDLY.replies, repliesVars(reply.feedback.id, reply.feedback.expansion_info.expansion_token, null));
    assert.deepEqual(own.data.node.replies_connection.edges, []);
    assert.equal(own.data.node.replies_fields.total_count, 0);
    assert.equal(own.data.node.replies_connection.page_info.has_next_page, false);
  });

  test('GraphQL answers for blocked accounts: 1675004, 429, checkpoint redirect, login wall', async () => {
    const transport = new Transport();
    const session = await homeSession(transport);
    const throttled = await graphql(transport, FRIENDLY.timeline, timelineVars(idOf('throttledpage'), null), session);
    const error = parseGraphql(throttled.body, true)[0]!;
    assert.equal(criticalCode(error), 1675004);
    assert.equal(error.errors[0].message, 'Rate limit exceeded');
    const { feedbackId, token } = topComment('throttledpage');
    assert.equal(criticalCode(parseGraphql((await graphql(transport, FRIENDLY.replies, repliesVars(feedbackId, token, null), session)).body, false)[0]!), 1675004);
    // Rate limit comes before the session checks.
    assert.equal(criticalCode(parseGraphql((await graphql(transport, FRIENDLY.timeline, timelineVars(idOf('throttledpage'), null), { ...session, lsd: 'AVbad' })).body, true)[0]!), 1675004);
    assert.equal((await graphql(transport, FRIENDLY.timeline, timelineVars(idOf('ratelimited'), null), session)).status, 429);
    const checkpoint = await graphql(transport, FRIENDLY.timeline, timelineVars(idOf('checkpointed'), null), session);
    assert.equal(checkpoint.status, 302);
    assert.match(checkpoint.headers.location!, /^\/checkpoint\//);
    const wall = await graphql(transport, FRIENDLY.timeline, timelineVars(idOf('walledgarden'), null), session);
    assert.equal(title(wall.body), 'socialnet - log in or sign up');
  });
});

describe('framing and pagination', () => {
  test('timeline NDJSON: first line, stream lines, page_info last; for (;;); and Content-Type vary', async () => {
    const transport = new Transport();
    const session = await homeSession(transport);
    const id = idOf('metrodailynews');
    const prefixes = new Set<boolean>();
    const types = new Set<string>();
    const firstLineCounts = new Set<number>();
    let cursor: string | null = null;
    for (let page = 0; page < 25; page += 1) {
      const answer = await graphql(transport, FRIENDLY.timeline, timelineVars(id, cursor, 3), session);
      prefixes.add(answer.body.startsWith('for (;;);'));
      types.add(answer.headers['content-type']!);
      const lines = parseGraphql(answer.body, true);
      assert.equal(lines.at(-1)!.label, 'ProfileCometTimelineFeed_user$defer$ProfileCometTimelineFeed_user_timeline_list_feed_units$page_info');
      assert.ok(!answer.body.replace(/\n$/, '').split('\n').some((line) => line.trim() === ''), 'no blank lines');
      firstLineCounts.add(lines[0]!.data.node.timeline_list_feed_units.edges.length);
      for (const line of lines.slice(1, -1)) {
        if ((line.label as string).includes('$stream$')) {
          assert.deepEqual(line.path.slice(0, 3), ['node', 'timeline_list_feed_units', 'edges']);
          assert.ok(typeof line.data.cursor === 'string');
        }
      }
      const { stories, pageInfo } = timelinePage(lines);
      assert.ok(stories.length >= 1 && stories.length <= 3);
      cursor = pageInfo!.end_cursor as string;
    }
    assert.deepEqual([...prefixes].sort(), [false, true]);
    assert.equal(types.size, 2);
    assert.ok(firstLineCounts.has(0) && firstLineCounts.size >= 2, 'the first line holds 0 or more edges');
  });

  test('a large timeline pages through every post once, newest first, then ends', async () => {
    const transport = new Transport();
    const spec = accountNamed('metrodailynews');
    const html = (await transport.page('/metrodailynews')).body;
    const timeline = preloader(html, PREFIX.timeline)!.data.user as Json;
    const ids: string[] = [timeline.timeline_list_feed_units.edges[0].node.post_id];
    const times: number[] = [timeline.timeline_list_feed_units.edges[0].node.creation_time];
    const session = { lsd: lsdOf(html)!, ids: docIds(html)! };
    let cursor = timeline.timeline_list_feed_units.page_info.end_cursor as string;
    const kinds = new Set<string>();
    for (let guard = 0; guard < 400; guard += 1) {
      const count = 1 + (guard % 10);
      const page = timelinePage(parseGraphql((await graphql(transport, FRIENDLY.timeline, timelineVars(timeline.id, cursor, count), session)).body, true));
      assert.ok(page.stories.length <= count);
      for (const story of page.stories) {
        kinds.add(checkStory(story));
        ids.push(story.post_id);
        times.push(story.creation_time);
      }
      cursor = page.pageInfo!.end_cursor;
      if (!page.pageInfo!.has_next_page) break;
      assert.ok(page.stories.length >= 1);
    }
    assert.equal(ids.length, spec.posts);
    assert.equal(new Set(ids).size, spec.posts);
    assert.ok(times.every((time, index) => index === 0 || time < times[index - 1]!), 'newest first');
    assert.deepEqual([...kinds].sort(), ['album', 'link', 'photo', 'reshare', 'text', 'video']);
    // With cursor null the query starts with the story the profile page shows.
    const start = timelinePage(parseGraphql((await graphql(transport, FRIENDLY.timeline, timelineVars(timeline.id, null, 10), session)).body, true));
    assert.equal(start.stories[0]!.post_id, ids[0]);
    // The last end_cursor leads to an empty page that ends the list.
    const end = timelinePage(parseGraphql((await graphql(transport, FRIENDLY.timeline, timelineVars(timeline.id, cursor, 3), session)).body, true));
    assert.equal(end.stories.length, 0);
    assert.equal(end.pageInfo!.has_next_page, false);
  });

  test('a large reels collection pages through every reel once', async () => {
    const transport = new Transport();
    const spec = accountNamed('metrodailynews');
    const html = (await transport.page('/metrodailynews/reels/')).body;
    const node = preloader(html, PREFIX.reels)!.data.node as Json;
    const session = { lsd: lsdOf(html)!, ids: docIds(html)! };
    const videoIds: string[] = (node.aggregated_sn_shorts.edges as Json[]).map((edge) => edge.profile_reel_node.node.video.id);
    let pageInfo = node.aggregated_sn_shorts.page_info as Json;
    const prefixes = new Set<boolean>();
    while (pageInfo.has_next_page) {
      const answer = await graphql(transport, FRIENDLY.reels, reelsVars(node.id, pageInfo.end_cursor, 10), session);
      prefixes.add(answer.body.startsWith('for (;;);'));
      const document = parseGraphql(answer.body, false)[0]!;
      assert.equal(criticalCode(document), null);
      const edges = document.data.node.aggregated_sn_shorts.edges as Json[];
      assert.ok(edges.length >= 1 && edges.length <= 10);
      for (const edge of edges) {
        checkReelEdge(edge, idOf('metrodailynews'));
        videoIds.push(edge.profile_reel_node.node.video.id);
      }
      pageInfo = document.data.node.aggregated_sn_shorts.page_info;
    }
    assert.equal(videoIds.length, spec.reels);
    assert.equal(new Set(videoIds).size, spec.reels);
    assert.deepEqual([...prefixes].sort(), [false, true]);
  });

  test('a comment with hundreds of replies pages through every reply once, oldest first', async () => {
    const transport = new Transport();
    const spec = accountNamed('metrodailynews');
    const session = await homeSession(transport);
    const { feedbackId, token } = topComment('metrodailynews');
    const legacyIds: string[] = [];
    const times: number[] = [];
    const seen = { page: false, sticker: false, user: false, attachment: false };
    let cursor: string | null = null;
    for (let guard = 0; guard < 300; guard += 1) {
      const document = parseGraphql((await graphql(transport, FRIENDLY.replies, repliesVars(feedbackId, token, cursor), session)).body, false)[0]!;
      const node = document.data.node as Json;
      assert.equal(node.__typename, 'Feedback');
      assert.equal(node.id, feedbackId);
      assert.equal(node.replies_fields.total_count, spec.firstCommentReplies);
      const edges = node.replies_connection.edges as Json[];
      assert.ok(edges.length >= 1 && edges.length <= 10);
      for (const edge of edges) {
        checkComment(edge.node, 1);
        assert.match(edge.node.url, /\?comment_id=[0-9]+&reply_comment_id=[0-9]+$/);
        legacyIds.push(edge.node.legacy_snid);
        times.push(edge.node.created_time);
        if (edge.node.author.__typename === 'Page') seen.page = true;
        if (edge.node.author.__typename === 'User') seen.user = true;
        if (edge.node.body === null) seen.sticker = true;
        if (edge.node.body !== null && edge.node.attachments.length > 0) seen.attachment = true;
      }
      assert.deepEqual(Object.keys(node.replies_connection.page_info).sort(), ['end_cursor', 'has_next_page', 'has_previous_page', 'start_cursor']);
      if (!node.replies_connection.page_info.has_next_page) break;
      cursor = node.replies_connection.page_info.end_cursor;
    }
    assert.equal(legacyIds.length, spec.firstCommentReplies);
    assert.equal(new Set(legacyIds).size, spec.firstCommentReplies);
    assert.ok(times.every((time, index) => index === 0 || time > times[index - 1]!), 'oldest first');
    assert.deepEqual(seen, { page: true, sticker: true, user: true, attachment: true });
  });
});

describe('variation, escaping and determinism', () => {
  test('the platform’s variations appear across loads and all parse to the same data', async () => {
    const transport = new Transport();
    const seen = { ascii: false, utf8: false, slashes: false, bareSjs: false, emptySjs: false, noLength: false, headBlock: false, grouped: false, upsell: false, single: false, hexEntity: false, decimalEntity: false };
    let reference: string | null = null;
    for (let load = 0; load < 40; load += 1) {
      const html = (await transport.page('/emoji.mixtape')).body;
      const texts = sjsTexts(html);
      for (const text of texts) {
        assert.ok(!text.includes('<'), 'no raw < inside scripts');
        if (/[\u0080-\uffff]/.test(text)) seen.utf8 = true;
        else if (text.includes('\\u')) seen.ascii = true;
        if (text.includes('\\/')) seen.slashes = true;
      }
      const tags = [...html.matchAll(/<script\b([^>]*)>/g)].map((match) => match[1]!);
      if (tags.some((tag) => / data-sjs(?=[\s>]|$)/.test(tag))) seen.bareSjs = true;
      if (tags.some((tag) => tag.includes('data-sjs=""'))) seen.emptySjs = true;
      if (tags.some((tag) => tag.includes('data-sjs') && !tag.includes('data-content-len'))) seen.noLength = true;
      if (sjsTexts(html.slice(0, html.indexOf('</head>'))).length > 0) seen.headBlock = true;
      if (preloaders(html).length >= 4 && sjsBlocks(html).some((block) => JSON.stringify(block).includes(PREFIX.header) && JSON.stringify(block).includes(PREFIX.timeline))) seen.grouped = true;
      if (/id="login_upsell"/.test(html)) seen.upsell = true;
      if (/<meta property='og:title'/.test(html)) seen.single = true;
      if (/&#x[0-9a-f]+;/.test(html.slice(0, html.indexOf('</head>')))) seen.hexEntity = true;
      if (/&#[0-9]+;/.test(html.slice(0, html.indexOf('</head>')))) seen.decimalEntity = true;
      // The data are the same whatever the presentation.
      const data = JSON.stringify([preloader(html, PREFIX.header), preloader(html, PREFIX.timeline), preloader(html, PREFIX.tiles)], (_key, value: unknown) =>
        value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1))) : value,
      );
      reference ??= data;
      assert.equal(data, reference);
    }
    assert.deepEqual(Object.entries(seen).filter(([, value]) => !value).map(([key]) => key), []);
  });

  test('Unicode, markup and quotes survive JSON-in-HTML and attribute escaping', async () => {
    const transport = new Transport();
    const spec = accountNamed('emoji.mixtape');
    let markupSeen = false;
    for (let load = 0; load < 12; load += 1) {
      const html = (await transport.page(load % 2 ? '/emoji.mixtape' : '/noor.haddad')).body;
      const vanity = load % 2 ? 'emoji.mixtape' : 'noor.haddad';
      const name = accountNamed(vanity).name;
      assert.equal(meta(html, 'og:title'), name);
      assert.ok(title(html)!.startsWith(name));
      const user = preloader(html, PREFIX.header)!.data.user.profile_header_renderer.user as Json;
      assert.equal(user.name, name);
      for (const text of sjsTexts(html)) {
        if (text.includes('\\u003c3') || text.includes('\\u003cb>')) markupSeen = true;
      }
      if (JSON.stringify(preloaders(html)).includes('<b>not html</b>')) assert.ok(sjsTexts(html).some((text) => text.includes('\\u003cb>not html\\u003c')));
    }
    assert.equal(spec.flavour, 'mixed');
    assert.ok(spec.name.includes('<3') && markupSeen, 'markup in texts is escaped as \\u003c');
    // Emoji in \u escapes are surrogate pairs that JSON.parse joins back.
    const escaped = sjsTexts((await transport.page('/emoji.mixtape')).body).join('');
    assert.ok(!/\\ud83[c-f](?!\\ud[c-f])/i.test(escaped), 'high surrogates are followed by low surrogates');
  });

  test('same seed gives byte-identical answers; another seed other content with the same ids', async () => {
    const script = async (transport: Transport) => {
      const out: string[] = [];
      const record = (answer: Answer) => out.push(`${answer.status} ${JSON.stringify(answer.headers)} ${answer.body}`);
      const home = await transport.page('/');
      record(home);
      const session = { lsd: lsdOf(home.body)!, ids: docIds(home.body)! };
      for (const path of ['/tidewaterkitchen', '/noor.haddad/reels/', '/metrodailynews/about', '/velvetcellar', '/marinagallery', '/nosuch1']) record(await transport.page(path));
      record(await graphql(transport, FRIENDLY.timeline, timelineVars(idOf('metrodailynews'), null), session));
      const { feedbackId, token } = topComment('emoji.mixtape');
      record(await graphql(transport, FRIENDLY.replies, repliesVars(feedbackId, token, null), session));
      return out;
    };
    requestCounter = 0;
    const a = await script(new Transport(createSocialnetSandbox(), 'alpha'));
    requestCounter = 0;
    const b = await script(new Transport(createSocialnetSandbox(), 'alpha'));
    assert.deepEqual(a, b);
    requestCounter = 0;
    const c = await script(new Transport(createSocialnetSandbox(), 'beta'));
    assert.notDeepEqual(a, c);
    const storyA = preloader(a[1]!.slice(a[1]!.indexOf('<!DOCTYPE')), PREFIX.timeline)!.data.user.timeline_list_feed_units.edges[0].node as Json;
    const storyC = preloader(c[1]!.slice(c[1]!.indexOf('<!DOCTYPE')), PREFIX.timeline)!.data.user.timeline_list_feed_units.edges[0].node as Json;
    assert.equal(storyA.post_id, storyC.post_id);
    assert.notEqual(JSON.stringify(storyA.comet_sections.content), JSON.stringify(storyC.comet_sections.content));
  });
});

describe('catalogue', () => {
  test('the exported platform is socialnet with the catalogue', () => {
    assert.equal(socialnetSandbox.name, 'socialnet');
    assert.ok(socialnetSandbox.catalogue.length >= 40);
    const endpoints = new Set(socialnetSandbox.catalogue.map((entry) => entry.endpoint));
    assert.deepEqual([...endpoints].sort(), ['/v1/socialnet/post/comment/replies', '/v1/socialnet/profile', '/v1/socialnet/profile/posts', '/v1/socialnet/profile/reels']);
    assert.equal(new Set(socialnetSandbox.catalogue.map((entry) => `${entry.endpoint}?${entry.query}`)).size, socialnetSandbox.catalogue.length, 'no duplicates');
  });

  for (const entry of socialnetSandbox.catalogue) {
    test(`${entry.endpoint} ${entry.description}`, async () => {
      const query = new URLSearchParams(entry.query);
      const url = query.get('url');
      if (url !== null) assert.ok(parseSocialnetUrl(url).ok, 'the url passes the service\'s URL rules');
      const pageId = query.get('pageId');
      if (pageId !== null) assert.match(pageId, ID);
      const transport = new Transport(createSocialnetSandbox(), 'catalogue');
      const flows = new Flows(transport);
      const result = await runApiCall(flows, entry.endpoint, query, /^Rotating/.test(entry.description) ? 2 : 1);
      const documented = /→ ([0-9]{3}) ([A-Z_]+)/.exec(entry.description);
      assert.equal(result.status, Number(documented?.[1] ?? 200), JSON.stringify(result));
      assert.equal(result.code, documented?.[2], JSON.stringify(result));
      if (/gated true/.test(entry.description)) assert.equal(result.gated, true);
      if (/\[\]/.test(entry.description)) assert.equal(result.items, 0);
      if (/^Slow/.test(entry.description)) assert.ok(transport.maxDelay > 0);
      if (/follow paging\.cursor/.test(entry.description)) assert.equal(result.hasNext, true);
      if (/transient/.test(entry.description)) assert.ok(flows.transientAnswers >= 1, 'a transient answer came first');
      if (/^Rotating/.test(entry.description) && entry.endpoint !== '/v1/socialnet/profile') {
        if (result.hasNext) assert.ok(flows.staleRetries >= 1, 'the cursor page met a stale session');
      }
    });
  }
});
