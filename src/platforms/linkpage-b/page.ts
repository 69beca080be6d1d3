// Finds the page's embedded payload (README.md, "Where the data sits"): the `<script>` whose `id` is
// `__NEXT_DATA__`, in any attribute order, quoting and letter case, with extra attributes, among
// any other blocks; its raw text is JSON (Next.js escapes are plain JSON escapes, and no HTML
// entity decoding applies inside a script). Comments and other scripts are skipped: a walk over
// the start tags (shared/tags.ts, which follows htmlparser2's tokenizer) finds it without tokenizing
// the rest of the page.
import { attributes, forEachStartTag, rawText } from '../shared/tags.ts';

export const NEXT_DATA_ID = '__NEXT_DATA__';

/** The raw text of the first `__NEXT_DATA__` script, or null when the page has none. */
export function findNextDataText(html: string): string | null {
  let found: string | null = null;
  forEachStartTag(html, (tag) => {
    if (tag.name !== 'script' || attributes(html, tag).get('id') !== NEXT_DATA_ID) return false;
    found = rawText(html, tag);
    return true;
  });
  return found;
}

export type NextDataResult = { ok: true; value: unknown } | { ok: false; problem: string };

/** Finds and parses the `__NEXT_DATA__` payload. */
export function readNextData(html: string): NextDataResult {
  const raw = findNextDataText(html);
  if (raw === null) return { ok: false, problem: 'no <script id="__NEXT_DATA__"> element' };
  try {
    return { ok: true, value: JSON.parse(raw) as unknown };
  } catch (error) {
    return { ok: false, problem: `__NEXT_DATA__ is not valid JSON (${error instanceof Error ? error.message : String(error)})` };
  }
}
