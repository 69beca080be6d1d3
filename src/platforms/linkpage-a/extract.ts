// The linkpage-a extractor (README.md): one endpoint, `linkpage-a.profile`, one HTML page, no
// pagination. The checks run in the order of README.md, "Signals": blocks, not found, the
// payload and its `profile:` entry, `is_private`, then the rest of the PROFILE.
import type { ExtractContext, Extractor, ExtractRequest } from '../../endpoints/types.ts';
import { UpstreamOutcome } from '../../upstream/outcomes.ts';
import { fetchAndRead } from '../../upstream/read.ts';
import type { UpstreamResponse } from '../../upstream/types.ts';
import { isPrivate, mapProfile, profileNode } from './mapping.ts';
import { profilePageSameAs } from '../shared/json-ld.ts';
import { scanPage, type ScannedPage } from './page.ts';
import { PayloadProblem, profileOf } from './payload.ts';
import { isBlockPath, profilePageRequest } from './requests.ts';
import type { LinkpageAProfile } from './schema.ts';
import { PLATFORM, parseLinkpageAUrl } from './urls.ts';

const outcome = (kind: UpstreamOutcome['kind'], message: string) => new UpstreamOutcome(kind, PLATFORM, message);
const unrecognised = (what: string) => outcome('unrecognised', `linkpage-a page not recognised: ${what}`);

/** The username a canonical target URL names (the endpoint's `normalise` produced it). */
function usernameOf(params: ExtractRequest['params']): string {
  const checked = parseLinkpageAUrl(params.url ?? '');
  if (!checked.ok) throw new Error(`linkpage-a: target params carry no valid profile URL (${checked.message})`);
  return checked.username;
}

/**
 * Blocks, judged on the final path and the challenge marker; the upstream client has already
 * dealt with 429, 5xx and transport failures.
 */
function checkBlocks(response: UpstreamResponse, page: ScannedPage): void {
  if (response.offPlatformLocation !== undefined) {
    throw outcome('blocked', `linkpage-a redirected off the platform (HTTP ${response.status} to ${response.offPlatformLocation})`);
  }
  if (isBlockPath(response.path)) throw outcome('blocked', `linkpage-a redirected to ${response.path}`);
  if (response.status === 403) throw outcome('blocked', 'linkpage-a answered HTTP 403 Forbidden');
  if (response.status === 401) throw outcome('blocked', 'linkpage-a answered HTTP 401 Unauthorized');
  if (page.challenge && page.payload === null) throw outcome('blocked', `linkpage-a challenge interstitial (HTTP ${response.status})`);
}

/** Fetches the profile page, scanned and judged inside the client's retry loop. */
function fetchPage(username: string, context: ExtractContext): Promise<{ response: UpstreamResponse; page: ScannedPage }> {
  return fetchAndRead(context.upstream, profilePageRequest(username), (response) => {
    const page = scanPage(response.body);
    checkBlocks(response, page);
    return { response, page };
  });
}

/** `GET /v1/linkpage-a/profile`: one page, no pagination (`next` is always null). */
export const extractProfile: Extractor<{ profile: LinkpageAProfile }> = async ({ params }, context) => {
  const username = usernameOf(params);
  const { response, page } = await fetchPage(username, context);

  if (response.status === 404 || response.status === 410) throw outcome('not_found', `linkpage-a has no profile "${username}" (HTTP ${response.status})`);
  if (response.status !== 200) throw unrecognised(`unexpected HTTP ${response.status}`);
  if (page.payload === null) throw unrecognised('no __NUXT_DATA__ payload');

  let found;
  try {
    found = profileOf(page.payload, username);
  } catch (error) {
    if (error instanceof PayloadProblem) throw unrecognised(error.message);
    throw error;
  }
  if (found.kind === 'not_found') throw outcome('not_found', `linkpage-a has no profile "${username}" (${found.why})`);

  // A private PROFILE is reduced, so this comes before any other member is required.
  const p = profileNode(found.profile);
  if (isPrivate(p)) throw outcome('not_found', `linkpage-a: the profile "${username}" is private`);
  return { data: { profile: mapProfile(p, profilePageSameAs(page.jsonLd), page.head) }, next: null };
};
