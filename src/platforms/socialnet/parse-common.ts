// Rules shared by the socialnet mapping tables (upstream/socialnet.md 5): times, reaction
// edges, the link shim, count labels and pagination.
import type { Node } from './reader.ts';
import { unrecognised } from './reader.ts';
import { SOCIALNET_HOSTS } from './urls.ts';

/** 5.1: Unix seconds to an ISO 8601 UTC string with milliseconds. */
export const isoFromSeconds = (seconds: number): string => new Date(seconds * 1000).toISOString();

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

/** 5.4: the `u` parameter of a socialnet `/l.php` link, decoded; any other URL unchanged. */
export function unshim(url: string): string {
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
