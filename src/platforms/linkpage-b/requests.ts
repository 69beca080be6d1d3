// The one upstream request of linkpage-b (README.md, "Requests"): `GET /{username}`, lower-cased,
// as a browser navigation (the upstream client adds a browser's page headers: a `Mozilla/5.0`
// User-Agent, Accept text/html, Accept-Language, Sec-Fetch-*). No query string, no cookie, no
// extra header.
import type { UpstreamRequest } from '../../upstream/types.ts';

export const pageRequest = (username: string): UpstreamRequest => ({
  path: `/${encodeURIComponent(username.toLowerCase())}`,
  method: 'GET',
  kind: 'page',
});

/**
 * Paths that mean a block (README.md, "Signals"): the login page, or any `/challenge…` page. Takes a path
 * or an absolute URL (a `Location`).
 */
export const isBlockPath = (path: string): boolean => {
  const pathname = (path.split(/[?#]/, 1)[0] ?? '').replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '');
  return /^\/login(?:\/|$)/i.test(pathname) || pathname.toLowerCase().startsWith('/challenge');
};
