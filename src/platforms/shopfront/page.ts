// Reading a storefront page (upstream/shopfront.md 4.1 and 8): the `a-state` blocks, the
// `<title>` and the captcha form.
//
// A direct scan tokenizes the page as htmlparser2 (HTML mode) does, at the level these reads
// need: comments (`<!--` to `-->` or `--!>`, `<!-->` included), CDATA sections (to `]]>`),
// doctypes, other `<!…>`, `<?…>` and end tags are skipped to their end; a start tag's attributes
// are read with double, single or no quotes, in any order, names folded to lower case, the first
// of a repeated name winning, values entity-decoded; the text of `script`, `style`, `xmp`,
// `iframe`, `noembed` and `noframes` runs raw to its end tag (`</name` followed by space, `/` or
// `>`, any case), that of `title` and `textarea` too but entity-decoded, `plaintext` to the end of
// the page; a tag left open at the end of the page counts for nothing. So the variations of
// section 9 (quoting, entities, attribute order, extra attributes and blocks) need no special
// handling, and a-state text is never entity-decoded (4.1 step 4). Entities are decoded here in
// their common forms; any other (a rarer named one, one without `;`, a code point HTML remaps)
// by htmlparser2, which knows HTML's whole table. Measured on a 35 KB storefront page:
// htmlparser2 tokenizing it takes about 100 µs, as long as the JSON.parse of its blocks; this scan
// about 13 µs. A test checks that both read the same from the fixtures and their variants. (Not
// followed: htmlparser2's foreign content, where a `<script>` or `<title>` inside `<svg>` or
// `<math>` is not raw text; storefront pages have none.)
import { Parser } from 'htmlparser2';
import { root } from '../shared/read.ts';
import { commonReference } from '../shared/entities.ts';

export interface AStateBlock {
  /** `key` of the `data-a-state` object; null when the attribute is missing or not such an object. */
  key: string | null;
  /** The element's raw text (JSON, not entity-decoded). */
  text: string;
}

export interface ScannedPage {
  /** Text of the first `<title>`, entities decoded. */
  title: string;
  /** True when a `<form>` has an `action` starting with `/errors/validateCaptcha`. */
  captcha: boolean;
  /** Every `<script type="a-state">`, in document order. */
  blocks: AStateBlock[];
}

const CAPTCHA_ACTION = '/errors/validateCaptcha';

function stateKey(attribute: string | undefined): string | null {
  if (attribute === undefined) return null;
  try {
    const key = root(JSON.parse(attribute), 'data-a-state').at('key').value;
    return typeof key === 'string' ? key : null;
  } catch {
    return null;
  }
}

// ------------------------------------------------------------------ entities


/**
 * Decodes the character references of an attribute value (`attribute`) or of a title's text;
 * the common forms here, anything else through htmlparser2 (the two differ only there: a
 * reference without `;` followed by a letter, digit or `=` stays as written in an attribute).
 * htmlparser2 also leaves a title's `&` undecoded right after what may start `</title`, so a
 * title holding `<` goes to it too.
 */
function decodeHtml(raw: string, where: 'attribute' | 'text'): string {
  let amp = raw.indexOf('&');
  if (amp === -1) return raw;
  if (where === 'text' && raw.includes('<')) return decodeByParser(raw, where);
  let decoded = '';
  let copied = 0;
  while (amp !== -1) {
    const semicolon = raw.indexOf(';', amp + 1);
    const character = semicolon === -1 ? undefined : commonReference(raw.slice(amp + 1, semicolon));
    if (character === undefined) return decodeByParser(raw, where);
    decoded += raw.slice(copied, amp) + character;
    copied = semicolon + 1;
    amp = raw.indexOf('&', copied);
  }
  return decoded + raw.slice(copied);
}

/** `raw` decoded by htmlparser2, as an attribute value or a title's text. */
function decodeByParser(raw: string, where: 'attribute' | 'text'): string {
  let parsed = '';
  const parser = new Parser(
    {
      onattribute(_name, value) {
        parsed = value;
      },
      ontext(text) {
        parsed += text;
      },
    },
    { decodeEntities: true },
  );
  parser.end(where === 'attribute' ? `<i a="${raw.replaceAll('"', '&quot;')}">` : `<title>${raw}</title>`);
  return parsed;
}

// ------------------------------------------------------------------ tokens

const TAB = 9;
const LINE_FEED = 10;
const FORM_FEED = 12;
const CARRIAGE_RETURN = 13;
const SPACE = 32;
const EXCLAMATION = 33;
const DOUBLE_QUOTE = 34;
const SINGLE_QUOTE = 39;
const SLASH = 47;
const EQUALS = 61;
const GREATER_THAN = 62;
const QUESTION = 63;

/** HTML's whitespace. */
const isSpace = (code: number): boolean =>
  code === SPACE || code === LINE_FEED || code === TAB || code === FORM_FEED || code === CARRIAGE_RETURN;
/** Space, `/` or `>`: the end of a tag name. */
const endsTagName = (code: number): boolean => code === SLASH || code === GREATER_THAN || isSpace(code);
const isAsciiLetter = (code: number): boolean => (code >= 65 && code <= 90) || (code >= 97 && code <= 122);

/** Elements whose text runs to their end tag: raw, or entity-decoded (`title`, `textarea`). */
const RAW_TEXT = new Set(['script', 'style', 'xmp', 'iframe', 'noembed', 'noframes', 'title', 'textarea']);

/** Index just past the next `>` from `from`; the page's end when there is none. */
function pastGreaterThan(html: string, from: number): number {
  const close = html.indexOf('>', from);
  return close === -1 ? html.length : close + 1;
}

/** Index just past the comment, CDATA section or declaration opening with `<!` at `open`. */
function pastDeclaration(html: string, open: number): number {
  if (html.startsWith('<!--', open)) {
    const dashes = html.indexOf('-->', open + 2);
    const bang = html.indexOf('--!>', open + 4);
    if (dashes === -1 && bang === -1) return html.length;
    return dashes !== -1 && (bang === -1 || dashes < bang) ? dashes + 3 : bang + 4;
  }
  if (html.startsWith('<![CDATA[', open)) {
    const close = html.indexOf(']]>', open + 9);
    return close === -1 ? html.length : close + 3;
  }
  return pastGreaterThan(html, open + 2);
}

/** Index of the end tag `</name` (any case) followed by space, `/` or `>`, from `from`; -1 when none. */
function endTagIndex(html: string, name: string, from: number): number {
  for (let at = html.indexOf('</', from); at !== -1; at = html.indexOf('</', at + 2)) {
    const after = at + 2 + name.length;
    if (after < html.length && endsTagName(html.charCodeAt(after)) && html.slice(at + 2, after).toLowerCase() === name) return at;
  }
  return -1;
}

/**
 * Reads a start tag's attributes from `from` (just past its name) into `attributes` (when
 * given); returns the index past its `>`, or -1 when the page ends inside the tag.
 */
function readTag(html: string, from: number, attributes: Map<string, string> | null): number {
  const length = html.length;
  let at = from;
  for (;;) {
    while (at < length && (html.charCodeAt(at) === SLASH || isSpace(html.charCodeAt(at)))) at += 1;
    if (at >= length) return -1;
    if (html.charCodeAt(at) === GREATER_THAN) return at + 1;
    // The name: its first character whatever it is (`=` and quotes included), then up to `=`,
    // space, `/` or `>`.
    const nameStart = at;
    at += 1;
    while (at < length) {
      const code = html.charCodeAt(at);
      if (code === EQUALS || endsTagName(code)) break;
      at += 1;
    }
    const nameEnd = at;
    while (at < length && isSpace(html.charCodeAt(at))) at += 1;
    let value = '';
    if (at < length && html.charCodeAt(at) === EQUALS) {
      at += 1;
      while (at < length && isSpace(html.charCodeAt(at))) at += 1;
      if (at >= length) return -1;
      const quote = html.charCodeAt(at);
      if (quote === DOUBLE_QUOTE || quote === SINGLE_QUOTE) {
        const close = html.indexOf(quote === DOUBLE_QUOTE ? '"' : "'", at + 1);
        if (close === -1) return -1;
        value = html.slice(at + 1, close);
        at = close + 1;
      } else {
        const valueStart = at;
        while (at < length && html.charCodeAt(at) !== GREATER_THAN && !isSpace(html.charCodeAt(at))) at += 1;
        if (at >= length) return -1;
        value = html.slice(valueStart, at);
      }
    }
    if (attributes !== null) {
      const name = html.slice(nameStart, nameEnd).toLowerCase();
      if (!attributes.has(name)) attributes.set(name, decodeHtml(value, 'attribute'));
    }
  }
}

export function scanPage(html: string): ScannedPage {
  const page: ScannedPage = { title: '', captcha: false, blocks: [] };
  let titleSeen = false;
  const length = html.length;
  let at = 0;
  while (at < length) {
    const open = html.indexOf('<', at);
    if (open === -1 || open + 1 >= length) break;
    const next = html.charCodeAt(open + 1);
    if (next === EXCLAMATION) {
      at = pastDeclaration(html, open);
      continue;
    }
    if (next === QUESTION || next === SLASH) {
      at = pastGreaterThan(html, open + 2);
      continue;
    }
    if (!isAsciiLetter(next)) {
      at = open + 1;
      continue;
    }
    let nameEnd = open + 2;
    while (nameEnd < length && !endsTagName(html.charCodeAt(nameEnd))) nameEnd += 1;
    const name = html.slice(open + 1, nameEnd).toLowerCase();
    // Attributes are kept only where they are read.
    const attributes = name === 'script' || name === 'form' ? new Map<string, string>() : null;
    const end = readTag(html, nameEnd, attributes);
    if (end === -1) break;
    at = end;
    if (name === 'form' && (attributes?.get('action') ?? '').trim().startsWith(CAPTCHA_ACTION)) page.captcha = true;
    if (name === 'plaintext') break;
    if (!RAW_TEXT.has(name)) continue;
    const close = endTagIndex(html, name, at);
    const text = html.slice(at, close === -1 ? length : close);
    if (name === 'script' && (attributes?.get('type') ?? '').trim().toLowerCase() === 'a-state') {
      page.blocks.push({ key: stateKey(attributes?.get('data-a-state')), text });
    } else if (name === 'title' && !titleSeen) {
      page.title = decodeHtml(text, 'text');
      titleSeen = true;
    }
    if (close === -1) break;
    at = pastGreaterThan(html, close);
  }
  return page;
}

/** Cheap test before parsing a non-HTML body (a feed response) for the captcha form. */
export const mayHoldForm = (body: string): boolean => /<form[\s>]/i.test(body);
