// Rules shared by the socialnet mapping tables (upstream/socialnet.md 5): times, reaction
// edges, the link shim, count labels and pagination.
import type { Node } from './reader.ts';
import { unrecognised } from './reader.ts';
import { SOCIALNET_HOSTS } from './urls.ts';

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));
const pad3 = (n: number): string => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : String(n));

/** Milliseconds of 10000-01-01T00:00:00Z: below it (and from 1970) the year has four digits. */
const YEAR_10000_MS = 253_402_300_800_000;

/**
 * 5.1: Unix seconds to an ISO 8601 UTC string with milliseconds, as `Date#toISOString` gives it.
 * Dates from 1970 to 9999 are formatted here (days to civil date as in Howard Hinnant's
 * `civil_from_days`), which costs a fifth of a `Date`; any other goes through `Date`.
 */
export function isoFromSeconds(seconds: number): string {
  const ms = seconds * 1000;
  if (!(ms >= 0 && ms < YEAR_10000_MS)) return new Date(ms).toISOString();
  const whole = Math.floor(ms);
  const days = Math.floor(whole / 86_400_000);
  const inDay = whole - days * 86_400_000;
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1_460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shifted = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * shifted + 2) / 5) + 1;
  const month = shifted < 10 ? shifted + 3 : shifted - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const hours = Math.floor(inDay / 3_600_000);
  const minutes = Math.floor(inDay / 60_000) % 60;
  const secs = Math.floor(inDay / 1_000) % 60;
  return `${year}-${pad2(month)}-${pad2(day)}T${pad2(hours)}:${pad2(minutes)}:${pad2(secs)}.${pad3(inDay % 1_000)}Z`;
}

export interface ReactionCount {
  type: string;
  count: number;
}

/** 5.2: `[{type: node.localized_name, count: reaction_count}]` per edge, upstream order; `[]` when null. */
export function reactionsByType(topReactions: Node | null): ReactionCount[] {
  if (topReactions === null) return [];
  return topReactions.listOrEmpty('edges').map((edge) => ({
    type: edge.str('node.localized_name'),
    count: edge.int('reaction_count'),
  }));
}

const SOCIALNET_HOST_SET = new Set(SOCIALNET_HOSTS.accepted);

/** How a shim link plainly starts: `URL` would read exactly that host and path from it. */
const SHIM_PREFIXES = SOCIALNET_HOSTS.accepted.flatMap((host) => [`https://${host}/l.php?`, `http://${host}/l.php?`]);
/** Printable ASCII: a query of only these is the query `URL` reads, without any change. */
const PLAIN_QUERY = /^[!-~]*$/;

/** A name or value of a query decoded as `URLSearchParams` does; undefined when it is not well-formed. */
function formDecoded(raw: string): string | undefined {
  if (!raw.includes('%') && !raw.includes('+')) return raw;
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    return undefined; // a stray `%`, or bytes that are not UTF-8: URLSearchParams has its own way
  }
}

/**
 * The `u` of a shim link written plainly (a `SHIM_PREFIXES` start, printable ASCII), read as
 * `URL` would read it but without parsing the URL: the decoded value, null when there is none,
 * undefined when the link is not written so plainly.
 */
function plainShimTarget(url: string): string | null | undefined {
  const prefix = SHIM_PREFIXES.find((start) => url.startsWith(start));
  if (prefix === undefined) return undefined;
  const hash = url.indexOf('#', prefix.length);
  const query = url.slice(prefix.length, hash === -1 ? url.length : hash);
  if (!PLAIN_QUERY.test(query)) return undefined;
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const name = formDecoded(equals === -1 ? pair : pair.slice(0, equals));
    if (name === undefined) return undefined;
    if (name === 'u') return formDecoded(equals === -1 ? '' : pair.slice(equals + 1));
  }
  return null;
}

/** 5.4: the `u` parameter of a socialnet `/l.php` link, decoded; any other URL unchanged. */
export function unshim(url: string): string {
  // A path that parses to `/l.php` is spelled so in the text, unless a tab or newline (which URL
  // parsing drops) splits it: without either, the URL need not be parsed.
  if (!url.includes('l.php') && !/[\t\n\r]/.test(url)) return url;
  const plain = plainShimTarget(url);
  if (plain !== undefined) return plain ?? url;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (!SOCIALNET_HOST_SET.has(parsed.hostname.toLowerCase()) || parsed.pathname !== '/l.php') return url;
  return parsed.searchParams.get('u') ?? url;
}

const COUNT_LABEL = /^([0-9][0-9,]*(?:\.[0-9]+)?)([KMB])?(?![0-9A-Za-z])/;
const MULTIPLIER: Record<string, number> = { K: 1_000, M: 1_000_000, B: 1_000_000_000 };

/** 5.5: the count a display text starts with (`51K followers` gives 51000), or null. */
export function countFromLabel(text: string): number | null {
  const match = COUNT_LABEL.exec(text);
  if (match === null) return null;
  const number = Number((match[1] ?? '').replaceAll(',', ''));
  if (!Number.isFinite(number)) return null;
  return Math.round(number * (match[2] === undefined ? 1 : (MULTIPLIER[match[2]] ?? 1)));
}

/** 5.5 applied to a label the API returns as `{count, label}`; a label without a number is unrecognised. */
export function countLabel(label: string, where: string): { count: number; label: string } {
  const count = countFromLabel(label);
  if (count === null) throw unrecognised(`no count in the ${where} label "${label}"`);
  return { count, label };
}

/**
 * 5.6: the `end_cursor` to continue from when `has_next_page` is true and `end_cursor` a
 * non-empty string; otherwise null (end of the listing).
 */
export function nextCursor(pageInfo: Node): string | null {
  const endCursor = pageInfo.get('end_cursor');
  return pageInfo.get('has_next_page') === true && typeof endCursor === 'string' && endCursor !== '' ? endCursor : null;
}
