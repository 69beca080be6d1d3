// What changed between two runs of a monitor: an RFC 6902 JSON Patch (rfc6902) from the last
// successful run's data to this one's, without what changes on every scrape (`fetchedAt`, the
// paging cursor), kept to the operations at or under the watched pointers.
//
// Lists: a list whose items all carry an identity (the first of ITEM_KEYS that every item of
// both lists has, each value distinct) is compared item by item by that identity: an item that
// appears is one `add` at its place, one that went is one `remove`, and a kept item's own
// changes are patched at its new place (`replace /posts/3/stats/likes`); an added post is one
// operation, not a cascade of replaces. When the kept items changed order, or the items have
// no identity, rfc6902's own list comparison applies (the fewest adds, removes and replaces of
// whole items by equality).
import { createPatch, type Operation, type Pointer } from 'rfc6902';
import { diffAny, type Diff, type VoidableDiff } from 'rfc6902/diff.js';
import type { EndpointDeclaration } from '../../endpoints/types.ts';

/** Keys that name an item of a list, in the order they are tried. */
export const ITEM_KEYS = ['id', 'postId', 'asin', 'username', 'url'] as const;

type Json = unknown;

/** The data of a run as it is compared: without `fetchedAt` and the paging cursor. */
export function comparable(endpoint: EndpointDeclaration, data: Record<string, Json>): Record<string, Json> {
  const { fetchedAt: _fetchedAt, ...rest } = data;
  const paging = endpoint.paging;
  if (paging && rest.paging && typeof rest.paging === 'object') {
    const { [paging.field]: _cursor, ...kept } = rest.paging as Record<string, Json>;
    rest.paging = kept;
  }
  return rest;
}

const isObject = (value: Json): value is Record<string, Json> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The key that identifies every item of both lists, or null. */
function identityOf(before: Json[], after: Json[]): string | null {
  if (before.length === 0 && after.length === 0) return null;
  for (const key of ITEM_KEYS) {
    const seen = [new Set<Json>(), new Set<Json>()];
    const ok = [before, after].every((list, side) =>
      list.every((item) => {
        if (!isObject(item)) return false;
        const id = item[key];
        if ((typeof id !== 'string' && typeof id !== 'number') || seen[side]?.has(id)) return false;
        seen[side]?.add(id);
        return true;
      }),
    );
    if (ok) return key;
  }
  return null;
}

/** A list compared by the identity of its items; undefined when it cannot be (rfc6902's own comparison then). */
const byIdentity: VoidableDiff = (input: Json, output: Json, ptr: Pointer) => {
  if (!Array.isArray(input) || !Array.isArray(output)) return undefined;
  const key = identityOf(input, output);
  if (key === null) return undefined;
  const idOf = (item: Json) => (item as Record<string, Json>)[key];
  const after = new Map(output.map((item, index) => [idOf(item), index]));
  const before = new Set(input.map(idOf));
  const kept = input.filter((item) => after.has(idOf(item)));
  const keptAfter = output.filter((item) => before.has(idOf(item)));
  // Reordered: positions say more than identities; rfc6902's comparison.
  if (kept.some((item, index) => idOf(item) !== idOf(keptAfter[index]))) return undefined;
  const operations: Operation[] = [];
  // Removals from the end, so that each index is still the item's own.
  for (let index = input.length - 1; index >= 0; index--) {
    if (!after.has(idOf(input[index]))) operations.push({ op: 'remove', path: ptr.add(String(index)).toString() });
  }
  // Additions in order: every place before one is already as it ends.
  output.forEach((item, index) => {
    if (!before.has(idOf(item))) operations.push({ op: 'add', path: ptr.add(String(index)).toString(), value: item });
  });
  // The kept items' own changes, at their places in the new list.
  const old = new Map(input.map((item) => [idOf(item), item]));
  output.forEach((item, index) => {
    const was = old.get(idOf(item));
    if (was !== undefined) operations.push(...compare(was, item, ptr.add(String(index))));
  });
  return operations;
};

/** Lists by identity where they have one, everything else as rfc6902 compares it. */
const compare: Diff = (input: Json, output: Json, ptr: Pointer) => byIdentity(input, output, ptr) ?? diffAny(input, output, ptr, compare);

/** The patch from `before` to `after` (both as `comparable` made them). */
export function diff(before: Json, after: Json): Operation[] {
  return createPatch(before, after, compare);
}

/** `pointer` is `watched` or under it. */
function within(pointer: string, watched: string): boolean {
  return watched === '' || pointer === watched || pointer.startsWith(`${watched}/`);
}

/** The operations at or under one of `watch` (all of them when `watch` is empty). */
export function watched(patch: Operation[], watch: readonly string[]): Operation[] {
  if (watch.length === 0) return patch;
  return patch.filter((operation) => watch.some((pointer) => within(operation.path, pointer) || ('from' in operation && within(operation.from, pointer))));
}

/** A JSON Pointer (RFC 6901): empty, or `/`-separated tokens with `~` escaped as `~0` or `~1`. */
export const POINTER_PATTERN = '^(/([^~]|~[01])*)*$';
