// The `shopfront.shop` extractor (README.md): the storefront
// page gives `data.shop` and, on a first call, the feed batch; a call with a position requests
// the page again (header only) and then the feed endpoint with the carried upstream token.
import type { ExtractContext, Extractor, ExtractRequest } from '../../endpoints/types.ts';
import type { UpstreamResponse } from '../../upstream/types.ts';
import { UpstreamOutcome } from '../../upstream/outcomes.ts';
import { fetchAndRead } from '../../upstream/read.ts';
import { mapBatch, mapShop } from './mapping.ts';
import { mayHoldForm, scanPage, type AStateBlock } from './page.ts';
import { root, string, type Node } from '../shared/read.ts';
import { feedRequest, isWellFormed, storefrontPageRequest } from './requests.ts';
import type { ShopfrontPost, ShopfrontShop } from './schema.ts';
import { PLATFORM, parseShopfrontUrl } from './urls.ts';

const HEADER_KEY = 'sf-storefront-header';
const FEED_KEY = 'sf-storefront-feed';
/** Redirect targets that mean a block (README.md, "Signals"). */
const BLOCK_PATHS = ['/ap/signin', '/errors/validateCaptcha'];

const outcome = (kind: UpstreamOutcome['kind'], message: string) => new UpstreamOutcome(kind, PLATFORM, message);
const unrecognised = (message: string, cause?: unknown): UpstreamOutcome =>
  new UpstreamOutcome('unrecognised', PLATFORM, `shopfront: ${message}`, cause === undefined ? undefined : { cause });

/** The handle of the canonical URL that `normalise` produced. */
function handleOf(request: ExtractRequest): string {
  const url = request.params.url ?? '';
  const parsed = parseShopfrontUrl(url);
  if (!parsed.ok) throw new Error(`shopfront extractor: not a canonical storefront URL: ${url}`);
  return parsed.handle;
}

function pathOf(location: string): string {
  try {
    return new URL(location, 'https://www.shopfront.example').pathname;
  } catch {
    return location;
  }
}

/**
 * The captcha page, a block whatever its status (usually 200, sometimes 503): the client judges
 * every answer with it, before it would retry a 5xx and before the answer is read.
 */
const captchaIn = (what: string) => (response: UpstreamResponse): string | null =>
  mayHoldForm(response.body) && scanPage(response.body).captcha ? `shopfront answered the ${what} with its captcha page` : null;

/**
 * The redirects that mean a block (README.md, "Signals"); the captcha page is `captchaIn`'s,
 * 429 and 5xx are the upstream client's.
 */
function checkRedirects(response: UpstreamResponse, what: string): void {
  if (response.offPlatformLocation !== undefined) {
    throw outcome('blocked', `shopfront redirected the ${what} off the platform`);
  }
  const landed = [pathOf(response.path)];
  if (response.status >= 300 && response.status < 400 && response.headers.location) {
    landed.push(pathOf(response.headers.location));
  }
  for (const path of landed) {
    if (BLOCK_PATHS.some((prefix) => path.startsWith(prefix))) {
      throw outcome('blocked', `shopfront redirected the ${what} to ${path}`);
    }
  }
}

/** The one block of `key`: its JSON, or null when the page has none. */
function stateBlock(blocks: AStateBlock[], key: string): Node | null {
  const found = blocks.filter((block) => block.key === key);
  if (found.length === 0) return null;
  if (found.length > 1) throw unrecognised(`the storefront page holds ${found.length} ${key} a-state blocks, not one`);
  try {
    return root(JSON.parse(found[0]?.text ?? ''), key === HEADER_KEY ? 'HEADER' : 'FEED BATCH');
  } catch (error) {
    throw unrecognised(`the ${key} a-state block of the storefront page is not JSON`, error);
  }
}

/** The storefront page: `S` of an active storefront and the page's own feed block (if any). */
async function readStorefront(context: ExtractContext, handle: string): Promise<{ S: Node; feed: () => Node | null }> {
  // The blocks are judged inside the client's retry loop, beside its transient failures.
  const { response, page } = await fetchAndRead(context.upstream, { ...storefrontPageRequest(handle), block: captchaIn('storefront page') }, (answer) => {
    checkRedirects(answer, 'storefront page');
    return { response: answer, page: scanPage(answer.body) };
  });
  if (response.status === 404 || response.status === 410) {
    throw outcome('not_found', `shopfront has no storefront "${handle}" (HTTP ${response.status})`);
  }
  if (response.status !== 200) throw unrecognised(`the storefront page answered HTTP ${response.status}`);
  if (page.title.includes('Page Not Found')) throw outcome('not_found', `shopfront has no storefront "${handle}"`);

  const header = stateBlock(page.blocks, HEADER_KEY);
  if (header === null) throw unrecognised(`the storefront page has no ${HEADER_KEY} a-state block`);
  const S = header.node('storefront');
  const status = S.get('status', string);
  if (status !== 'ACTIVE') throw outcome('not_found', `shopfront storefront "${handle}" is not active (${status})`);
  // Read only on a first call: a call with a position ignores the page's batch.
  return { S, feed: () => stateBlock(page.blocks, FEED_KEY) };
}

/** The feed endpoint's answer (README.md, "Requests" and "Signals"): a FEED BATCH, or the outcome its status names. */
async function readFeed(context: ExtractContext, storefrontId: string, pageToken: string): Promise<Node> {
  // Both go into the query string, percent-encoded: a lone surrogate cannot be.
  if (!isWellFormed(storefrontId)) throw unrecognised('the storefront page carries a storefrontId that is not well-formed text (a lone surrogate)');
  const response = await fetchAndRead(context.upstream, { ...feedRequest(storefrontId, pageToken), block: captchaIn('feed request') }, (answer) => {
    checkRedirects(answer, 'feed request');
    return answer;
  });
  let body: unknown;
  try {
    body = JSON.parse(response.body);
  } catch (error) {
    throw unrecognised(`the feed endpoint answered HTTP ${response.status} with neither JSON nor the captcha page`, error);
  }
  const batch = root(body, 'FEED BATCH');
  const error = batch.at('error').value;
  const code = typeof error === 'string' ? error : null;
  if (response.status === 404) {
    throw outcome('not_found', `shopfront storefront ${storefrontId} no longer exists (${code ?? 'HTTP 404'})`);
  }
  if (response.status === 400 && code === 'INVALID_PAGE_TOKEN') {
    throw outcome('rejected_cursor', 'shopfront rejected the page token (INVALID_PAGE_TOKEN)');
  }
  if (response.status !== 200) {
    throw unrecognised(`the feed endpoint answered HTTP ${response.status} (${code ?? 'no error code'})`);
  }
  if (!batch.holdsObject('')) throw unrecognised('the feed endpoint answered JSON that is not a FEED BATCH object');
  return batch;
}

export const extractShop: Extractor<{ shop: ShopfrontShop; posts: ShopfrontPost[]; postCount: number }> = async (request, context) => {
  const handle = handleOf(request);
  const { S, feed } = await readStorefront(context, handle);
  const shop = mapShop(S);

  let B: Node;
  if (request.position === null) {
    const batch = feed();
    if (batch === null) throw unrecognised(`the storefront page has no ${FEED_KEY} a-state block`);
    B = batch;
  } else {
    const token = request.position.pageToken;
    if (typeof token !== 'string' || token === '' || !isWellFormed(token)) throw outcome('rejected_cursor', 'the position carries no usable shopfront page token');
    B = await readFeed(context, shop.storefrontId, token);
  }
  const { posts, postCount, next } = mapBatch(B);
  return { data: { shop, posts, postCount }, next };
};
