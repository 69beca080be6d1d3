// The snapmsg extractors (README.md): `snapmsg.profile` reads one profile page;
// `snapmsg.spotlight.comments` reads the Spotlight page and one comments batch, or, with a
// cursor, only the comments batch at the position the cursor carries.
import type { ExtractContext, Extractor, UpstreamPosition } from '../../endpoints/types.ts';
import { UpstreamOutcome } from '../../upstream/outcomes.ts';
import { fetchAndRead } from '../../upstream/read.ts';
import type { UpstreamRequest, UpstreamResponse } from '../../upstream/types.ts';
import { parseJson } from '../shared/json-ld.ts';
import { errorCode, mapCommentsPage, mapProfile, spotlightComments } from './mapping.ts';
import { readPage } from './page.ts';
import { commentsRequest, isBlockPath, profilePageRequest, spotlightPageRequest } from './requests.ts';
import type { SnapmsgComment, SnapmsgProfile } from './schema.ts';
import { PLATFORM, parseSpotlightUrl, SNAPMSG_HOSTS, SPOTLIGHT_ID } from './urls.ts';

const outcome = (kind: UpstreamOutcome['kind'], message: string) => new UpstreamOutcome(kind, PLATFORM, `snapmsg: ${message}`);
const unrecognised = (what: string) => new UpstreamOutcome('unrecognised', PLATFORM, `snapmsg page not recognised: ${what}`);

/**
 * Sends one request and applies the rules every snapmsg request shares (README.md, "Signals")
 * inside the client's retry loop; the client has already dealt with 429, 5xx and transport
 * failures.
 */
function send(request: UpstreamRequest, context: ExtractContext, what: string): Promise<UpstreamResponse> {
  return fetchAndRead(context.upstream, request, (response) => {
    if (response.offPlatformLocation !== undefined) {
      throw outcome('blocked', `the ${what} redirected off the platform (${response.offPlatformLocation})`);
    }
    if (isBlockPath(response.path)) throw outcome('blocked', `the ${what} redirected to ${response.path.split('?')[0]}`);
    if (response.status === 403) throw outcome('blocked', `the ${what} answered HTTP 403 (request blocked)`);
    return response;
  });
}

/** A page request's status: `200` is read, `404` is not found, anything else is not a page we know. */
function checkPageStatus(response: UpstreamResponse, what: string): void {
  if (response.status === 404) throw outcome('not_found', `the ${what} does not exist (HTTP 404)`);
  if (response.status !== 200) throw unrecognised(`the ${what} answered HTTP ${response.status}`);
}

// ------------------------------------------------------------------ snapmsg.profile

export const extractProfile: Extractor<{ profile: SnapmsgProfile }> = async ({ params }, context) => {
  const username = params.username;
  if (!username) throw new Error('snapmsg.profile: missing username parameter');
  const what = 'profile page';
  const response = await send(profilePageRequest(username), context, what);
  checkPageStatus(response, what);
  const page = readPage(response.body, what);
  if (page.kind === 'error_page') throw outcome('not_found', `the ${what} is a Next.js error page (account not found)`);
  return { data: { profile: mapProfile(page.nextData, page.jsonLd) }, next: null };
};

// ------------------------------------------------------------------ snapmsg.spotlight.comments

type CommentsData = { comments: SnapmsgComment[]; count: number };

/** Posts one comments request and maps the batch. */
async function commentsBatch(contextId: string, cursor: string, context: ExtractContext): Promise<{ data: CommentsData; next: UpstreamPosition | null }> {
  const what = 'comments request';
  const response = await send(commentsRequest(contextId, cursor), context, what);
  const body = parseJson(response.body);
  if (response.status !== 200) {
    const code = errorCode(body);
    if (response.status === 404) throw outcome('not_found', `the comments context no longer exists (HTTP 404 ${code ?? ''})`.trim());
    if (response.status === 400 && code === 'INVALID_CURSOR' && cursor !== '') {
      throw outcome('rejected_cursor', 'the comments cursor was rejected upstream (INVALID_CURSOR)');
    }
    throw unrecognised(`the comments request was answered HTTP ${response.status}${code ? ` ${code}` : ''}`);
  }
  const { comments, nextCursor } = mapCommentsPage(body);
  const next: UpstreamPosition | null = nextCursor === null ? null : { contextId, cursor: nextCursor };
  return { data: { comments, count: comments.length }, next };
}

/** The canonical form `normalise` gives the `url` parameter, up to the id. */
const CANONICAL_SPOTLIGHT = `https://${SNAPMSG_HOSTS.canonical}/spotlight/`;

/**
 * The Spotlight id of the `url` parameter. `normalise` has made it canonical, so the id is what
 * follows `https://www.snapmsg.example/spotlight/`; any other form is parsed in full.
 */
function spotlightIdOf(url: string): string {
  const id = url.startsWith(CANONICAL_SPOTLIGHT) ? url.slice(CANONICAL_SPOTLIGHT.length) : '';
  if (SPOTLIGHT_ID.test(id)) return id;
  const parsed = parseSpotlightUrl(url);
  if (!parsed.ok) throw new Error(`snapmsg.spotlight.comments: bad url parameter: ${parsed.message}`);
  return parsed.spotlightId;
}

export const extractSpotlightComments: Extractor<CommentsData> = async ({ params, position }, context) => {
  if (position !== null) {
    const { contextId, cursor } = position;
    if (typeof contextId !== 'string' || contextId === '' || typeof cursor !== 'string' || cursor === '') {
      throw outcome('rejected_cursor', 'the cursor does not carry a comments position');
    }
    return commentsBatch(contextId, cursor, context);
  }
  const spotlightId = spotlightIdOf(params.url ?? '');
  const what = 'Spotlight page';
  const response = await send(spotlightPageRequest(spotlightId), context, what);
  checkPageStatus(response, what);
  const page = readPage(response.body, what);
  if (page.kind === 'error_page') throw outcome('not_found', `the ${what} is a Next.js error page (Spotlight not found)`);
  const info = spotlightComments(page.nextData, spotlightId);
  if (info.kind === 'missing') throw outcome('not_found', `the ${what} does not hold Spotlight ${spotlightId}`);
  if (info.kind === 'disabled') return { data: { comments: [], count: 0 }, next: null }; // no comments request
  return commentsBatch(info.contextId, '', context);
};
