// Reading a storefront page (README.md, "Where the data sits" and "Signals"): the `a-state`
// blocks, the `<title>` and the captcha form, found with the shared start-tag scanner
// (../shared/tags.ts), which follows htmlparser2's tokenizer. Quoting, entities, attribute order,
// extra attributes and blocks need no special handling; a-state text is raw (never
// entity-decoded), the `data-a-state` attribute and the title are decoded.
import { root } from '../shared/read.ts';
import { attributes, decodedText, forEachStartTag, rawText } from '../shared/tags.ts';

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

export function scanPage(html: string): ScannedPage {
  const page: ScannedPage = { title: '', captcha: false, blocks: [] };
  let titleSeen = false;
  forEachStartTag(html, (tag) => {
    if (tag.name === 'form') {
      if ((attributes(html, tag).get('action') ?? '').trim().startsWith(CAPTCHA_ACTION)) page.captcha = true;
    } else if (tag.name === 'script') {
      const found = attributes(html, tag);
      if ((found.get('type') ?? '').trim().toLowerCase() === 'a-state') {
        page.blocks.push({ key: stateKey(found.get('data-a-state')), text: rawText(html, tag) });
      }
    } else if (tag.name === 'title' && !titleSeen) {
      page.title = decodedText(html, tag);
      titleSeen = true;
    }
  });
  return page;
}

/** Cheap test before parsing a non-HTML body (a feed response) for the captcha form. */
export const mayHoldForm = (body: string): boolean => /<form[\s>]/i.test(body);
