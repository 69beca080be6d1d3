// What the extractor reads from a socialnet HTML page (upstream/socialnet.md 3): the title, the
// meta tags, the marker elements of gated, unavailable and login pages, the `__eqmc` script and
// every data-sjs block, whose preloaders and defines it then collects.
//
// A direct scan tokenizes the page as HTML does at the level these reads need: comments,
// doctype and end tags are skipped; a start tag's attributes are read with double, single or no
// quotes, in any order, names folded to lower case, the first of a repeated name winning; the
// text of `script` and `style` is raw up to its end tag, that of `title` and `textarea` up to
// theirs. So the variations of section 12 (attribute order and quoting, `data-sjs` or
// `data-sjs=""`, extra attributes, blocks in head or body) need no special handling. Script
// text is never entity-decoded (3.3); it is parsed as JSON, which undoes `\/`, `\u003c` and any
// `\uXXXX` escape. Attribute values and the title are entity-decoded: the common references
// here, any other (a rarer named one, one without `;`) by htmlparser2, which knows HTML's whole
// table. Measured on the contract's profile page (13 KB): htmlparser2 tokenizing the whole page
// takes about 160 µs, as long as the JSON.parse of its blocks; this scan about 25 µs. A test
// checks that both read the same from the fixtures and their variants.
import { Parser } from 'htmlparser2';

/** Marker element ids of 9.7, 10 and 11.2. */
const MARKER_IDS = new Set(['content_gate', 'content_unavailable', 'login_form']);

export interface ScannedPage {
  /** Text of the first `<title>`, entity-decoded and trimmed; null when there is none. */
  title: string | null;
  /** `<meta property|name=… content=…>`: key to decoded content; the first of each key wins. */
  meta: Map<string, string>;
  /** Marker elements found (`content_gate`, `content_unavailable`, `login_form`) with their attributes. */
  markers: Map<string, Record<string, string>>;
  /** Raw text of `<script id="__eqmc">`, or null. */
  eqmc: string | null;
  /** Raw text of every `<script data-sjs>` block, in document order. */
  blocks: string[];
}

/** Elements whose text runs raw to their end tag. */
const RAW_TEXT = new Set(['script', 'style', 'title', 'textarea']);

/** Index of the end tag `</name` (any case) followed by whitespace, `/` or `>`, from `from`; -1 when none. */
function endTagIndex(html: string, name: string, from: number): number {
  for (let at = html.indexOf('</', from); at !== -1; at = html.indexOf('</', at + 2)) {
    const after = html[at + 2 + name.length];
    if (html.slice(at + 2, at + 2 + name.length).toLowerCase() === name && (after === undefined || /[\s/>]/.test(after))) return at;
  }
  return -1;
}

const TAG_NAME = /[A-Za-z][^\s/>]*/y;
const ATTRIBUTE = /([^\s"'>/=][^\s"'>/=]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]*)))?/y;
const SPACE_OR_SLASH = /[\s/]*/y;

const COMMON_NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', middot: '\u00b7' };
const REFERENCE = /&(?:#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z][A-Za-z0-9]*));/g;

/**
 * Decodes HTML character references (named, decimal, hexadecimal) in an attribute value or
 * title. The common forms are decoded here; anything else (another named reference, one without
 * its `;`, a code point HTML remaps) goes to htmlparser2, which implements the whole table.
 */
export function decodeHtml(raw: string): string {
  if (!raw.includes('&')) return raw;
  let simple = true;
  const decoded = raw.replace(REFERENCE, (whole, decimal?: string, hex?: string, named?: string) => {
    if (named !== undefined) {
      const value = Object.hasOwn(COMMON_NAMED, named) ? COMMON_NAMED[named] : undefined;
      if (value === undefined) simple = false;
      return value ?? whole;
    }
    const code = decimal !== undefined ? Number.parseInt(decimal, 10) : Number.parseInt(hex ?? '', 16);
    // NUL, C1 controls (remapped by HTML), surrogates and beyond Unicode: leave them to the parser.
    if (code === 0 || (code >= 0x80 && code <= 0x9f) || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) {
      simple = false;
      return whole;
    }
    return String.fromCodePoint(code);
  });
  if (simple && !raw.replace(REFERENCE, '').includes('&')) return decoded;
  let parsed = raw;
  const parser = new Parser(
    {
      onattribute(_name, value) {
        parsed = value;
      },
    },
    { decodeEntities: true },
  );
  parser.write(`<i a="${raw.replaceAll('"', '&quot;')}">`);
  parser.end();
  return parsed;
}

/** Reads a start tag's attributes from `from` (just past its name); returns them and the index past `>`. */
function readAttributes(html: string, from: number): { attributes: Record<string, string>; end: number } {
  const attributes: Record<string, string> = {};
  let at = from;
  for (;;) {
    SPACE_OR_SLASH.lastIndex = at;
    SPACE_OR_SLASH.exec(html);
    at = SPACE_OR_SLASH.lastIndex;
    if (at >= html.length) return { attributes, end: html.length };
    if (html[at] === '>') return { attributes, end: at + 1 };
    ATTRIBUTE.lastIndex = at;
    const match = ATTRIBUTE.exec(html);
    if (match === null) {
      at += 1; // a stray quote or `=`: skip it as HTML's tokenizer would
      continue;
    }
    at = ATTRIBUTE.lastIndex;
    const name = (match[1] ?? '').toLowerCase();
    if (!Object.hasOwn(attributes, name)) attributes[name] = decodeHtml(match[2] ?? match[3] ?? match[4] ?? '');
  }
}

export function scanPage(html: string): ScannedPage {
  const page: ScannedPage = { title: null, meta: new Map(), markers: new Map(), eqmc: null, blocks: [] };
  let at = 0;
  for (;;) {
    const open = html.indexOf('<', at);
    if (open === -1 || open + 1 >= html.length) break;
    const next = html[open + 1] ?? '';
    if (html.startsWith('<!--', open)) {
      const close = html.indexOf('-->', open + 4);
      at = close === -1 ? html.length : close + 3;
      continue;
    }
    if (next === '!' || next === '?' || next === '/') {
      const close = html.indexOf('>', open + 2);
      at = close === -1 ? html.length : close + 1;
      continue;
    }
    TAG_NAME.lastIndex = open + 1;
    const nameMatch = TAG_NAME.exec(html);
    if (nameMatch === null) {
      at = open + 1;
      continue;
    }
    const name = nameMatch[0].toLowerCase();
    const { attributes, end } = readAttributes(html, TAG_NAME.lastIndex);
    at = end;
    const id = attributes.id;
    if (id !== undefined && MARKER_IDS.has(id) && !page.markers.has(id)) page.markers.set(id, attributes);
    if (name === 'meta') {
      const key = attributes.property ?? attributes.name;
      const content = attributes.content;
      if (key !== undefined && content !== undefined && !page.meta.has(key)) page.meta.set(key, content);
      continue;
    }
    if (!RAW_TEXT.has(name)) continue;
    const close = endTagIndex(html, name, at);
    const text = html.slice(at, close === -1 ? html.length : close);
    if (name === 'title') page.title ??= decodeHtml(text).trim();
    else if (name === 'script' && id === '__eqmc') page.eqmc ??= text;
    else if (name === 'script' && Object.hasOwn(attributes, 'data-sjs')) page.blocks.push(text);
    if (close === -1) break;
    const tagEnd = html.indexOf('>', close);
    at = tagEnd === -1 ? html.length : tagEnd + 1;
  }
  return page;
}

/** A preloaded GraphQL result (3.3): its full name and `__bbox.result`. */
export interface Preloader {
  name: string;
  result: unknown;
}

export interface SjsContent {
  /** Every preloader of every block, in document order. */
  preloaders: Preloader[];
  /** `define` entries by module name; the first of each name wins. */
  defines: Map<string, unknown>;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};

/**
 * Collects the preloaders and defines of all blocks (3.3): every block, every top-level
 * `ScheduledServerJS`/`handle` entry, every element of its args, every
 * `RelayPrefetchedStreamCache`/`next` entry of its `__bbox.require`. A block that is not a JSON
 * object is skipped like any unrelated block.
 */
export function readBlocks(blocks: readonly string[]): SjsContent {
  const content: SjsContent = { preloaders: [], defines: new Map() };
  for (const text of blocks) {
    const block = parseJson(text);
    if (!isObject(block)) continue;
    if (Array.isArray(block.define)) {
      for (const entry of block.define) {
        if (Array.isArray(entry) && typeof entry[0] === 'string' && !content.defines.has(entry[0])) {
          content.defines.set(entry[0], entry[2]);
        }
      }
    }
    if (!Array.isArray(block.require)) continue;
    for (const entry of block.require) {
      if (!Array.isArray(entry) || entry[0] !== 'ScheduledServerJS' || entry[1] !== 'handle' || !Array.isArray(entry[3])) continue;
      for (const arg of entry[3]) {
        const inner = isObject(arg) && isObject(arg.__bbox) ? arg.__bbox.require : undefined;
        if (!Array.isArray(inner)) continue;
        for (const item of inner) {
          if (!Array.isArray(item) || item[0] !== 'RelayPrefetchedStreamCache' || item[1] !== 'next') continue;
          const args = item[3];
          if (!Array.isArray(args) || typeof args[0] !== 'string') continue;
          const box = isObject(args[1]) && isObject(args[1].__bbox) ? args[1].__bbox : undefined;
          if (box === undefined || !('result' in box)) continue;
          content.preloaders.push({ name: args[0], result: box.result });
        }
      }
    }
  }
  return content;
}

/** Preloader name prefixes of 3.4. */
export const PRELOADERS = {
  header: 'adp_ProfileCometHeaderQueryRelayPreloader_',
  timeline: 'adp_ProfileCometTimelineFeedQueryRelayPreloader_',
  introTiles: 'adp_ProfilePlusCometLoggedOutRootQueryRelayPreloader_',
  reels: 'adp_ProfileCometAppCollectionReelsRendererQueryRelayPreloader_',
  about: 'adp_ProfileCometAboutAppSectionQueryRelayPreloader_',
} as const;

export type PreloaderKind = keyof typeof PRELOADERS;

/**
 * The result of the first preloader whose name starts with the kind's prefix (3.4: the suffix is
 * new on every load and only the prefix is matched), or undefined.
 */
export function findPreloader(content: SjsContent, kind: PreloaderKind): unknown {
  const prefix = PRELOADERS[kind];
  for (const preloader of content.preloaders) {
    if (preloader.name.startsWith(prefix)) return preloader.result;
  }
  return undefined;
}
