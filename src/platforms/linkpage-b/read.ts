// Declarative readers for the linkpage-b mapping (upstream/linkpage-b.md section 5), named after
// the chapter's notation: `str`, `opt`, `ms`, `int`, … Each takes a `Field` (a value and the JSON
// path it was read from), so a value the mapping needs but the page lacks becomes an
// `unrecognised` outcome naming exactly that path.
import { UpstreamOutcome } from '../../upstream/outcomes.ts';

export const PLATFORM = 'linkpage-b';

/** A value read from the page and the JSON path it came from (for error messages). */
export interface Field {
  readonly value: unknown;
  readonly path: string;
}

/** Reads a dotted path (`themeV2.background.color`) below a fixed root. */
export type Reader = (path: string) => Field;

export const unrecognised = (what: string): UpstreamOutcome =>
  new UpstreamOutcome('unrecognised', PLATFORM, `linkpage-b page not recognised: ${what}`);

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const absent = (value: unknown): value is null | undefined => value === null || value === undefined;

function describe(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

const wrong = (field: Field, expected: string): UpstreamOutcome =>
  unrecognised(`${field.path} is ${describe(field.value)}, expected ${expected}`);

/** A field read below another one; its path is only spelt out when asked (for an error message). */
class Below implements Field {
  readonly value: unknown;
  readonly #base: Field;
  /** A dotted path below the base, or an element index. */
  readonly #step: string | number;

  constructor(value: unknown, base: Field, step: string | number) {
    this.value = value;
    this.#base = base;
    this.#step = step;
  }

  get path(): string {
    return typeof this.#step === 'number' ? `${this.#base.path}[${this.#step}]` : `${this.#base.path}.${this.#step}`;
  }
}

/** The keys of a dotted path; the mapping uses a fixed set of paths, so they are split once. */
const KEYS = new Map<string, readonly string[]>();
function keysOf(path: string): readonly string[] {
  let keys = KEYS.get(path);
  if (keys === undefined) KEYS.set(path, (keys = path.split('.')));
  return keys;
}

/**
 * A reader rooted at `field`: walking through a missing or non-object step gives `undefined`.
 * The empty path reads the root itself.
 */
export function within(field: Field): Reader {
  return (path) => {
    if (path === '') return field;
    let value: unknown = field.value;
    for (const key of keysOf(path)) value = isRecord(value) ? value[key] : undefined;
    return new Below(value, field, path);
  };
}

/** A required JSON object; gives a reader rooted at it. */
export function object(field: Field): Reader {
  if (!isRecord(field.value)) throw wrong(field, 'an object');
  return within(field);
}

/** True when the value is a JSON object (not null, not an array). */
export const isObject = (field: Field): boolean => isRecord(field.value);

/** A required string, copied unchanged. */
export function copied(field: Field): string {
  if (typeof field.value !== 'string') throw wrong(field, 'a string');
  return field.value;
}

/** A required boolean, copied unchanged. */
export function flag(field: Field): boolean {
  if (typeof field.value !== 'boolean') throw wrong(field, 'a boolean');
  return field.value;
}

/** A required JSON integer, copied. */
export function int(field: Field): number {
  if (typeof field.value !== 'number' || !Number.isSafeInteger(field.value)) throw wrong(field, 'an integer');
  return field.value;
}

/** `true` only if the JSON value is `true`. */
export const isTrue = (field: Field): boolean => field.value === true;

/** `str(x)`: `""` for an absent or null value, else the string. */
export function str(field: Field): string {
  if (absent(field.value)) return '';
  if (typeof field.value !== 'string') throw wrong(field, 'a string or null');
  return field.value;
}

/** `opt(x)`: null for an absent, null or `""` value, else the string. */
export function opt(field: Field): string | null {
  const value = str(field);
  return value === '' ? null : value;
}

/** A string copied, or null when absent or null. */
export function nullable(field: Field): string | null {
  return absent(field.value) ? null : copied(field);
}

/** A string copied, or `fallback` when absent or null. */
export function or(field: Field, fallback: string): string {
  return absent(field.value) ? fallback : copied(field);
}

/** `ms(x)`: epoch milliseconds (a JSON integer) as ISO 8601 UTC with milliseconds. */
export function ms(field: Field): string {
  const value = int(field);
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw wrong(field, 'epoch milliseconds');
  return date.toISOString();
}

/** An id as a string: a JSON number is turned into its decimal string. */
export function idString(field: Field): string {
  if (typeof field.value === 'string' && field.value !== '') return field.value;
  if (typeof field.value === 'number' && Number.isSafeInteger(field.value)) return String(field.value);
  throw wrong(field, 'a string or integer id');
}

/** A required array: one reader per element, paths `…[i]`. */
export function array(field: Field): Reader[] {
  if (!Array.isArray(field.value)) throw wrong(field, 'an array');
  return field.value.map((value, index) => within(new Below(value, field, index)));
}

/** An array that may be absent or null, meaning `[]`. */
export function list(field: Field): Reader[] {
  return absent(field.value) ? [] : array(field);
}

/** An array of strings that may be absent or null (meaning `[]`), copied in order. */
export function strings(field: Field): string[] {
  return list(field).map((element) => copied(self(element)));
}

/** null instead of an empty array. */
export const nonEmpty = <T>(values: T[]): T[] | null => (values.length === 0 ? null : values);

/** The value itself as a field (for readers over arrays of scalars). */
export const self = (read: Reader): Field => read('');
