// linkpage-b extractors (upstream/linkpage-b.md). One endpoint, `linkpage-b.page`: one HTML
// page, no pagination.
import type { ExtractContext, Extractor, ExtractRequest, ExtractResult } from '../../endpoints/types.ts';
import { UpstreamOutcome } from '../../upstream/outcomes.ts';
import { fetchAndRead } from '../../upstream/read.ts';
import type { UpstreamResponse } from '../../upstream/types.ts';
import { readNextData } from './next-data.ts';
import { mapPage, pageState } from './page.ts';
import { PLATFORM, unrecognised } from './read.ts';
import { isBlockPath, pageRequest } from './request.ts';
import { parseLinkpageBUrl } from './urls.ts';

export { mapPage, pageState, mapLink } from './page.ts';
export type { LinkpageBPage, LinkpageBLink } from './page.ts';
export { readNextData, findNextDataText } from './next-data.ts';
export { pageRequest } from './request.ts';

const outcome = (kind: UpstreamOutcome['kind'], message: string) => new UpstreamOutcome(kind, PLATFORM, message);

/** The username a canonical target URL names (the endpoint's `normalise` produced it). */
function usernameOf(params: ExtractRequest['params']): string {
  const checked = parseLinkpageBUrl(params.url ?? '');
  if (!checked.ok) throw new Error(`linkpage-b: target params carry no valid page URL (${checked.message})`);
  return checked.username;
}

/**
 * Classifies an answer that is not a page to map (sections 7 and 8). Returns normally only for
 * a `200` with a non-empty body.
 */
function judgeStatus(response: UpstreamResponse, requested: string): void {
  const { status } = response;
  if (response.offPlatformLocation !== undefined) {
    throw outcome('blocked', `linkpage-b redirected ${requested} off the platform (${response.offPlatformLocation})`);
  }
  // A redirect (the final path is not the one requested) to the login or a challenge page. A
  // username may itself start with "challenge": only where the client was sent counts.
  const redirected = (response.path.split(/[?#]/, 1)[0] ?? '') !== requested;
  if (redirected && isBlockPath(response.path)) throw outcome('blocked', `linkpage-b redirected ${requested} to ${response.path}`);
  if (status >= 300 && status < 400) {
    const location = response.headers.location ?? '';
    if (isBlockPath(location)) throw outcome('blocked', `linkpage-b redirected ${requested} to ${location}`);
    throw unrecognised(`unexpected redirect (HTTP ${status}) of ${requested} to "${location}"`);
  }
  if (status === 404 || status === 410) throw outcome('not_found', `linkpage-b has no page at ${requested} (HTTP ${status})`);
  if (status === 403 || status === 429) throw outcome('blocked', `linkpage-b refused ${requested} (HTTP ${status})`);
  if (status >= 500) throw outcome('transient', `linkpage-b answered HTTP ${status} for ${requested}`);
  if (status !== 200) throw unrecognised(`unexpected HTTP ${status} for ${requested}`);
}

/**
 * Fetches the page, its status judged inside the client's retry loop: the client retries
 * transient failures (an empty `200` included), and so a transient answer `judgeStatus` finds
 * is asked again too.
 */
function fetchPage(username: string, context: ExtractContext): Promise<UpstreamResponse> {
  const request = pageRequest(username);
  return fetchAndRead(context.upstream, request, (response) => {
    judgeStatus(response, request.path);
    return response;
  });
}

/** `GET /v1/linkpage-b/page`: one page, no pagination (`next` is always null). */
export const extractPage: Extractor = async (request, context): Promise<ExtractResult> => {
  const username = usernameOf(request.params);
  const response = await fetchPage(username, context);
  const nextData = readNextData(response.body);
  if (!nextData.ok) throw unrecognised(nextData.problem);
  const state = pageState(nextData.value);
  if (state.kind === 'not_found') throw outcome('not_found', `linkpage-b has no active page "${username}" (${state.why})`);
  return { data: { page: mapPage(state.PP) }, next: null };
};

