// Parsing of user-supplied platform URLs. The service never connects to the host a user
// names: these rules only decide whether a URL names the platform, and reduce it to the
// canonical form that feeds cache keys and cursors.

export interface PlatformHosts {
  /** Host that canonical URLs use, e.g. `www.socialnet.example`. */
  canonical: string;
  /** Every host accepted in user input, canonical included. */
  accepted: readonly string[];
}

export type UrlCheck = { ok: true; url: URL } | { ok: false; message: string };

export const MAX_URL_LENGTH = 2048;

/** Query parameters that only track the visitor and never change what a page shows. */
const TRACKING_PARAMS = /^(utm_[a-z]+|fbclid|gclid|igshid|mibextid|ref|ref_src|si|_rdr|__tn__|__cft__\[?.*)$/i;

/**
 * Accepts an absolute http(s) URL whose host is one of `hosts.accepted`, with no userinfo and
 * no port other than the scheme's default. Returns it with the canonical host and https
 * scheme, without fragment and tracking parameters. Everything else is refused with a message.
 */
export function checkPlatformUrl(input: string, hosts: PlatformHosts): UrlCheck {
  const text = input.trim();
  if (text.length === 0) return { ok: false, message: 'Required' };
  if (text.length > MAX_URL_LENGTH) return { ok: false, message: `Must be at most ${MAX_URL_LENGTH} characters` };
  if (!/^https?:\/\//i.test(text)) return { ok: false, message: 'Must be an absolute http(s) URL' };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, message: 'Must be a valid URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, message: 'Must be an http(s) URL' };
  if (url.username !== '' || url.password !== '') return { ok: false, message: 'Must not contain user information' };
  if (url.port !== '') return { ok: false, message: 'Must not name a port' };
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (!hosts.accepted.includes(host)) {
    return { ok: false, message: `Must be a URL on ${hosts.canonical}` };
  }
  const canonical = new URL(`https://${hosts.canonical}`);
  canonical.pathname = url.pathname;
  for (const [name, value] of url.searchParams) {
    if (!TRACKING_PARAMS.test(name)) canonical.searchParams.append(name, value);
  }
  return { ok: true, url: canonical };
}

/** Splits a URL path into its non-empty segments, decoded. Returns null on bad escapes. */
export function pathSegments(url: URL): string[] | null {
  try {
    return url.pathname
      .split('/')
      .filter((segment) => segment !== '')
      .map((segment) => decodeURIComponent(segment));
  } catch {
    return null;
  }
}

/**
 * The segments of a URL path, decoded, one trailing `/` allowed (`/name/` is `["name"]`); null
 * when a segment is empty (`/`, `//name`, `/name//`) or holds a bad escape.
 */
export function strictSegments(url: URL): string[] | null {
  const parts = url.pathname.slice(1).split('/');
  if (parts.length > 1 && parts.at(-1) === '') parts.pop();
  if (parts.includes('')) return null;
  try {
    return parts.map((part) => decodeURIComponent(part));
  } catch {
    return null;
  }
}
