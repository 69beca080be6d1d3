// A fast walk over the start tags of an HTML page, for pages of which only a few elements matter
// and the rest (mostly hundreds of kilobytes of script text) must be skipped cheaply: it jumps
// from `<` to `<` with `indexOf` and never looks inside text or script bodies. It follows
// htmlparser2's tokenizer (HTML mode) wherever that changes what is found:
// - `<!-- … -->` (also `--!>`, `<!-->`, `<!--->`), `<![CDATA[ … ]]>`, `<!…>` and `<?…>` hide
//   what they hold; an end tag `</…>` is skipped; a `<` not followed by a letter is text;
// - the raw-text elements (script, style, xmp, iframe, noembed, noframes) and the RCDATA
//   elements (title, textarea) hold no tags and end only at `</` + their name (any letter case)
//   + whitespace, `/` or `>`, else at the end of the page; `plaintext` never ends;
// - attribute values may be double-, single- or unquoted; names are lower-cased; the first of
//   duplicate attributes wins; a start tag the page does not close with `>` does not count.
// Where entities must be decoded (an attribute value or RCDATA text holding `&`), htmlparser2
// itself reads that one element. One difference remains: inside `<svg>`/`<math>` htmlparser2
// tokenizes script, style and title content as markup, where this walk keeps it raw text.
// (The same file serves snapmsg, linkpage-a and linkpage-b.)
import { Parser } from 'htmlparser2';

/** One start tag, and for a raw-text or RCDATA element the range of its text. */
export interface StartTag {
  /** Tag name, lower-cased. */
  readonly name: string;
  /** Index of the tag's `<`. */
  readonly start: number;
  /** Index just after the tag's `>`. */
  readonly end: number;
  /** For raw-text and RCDATA elements, where the text stops (the end tag's `<`, or the end of the page); else `end`. */
  readonly textEnd: number;
}

const GT = 0x3e;
const SLASH = 0x2f;
const EQ = 0x3d;
const DQ = 0x22;
const SQ = 0x27;
const BANG = 0x21;
const QUESTION = 0x3f;
const DASH = 0x2d;

const isWhitespace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0c || c === 0x0d;
const isEndOfTagSection = (c: number): boolean => c === SLASH || c === GT || isWhitespace(c);
const isAsciiAlpha = (c: number): boolean => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);

/** Elements whose content is text up to their own end tag (`plaintext`: up to the end of the page). */
function isTextOnly(name: string): boolean {
  switch (name) {
    case 'script':
    case 'style':
    case 'xmp':
    case 'iframe':
    case 'noembed':
    case 'noframes':
    case 'title':
    case 'textarea':
    case 'plaintext':
      return true;
    default:
      return false;
  }
}

/**
 * Calls `visit` for each start tag of `html`, in document order, until it returns `true`.
 * Comments, end tags, text and the text of raw-text/RCDATA elements are skipped.
 */
export function forEachStartTag(html: string, visit: (tag: StartTag) => boolean | void): void {
  const length = html.length;
  let i = 0;
  while (i < length) {
    const lt = html.indexOf('<', i);
    if (lt === -1) return;
    const c = html.charCodeAt(lt + 1);
    if (isAsciiAlpha(c)) {
      let nameEnd = lt + 1;
      let lowerCase = true; // ASCII letters, digits and signs need no lower-casing
      for (let n = c; ; n = html.charCodeAt(nameEnd)) {
        if (isEndOfTagSection(n)) break;
        if ((n >= 0x41 && n <= 0x5a) || n > 0x7f) lowerCase = false;
        nameEnd += 1;
        if (nameEnd >= length) break;
      }
      const gt = startTagEnd(html, nameEnd);
      if (gt === -1) return; // an unclosed start tag at the end of the page is dropped
      const name = lowerCase ? html.slice(lt + 1, nameEnd) : html.slice(lt + 1, nameEnd).toLowerCase();
      const end = gt + 1;
      let textEnd = end;
      if (isTextOnly(name)) textEnd = name === 'plaintext' ? length : endTagStart(html, name, end);
      if (visit({ name, start: lt, end, textEnd }) === true) return;
      i = textEnd;
    } else if (c === SLASH || c === QUESTION) {
      // An end tag, `</ …>`, `</>` or `<?…>`: everything up to the next `>`.
      const gt = html.indexOf('>', lt + 2);
      if (gt === -1) return;
      i = gt + 1;
    } else if (c === BANG) {
      i = afterMarkupDeclaration(html, lt);
      if (i === -1) return;
    } else {
      i = lt + 1; // a `<` that starts no tag is text
    }
  }
}

/**
 * The index of the `>` that ends a start tag whose name ends at `from`; -1 when the page ends
 * first. Attributes follow htmlparser2's states: whitespace and `/` separate them; a name is
 * at least one character (an `=` included) up to `=`, whitespace, `/` or `>`; after `=` and
 * optional whitespace comes a quoted value (a `>` inside it does not count) or an unquoted one
 * up to whitespace or `>`.
 */
function startTagEnd(html: string, from: number): number {
  const length = html.length;
  let i = from;
  let c = 0;
  for (;;) {
    while (i < length && (isWhitespace((c = html.charCodeAt(i))) || c === SLASH)) i += 1;
    if (i >= length) return -1;
    if (c === GT) return i;
    i += 1; // the name's first character
    while (i < length && !((c = html.charCodeAt(i)) === EQ || isEndOfTagSection(c))) i += 1;
    while (i < length && isWhitespace((c = html.charCodeAt(i)))) i += 1;
    if (i >= length) return -1;
    if (c !== EQ) continue; // `/`, `>` or the next attribute's name
    i += 1;
    while (i < length && isWhitespace((c = html.charCodeAt(i)))) i += 1;
    if (i >= length) return -1;
    if (c === DQ || c === SQ) {
      i = html.indexOf(c === DQ ? '"' : "'", i + 1);
      if (i === -1) return -1;
      i += 1;
    } else {
      while (i < length && !(isWhitespace((c = html.charCodeAt(i))) || c === GT)) i += 1;
    }
  }
}

/** Where the text of a raw-text/RCDATA element `name` starting at `from` stops: its end tag's `<`, or the end of the page. */
function endTagStart(html: string, name: string, from: number): number {
  const length = html.length;
  let lt = html.indexOf('<', from);
  while (lt !== -1) {
    const after = lt + 2 + name.length;
    if (after >= length) return length;
    let match = (html.charCodeAt(lt + 1) | 0x20) === SLASH && isEndOfTagSection(html.charCodeAt(after));
    for (let k = 0; match && k < name.length; k += 1) match = (html.charCodeAt(lt + 2 + k) | 0x20) === name.charCodeAt(k);
    if (match) return lt;
    lt = html.indexOf('<', lt + 1);
  }
  return length;
}

/** After `<!` at `lt`: a comment, CDATA or a declaration; the index after it, or -1 when it runs to the end. */
function afterMarkupDeclaration(html: string, lt: number): number {
  if (html.charCodeAt(lt + 2) === DASH && html.charCodeAt(lt + 3) === DASH) {
    // The first `-->` or `--!>`; `-->` may reuse the opening dashes (`<!-->`, `<!--->`), `--!>` may not.
    const dashes = html.indexOf('-->', lt + 2);
    const until = dashes === -1 ? html.length : dashes + 3;
    const bang = html.slice(lt + 4, until).indexOf('--!>');
    if (bang !== -1) return lt + 4 + bang + 4;
    return dashes === -1 ? -1 : until;
  }
  if (html.startsWith('[CDATA[', lt + 2)) {
    const end = html.indexOf(']]>', lt + 9);
    return end === -1 ? -1 : end + 3;
  }
  const gt = html.indexOf('>', lt + 2);
  return gt === -1 ? -1 : gt + 1;
}

// ------------------------------------------------------------------ reading one element

/**
 * The attributes of a start tag, as htmlparser2 gives them: names lower-cased, the first of
 * duplicates kept, values with entities decoded, `""` for an attribute without a value.
 */
export function attributes(html: string, tag: StartTag): Map<string, string> {
  const found = new Map<string, string>();
  const end = tag.end - 1; // the `>`
  let i = tag.start + 1 + tag.name.length;
  let c = 0;
  for (;;) {
    while (i < end && (isWhitespace((c = html.charCodeAt(i))) || c === SLASH)) i += 1;
    if (i >= end) return found;
    const nameStart = i;
    i += 1;
    while (i < end && !((c = html.charCodeAt(i)) === EQ || isEndOfTagSection(c))) i += 1;
    const name = html.slice(nameStart, i).toLowerCase();
    while (i < end && isWhitespace((c = html.charCodeAt(i)))) i += 1;
    let value = '';
    if (i < end && c === EQ) {
      i += 1;
      while (i < end && isWhitespace((c = html.charCodeAt(i)))) i += 1;
      if (i < end && (c === DQ || c === SQ)) {
        const close = html.indexOf(c === DQ ? '"' : "'", i + 1);
        value = html.slice(i + 1, close);
        i = close + 1;
      } else {
        const valueStart = i;
        while (i < end && !isWhitespace(html.charCodeAt(i))) i += 1;
        value = html.slice(valueStart, i);
      }
      if (value.includes('&')) return parsedAttributes(html.slice(tag.start, tag.end));
    }
    if (!found.has(name)) found.set(name, value);
  }
}

/** htmlparser2's reading of one start tag's attributes (entities decoded). */
function parsedAttributes(source: string): Map<string, string> {
  let found = new Map<string, string>();
  const parser = new Parser(
    {
      onopentag(_name, attribs) {
        found = new Map(Object.entries(attribs));
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(source);
  return found;
}

/** The raw text of a raw-text element (script, style), as it stands in the page. */
export const rawText = (html: string, tag: StartTag): string => html.slice(tag.end, tag.textEnd);

/** The text of an RCDATA element (title, textarea), entities decoded. */
export function decodedText(html: string, tag: StartTag): string {
  const raw = rawText(html, tag);
  if (!raw.includes('&')) return raw;
  let text = '';
  const parser = new Parser(
    {
      ontext(chunk) {
        text += chunk;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(html.slice(tag.start, tag.textEnd));
  return text;
}
