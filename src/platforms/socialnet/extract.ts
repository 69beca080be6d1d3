// The four socialnet extractors (README.md): profile posts, profile reels,
// comment replies and profile info. Each reads pages or GraphQL through the request's upstream
// client and the shared session, maps them (mapping.ts) and returns the endpoint's
// data (without `paging` and `fetchedAt`) plus the upstream position of the next page.
import type { ExtractContext, Extractor, UpstreamPosition } from '../../endpoints/types.ts';
import { UpstreamOutcome } from '../../upstream/outcomes.ts';
import { fetchAndRead } from '../../upstream/read.ts';
import { integer, string, type Node } from '../shared/read.ts';
import { checkRedirect, loadPage, pagePath, referenceOf, unrecognised, type PageResult } from './pages.ts';
import type { Post, Profile, Reel, Reply } from './schema.ts';
import { PLATFORM } from './urls.ts';
import { scanPage, readBlocks, type PreloaderKind } from './html.ts';
import { isPageInfoLine, runQuery } from './graphql.ts';
import {
  QUERY_NAMES,
  Sessions,
  homeSession,
  readPageSession,
  sessionFromPage,
  type SessionContext,
  type SessionStore,
  type SocialnetSession,
} from './session.ts';
import { mapPost, mapReel, mapReply, nextCursor } from './mapping.ts';
import { mapGatedProfile, mapProfile, readAboutFields, readBusinessHours } from './mapping-profile.ts';

export { MemorySessionStore, type SessionStore, type SocialnetSession } from './session.ts';

export interface SocialnetExtractorOptions {
  /** Where the shared session lives; default: the service's shared state (`context.shared`), else this process. */
  sessions?: SessionStore;
  /**
   * The `Origin` (and `Referer` base) sent with GraphQL requests; the upstream does not
   * check it. Default: the canonical origin `https://www.socialnet.example`.
   */
  origin?: string;
  /** Clock for session ages; default `Date.now`. */
  now?: () => number;
  /** How long a session is reused (at most 15 minutes). */
  sessionMaxAgeMs?: number;
}

/** Page sizes the queries ask for (hints the upstream may undercut). */
const TIMELINE_COUNT = 3;
const REELS_COUNT = 10;

/** GET / and read its session. */
function loadHome({ upstream }: SessionContext, now: number): Promise<SocialnetSession> {
  return fetchAndRead(upstream, { path: '/', method: 'GET', kind: 'page' }, (response) => {
    checkRedirect(response);
    if (response.status !== 200) throw new UpstreamOutcome('blocked', PLATFORM, `home page answered HTTP ${response.status}`);
    const page = scanPage(response.body);
    const session = homeSession(readPageSession(page, readBlocks(page.blocks)), now);
    return response.via ? { ...session, via: response.via } : session;
  });
}

const required = (position: UpstreamPosition, field: string): string => {
  const value = position[field];
  if (typeof value !== 'string' || value === '') {
    throw new UpstreamOutcome('rejected_cursor', PLATFORM, `cursor position without ${field}`);
  }
  return value;
};

const gated = (result: Extract<PageResult, { kind: 'gated' }>, what: string): UpstreamOutcome =>
  new UpstreamOutcome('gated', PLATFORM, `${what} is gated (${result.reason ?? 'no reason'})`);

/** The extractor of each socialnet endpoint. */
export interface SocialnetExtractors {
  posts: Extractor<{ posts: Post[]; postCount: number }>;
  reels: Extractor<{ reels: Reel[]; reelCount: number }>;
  replies: Extractor<{ replies: Reply[]; replyCount: number; feedbackId: string }>;
  profile: Extractor<{ gated: boolean; profile: Profile }>;
}

export function createSocialnetExtractors(options: SocialnetExtractorOptions = {}): SocialnetExtractors {
  const origin = options.origin ?? 'https://www.socialnet.example';
  const now = options.now ?? Date.now;
  const sessions = new Sessions(options.sessions ?? null, (context) => loadHome(context, now()), {
    now,
    maxAgeMs: options.sessionMaxAgeMs,
  });

  /** GETs a page, keeps the session it carries, and gives its content or its gate. */
  const page = async (context: ExtractContext, path: string, needs: readonly PreloaderKind[]): Promise<PageResult> => {
    const result = await loadPage(context.upstream, path, needs);
    if (result.kind === 'content') {
      const found = sessionFromPage(readPageSession(result.page, result.sjs), now());
      const session = found && result.via ? { ...found, via: result.via } : found;
      // Keeping it is an optimisation: a store that fails here must not fail the request.
      if (session !== null) await sessions.offer(session, context).catch((error: unknown) => context.log.warn({ err: error }, 'socialnet session not stored'));
    }
    return result;
  };

  const preloader = (result: Extract<PageResult, { kind: 'content' }>, kind: PreloaderKind): Node => {
    const node = result.results.get(kind);
    if (node === undefined) throw unrecognised(`no ${kind} preloader`);
    return node;
  };

  // ------------------------------------------------------------ profile posts

  const posts: SocialnetExtractors['posts'] = async ({ params, position }, context) => {
    let profileId: string;
    let stories: Node[];
    let cursor: string | null;
    let firstBatch: boolean;
    if (position === null && params.url !== undefined) {
      // the profile page's timeline preloader holds the first batch.
      const result = await page(context, pagePath(referenceOf(params.url), 'profile'), ['timeline']);
      if (result.kind === 'gated') throw gated(result, 'the profile');
      const user = preloader(result, 'timeline').node('data.user');
      const units = user.node('timeline_list_feed_units');
      profileId = user.get('id', string);
      stories = units.list('edges').map((edge) => edge.node('node'));
      cursor = nextCursor(units.node('page_info'));
      firstBatch = true;
    } else {
      // the timeline query, from the top for a pageId or from a cursor position.
      firstBatch = position === null;
      profileId = position === null ? (params.pageId ?? '') : required(position, 'profileId');
      if (profileId === '') throw new Error('socialnet posts extractor given neither url nor pageId');
      const lines = await runQuery(sessions, context, {
        name: QUERY_NAMES.timeline,
        variables: timelineVariables(profileId, position === null ? null : required(position, 'cursor')),
        framing: 'ndjson',
        origin,
      });
      ({ stories, cursor } = readTimeline(lines));
    }
    // a first batch without stories is "no public posts"; a later empty page ends the listing.
    if (firstBatch && stories.length === 0) throw new UpstreamOutcome('not_found', PLATFORM, 'the profile has no public posts');
    const mapped = stories.map((story) => mapPost(story));
    return {
      data: { posts: mapped, postCount: mapped.length },
      next: cursor === null ? null : { profileId, cursor },
    };
  };

  // ------------------------------------------------------------ profile reels

  const reels: SocialnetExtractors['reels'] = async ({ params, position }, context) => {
    let profileId: string;
    let collection: Node;
    if (position === null) {
      // the reels tab; the collection id is read from it, never built.
      const result = await page(context, pagePath(referenceOf(params.url), 'reels'), ['reels']);
      if (result.kind === 'gated') throw gated(result, 'the profile');
      profileId = preloader(result, 'header').get('data.user.profile_header_renderer.user.id', string);
      collection = preloader(result, 'reels').node('data.node');
    } else {
      // the reels query with the carried collection id and cursor.
      profileId = required(position, 'profileId');
      const [document] = await runQuery(sessions, context, {
        name: QUERY_NAMES.reels,
        variables: reelsVariables(required(position, 'collectionId'), required(position, 'cursor')),
        framing: 'json',
        origin,
      });
      collection = document.node('data.node');
    }
    const collectionId = collection.get('id', string);
    const connection = collection.node('aggregated_sn_shorts');
    const mapped = connection.list('edges').map((edge) => mapReel(edge));
    const cursor = nextCursor(connection.node('page_info'));
    return {
      data: { reels: mapped, reelCount: mapped.length },
      next: cursor === null ? null : { profileId, collectionId, cursor },
    };
  };

  // ------------------------------------------------------------ comment replies

  const replies: SocialnetExtractors['replies'] = async ({ params, position }, context) => {
    // the API's feedbackId and expansionToken go unchanged into the query.
    const feedbackId = position === null ? (params.feedbackId ?? '') : required(position, 'feedbackId');
    const expansionToken = position === null ? (params.expansionToken ?? '') : required(position, 'expansionToken');
    const [document] = await runQuery(sessions, context, {
      name: QUERY_NAMES.replies,
      variables: repliesVariables(feedbackId, expansionToken, position === null ? null : required(position, 'cursor')),
      framing: 'json',
      origin,
    });
    const N = document.node('data.node');
    const connection = N.node('replies_connection');
    const mapped = connection.list('edges').map((edge) => mapReply(edge.node('node')));
    const cursor = nextCursor(connection.node('page_info'));
    return {
      data: { replies: mapped, replyCount: N.get('replies_fields.total_count', integer), feedbackId: N.get('id', string) },
      next: cursor === null ? null : { feedbackId, expansionToken, cursor },
    };
  };

  // ------------------------------------------------------------ profile info

  const profile: SocialnetExtractors['profile'] = async ({ params }, context) => {
    const reference = referenceOf(params.url);
    const about = await page(context, pagePath(reference, 'about'), ['about']);
    if (about.kind === 'gated') {
      // the limited response, or 404 when the request does not allow it.
      if (params.allowGated === 'false') throw gated(about, 'the profile');
      return { data: { gated: true, profile: mapGatedProfile(about.page.meta) } };
    }
    const U = preloader(about, 'header').node('data.user.profile_header_renderer.user');
    const fields = readAboutFields(preloader(about, 'about').node('data.user'));
    let hours: Profile['businessHours'] = null;
    if (params.businessHours !== 'false') {
      // The hours are only on the profile page's intro tiles.
      const main = await page(context, pagePath(reference, 'profile'), ['introTiles']);
      if (main.kind === 'gated') throw gated(main, 'the profile page');
      hours = readBusinessHours(preloader(main, 'introTiles').node('data.user'));
    }
    return { data: { gated: false, profile: mapProfile(U, fields, about.page.meta.get('og:description') ?? null, hours) } };
  };

  return { posts, reels, replies, profile };
}

/** timeline query variables. */
function timelineVariables(id: string, cursor: string | null): Record<string, unknown> {
  return {
    afterTime: null,
    beforeTime: null,
    count: TIMELINE_COUNT,
    cursor,
    feedLocation: 'TIMELINE',
    feedbackSource: 0,
    focusCommentID: null,
    memorializedSplitTimeFilter: null,
    omitPinnedPost: true,
    postedBy: null,
    privacy: null,
    privacySelectorRenderLocation: 'COMET_STREAM',
    renderLocation: 'timeline',
    scale: 1,
    stream_count: 1,
    taggedInOnly: null,
    useDefaultActor: false,
    id,
  };
}

/** reels query variables. */
function reelsVariables(id: string, cursor: string | null): Record<string, unknown> {
  return {
    count: REELS_COUNT,
    cursor,
    feedLocation: 'COMET_MEDIA_VIEWER',
    feedbackSource: 65,
    focusCommentID: null,
    renderLocation: null,
    scale: 1,
    useDefaultActor: false,
    id,
  };
}

/** replies query variables. */
function repliesVariables(id: string, expansionToken: string, cursor: string | null): Record<string, unknown> {
  return {
    clientKey: null,
    expansionToken,
    feedLocation: 'POST_PERMALINK_DIALOG',
    focusCommentID: null,
    repliesAfterCount: null,
    repliesAfterCursor: cursor,
    repliesBeforeCount: null,
    repliesBeforeCursor: null,
    scale: 1,
    useDefaultActor: false,
    id,
  };
}

/**
 * the stories of a timeline response, first line's edges then the stream lines' nodes in
 * order, and the cursor of its page_info line; a response without that line is incomplete.
 */
function readTimeline(lines: readonly [Node, ...Node[]]): { stories: Node[]; cursor: string | null } {
  const [first, ...rest] = lines;
  const stories = first.listOrEmpty('data.node.timeline_list_feed_units.edges').map((edge) => edge.node('node'));
  let pageInfo: Node | null = null;
  for (const line of rest) {
    const label = line.at('label').value;
    if (typeof label !== 'string') continue;
    if (label.includes('$stream$')) stories.push(line.node('data.node'));
    else if (isPageInfoLine(line) && pageInfo === null) pageInfo = line.node('data.page_info');
  }
  if (pageInfo === null) throw new UpstreamOutcome('transient', PLATFORM, 'timeline response without its page_info line');
  return { stories, cursor: nextCursor(pageInfo) };
}

/** The extractors with an in-memory session. */
export const socialnetExtractors: SocialnetExtractors = createSocialnetExtractors();
