// The two upstream requests of shopfront (README.md, "Requests"). The browser-like
// headers come from `kind`: `page` sends the navigation headers, `api` the fetch headers
// (`Accept: application/json`, `Sec-Fetch-Mode: cors`, `Sec-Fetch-Dest: empty`,
// `Sec-Fetch-Site: same-origin`); both carry `User-Agent` and `Accept-Language`.
import type { UpstreamRequest } from '../../upstream/types.ts';

/** `GET /shop/{lower-cased handle}`, no query string. */
export const storefrontPageRequest = (handle: string): UpstreamRequest => ({
  method: 'GET',
  path: `/shop/${encodeURIComponent(handle.toLowerCase())}`,
  kind: 'page',
});

/** `GET /shop/api/feed?storefrontId={id}&scope=ALL&pageToken={token}`, values as encodeURIComponent. */
export const feedRequest = (storefrontId: string, pageToken: string): UpstreamRequest => ({
  method: 'GET',
  path:
    `/shop/api/feed?storefrontId=${encodeURIComponent(storefrontId)}` +
    `&scope=ALL&pageToken=${encodeURIComponent(pageToken)}`,
  kind: 'api',
  headers: { 'x-requested-with': 'XMLHttpRequest' },
});

/**
 * True when `text` holds no lone surrogate: only such text can be percent-encoded into a
 * request (`encodeURIComponent` throws a `URIError` on a lone surrogate).
 */
export const isWellFormed = (text: string): boolean => !/\p{Cs}/u.test(text);
