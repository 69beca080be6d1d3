// The two script blocks of a snapmsg page that feed the API (README.md, "Where the data sits"):
// `<script id="__NEXT_DATA__">` and the JSON-LD blocks, found with the shared start-tag scanner
// (a script's text is raw up to its `</script>`, never entity-decoded) and parsed as JSON,
// which undoes the Next.js `\u003c` escapes.
import { parseJson } from '../shared/json-ld.ts';
import { root, UnrecognisedData, type Node } from '../shared/read.ts';
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

export type PageRead = { kind: 'data'; nextData: Node; jsonLd: string[] } | { kind: 'error_page' };

/**
 * A page's `__NEXT_DATA__` (the root of every path in README.md) and JSON-LD blocks. A Next.js
 * error page (`page` `/_error` or `props.pageProps.statusCode` 404) is reported as such; a page
 * without a parsable payload is unrecognised.
 */
export function readPage(html: string, what: string): PageRead {
  const scripts = findScripts(html);
  if (scripts.nextData === null) throw new UnrecognisedData(what, 'no __NEXT_DATA__ script');
  const nextData = root(parseJson(scripts.nextData), `${what} __NEXT_DATA__`).node('');
  const statusCode = nextData.at('props.pageProps.statusCode').value;
  if (nextData.at('page').value === '/_error' || statusCode === 404 || statusCode === '404') return { kind: 'error_page' };
  return { kind: 'data', nextData, jsonLd: scripts.jsonLd };
}
