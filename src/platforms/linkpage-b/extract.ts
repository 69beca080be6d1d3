// The linkpage-b extractor (README.md): one endpoint, `linkpage-b.page`, one HTML page, no
// pagination.
import type { ExtractContext, Extractor, ExtractRequest } from '../../endpoints/types.ts';
import { UpstreamOutcome } from '../../upstream/outcomes.ts';
import { fetchAndRead } from '../../upstream/read.ts';
import type { UpstreamResponse } from '../../upstream/types.ts';
import { mapPage, pageState } from './mapping.ts';
import { readNextData } from './page.ts';
import { isBlockPath, pageRequest } from './requests.ts';
import type { LinkpageBPage } from './schema.ts';
import { PLATFORM, parseLinkpageBUrl } from './urls.ts';

const outcome = (kind: UpstreamOutcome['kind'], message: string) => new UpstreamOutcome(kind, PLATFORM, message);
const unrecognised = (what: string) => outcome('unrecognised', `linkpage-b page not recognised: ${what}`);

/** The username a canonical target URL names (the endpoint's `normalise` produced it). */
function usernameOf(params: ExtractRequest['params']): string {
  const checked = parseLinkpageBUrl(params.url ?? '');
  if (!checked.ok) throw new Error(`linkpage-b: target params carry no valid page URL (${checked.message})`);
  return checked.username;
}

/**
 * Classifies an answer that is not a page to map (README.md, "Signals"); the upstream client has
 * already dealt with 429, 5xx and transport failures. Returns normally only for a `200`.
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
  if (status === 403) throw outcome('blocked', `linkpage-b refused ${requested} (HTTP ${status})`);
  if (status !== 200) throw unrecognised(`unexpected HTTP ${status} for ${requested}`);
}

/** Fetches the page, its status judged inside the client's retry loop. */
function fetchPage(username: string, context: ExtractContext): Promise<UpstreamResponse> {
  const request = pageRequest(username);
  return fetchAndRead(context.upstream, request, (response) => {
    judgeStatus(response, request.path);
    return response;
  });
}

/** `GET /v1/linkpage-b/page`: one page, no pagination (`next` is always null). */
export const extractPage: Extractor<{ page: LinkpageBPage }> = async (request, context) => {
  const username = usernameOf(request.params);
  const response = await fetchPage(username, context);
  const nextData = readNextData(response.body);
  if (!nextData.ok) throw unrecognised(nextData.problem);
  const state = pageState(nextData.value);
  if (state.kind === 'not_found') throw outcome('not_found', `linkpage-b has no active page "${username}" (${state.why})`);
  return { data: { page: mapPage(state.PP) }, next: null };
};
