// The upstream requests of snapmsg (README.md, "Requests"). The browser-like
// headers every request carries (`User-Agent`, `Accept-Language`, and per `kind` the `Accept`
// and `Sec-Fetch-*` set) are added by the upstream client; only `Content-Type` is ours.
import type { UpstreamRequest } from '../../upstream/types.ts';

/** Comments asked per request: the service always sends 20. */
export const COMMENTS_PER_PAGE = 20;

export const COMMENTS_PATH = '/api/spotlight/comments';

/** `GET /add/{lower-cased username}`: every allowed character is URL-safe. */
export const profilePageRequest = (username: string): UpstreamRequest => ({
  method: 'GET',
  path: `/add/${username.toLowerCase()}`,
  kind: 'page',
});

/** `GET /spotlight/{spotlightId}`: always the short form. */
export const spotlightPageRequest = (spotlightId: string): UpstreamRequest => ({
  method: 'GET',
  path: `/spotlight/${spotlightId}`,
  kind: 'page',
});

/** `POST /api/spotlight/comments` with `{contextId, cursor, count: 20}`; `cursor` is `""` for the first page. */
export const commentsRequest = (contextId: string, cursor: string): UpstreamRequest => ({
  method: 'POST',
  path: COMMENTS_PATH,
  kind: 'api',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ contextId, cursor, count: COMMENTS_PER_PAGE }),
});

/** `/accounts/login…` or `/challenge…`: where snapmsg sends visitors it blocks. */
export const isBlockPath = (path: string): boolean => /^\/(accounts\/login|challenge)/.test(path);
