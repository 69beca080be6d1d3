// The two script blocks of a snapmsg page that feed the API (upstream/snapmsg.md 4.1, 4.6):
// `<script id="__NEXT_DATA__">` and the JSON-LD blocks. A walk over the page's start tags
// (tags.ts, which follows htmlparser2's tokenizer) finds them, so attribute order, quoting,
// extra attributes, letter case, comments and other markup do not matter; a script's text is
// taken raw up to its `</script>`, with no entity decoding, and parsed as JSON (which undoes the
// Next.js `\u003c` escapes).
import { isObject, Src, unrecognised } from './proto.ts';
import { attributes, forEachStartTag, rawText } from '../shared/tags.ts';

export interface PageScripts {
  /** Raw text of the first `__NEXT_DATA__` script, or null when the page has none. */
  nextData: string | null;
  /** Raw text of every `application/ld+json` script, in document order. */
  jsonLd: string[];
}

export function findScripts(html: string): PageScripts {
  const found: PageScripts = { nextData: null, jsonLd: [] };
  forEachStartTag(html, (tag) => {
    if (tag.name !== 'script') return;
    const attrs = attributes(html, tag);
    if (attrs.get('id') === '__NEXT_DATA__' && found.nextData === null) found.nextData = rawText(html, tag);
    else if ((attrs.get('type') ?? '').trim().toLowerCase().startsWith('application/ld+json')) found.jsonLd.push(rawText(html, tag));
  });
  return found;
}

/** JSON.parse that answers `undefined` instead of throwing. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export type PageRead =
  | { kind: 'data'; nextData: Src; jsonLd: string[] }
  | { kind: 'error_page' };

/**
 * Finds and parses a page's `__NEXT_DATA__` (4.1). A Next.js error page (`page` `/_error` or
 * `props.pageProps.statusCode` 404) is reported as such; a page without a parsable payload is
 * unrecognised.
 */
export function readPage(html: string, what: string): PageRead {
  const scripts = findScripts(html);
  if (scripts.nextData === null) unrecognised(`the ${what} has no __NEXT_DATA__ script`);
  const parsed = parseJson(scripts.nextData);
  if (!isObject(parsed)) unrecognised(`the ${what}'s __NEXT_DATA__ is not a JSON object`);
  const nextData = new Src(parsed, `${what} __NEXT_DATA__`);
  const statusCode = nextData.get('props').get('pageProps').get('statusCode').value;
  if (nextData.get('page').value === '/_error' || statusCode === 404 || statusCode === '404') return { kind: 'error_page' };
  return { kind: 'data', nextData, jsonLd: scripts.jsonLd };
}
