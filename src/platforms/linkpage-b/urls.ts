// Who the platform is, and the page URLs it accepts (README.md, "URLs"). Pure functions: no I/O.
import { checkPlatformUrl, strictSegments, type PlatformHosts } from '../shared/url.ts';

/** The platform's id: the first segment of its endpoint ids and paths. */
export const PLATFORM = 'linkpage-b';

export const LINKPAGE_B_HOSTS: PlatformHosts = {
  canonical: 'linkpage-b.example',
  accepted: ['linkpage-b.example', 'www.linkpage-b.example'],
};

const USERNAME = /^[A-Za-z0-9_.]{2,30}$/;

/** First path segments that are the platform's own pages, not usernames (compared lower-cased). */
const RESERVED = new Set([
  's',
  'admin',
  'login',
  'register',
  'api',
  'help',
  'privacy',
  'terms',
  'discover',
  'marketplace',
  '_next',
  'static',
]);

export type LinkpageBUrlCheck = { ok: true; url: string; username: string } | { ok: false; message: string };

const FORMS = 'Must be a page URL: https://linkpage-b.example/{username}';

/**
 * Accepts `/{username}` or `/{username}/` (query and fragment ignored) and returns
 * `https://linkpage-b.example/{lower-cased username}`. Usernames are case-insensitive.
 * Idempotent: a canonical URL comes back unchanged.
 */
export function parseLinkpageBUrl(input: string): LinkpageBUrlCheck {
  const checked = checkPlatformUrl(input, LINKPAGE_B_HOSTS);
  if (!checked.ok) return checked;
  const parts = strictSegments(checked.url);
  const name = parts?.length === 1 ? parts[0] : undefined;
  if (name === undefined) return { ok: false, message: FORMS };
  if (RESERVED.has(name.toLowerCase())) {
    return { ok: false, message: `"/${name}" is a linkpage-b page, not a user page` };
  }
  if (!USERNAME.test(name)) {
    return { ok: false, message: 'The username must be 2 to 30 letters, digits, "_" or "."' };
  }
  const username = name.toLowerCase();
  return { ok: true, url: `https://${LINKPAGE_B_HOSTS.canonical}/${username}`, username };
}
