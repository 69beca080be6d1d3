// Reading a storefront page (upstream/shopfront.md 4.1 and 8) with htmlparser2: the `a-state`
// blocks, the `<title>` and the captcha form. htmlparser2 decodes entities in attribute values
// whatever the quoting, and hands over `<script>` text raw, up to `</script`, as the chapter
// requires.
import { Parser } from 'htmlparser2';
import { isObject } from './read.ts';

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
    const value: unknown = JSON.parse(attribute);
    return isObject(value) && typeof value.key === 'string' ? value.key : null;
  } catch {
    return null;
  }
}

export function scanPage(html: string): ScannedPage {
  const page: ScannedPage = { title: '', captcha: false, blocks: [] };
  let block: AStateBlock | null = null;
  let inTitle = false;
  let titleSeen = false;
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === 'script' && (attributes.type ?? '').trim().toLowerCase() === 'a-state') {
          block = { key: stateKey(attributes['data-a-state']), text: '' };
        } else if (name === 'title' && !titleSeen) {
          inTitle = true;
        } else if (name === 'form' && (attributes.action ?? '').trim().startsWith(CAPTCHA_ACTION)) {
          page.captcha = true;
        }
      },
      ontext(text) {
        if (block !== null) block.text += text;
        else if (inTitle) page.title += text;
      },
      onclosetag(name) {
        if (name === 'script' && block !== null) {
          page.blocks.push(block);
          block = null;
        } else if (name === 'title' && inTitle) {
          inTitle = false;
          titleSeen = true;
        }
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);
  return page;
}

/** Cheap test before parsing a non-HTML body (a feed response) for the captcha form. */
export const mayHoldForm = (body: string): boolean => /<form[\s>]/i.test(body);
