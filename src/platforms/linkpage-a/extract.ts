// linkpage-a extractor (upstream/linkpage-a.md): one HTML page per profile, no pagination.
// The checks run in the order of section 9: blocks and transient failures, not found, the
// payload and its `profile:` entry, `is_private`, then the rest of the PROFILE.
import type { ExtractContext, Extractor } from '../../endpoints/types.ts';
import { UpstreamOutcome } from '../../upstream/outcomes.ts';
import { fetchAndRead } from '../../upstream/read.ts';
import type { UpstreamResponse } from '../../upstream/types.ts';
import { sameAsFrom, scanPage, type ScannedPage } from './html.ts';
import { NuxtPayload, PayloadProblem } from './payload.ts';
import { PLATFORM, isRecord, mapProfile, unrecognised } from './profile.ts';
import { profilePageRequest } from './requests.ts';
import { parseLinkpageAUrl } from './urls.ts';

export { profilePageRequest } from './requests.ts';
export { mapProfile, type LinkpageAProfile } from './profile.ts';

const blocked = (message: string) => new UpstreamOutcome('blocked', PLATFORM, `linkpage-a: ${message}`);
const notFound = (message: string) => new UpstreamOutcome('not_found', PLATFORM, `linkpage-a: ${message}`);
const transient = (message: string) => new UpstreamOutcome('transient', PLATFORM, `linkpage-a: ${message}`);

/**
 * Fetches the profile page and judges it by section 9, step 1, inside the client's retry loop:
 * the client retries transient failures (an empty `200` included), and so a transient answer
 * this step finds is asked again too.
 */
function fetchPage(username: string, context: ExtractContext): Promise<{ response: UpstreamResponse; page: ScannedPage }> {
  return fetchAndRead(context.upstream, profilePageRequest(username), (response) => {
    const page = scanPage(response.body);
    checkBlocks(response, page);
    return { response, page };
  });
}

/** `/login` or `/__challenge…`: where linkpage-a sends visitors it blocks. */
function isBlockPath(path: string): boolean {
  const pathname = (path.split(/[?#]/, 1)[0] ?? '').toLowerCase();
  return pathname === '/login' || pathname.startsWith('/login/') || pathname.startsWith('/__challenge');
}

/** Section 9, step 1: blocks and transient failures, judged on the status, the final path and the challenge marker. */
function checkBlocks(response: UpstreamResponse, page: ScannedPage): void {
  if (response.offPlatformLocation !== undefined) {
    throw blocked(`redirected off the platform (HTTP ${response.status} to ${response.offPlatformLocation})`);
  }
  if (isBlockPath(response.path)) throw blocked(`redirected to ${response.path}`);
  if (response.status === 429) throw blocked('HTTP 429 Too Many Requests');
  if (response.status === 403) throw blocked('HTTP 403 Forbidden');
  if (response.status === 401) throw blocked('HTTP 401 Unauthorized');
  if (response.status >= 500) throw transient(`HTTP ${response.status}`);
  if (page.challenge && page.payload === null) throw blocked(`challenge interstitial (HTTP ${response.status})`);
}

export const linkpageAProfileExtractor: Extractor = async ({ params }, context) => {
  const target = parseLinkpageAUrl(params.url ?? '');
  if (!target.ok) throw new Error(`linkpage-a extractor called with a non-canonical url: ${target.message}`);

  const { response, page } = await fetchPage(target.username, context);

  // Step 2: not found, decided on the status (8.1).
  if (response.status === 404 || response.status === 410) throw notFound(`no profile "${target.username}" (HTTP ${response.status})`);
  if (response.status !== 200) throw unrecognised(`unexpected HTTP ${response.status}`);

  // Step 3: the payload, its error (a 200 error page saying 404 is not found too) and the profile entry.
  if (page.payload === null) throw unrecognised('no __NUXT_DATA__ payload');
  let profile: unknown;
  try {
    const payload = new NuxtPayload(page.payload);
    const root = payload.members(0, 'the payload root');
    const errorIndex = root.get('error');
    const error = errorIndex === undefined ? undefined : payload.decode(errorIndex, 'the payload error');
    if (isRecord(error) && Number(error.statusCode) === 404) throw notFound(`no profile "${target.username}" (error page)`);
    const dataIndex = root.get('data');
    if (dataIndex === undefined) throw new PayloadProblem('the payload root has no "data"');
    const entries = [...payload.members(dataIndex, 'the payload data')].filter(([key]) => key.startsWith('profile:'));
    const entry = entries.find(([key]) => key === `profile:${target.username}`) ?? (entries.length === 1 ? entries[0] : undefined);
    if (entry === undefined) {
      const status = isRecord(error) ? ` (error page, statusCode ${String(error.statusCode)})` : '';
      throw new PayloadProblem(entries.length === 0 ? `the payload data has no "profile:" entry${status}` : 'the payload data has several "profile:" entries');
    }
    profile = payload.decode(entry[1], `the payload entry "${entry[0]}"`);
    if (profile === null || profile === undefined) throw new PayloadProblem(`the payload entry "${entry[0]}" is empty`);
  } catch (error) {
    if (error instanceof PayloadProblem) throw unrecognised(error.message);
    throw error;
  }

  // Step 4: a private PROFILE is reduced, so this comes before any other member is required.
  if (isRecord(profile) && profile.is_private === true) throw notFound(`the profile "${target.username}" is private`);

  // Step 5: the rest, mapped as section 7 says.
  return { data: { profile: mapProfile(profile, sameAsFrom(page.jsonLd), page.head) }, next: null };
};

