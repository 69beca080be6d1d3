// Character references in their common forms, decoded without a full HTML parser; the rare
// forms are left to htmlparser2 by the callers.

const COMMON_NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', middot: '\u00b7' };
const DECIMAL = /^#[0-9]{1,7}$/;
const HEX = /^#[xX][0-9a-fA-F]{1,6}$/;

/**
 * The character a reference's body (between `&` and `;`) stands for, when it is one of the common
 * forms: a named reference of `COMMON_NAMED`, or a decimal or hexadecimal one of a code point
 * HTML keeps as it is (not NUL, a C1 control, a surrogate or beyond Unicode); else undefined.
 */
export function commonReference(body: string): string | undefined {
  if (Object.hasOwn(COMMON_NAMED, body)) return COMMON_NAMED[body];
  let code: number;
  if (DECIMAL.test(body)) code = Number.parseInt(body.slice(1), 10);
  else if (HEX.test(body)) code = Number.parseInt(body.slice(2), 16);
  else return undefined;
  if (code === 0 || (code >= 0x80 && code <= 0x9f) || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) return undefined;
  return String.fromCodePoint(code);
}
