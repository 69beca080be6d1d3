// `POST /api/graphql/` of the socialnet sandbox (src/platforms/socialnet/README.md, "GraphQL"
// and "Signals"). Checks in the README's order: rate limit (and the other account
// blocks), lsd, doc id, required variables, node id, cursor or expansion token. Framing varies
// per query: `for (;;);` or not, Content-Type, compact or pretty JSON, `\/` and `\uXXXX`
// escaping, key order, WARNING errors next to data, extra NDJSON lines.
import { Rng, type SandboxContext, type SandboxRequest, type SandboxResponse } from '../../common.ts';
import { accountById, accountByNo, faultOf, isVisible, withDelay, type AccountSpec } from './accounts.ts';
import {
  commentNode,
  firstLineEdges,
  reelEdge,
  reelsPageSize,
  replyCount,
  repliesPageSize,
  storyNode,
  timelinePageSize,
  topCommentCount,
  type Json,
} from './data.ts';
import {
  cursorOf,
  expansionTokenOf,
  parseCollectionId,
  parseCommentFeedbackId,
  parseCursor,
  parseLegacyId,
  parsePostId,
} from './ids.ts';
import { encodeJson, loginWall, reverseKeys, tooManyRequestsPage } from './pages.ts';
import { FRIENDLY } from './session.ts';
import type { SeedState } from './state.ts';

export const RELAY_FLAGS = [
  '__relay_internal__pv__CometUFIIsRTAEnabledrelayprovider',
  '__relay_internal__pv__IsWorkUserrelayprovider',
  '__relay_internal__pv__CometUFIReactionsEnableShortNamerelayprovider',
] as const;

const STREAM_LABEL = 'ProfileCometTimelineFeed_user$stream$ProfileCometTimelineFeed_user_timeline_list_feed_units';
const PAGE_INFO_LABEL = 'ProfileCometTimelineFeed_user$defer$ProfileCometTimelineFeed_user_timeline_list_feed_units$page_info';
const OTHER_LABEL = 'ProfileCometTimelineFeed_user$defer$ProfileCometTimelineFeedStoryPrefetch_user';

type Vars = Record<string, unknown>;

interface ErrorSpec {
  code: number;
  message: string;
  description: string;
  transient: boolean;
}

export const ERRORS = {
  rateLimit: { code: 1675004, message: 'Rate limit exceeded', description: 'Too many requests. Please wait a few minutes and try again.', transient: true },
  lsd: { code: 1357004, message: 'Invalid lsd', description: 'Your session has expired. Please refresh the page and try again.', transient: false },
  docId: { code: 1675030, message: 'Unknown doc_id', description: 'The persisted query is not known to the server.', transient: false },
  missing: { code: 1675011, message: 'missing_required_variable_value', description: 'A required variable is missing or has the wrong type.', transient: false },
  invalid: { code: 1675012, message: 'invalid_variable_value', description: 'A variable value is not valid.', transient: false },
} satisfies Record<string, ErrorSpec>;

function errorObject(rng: Rng, error: ErrorSpec, severity: 'CRITICAL' | 'WARNING' = 'CRITICAL'): Json {
  return {
    message: error.message,
    severity,
    code: error.code,
    api_error_code: null,
    summary: severity === 'WARNING' ? 'Query warning' : 'Query error',
    description: error.description,
    is_silent: severity === 'WARNING',
    is_transient: error.transient,
    requires_reauth: false,
    allow_user_retry: error.transient,
    debug_info: null,
    query_path: null,
    trace_id: `A${rng.chars(10, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789')}`,
    www_request_id: `A${rng.chars(22, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-')}`,
  };
}

const WARNING: ErrorSpec = { code: 1675002, message: 'A field you requested is deprecated', description: 'Some requested fields will be removed.', transient: false };

/** Presentation of one GraphQL answer. */
class Framing {
  readonly rng: Rng;
  readonly prefix: string;
  readonly contentType: string;
  readonly slashes: boolean;
  readonly ascii: boolean;
  readonly pretty: boolean;
  readonly reorder: boolean;
  readonly warning: boolean;

  constructor(seed: string, key: string) {
    this.rng = new Rng(seed, `graphql:${key}`);
    this.prefix = this.rng.bool(0.6) ? 'for (;;);' : '';
    this.contentType = this.rng.bool(0.5) ? 'text/html; charset="utf-8"' : 'application/json';
    this.slashes = this.rng.bool(0.3);
    this.ascii = this.rng.bool(0.3);
    this.pretty = this.rng.bool(0.3);
    this.reorder = this.rng.bool(0.2);
    this.warning = this.rng.bool(0.2);
  }

  #encode(value: unknown, indent: number): string {
    return encodeJson(this.reorder ? reverseKeys(value) : value, { slashes: this.slashes, ascii: this.ascii, indent });
  }

  /** One JSON document (reels, replies, errors of any query). */
  document(value: Json): SandboxResponse {
    const body = this.#encode(value, this.pretty ? 1 : 0);
    return { status: 200, headers: { 'content-type': this.contentType }, body: `${this.prefix}${this.pretty ? `${body}\n` : body}` };
  }

  /** NDJSON lines (timeline): compact, `\n`-separated, the last with or without a newline. */
  lines(values: Json[]): SandboxResponse {
    const body = values.map((value) => this.#encode(value, 0)).join('\n') + (this.rng.bool(0.5) ? '\n' : '');
    return { status: 200, headers: { 'content-type': this.contentType }, body: `${this.prefix}${body}` };
  }

  error(error: ErrorSpec, timeline: boolean): SandboxResponse {
    const value = { errors: [errorObject(this.rng, error)], data: null, extensions: { is_final: true } };
    return timeline ? this.lines([value]) : this.document(value);
  }

  withWarning(value: Json): Json {
    return this.warning ? { errors: [errorObject(this.rng, WARNING, 'WARNING')], ...value } : value;
  }
}

function parseVariables(raw: string | null): Vars | null {
  if (raw === null) return null;
  try {
    const value: unknown = JSON.parse(raw);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Vars) : null;
  } catch {
    return null;
  }
}

/** The account a query is about, read from its `id` variable before any check. */
function targetAccount(friendly: string | null, variables: Vars | null): AccountSpec | undefined {
  const id = variables?.id;
  if (typeof id !== 'string') return undefined;
  if (friendly === FRIENDLY.timeline) return accountById(id);
  if (friendly === FRIENDLY.reels) {
    const no = parseCollectionId(id);
    return no === null ? undefined : accountByNo(no);
  }
  if (friendly === FRIENDLY.replies) {
    const parsed = parseCommentFeedbackId(id);
    const post = parsed === null ? null : parsePostId('post', parsed.postId);
    return post === null ? undefined : accountByNo(post.no);
  }
  return undefined;
}

const isInteger = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value);
const hasKey = (variables: Vars, key: string): boolean => Object.prototype.hasOwnProperty.call(variables, key);
const isCursor = (value: unknown): value is string | null => value === null || typeof value === 'string';

/** True when the query's required variables are present with the right types. */
function requiredPresent(friendly: string, variables: Vars | null): boolean {
  if (variables === null) return false;
  if (!RELAY_FLAGS.every((flag) => typeof variables[flag] === 'boolean')) return false;
  if (typeof variables.id !== 'string') return false;
  if (friendly === FRIENDLY.replies) {
    return typeof variables.expansionToken === 'string' && hasKey(variables, 'repliesAfterCursor') && isCursor(variables.repliesAfterCursor);
  }
  return isInteger(variables.count) && hasKey(variables, 'cursor') && isCursor(variables.cursor);
}

const clampCount = (count: number): number => Math.min(10, Math.max(1, count));

export function handleGraphql(state: SeedState, request: SandboxRequest, context: SandboxContext): SandboxResponse {
  if (request.method.toUpperCase() !== 'POST') {
    return { status: 405, headers: { 'content-type': 'text/plain; charset=utf-8', allow: 'POST' }, body: 'Method Not Allowed' };
  }
  const form = new URLSearchParams(request.body);
  const friendly = form.get('sn_api_req_friendly_name');
  const rawVariables = form.get('variables');
  const variables = parseVariables(rawVariables);
  const framing = new Framing(state.seed, `${friendly}:${rawVariables}`);
  const timeline = friendly === FRIENDLY.timeline;
  const account = targetAccount(friendly, variables);

  const fault = account ? faultOf(account, context) : 0;
  if (typeof fault !== 'number') return fault;
  const answer = (response: SandboxResponse): SandboxResponse => withDelay(response, fault);
  if (account) {
    const blocked = accountBlock(state, account, framing, timeline);
    if (blocked) return answer(blocked);
  }

  // lsd: known, unexpired, and the header equal to the form field.
  const lsd = form.get('lsd');
  if (lsd === null || request.headers['x-sn-lsd'] !== lsd || state.sessions.checkLsd(lsd, account) === null) {
    return answer(framing.error(ERRORS.lsd, timeline));
  }
  // doc id: the current doc id of the friendly name.
  const known = friendly === FRIENDLY.timeline || friendly === FRIENDLY.reels || friendly === FRIENDLY.replies;
  const docId = form.get('doc_id') ?? '';
  if (!known || state.sessions.checkDocId(friendly, docId, account) === null) {
    return answer(framing.error(ERRORS.docId, timeline));
  }
  if (!requiredPresent(friendly, variables)) return answer(framing.error(ERRORS.missing, timeline));

  const vars = variables as Vars;
  let response: SandboxResponse | 'invalid' | 'not-found';
  if (friendly === FRIENDLY.timeline) response = timelineAnswer(state, vars, framing);
  else if (friendly === FRIENDLY.reels) response = reelsAnswer(state, vars, framing);
  else response = repliesAnswer(state, vars, framing);

  if (response === 'invalid') return answer(framing.error(ERRORS.invalid, timeline));
  if (response === 'not-found') {
    const empty = { data: { node: null }, extensions: { is_final: true } };
    return answer(timeline ? framing.lines([empty]) : framing.document(empty));
  }
  // a transient 200 on the first attempt, the real answer on the retry.
  if (account?.hiccup && context.attempt % 2 === 1) {
    const transient = hiccupOf(account.hiccup, response, timeline, framing);
    if (transient !== null) return answer(transient);
  }
  if (account && account.state === 'rotating') state.sessions.retireFor(account);
  return answer(response);
}

/** The transient form of a successful answer, or null when the hiccup does not apply to the query. */
function hiccupOf(hiccup: NonNullable<AccountSpec['hiccup']>, response: SandboxResponse, timeline: boolean, framing: Framing): SandboxResponse | null {
  if ('reset' in response) return null;
  if (hiccup === 'empty') {
    // Only the prefix (and sometimes whitespace) is left.
    return { ...response, body: `for (;;);${framing.rng.bool(0.5) ? '\n' : ''}` };
  }
  if (!timeline) return null;
  const body = String(response.body).trimEnd();
  const last = body.lastIndexOf('\n');
  // The page_info line is always the last one.
  if (hiccup === 'no-page-info') return { ...response, body: `${body.slice(0, last)}\n` };
  return { ...response, body: body.slice(0, last + 1 + Math.floor((body.length - last - 1) / 2)) };
}

/** Account-level blocks, answered before any session check (rate limits come first: README.md, "GraphQL"). */
function accountBlock(state: SeedState, account: AccountSpec, framing: Framing, timeline: boolean): SandboxResponse | null {
  switch (account.state) {
    case 'http-429':
      return { status: 429, headers: { 'content-type': 'text/html; charset="utf-8"', 'retry-after': '60' }, body: tooManyRequestsPage() };
    case 'graphql-rate-limit':
      return framing.error(ERRORS.rateLimit, timeline);
    case 'checkpoint':
      return { status: 302, headers: { location: `/checkpoint/?next=${encodeURIComponent('https://www.socialnet.example/api/graphql/')}` }, body: '' };
    case 'login-wall':
      return { status: 200, headers: { 'content-type': 'text/html; charset="utf-8"' }, body: loginWall(new Rng(state.seed, 'graphql-login-wall'), 'https://www.socialnet.example/') };
    default:
      return null;
  }
}

function visibleAccount(account: AccountSpec | undefined): AccountSpec | null {
  return account && isVisible(account) ? account : null;
}

function timelineAnswer(state: SeedState, variables: Vars, framing: Framing): SandboxResponse | 'invalid' | 'not-found' {
  const account = visibleAccount(accountById(variables.id as string));
  if (!account) return 'not-found';
  const profile = state.profile(account);
  const cursor = variables.cursor as string | null;
  const start = cursor === null ? 0 : parseCursor('timeline', profile.id, cursor);
  if (start === null || (cursor !== null && account.state === 'cursor-rejects')) return 'invalid';
  const size = timelinePageSize(state.seed, account, start, clampCount(variables.count as number));
  const end = Math.min(account.posts, start + size);
  const edges: Json[] = [];
  for (let index = start; index < end; index += 1) {
    edges.push({ node: storyNode(state.seed, profile, index), cursor: cursorOf('timeline', profile.id, index + 1) });
  }
  const first = Math.min(firstLineEdges(state.seed, account, start), edges.length);
  const lines: Json[] = [
    framing.withWarning({
      data: { node: { __typename: 'User', id: profile.id, timeline_list_feed_units: { edges: edges.slice(0, first) } } },
      extensions: { prefetch_uris_v2: [], is_final: false },
    }),
  ];
  edges.slice(first).forEach((edge, offset) => {
    lines.push({ label: STREAM_LABEL, path: ['node', 'timeline_list_feed_units', 'edges', first + offset], data: edge, extensions: { is_final: false } });
  });
  if (framing.rng.bool(0.25)) {
    lines.push({ label: OTHER_LABEL, path: ['node'], data: { prefetch_story_ids: edges.map((edge) => ((edge.node as Json).id as string)) }, extensions: { is_final: false } });
  }
  lines.push({
    label: PAGE_INFO_LABEL,
    path: ['node', 'timeline_list_feed_units'],
    data: { page_info: { end_cursor: end > start ? cursorOf('timeline', profile.id, end) : cursor, has_next_page: end < account.posts } },
    extensions: { is_final: true },
  });
  return framing.lines(lines);
}

function reelsAnswer(state: SeedState, variables: Vars, framing: Framing): SandboxResponse | 'invalid' | 'not-found' {
  const no = parseCollectionId(variables.id as string);
  const account = visibleAccount(no === null ? undefined : accountByNo(no));
  if (!account) return 'not-found';
  const profile = state.profile(account);
  const cursor = variables.cursor as string | null;
  const start = cursor === null ? 0 : parseCursor('reels', profile.collectionId, cursor);
  if (start === null || (cursor !== null && account.state === 'cursor-rejects')) return 'invalid';
  const end = Math.min(account.reels, start + reelsPageSize(state.seed, account, start, clampCount(variables.count as number)));
  const edges: Json[] = [];
  for (let index = start; index < end; index += 1) edges.push(reelEdge(state.seed, profile, index));
  return framing.document(
    framing.withWarning({
      data: {
        node: {
          __typename: 'AppCollection',
          id: profile.collectionId,
          aggregated_sn_shorts: {
            edges,
            page_info: { end_cursor: end > start ? cursorOf('reels', profile.collectionId, end) : cursor, has_next_page: end < account.reels },
          },
        },
      },
      extensions: { is_final: true },
    }),
  );
}

/** The comment (or reply) a feedback id names, when it exists and is visible. */
export function resolveComment(state: SeedState, feedbackId: string) {
  const parsed = parseCommentFeedbackId(feedbackId);
  const post = parsed === null ? null : parsePostId('post', parsed.postId);
  if (parsed === null || post === null) return null;
  const account = visibleAccount(accountByNo(post.no));
  if (!account || post.index >= account.posts) return null;
  const position = parseLegacyId(parsed.postId, parsed.legacyId);
  if (position === null || position.comment >= topCommentCount(state.seed, account, post.index)) return null;
  const replies = replyCount(state.seed, account, post.index, position.comment);
  if (position.reply >= replies) return null;
  return { account, index: post.index, comment: position.comment, reply: position.reply, replies: position.reply < 0 ? replies : 0 };
}

function repliesAnswer(state: SeedState, variables: Vars, framing: Framing): SandboxResponse | 'invalid' | 'not-found' {
  const feedbackId = variables.id as string;
  const target = resolveComment(state, feedbackId);
  if (!target) return 'not-found';
  if (variables.expansionToken !== expansionTokenOf(feedbackId)) return 'invalid';
  const cursor = variables.repliesAfterCursor as string | null;
  const start = cursor === null ? 0 : parseCursor('replies', feedbackId, cursor);
  if (start === null || (cursor !== null && target.account.state === 'cursor-rejects')) return 'invalid';
  const profile = state.profile(target.account);
  const end = Math.min(target.replies, start + repliesPageSize(state.seed, target.account, start));
  const edges: Json[] = [];
  for (let reply = start; reply < end; reply += 1) {
    edges.push({ node: commentNode(state.seed, profile, target.index, target.comment, reply), cursor: cursorOf('replies', feedbackId, reply + 1) });
  }
  return framing.document(
    framing.withWarning({
      data: {
        node: {
          __typename: 'Feedback',
          id: feedbackId,
          replies_fields: { total_count: target.replies, count: target.replies },
          replies_connection: {
            edges,
            page_info: {
              end_cursor: end > start ? cursorOf('replies', feedbackId, end) : cursor,
              has_next_page: end < target.replies,
              start_cursor: null,
              has_previous_page: false,
            },
          },
        },
      },
      extensions: { is_final: true },
    }),
  );
}
