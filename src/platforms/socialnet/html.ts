// What the extractor reads from a socialnet HTML page (README.md): the title, the
// meta tags, the marker elements of gated, unavailable and login pages, the `__eqmc` script and
// every data-sjs block, whose preloaders and defines it then collects.
//
// A direct scan tokenizes the page as HTML does at the level these reads need: comments,
// doctype and end tags are skipped; a start tag's attributes are read with double, single or no
// quotes, in any order, names folded to lower case, the first of a repeated name winning; the
// text of `script` and `style` is raw up to its end tag, that of `title` and `textarea` up to
// theirs. So the variations the platform allows (attribute order and quoting, `data-sjs` or
// `data-sjs=""`, extra attributes, blocks in head or body) need no special handling. Script
// text is never entity-decoded; it is parsed as JSON, which undoes `\/`, `\u003c` and any
// `\uXXXX` escape. Attribute values and the title are entity-decoded: the common references
// here, any other (a rarer named one, one without `;`) by htmlparser2, which knows HTML's whole
// table. Measured on the contract's profile page (13 KB): htmlparser2 tokenizing the whole page
// takes about 160 µs, as long as the JSON.parse of its blocks; this scan about 10 µs (reading
// characters by code, attributes into a Map, references decoded without a regular expression).
// A test checks that both read the same from the fixtures and their variants.
import { Parser } from 'htmlparser2';
import { commonReference } from '../shared/entities.ts';

/** Marker element ids of the gated, unavailable and login-wall pages. */
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

const TAB = 9;
const CARRIAGE_RETURN = 13;
const SPACE = 32;
const DOUBLE_QUOTE = 34;
const SINGLE_QUOTE = 39;
const SLASH = 47;
const EQUALS = 61;
const GREATER_THAN = 62;

/** `\s` of a JavaScript regular expression, by code unit (what the scan has always taken as space). */
function isSpace(code: number): boolean {
  if (code <= SPACE) return code === SPACE || (code >= TAB && code <= CARRIAGE_RETURN);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 ||
    code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff
  );
}

/** True when `code` ends a tag or attribute name: space, `/`, `>`, and for attributes `"`, `'`, `=`. */
const endsTagName = (code: number): boolean => code === SLASH || code === GREATER_THAN || isSpace(code);
const endsAttributeName = (code: number): boolean =>
  code === DOUBLE_QUOTE || code === SINGLE_QUOTE || code === EQUALS || endsTagName(code);

const isAsciiLetter = (code: number): boolean => (code >= 65 && code <= 90) || (code >= 97 && code <= 122);

/** Index of the end tag `</name` (any case) followed by whitespace, `/` or `>`, from `from`; -1 when none. */
function endTagIndex(html: string, name: string, from: number): number {
  for (let at = html.indexOf('</', from); at !== -1; at = html.indexOf('</', at + 2)) {
    const after = at + 2 + name.length;
    if (html.slice(at + 2, after).toLowerCase() === name && (after >= html.length || endsTagName(html.charCodeAt(after)))) return at;
  }
  return -1;
}


/**
 * Decodes HTML character references (named, decimal, hexadecimal) in an attribute value or
 * title. The common forms are decoded here; anything else (another named reference, one without
 * its `;`, a code point HTML remaps) goes to htmlparser2, which implements the whole table.
 */
export function decodeHtml(raw: string): string {
  let amp = raw.indexOf('&');
  if (amp === -1) return raw;
  let decoded = '';
  let copied = 0;
  while (amp !== -1) {
    const semicolon = raw.indexOf(';', amp + 1);
    const character = semicolon === -1 ? undefined : commonReference(raw.slice(amp + 1, semicolon));
    if (character === undefined) return decodeByParser(raw);
    decoded += raw.slice(copied, amp) + character;
    copied = semicolon + 1;
    amp = raw.indexOf('&', copied);
  }
  return decoded + raw.slice(copied);
}

/** `raw` decoded by htmlparser2, as the value of an attribute. */
function decodeByParser(raw: string): string {
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

/**
 * Reads a start tag's attributes from `from` (just past its name); returns them and the index
 * past `>`. An attribute is a name (up to space, `"`, `'`, `/`, `>` or `=`), then optionally
 * `=` and a value in double or single quotes or unquoted (up to space or `>`); an unclosed quote
 * starts an unquoted value. A stray quote or `=` is skipped as HTML's tokenizer would.
 */
function readAttributes(html: string, from: number): { attributes: Map<string, string>; end: number } {
  // A Map: attribute names sliced from the page would each have to be interned as object keys.
  const attributes = new Map<string, string>();
  const length = html.length;
  let at = from;
  for (;;) {
    while (at < length && (html.charCodeAt(at) === SLASH || isSpace(html.charCodeAt(at)))) at += 1;
    if (at >= length) return { attributes, end: length };
    const first = html.charCodeAt(at);
    if (first === GREATER_THAN) return { attributes, end: at + 1 };
    if (first === DOUBLE_QUOTE || first === SINGLE_QUOTE || first === EQUALS) {
      at += 1;
      continue;
    }
    const nameStart = at;
    while (at < length && !endsAttributeName(html.charCodeAt(at))) at += 1;
    const name = html.slice(nameStart, at).toLowerCase();
    let value = '';
    let look = at;
    while (look < length && isSpace(html.charCodeAt(look))) look += 1;
    if (look < length && html.charCodeAt(look) === EQUALS) {
      look += 1;
      while (look < length && isSpace(html.charCodeAt(look))) look += 1;
      const quote = look < length ? html.charCodeAt(look) : -1;
      const close = quote === DOUBLE_QUOTE ? html.indexOf('"', look + 1) : quote === SINGLE_QUOTE ? html.indexOf("'", look + 1) : -1;
      if (close !== -1) {
        value = html.slice(look + 1, close);
        at = close + 1;
      } else {
        const valueStart = look;
        while (look < length && html.charCodeAt(look) !== GREATER_THAN && !isSpace(html.charCodeAt(look))) look += 1;
        value = html.slice(valueStart, look);
        at = look;
      }
    }
    if (!attributes.has(name)) attributes.set(name, decodeHtml(value));
  }
}

export function scanPage(html: string): ScannedPage {
  const page: ScannedPage = { title: null, meta: new Map(), markers: new Map(), eqmc: null, blocks: [] };
  const length = html.length;
  let at = 0;
  for (;;) {
    const open = html.indexOf('<', at);
    if (open === -1 || open + 1 >= length) break;
    const next = html.charCodeAt(open + 1);
    if (html.startsWith('<!--', open)) {
      const close = html.indexOf('-->', open + 4);
      at = close === -1 ? length : close + 3;
      continue;
    }
    if (next === 33 /* ! */ || next === 63 /* ? */ || next === SLASH) {
      const close = html.indexOf('>', open + 2);
      at = close === -1 ? length : close + 1;
      continue;
    }
    if (!isAsciiLetter(next)) {
      at = open + 1;
      continue;
    }
    let nameEnd = open + 2;
    while (nameEnd < length && !endsTagName(html.charCodeAt(nameEnd))) nameEnd += 1;
    const name = html.slice(open + 1, nameEnd).toLowerCase();
    const { attributes, end } = readAttributes(html, nameEnd);
    at = end;
    const id = attributes.get('id');
    if (id !== undefined && MARKER_IDS.has(id) && !page.markers.has(id)) page.markers.set(id, Object.fromEntries(attributes));
    if (name === 'meta') {
      const key = attributes.get('property') ?? attributes.get('name');
      const content = attributes.get('content');
      if (key !== undefined && content !== undefined && !page.meta.has(key)) page.meta.set(key, content);
      continue;
    }
    if (!RAW_TEXT.has(name)) continue;
    const close = endTagIndex(html, name, at);
    const text = html.slice(at, close === -1 ? length : close);
    if (name === 'title') page.title ??= decodeHtml(text).trim();
    else if (name === 'script' && id === '__eqmc') page.eqmc ??= text;
    else if (name === 'script' && attributes.has('data-sjs')) page.blocks.push(text);
    if (close === -1) break;
    const tagEnd = html.indexOf('>', close);
    at = tagEnd === -1 ? length : tagEnd + 1;
  }
  return page;
}

/** A preloaded GraphQL result: its full name and `__bbox.result`. */
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
 * Collects the preloaders and defines of all blocks: every block, every top-level
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

/** Preloader name prefixes (README.md, "Where the data sits"). */
export const PRELOADERS = {
  header: 'adp_ProfileCometHeaderQueryRelayPreloader_',
  timeline: 'adp_ProfileCometTimelineFeedQueryRelayPreloader_',
  introTiles: 'adp_ProfilePlusCometLoggedOutRootQueryRelayPreloader_',
  reels: 'adp_ProfileCometAppCollectionReelsRendererQueryRelayPreloader_',
  about: 'adp_ProfileCometAboutAppSectionQueryRelayPreloader_',
} as const;

export type PreloaderKind = keyof typeof PRELOADERS;

/**
 * The result of the first preloader whose name starts with the kind's prefix (the suffix is
 * new on every load and only the prefix is matched), or undefined.
 */
export function findPreloader(content: SjsContent, kind: PreloaderKind): unknown {
  const prefix = PRELOADERS[kind];
  for (const preloader of content.preloaders) {
    if (preloader.name.startsWith(prefix)) return preloader.result;
  }
  return undefined;
}
