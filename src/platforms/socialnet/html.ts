// What the extractor reads from a socialnet HTML page (README.md): the title, the meta tags,
// the marker elements of gated, unavailable and login pages, the `__eqmc` script and every
// data-sjs block, whose preloaders and defines it then collects. The page is read with the
// shared start-tag walk (../shared/tags.ts), so the variations the platform allows (attribute
// order and quoting, `data-sjs` or `data-sjs=""`, extra attributes, blocks in head or body)
// need no special handling. Script text is never entity-decoded; it is parsed as JSON, which
// undoes `\/`, `\u003c` and any `\uXXXX` escape. Attribute values and the title are decoded.
import { attributes, decodedText, forEachStartTag, rawText } from '../shared/tags.ts';

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

export function scanPage(html: string): ScannedPage {
  const page: ScannedPage = { title: null, meta: new Map(), markers: new Map(), eqmc: null, blocks: [] };
  forEachStartTag(html, (tag) => {
    if (tag.name === 'title') {
      page.title ??= decodedText(html, tag).trim();
      return;
    }
    const found = attributes(html, tag);
    const id = found.get('id');
    if (id !== undefined && MARKER_IDS.has(id) && !page.markers.has(id)) page.markers.set(id, Object.fromEntries(found));
    if (tag.name === 'meta') {
      const key = found.get('property') ?? found.get('name');
      const content = found.get('content');
      if (key !== undefined && content !== undefined && !page.meta.has(key)) page.meta.set(key, content);
    } else if (tag.name === 'script') {
      if (id === '__eqmc') page.eqmc ??= rawText(html, tag);
      else if (found.has('data-sjs')) page.blocks.push(rawText(html, tag));
    }
  });
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
