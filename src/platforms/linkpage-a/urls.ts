// linkpage-a input URL (README.md, "URLs"). Pure functions: no I/O.
import { checkPlatformUrl, strictSegments, type PlatformHosts } from '../shared/url.ts';

export const PLATFORM = 'linkpage-a';

export const LINKPAGE_A_HOSTS: PlatformHosts = {
  canonical: 'linkpage-a.example',
  accepted: ['linkpage-a.example', 'www.linkpage-a.example'],
};

const USERNAME = /^[A-Za-z0-9][A-Za-z0-9._-]{1,31}$/;

/** First path segments that are the platform's own pages, not usernames (compared lower-cased). */
const RESERVED = new Set(['join', 'qr', 'login', 'signup', 'api', 'about', 'help', 'terms', 'privacy', '_nuxt', '__challenge']);

export type LinkpageAUrlCheck = { ok: true; url: string; username: string } | { ok: false; message: string };

const FORMS = 'Must be a profile URL: https://linkpage-a.example/{username} or https://linkpage-a.example/@{username}';

/**
 * Accepts `/{username}` or `/@{username}`, optionally followed by one `/` (query and fragment
 * ignored), and returns `https://linkpage-a.example/{lower-cased username}`. Usernames are
 * case-insensitive. Idempotent: a canonical URL comes back unchanged.
 */
export function parseLinkpageAUrl(input: string): LinkpageAUrlCheck {
  const checked = checkPlatformUrl(input, LINKPAGE_A_HOSTS);
  if (!checked.ok) return checked;
  const parts = strictSegments(checked.url);
  const segment = parts?.length === 1 ? parts[0] : undefined;
  if (segment === undefined) return { ok: false, message: FORMS };
  // The reserved pages are refused with or without `@`: `/@join` would still request `/join`.
  const name = segment.startsWith('@') ? segment.slice(1) : segment;
  if (RESERVED.has(name.toLowerCase())) {
    return { ok: false, message: `"/${name}" is a linkpage-a page, not a profile` };
  }
  if (!USERNAME.test(name)) {
    return {
      ok: false,
      message: 'The username must be 2 to 32 letters, digits, ".", "_" or "-", starting with a letter or digit',
    };
  }
  const username = name.toLowerCase();
  return { ok: true, url: `https://${LINKPAGE_A_HOSTS.canonical}/${username}`, username };
}
