// JSON-LD blocks (`<script type="application/ld+json">`), which link-in-bio and profile pages
// use to list the other sites a person is on.

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** JSON.parse that answers `undefined` instead of throwing. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The objects of a JSON-LD block, in order: itself, the members of arrays and of `@graph`. */
function candidates(value: unknown): Record<string, unknown>[] {
  if (Array.isArray(value)) return value.flatMap(candidates);
  if (!isObject(value)) return [];
  return [value, ...candidates(value['@graph'])];
}

const isProfilePage = (node: Record<string, unknown>): boolean => {
  const type = node['@type'];
  return type === 'ProfilePage' || (Array.isArray(type) && type.includes('ProfilePage'));
};

/**
 * `mainEntity.sameAs` of the first object whose `@type` is (or lists) `ProfilePage`, across the
 * blocks in order: a single string is a one-element list; no such object, or no `sameAs`, gives
 * `[]`. A block that is not valid JSON is skipped like a block of another type.
 */
export function profilePageSameAs(blocks: readonly string[]): string[] {
  for (const block of blocks) {
    const page = candidates(parseJson(block)).find(isProfilePage);
    if (!page) continue;
    const sameAs = isObject(page.mainEntity) ? page.mainEntity.sameAs : undefined;
    if (typeof sameAs === 'string') return [sameAs];
    return Array.isArray(sameAs) ? sameAs.filter((link): link is string => typeof link === 'string') : [];
  }
  return [];
}
