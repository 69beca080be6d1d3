// snapmsg inputs (README.md, "Inputs"): the profile endpoint's `username` and the
// Spotlight URL of the comments endpoint. Pure functions: no I/O.
import { checkPlatformUrl, type PlatformHosts } from '../shared/url.ts';

export const PLATFORM = 'snapmsg';

export const SNAPMSG_HOSTS: PlatformHosts = {
  canonical: 'www.snapmsg.example',
  accepted: ['www.snapmsg.example', 'snapmsg.example'],
};

/** A username after its optional leading `@` is removed: 3 to 15 characters, a letter first. */
const USERNAME = /^[A-Za-z][A-Za-z0-9._-]{2,14}$/;
/** A Spotlight id: case-sensitive, 16 to 128 URL-safe characters. */
export const SPOTLIGHT_ID = /^[A-Za-z0-9_-]{16,128}$/;

export type UsernameCheck = { ok: true; username: string } | { ok: false; message: string };

/**
 * Accepts a snapmsg username with or without one leading `@` and returns it lower-cased
 * without the `@` (usernames are case-insensitive). Nothing is trimmed.
 */
export function normaliseSnapmsgUsername(input: string): UsernameCheck {
  const name = input.startsWith('@') ? input.slice(1) : input;
  if (name.length === 0) return { ok: false, message: 'Required' };
  if (name.length < 3 || name.length > 15) {
    return { ok: false, message: 'Must be 3 to 15 characters long, without the leading @' };
  }
  if (!USERNAME.test(name)) {
    return {
      ok: false,
      message: 'Must start with a letter and hold only letters, digits, ".", "_" and "-"',
    };
  }
  return { ok: true, username: name.toLowerCase() };
}

export type SpotlightUrlCheck =
  | { ok: true; url: string; spotlightId: string }
  | { ok: false; message: string };

const SPOTLIGHT_FORMS =
  'Must be a Spotlight URL: https://www.snapmsg.example/spotlight/{id} or https://www.snapmsg.example/@{username}/spotlight/{id}';

/**
 * Accepts a Spotlight URL in the short form `/spotlight/{id}` or the long form
 * `/@{username}/spotlight/{id}` (one trailing `/` allowed; query and fragment ignored) and
 * returns the canonical short form `https://www.snapmsg.example/spotlight/{id}`. The id keeps
 * its case. Idempotent: a canonical URL comes back unchanged.
 */
export function parseSpotlightUrl(input: string): SpotlightUrlCheck {
  const checked = checkPlatformUrl(input, SNAPMSG_HOSTS);
  if (!checked.ok) return checked;
  const segments = pathParts(checked.url.pathname);
  if (segments === null) return { ok: false, message: SPOTLIGHT_FORMS };
  let id: string | undefined;
  if (segments.length === 2 && segments[0] === 'spotlight') {
    id = segments[1];
  } else if (segments.length === 3 && segments[1] === 'spotlight' && segments[0]?.startsWith('@')) {
    if (!USERNAME.test(segments[0].slice(1))) {
      return { ok: false, message: 'The username in the Spotlight URL is not a valid snapmsg username' };
    }
    id = segments[2];
  }
  if (id === undefined) return { ok: false, message: SPOTLIGHT_FORMS };
  if (!SPOTLIGHT_ID.test(id)) {
    return { ok: false, message: 'The Spotlight id must be 16 to 128 letters, digits, "_" or "-"' };
  }
  return { ok: true, url: `https://${SNAPMSG_HOSTS.canonical}/spotlight/${id}`, spotlightId: id };
}

/**
 * The decoded segments of a path that may end with one `/`; null when a segment is empty
 * (`//`, two trailing slashes) or holds a bad escape.
 */
function pathParts(pathname: string): string[] | null {
  const parts = pathname.slice(1).split('/');
  if (parts.length > 1 && parts.at(-1) === '') parts.pop();
  try {
    const decoded = parts.map((part) => decodeURIComponent(part));
    return decoded.some((part) => part === '') ? null : decoded;
  } catch {
    return null;
  }
}
