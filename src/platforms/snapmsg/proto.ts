// Readers for snapmsg's protobuf-flavoured JSON (upstream/snapmsg.md 1.1), named after the
// chapter's mapping notation: `val`, `int`, `str`, `opt`, `bool`, `ms`, `sec`. Every value is
// read through a `Src`, which remembers where it came from, so that a missing or mistyped
// datum ends the extraction as an unrecognised page naming the exact path.
import { UpstreamOutcome } from '../../upstream/outcomes.ts';

const PLATFORM = 'snapmsg';

/**
 * A value inside an upstream payload, with its path for error messages. The path is only
 * spelt out when a message needs it: a `Src` keeps its parent and its step instead.
 */
export class Src {
  readonly value: unknown;
  readonly #parent: Src | null;
  /** The member name or element index below the parent; for a root, its whole path. */
  readonly #step: string | number;

  constructor(value: unknown, path: string);
  constructor(value: unknown, step: string | number, parent: Src);
  constructor(value: unknown, step: string | number, parent: Src | null = null) {
    this.value = value;
    this.#step = step;
    this.#parent = parent;
  }

  /** Where the value sits, e.g. `profile page __NEXT_DATA__.props.pageProps.story`. */
  get path(): string {
    if (this.#parent === null) return String(this.#step);
    return typeof this.#step === 'number' ? `${this.#parent.path}[${this.#step}]` : `${this.#parent.path}.${this.#step}`;
  }

  /** The member `key` of this object; absent when this is not an object or lacks it. */
  get(key: string): Src {
    return new Src(isObject(this.value) ? this.value[key] : undefined, key, this);
  }

  /** Absent: `undefined` or JSON `null`. */
  get absent(): boolean {
    return this.value === undefined || this.value === null;
  }
}

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Ends the extraction: the payload lacks what the mapping needs. */
export function unrecognised(message: string): never {
  throw new UpstreamOutcome('unrecognised', PLATFORM, `snapmsg: ${message}`);
}

const wrongType = (x: Src, expected: string): never =>
  unrecognised(`${x.path} is ${describe(x.value)}, expected ${expected}`);

function describe(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return `${type === 'object' ? 'an' : 'a'} ${type} (${JSON.stringify(value).slice(0, 40)})`;
}

// ------------------------------------------------------------------ the chapter's notation

/** `val(x)`: `x.value` when `x` is a wrapper object, otherwise absent. */
export const val = (x: Src): Src => x.get('value');

/** `str(x)`: absent or `null` → `""`; otherwise the string unchanged. */
export function str(x: Src): string {
  if (x.absent) return '';
  return typeof x.value === 'string' ? x.value : wrongType(x, 'a string');
}

/** `opt(x)`: absent, `null` or `""` → `null`; otherwise the string unchanged. */
export function opt(x: Src): string | null {
  const value = str(x);
  return value === '' ? null : value;
}

/** `bool(x)`: absent → `false`; otherwise the JSON boolean. */
export function bool(x: Src): boolean {
  if (x.absent) return false;
  return typeof x.value === 'boolean' ? x.value : wrongType(x, 'a boolean');
}

/**
 * `int(x)`: int64 decimal string → integer; absent → `0`. Also used for the enums and
 * proto3 integers (`badge`, `snapIndex`, `snapMediaType`), which are JSON integers; an int64
 * written as a JSON number is accepted too (chapter section 7).
 */
export function int(x: Src): number {
  if (x.absent) return 0;
  const value = x.value;
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : wrongType(x, 'an integer');
  if (typeof value === 'string' && /^-?[0-9]+$/.test(value)) {
    const parsed = Number(value);
    if (Number.isSafeInteger(parsed)) return parsed;
  }
  return wrongType(x, 'an int64 decimal string');
}

/** A JSON number copied; a numeric string (protobuf JSON allows one for doubles) is accepted. */
export function num(x: Src): number | null {
  if (x.absent) return null;
  const value = x.value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return wrongType(x, 'a number');
}

/** `ms(x)`: int64 epoch-milliseconds → ISO 8601 UTC with milliseconds; absent → `null`. */
export function ms(x: Src): string | null {
  if (x.absent) return null;
  return isoOf(x, int(x));
}

/** `sec(x)`: int64 epoch-seconds → ISO 8601 UTC with milliseconds; absent → `null`. */
export function sec(x: Src): string | null {
  if (x.absent) return null;
  return isoOf(x, int(x) * 1000);
}

function isoOf(x: Src, epochMs: number): string {
  const date = new Date(epochMs);
  return Number.isNaN(date.getTime()) ? wrongType(x, 'an epoch time in range') : date.toISOString();
}

// ------------------------------------------------------------------ requirements and lists

/** `copied` for a datum the API cannot do without: a non-empty string, else unrecognised. */
export function need(x: Src): string {
  const value = opt(x);
  return value ?? unrecognised(`${x.path} is missing`);
}

/** A conversion whose result the API requires: `null` (absent) is unrecognised. */
export function required<T>(x: Src, convert: (x: Src) => T | null): T {
  const value = convert(x);
  return value === null ? unrecognised(`${x.path} is missing`) : value;
}

/** `x, else y, else …`: the first source holding a non-empty string, or absent. */
export function firstOf(...sources: Src[]): Src {
  for (const source of sources) if (opt(source) !== null) return source;
  return sources.at(-1) ?? new Src(undefined, '(none)');
}

/** A repeated field: absent or `null` → `[]`; otherwise its elements. */
export function list(x: Src): Src[] {
  if (x.absent) return [];
  if (!Array.isArray(x.value)) return wrongType(x, 'an array');
  return x.value.map((item, index) => new Src(item, index, x));
}

/** An object the mapping needs: absent or not an object → unrecognised. */
export function object(x: Src): Src {
  if (x.absent) unrecognised(`${x.path} is missing`);
  return isObject(x.value) ? x : wrongType(x, 'an object');
}

/**
 * A string id with a versioned prefix removed (`public-profile-category-v3-creator` →
 * `creator`); a value without the prefix is copied whole; absent or `""` → `null`.
 */
export function unprefixed(x: Src, prefix: RegExp): string | null {
  const value = opt(x);
  if (value === null) return null;
  const stripped = value.replace(prefix, '');
  return stripped === '' ? null : stripped;
}
