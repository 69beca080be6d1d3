// Which declared name a mistyped one meant, and how an unknown name is worded: one rule for the
// service's 422 details and the command line's refusal of a flag, so that both say the same.

/** Edits (insertions, deletions, substitutions) that turn `a` into `b`. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/** A name as a person means it, case and separators aside: `cache-max-age` is `cache_max_age`. */
const folded = (name: string): string => name.toLowerCase().replace(/[-_.\s]/g, '');

/**
 * The declared name that `name` most likely meant: the nearest by edit distance (case and
 * separators aside), when at most about a third of its letters differ (at least one may).
 */
export function closestName(name: string, declared: readonly string[]): string | undefined {
  const wanted = folded(name);
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of declared) {
    const target = folded(candidate);
    const allowed = Math.max(1, Math.ceil(target.length / 3));
    // Lengths this far apart are farther apart still (and a long name costs no more than this).
    if (Math.abs(target.length - wanted.length) > allowed) continue;
    const found = editDistance(wanted, target);
    if (found <= allowed && found < bestDistance) {
      best = candidate;
      bestDistance = found;
    }
  }
  return best;
}

/**
 * Why `name` is refused: `Unknown parameter; did you mean cache_max_age?` when a declared name
 * is close, else every declared name. `noun` says what the names are; `shown` writes one (the
 * command line writes `--cache_max_age`).
 */
export function unknownNameMessage(name: string, declared: readonly string[], noun = 'parameter', shown: (name: string) => string = (known) => known): string {
  const closest = closestName(name, declared);
  const hint = closest !== undefined ? `did you mean ${shown(closest)}?` : declared.length > 0 ? `the ${noun}s are ${declared.map(shown).join(', ')}` : 'this endpoint takes none';
  return `Unknown ${noun}; ${hint}`;
}
