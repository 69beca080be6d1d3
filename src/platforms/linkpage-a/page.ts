// One pass over a linkpage-a page (README.md, "Where the data sits" and "Signals"): the raw text
// of the `__NUXT_DATA__` payload, the JSON-LD blocks, the `<head>` tags that feed `metadata`,
// and the challenge marker. A walk over the start tags (tags.ts, which follows htmlparser2's
// tokenizer and leaves entity decoding to it) reads them, so attribute order, quoting,
// attribute-name case, entities and whitespace between tags do not matter; script contents are
// raw text up to the next `</script>` and are never entity-decoded.
import { attributes, decodedText, forEachStartTag, rawText } from '../shared/tags.ts';
import type { LinkpageAMetadata } from './schema.ts';

export interface ScannedPage {
  /** Raw text of the first `<script id="__NUXT_DATA__">`, or null when the page has none. */
  payload: string | null;
  /** Raw text of every `<script type="application/ld+json">`, in document order. */
  jsonLd: string[];
  /** An element with `id="challenge-root"` is present. */
  challenge: boolean;
  /** `metadata`: the first occurrence of each tag, entities decoded; `""` when missing. */
  head: LinkpageAMetadata;
}

/** Which `<meta>` feeds which `metadata` field: attribute name and its lower-cased value. */
const META: ReadonlyArray<[field: keyof LinkpageAMetadata, attribute: 'name' | 'property', value: string]> = [
  ['description', 'name', 'description'],
  ['image', 'property', 'og:image'],
  ['keywords', 'name', 'keywords'],
];

const lower = (value: string | undefined): string => (value ?? '').trim().toLowerCase();

export function scanPage(html: string): ScannedPage {
  let payload: string | null = null;
  const jsonLd: string[] = [];
  let challenge = false;
  const found: Partial<LinkpageAMetadata> = {};

  forEachStartTag(html, (tag) => {
    const attrs = attributes(html, tag);
    if (attrs.get('id') === 'challenge-root') challenge = true;
    if (tag.name === 'script') {
      if (attrs.get('id') === '__NUXT_DATA__' && payload === null) payload = rawText(html, tag);
      else if (lower(attrs.get('type')) === 'application/ld+json') jsonLd.push(rawText(html, tag));
    } else if (tag.name === 'title') {
      if (found.title === undefined) found.title = decodedText(html, tag).trim();
    } else if (tag.name === 'meta') {
      for (const [field, attribute, value] of META) {
        if (found[field] === undefined && lower(attrs.get(attribute)) === value) found[field] = attrs.get('content') ?? '';
      }
    } else if (tag.name === 'link' && found.canonical === undefined) {
      if (lower(attrs.get('rel')).split(/\s+/).includes('canonical')) found.canonical = attrs.get('href') ?? '';
    }
  });

  return {
    payload,
    jsonLd,
    challenge,
    head: {
      title: found.title ?? '',
      description: found.description ?? '',
      image: found.image ?? '',
      keywords: found.keywords ?? '',
      canonical: found.canonical ?? '',
    },
  };
}
