// socialnet user URLs and identifiers (README.md). Pure functions: they
// decide whether a user's URL names a socialnet profile and reduce it to its canonical form,
// which feeds cache keys and cursors. The service never connects to the host a user names.
import { checkPlatformUrl, type PlatformHosts } from '../shared/url.ts';

/** The hosts a user URL may name: `www.socialnet.example` is canonical. */
export const PLATFORM = 'socialnet';

export const SOCIALNET_HOSTS: PlatformHosts = {
  canonical: 'www.socialnet.example',
  accepted: ['www.socialnet.example', 'socialnet.example', 'm.socialnet.example', 'web.socialnet.example'],
};

const CANONICAL_ORIGIN = `https://${SOCIALNET_HOSTS.canonical}`;

/** Profile, page, post and other numeric ids; also the rule of the API's `pageId`. */
export const SOCIALNET_ID_PATTERN = /^[1-9][0-9]{14,16}$/;

/** True when `value` is a valid socialnet numeric id, and so a valid `pageId`. */
export function isSocialnetId(value: string): boolean {
  return SOCIALNET_ID_PATTERN.test(value);
}

/** Message of the 422 detail for a `pageId` that breaks the id rule. */
export const PAGE_ID_MESSAGE = 'Must be a numeric profile id: 15 to 17 digits, not starting with 0';

/** What a user URL names: a profile by vanity (lower-cased) or by numeric id. */
export type ProfileReference = { kind: 'vanity'; vanity: string } | { kind: 'id'; id: string };

export type SocialnetUrlCheck =
  | { ok: true; url: string; reference: ProfileReference }
  | { ok: false; message: string };

/** Segments that are never a vanity, compared case-insensitively. */
const RESERVED = new Set([
  'people', 'pages', 'groups', 'events', 'watch', 'reel', 'reels', 'stories', 'photo', 'photos',
  'video', 'videos', 'share', 'sharer', 'login', 'checkpoint', 'recover', 'help', 'policies',
  'privacy', 'settings', 'marketplace', 'gaming', 'hashtag', 'search', 'api', 'ajax',
]);

/** Tabs accepted after a vanity; `about_…` is any segment starting `about_`. */
const VANITY_TABS = new Set(['reels', 'about', 'photos', 'videos', 'followers', 'following', 'reviews']);
/** Values accepted for `sk` on `/profile.php`. */
const SK_VALUES = new Set(['reels_tab', 'about', 'photos', 'videos', 'followers', 'following', 'reviews']);

const VANITY_SHAPE = /^[A-Za-z0-9.]{5,50}$/;

/** The vanity rule (README.md, "URLs"). */
export function isVanity(segment: string): boolean {
  if (!VANITY_SHAPE.test(segment)) return false;
  if (!/[A-Za-z]/.test(segment)) return false;
  if (segment.startsWith('.') || segment.endsWith('.')) return false;
  const folded = segment.toLowerCase();
  return !folded.endsWith('.php') && !RESERVED.has(folded);
}

const isTab = (segment: string, tabs: Set<string>): boolean => {
  const folded = segment.toLowerCase();
  return tabs.has(folded) || folded.startsWith('about_');
};

/** Canonical URL of a profile reference: `https://www.socialnet.example/{vanity}` or `/profile.php?id={id}`. */
export function canonicalProfileUrl(reference: ProfileReference): string {
  return reference.kind === 'vanity'
    ? `${CANONICAL_ORIGIN}/${reference.vanity}`
    : `${CANONICAL_ORIGIN}/profile.php?id=${reference.id}`;
}

const UNSUPPORTED =
  'Must be a socialnet profile URL: /{vanity}, /{vanity}/{tab}, /profile.php?id={id} or /people/{Name}/{id}';

/**
 * Accepts every user URL form of README.md, "URLs", on the accepted hosts and returns its canonical
 * form plus the profile reference. The canonical URL names the profile only: host
 * `www.socialnet.example`, https, no fragment, no query except `id` on `/profile.php`, no
 * trailing slash, no tab (the endpoint decides which tab it loads), the vanity lower-cased
 * (vanities are case-insensitive). `/people/{Name}/{id}` becomes `/profile.php?id={id}`.
 * Fixed path words (`profile.php`, `people`, tabs) are matched case-insensitively, like the
 * reserved words. Everything else is refused with a message.
 */
export function parseSocialnetUrl(input: string): SocialnetUrlCheck {
  const checked = checkPlatformUrl(input, SOCIALNET_HOSTS);
  if (!checked.ok) return checked;
  const url = checked.url;

  // One trailing slash is optional; any other empty segment (`//`) is refused.
  let path = url.pathname.slice(1);
  if (path.endsWith('/')) path = path.slice(0, -1);
  if (path === '') return { ok: false, message: UNSUPPORTED };
  let segments: string[];
  try {
    segments = path.split('/').map((segment) => decodeURIComponent(segment));
  } catch {
    return { ok: false, message: 'Must be a valid URL' };
  }
  if (segments.some((segment) => segment === '')) return { ok: false, message: UNSUPPORTED };

  const first = segments[0] ?? '';
  const firstFolded = first.toLowerCase();

  if (firstFolded === 'profile.php') {
    if (segments.length !== 1) return { ok: false, message: UNSUPPORTED };
    const ids = url.searchParams.getAll('id');
    if (ids.length === 0) return { ok: false, message: 'A profile.php URL must carry an id parameter' };
    if (ids.length > 1) return { ok: false, message: 'A profile.php URL must carry one id parameter' };
    const id = ids[0] ?? '';
    if (!isSocialnetId(id)) return { ok: false, message: `The id parameter: ${PAGE_ID_MESSAGE}` };
    const sks = url.searchParams.getAll('sk');
    if (sks.length > 1 || (sks.length === 1 && !isTab(sks[0] ?? '', SK_VALUES))) {
      return { ok: false, message: 'Unknown profile tab (sk)' };
    }
    const reference: ProfileReference = { kind: 'id', id };
    return { ok: true, url: canonicalProfileUrl(reference), reference };
  }

  if (firstFolded === 'people') {
    if (segments.length !== 3) return { ok: false, message: UNSUPPORTED };
    const id = segments[2] ?? '';
    if (!isSocialnetId(id)) return { ok: false, message: `The id in /people/{Name}/{id}: ${PAGE_ID_MESSAGE}` };
    const reference: ProfileReference = { kind: 'id', id };
    return { ok: true, url: canonicalProfileUrl(reference), reference };
  }

  if (segments.length > 2) return { ok: false, message: UNSUPPORTED };
  if (!isVanity(first)) return { ok: false, message: UNSUPPORTED };
  const tab = segments[1];
  if (tab !== undefined && !isTab(tab, VANITY_TABS)) return { ok: false, message: 'Unknown profile tab' };
  const reference: ProfileReference = { kind: 'vanity', vanity: first.toLowerCase() };
  return { ok: true, url: canonicalProfileUrl(reference), reference };
}
