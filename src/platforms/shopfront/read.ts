// Readers named after the notation of upstream/shopfront.md section 6: each one reads one
// member (a dotted path under a node) and converts it as the mapping table says. A required
// member that is missing or of the wrong type ends the extraction as `unrecognised`, naming
// the platform and the exact path that was missing; nothing is ever half-filled.
import { UpstreamOutcome } from '../../upstream/outcomes.ts';

/** A JSON value and where it was found, e.g. `HEADER.storefront.curations[1]`. */
export interface Node {
  readonly value: unknown;
  readonly path: string;
}

/** A reader of one member of `node`, e.g. `str(S, 'displayName')`. */
export type Read<T> = (node: Node, path: string) => T;

export const CANONICAL_ORIGIN = 'https://www.shopfront.example';

export const unrecognised = (message: string, cause?: unknown): UpstreamOutcome =>
  new UpstreamOutcome('unrecognised', 'shopfront', `shopfront: ${message}`, cause === undefined ? undefined : { cause });

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const root = (value: unknown, path: string): Node => ({ value, path });

/** `name` as an interned string (the one a property name literal gives), which reads fastest. */
const interned = (name: string): string => Object.keys({ [name]: 0 })[0] ?? name;

/**
 * The names of a dotted path, split once: the mapping reads the same few literal paths for every
 * post, and splitting them each time cost more than the reads themselves.
 */
const NAMES = new Map<string, readonly string[]>();
const MAX_CACHED_PATHS = 1_000;

function namesOf(path: string): readonly string[] {
  let names = NAMES.get(path);
  if (names === undefined) {
    names = path.split('.').map(interned);
    if (NAMES.size < MAX_CACHED_PATHS) NAMES.set(path, names);
  }
  return names;
}

/** The member at a dotted `path` under `node`; `undefined` when any step is absent. */
export function member(node: Node, path: string): Node {
  let value: unknown = node.value;
  for (const name of namesOf(path)) value = isObject(value) ? value[name] : undefined;
  return { value, path: `${node.path}.${path}` };
}

const missing = (node: Node, what: string): UpstreamOutcome =>
  unrecognised(`${node.path} is missing or not ${what}`);

const absent = (value: unknown): value is null | undefined => value === null || value === undefined;

/** "copied": a string. */
export const str: Read<string> = (node, path) => {
  const found = member(node, path);
  if (typeof found.value !== 'string') throw missing(found, 'a string');
  return found.value;
};

/** "integer copied". */
export const int: Read<number> = (node, path) => {
  const found = member(node, path);
  if (typeof found.value !== 'number' || !Number.isSafeInteger(found.value)) throw missing(found, 'an integer');
  return found.value;
};

/** A JSON number. */
export const num: Read<number> = (node, path) => {
  const found = member(node, path);
  if (typeof found.value !== 'number' || !Number.isFinite(found.value)) throw missing(found, 'a number');
  return found.value;
};

/** "`null` or absent → fallback": the member read with `read` when present. */
export const opt = <T, F>(read: Read<T>, node: Node, path: string, fallback: F): T | F =>
  absent(member(node, path).value) ? fallback : read(node, path);

/** "`true` only if the JSON value is `true`". */
export const isTrue: Read<boolean> = (node, path) => member(node, path).value === true;

/** "`true` when the array contains `item`"; absent means `[]`. */
export const contains = (node: Node, path: string, item: string): boolean => {
  const found = member(node, path);
  if (absent(found.value)) return false;
  if (!Array.isArray(found.value)) throw missing(found, 'an array');
  return found.value.includes(item);
};

/** "in order: {…}": each element mapped; absent (or null) means `[]`. */
export const list = <T>(node: Node, path: string, each: (element: Node) => T): T[] => {
  const found = member(node, path);
  if (absent(found.value)) return [];
  return array(node, path, each);
};

/** A required array, each element mapped in order. */
export const array = <T>(node: Node, path: string, each: (element: Node) => T): T[] => {
  const found = member(node, path);
  if (!Array.isArray(found.value)) throw missing(found, 'an array');
  return found.value.map((value, index) => each({ value, path: `${found.path}[${index}]` }));
};

/** `abs(p)`: a site-relative path on the canonical host (never the origin); an absolute URL copied. */
export const abs: Read<string> = (node, path) => {
  const value = str(node, path);
  if (/^https?:\/\//i.test(value)) return value;
  if (value.startsWith('/') && !value.startsWith('//')) return CANONICAL_ORIGIN + value;
  throw missing(member(node, path), 'a site-relative path or an absolute URL');
};

/** Currency symbol and fraction digits (section 6.1); any other code is `"{code} "` with 2 digits. */
const CURRENCIES: Record<string, { symbol: string; digits: number }> = {
  USD: { symbol: '$', digits: 2 },
  CAD: { symbol: 'CA$', digits: 2 },
  AUD: { symbol: 'A$', digits: 2 },
  MXN: { symbol: 'MX$', digits: 2 },
  GBP: { symbol: '£', digits: 2 },
  EUR: { symbol: '€', digits: 2 },
  INR: { symbol: '₹', digits: 2 },
  JPY: { symbol: '¥', digits: 0 },
};

/** Formats an amount: sign, symbol, grouped integer part, `.` and the fraction digits. */
export function formatPrice(amount: number, currencyCode: string): string {
  const { symbol, digits } = CURRENCIES[currencyCode] ?? { symbol: `${currencyCode} `, digits: 2 };
  const [whole = '0', fraction] = Math.abs(amount).toFixed(digits).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${amount < 0 ? '-' : ''}${symbol}${grouped}${fraction === undefined ? '' : `.${fraction}`}`;
}

/** `price(p)`: `""` when `p` is null or absent, else the formatted amount. */
export const price: Read<string> = (node, path) => {
  const p = member(node, path);
  if (absent(p.value)) return '';
  const amount = num(p, 'amount');
  if (Math.abs(amount) >= 1e21) throw missing(member(p, 'amount'), 'a price amount');
  return formatPrice(amount, str(p, 'currencyCode'));
};

/**
 * True when `text` holds no lone surrogate: only such text can be percent-encoded into a
 * request (`encodeURIComponent` throws a `URIError` on a lone surrogate).
 */
export const isWellFormed = (text: string): boolean => !/\p{Cs}/u.test(text);
