// The one upstream request of linkpage-a (upstream/linkpage-a.md section 2): the profile page.
import type { UpstreamRequest } from '../../upstream/types.ts';

/**
 * `GET /{lower-cased username}`: no `@`, no query string, no cookie, and the browser page
 * headers of upstream/README.md (`kind: 'page'` makes the client send them).
 */
export const profilePageRequest = (username: string): UpstreamRequest => ({
  method: 'GET',
  path: `/${encodeURIComponent(username.toLowerCase())}`,
  kind: 'page',
});
