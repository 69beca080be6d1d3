// The one upstream request of linkpage-a (README.md, "Requests"): the profile page.
import type { UpstreamRequest } from '../../upstream/types.ts';

/**
 * `GET /{lower-cased username}`: no `@`, no query string, no cookie; `kind: 'page'` makes the
 * upstream client send a browser navigation's headers.
 */
export const profilePageRequest = (username: string): UpstreamRequest => ({
  method: 'GET',
  path: `/${encodeURIComponent(username.toLowerCase())}`,
  kind: 'page',
});

/** `/login` or `/__challenge…`: where linkpage-a sends visitors it blocks. */
export function isBlockPath(path: string): boolean {
  const pathname = (path.split(/[?#]/, 1)[0] ?? '').toLowerCase();
  return pathname === '/login' || pathname.startsWith('/login/') || pathname.startsWith('/__challenge');
}
