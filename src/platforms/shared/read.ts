// The one reader every platform's mapping uses to take values out of upstream JSON.
//
// A mapping reads one API field per line: a path below a node and a converter, in one of three
// ways, which are the three absent-data rules every platform's README states ("Mapping"):
//
//   id:       post.get('id', string),                  // required: absent ⇒ the page is unrecognised
//   caption:  post.orNull('message.text', string),     // absent ⇒ null
//   likes:    post.orEmpty('reactions.count', integer), // absent ⇒ the converter's empty default (0)
//
// "Absent" means the path leads nowhere, or to JSON null (and, for converters that say so, to a
// blank value such as `""`). A value that is present but of the wrong kind is never absent: it
// ends the request as unrecognised, with the exact path, whichever rule the line uses.
//
// Paths are dotted (`a.b.0.c`; a step of digits indexes an array) or, for keys that hold a dot,
// an array of steps. Only own properties count: `toString` or `__proto__` in a path never reaches
// an object's prototype.

/** A page whose data is not where, or not what, the platform's README says. */
export class UnrecognisedData extends Error {
  /** Where the value should have been, e.g. `timeline.edges[2].node.id`. */
  readonly path: string;

  constructor(path: string, problem: string) {
    super(`${path}: ${problem}`);
    this.name = 'UnrecognisedData';
    this.path = path;
  }
}

/** Turns one JSON value into what an API field holds. */
export interface Converter<T> {
  /** What the mapping expects, for error messages: `a string`, `an integer`. */
  readonly expected: string;
  /** The converted value, or undefined when `value` is not of this kind. */
  readonly from: (value: unknown) => T | undefined;
  /** The empty value of this kind (`""`, `0`, `false`, `[]`), used by `orEmpty`. */
  readonly empty?: T;
  /** Present values that count as absent (e.g. `""` for `text`). */
  readonly isBlank?: (value: unknown) => boolean;
}

export type Path = string | readonly (string | number)[];

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const INDEX = /^[0-9]+$/;
const stepOf = (step: string): string | number => (INDEX.test(step) ? Number(step) : step);

/**
 * The steps of each string path met so far. A mapping names the same few hundred literal paths
 * on every page, and reads each about a hundred times a page: splitting them once saves the
 * split, the index test and an array per read. Bounded, in case a path is ever built at run time.
 */
const knownSteps = new Map<string, readonly (string | number)[]>();
const KNOWN_STEPS_MAX = 4096;

function stepsOf(path: Path): readonly (string | number)[] {
  if (typeof path !== 'string') return path;
  let steps = knownSteps.get(path);
  if (steps === undefined) {
    steps = path === '' ? [] : path.split('.').map(stepOf);
    if (knownSteps.size < KNOWN_STEPS_MAX) knownSteps.set(path, steps);
  }
  return steps;
}

/** The value `steps` below `value` (own properties only); undefined when they lead nowhere. */
function valueAt(value: unknown, steps: readonly (string | number)[]): unknown {
  for (const step of steps) {
    if (typeof step === 'number') value = Array.isArray(value) ? value[step] : isObject(value) && Object.hasOwn(value, step) ? value[step] : undefined;
    else value = isObject(value) && Object.hasOwn(value, step) ? value[step] : undefined;
  }
  return value;
}

/** `where` followed by one step: `a.b`, `a[2]`. */
const joined = (where: string, step: string | number): string =>
  typeof step === 'number' ? `${where}[${step}]` : where === '' ? step : `${where}.${step}`;

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return value === '' ? 'an empty string' : 'a string';
  return `${typeof value === 'number' && !Number.isInteger(value) ? 'a non-integer ' : 'a '}${typeof value}`;
}

/**
 * A JSON value and where it sits on the page, e.g. `timeline.edges[2].node`. The path is only
 * spelled out when asked for (an error message): a mapping reads thousands of values per page and
 * names none of them when the page is as its README says.
 */
export class Node {
  readonly value: unknown;
  readonly #parent: Node | null;
  readonly #steps: string | readonly (string | number)[];

  /** A root node (`steps` is its name), or the node `steps` below `parent`. */
  constructor(value: unknown, steps: string, parent?: null);
  constructor(value: unknown, steps: readonly (string | number)[], parent: Node);
  constructor(value: unknown, steps: string | readonly (string | number)[], parent: Node | null = null) {
    this.value = value;
    this.#steps = steps;
    this.#parent = parent;
  }

  /** Where the value sits, e.g. `timeline.edges[2].node.id`. */
  get path(): string {
    if (this.#parent === null) return this.#steps as string;
    return (this.#steps as readonly (string | number)[]).reduce<string>(joined, this.#parent.path);
  }

  /** The node at `path` below this one; its value is undefined when the path leads nowhere. */
  at(path: Path): Node {
    const steps = stepsOf(path);
    return steps.length === 0 ? this : new Node(valueAt(this.value, steps), steps, this);
  }

  // The reads of one value (has, get, orNull, orEmpty, holdsObject) make no node: a node is made
  // only to name the path in an error.

  /** True when `path` holds a value other than JSON null. */
  has(path: Path): boolean {
    const value = valueAt(this.value, stepsOf(path));
    return value !== undefined && value !== null;
  }

  /** A required value: absent or of the wrong kind ⇒ unrecognised. */
  get<T>(path: Path, convert: Converter<T>): T {
    const value = valueAt(this.value, stepsOf(path));
    if (isAbsent(value, convert)) throw this.at(path).#wrong(convert.expected);
    return this.#convert(path, value, convert);
  }

  /** The value, or null when absent. */
  orNull<T>(path: Path, convert: Converter<T>): T | null {
    const value = valueAt(this.value, stepsOf(path));
    return isAbsent(value, convert) ? null : this.#convert(path, value, convert);
  }

  /** The value, or the converter's empty default (`""`, `0`, `false`, `[]`) when absent. */
  orEmpty<T>(path: Path, convert: Converter<T> & { readonly empty: T }): T {
    const value = valueAt(this.value, stepsOf(path));
    return isAbsent(value, convert) ? convert.empty : this.#convert(path, value, convert);
  }

  /** True when `path` holds a JSON object (not null, not an array). */
  holdsObject(path: Path): boolean {
    return isObject(valueAt(this.value, stepsOf(path)));
  }

  /** A required JSON object. */
  node(path: Path): Node {
    const found = this.at(path);
    if (!isObject(found.value)) throw found.#wrong('an object');
    return found;
  }

  /** A JSON object, or null when absent. */
  nodeOrNull(path: Path): Node | null {
    const found = this.at(path);
    if (found.value === undefined || found.value === null) return null;
    if (!isObject(found.value)) throw found.#wrong('an object');
    return found;
  }

  /** A required array, one node per element. */
  list(path: Path): Node[] {
    const found = this.at(path);
    if (!Array.isArray(found.value)) throw found.#wrong('an array');
    return found.value.map((value, index) => new Node(value, [index], found));
  }

  /** An array, or `[]` when absent. */
  listOrEmpty(path: Path): Node[] {
    const found = this.at(path);
    return found.value === undefined || found.value === null ? [] : this.list(path);
  }

  /** A required array or null when absent: for fields where an absent list is null, not `[]`. */
  listOrNull(path: Path): Node[] | null {
    const found = this.at(path);
    return found.value === undefined || found.value === null ? null : this.list(path);
  }

  /** An error naming this node's path: the page is not what the platform's README says. */
  unrecognised(problem: string): UnrecognisedData {
    return new UnrecognisedData(this.path === '' ? '(root)' : this.path, problem);
  }

  /** `value`, found at `path` below this node, converted. */
  #convert<T>(path: Path, value: unknown, convert: Converter<T>): T {
    const converted = convert.from(value);
    if (converted === undefined) throw this.at(path).#wrong(convert.expected);
    return converted;
  }

  #wrong(expected: string): UnrecognisedData {
    return this.unrecognised(`expected ${expected}, found ${describe(this.value)}`);
  }
}

const isAbsent = (value: unknown, convert: Converter<unknown>): boolean =>
  value === undefined || value === null || (convert.isBlank?.(value) ?? false);

/** The root of a JSON document, named for error messages (`timeline preloader`, `__NEXT_DATA__`). */
export const root = (value: unknown, name: string): Node => new Node(value, name);

// ---------------------------------------------------------------- converters

/** A converter from its parts. */
export function converter<T>(expected: string, from: (value: unknown) => T | undefined, empty: T): Converter<T> & { readonly empty: T };
export function converter<T>(expected: string, from: (value: unknown) => T | undefined): Converter<T>;
export function converter<T>(expected: string, from: (value: unknown) => T | undefined, empty?: T): Converter<T> {
  return empty === undefined ? { expected, from } : { expected, from, empty };
}

/** A string, copied unchanged (`""` included). Empty default `""`. */
export const string = converter('a string', (value) => (typeof value === 'string' ? value : undefined), '');

/** A string where `""` counts as absent: `orNull` gives null for it. */
export const text: Converter<string> & { readonly empty: string } = { ...string, expected: 'a non-empty string', isBlank: (value) => value === '' };

/** A safe JSON integer. Empty default `0`. */
export const integer = converter('an integer', (value) => (typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined), 0);

/** A finite JSON number. Empty default `0`. */
export const number = converter('a number', (value) => (typeof value === 'number' && Number.isFinite(value) ? value : undefined), 0);

/** A JSON boolean. Empty default `false`. */
export const boolean = converter('a boolean', (value) => (typeof value === 'boolean' ? value : undefined), false);

/** Any JSON value that is `true` counts as true; anything else, absent included, as false. */
export const isTrue = converter('anything', (value) => value === true, false);

/** An id: a non-empty string, or a safe integer written as its decimal string. */
export const id = converter(
  'a string or integer id',
  (value) => (typeof value === 'string' && value !== '' ? value : typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : undefined),
  '',
);

/** An absolute http(s) URL, copied unchanged. Empty default `""`. */
export const url = converter('an absolute http(s) URL', (value) => (typeof value === 'string' && /^https?:\/\/[^/?#\s]/i.test(value) ? value : undefined), '');

/** An ISO 8601 UTC time with milliseconds from a `Date`, or undefined for an invalid one. */
const iso = (date: Date): string | undefined => (Number.isNaN(date.getTime()) ? undefined : date.toISOString());

/** Epoch seconds (a JSON number) as ISO 8601 UTC with milliseconds. */
export const isoFromSeconds = converter('epoch seconds', (value) => (typeof value === 'number' && Number.isFinite(value) ? iso(new Date(value * 1000)) : undefined));

/** Epoch milliseconds (a JSON integer) as ISO 8601 UTC with milliseconds. */
export const isoFromMillis = converter('epoch milliseconds', (value) => (typeof value === 'number' && Number.isSafeInteger(value) ? iso(new Date(value)) : undefined));

/** A date-time string with an explicit offset or `Z`, rewritten as ISO 8601 UTC with milliseconds. */
export const isoFromString = converter(
  'a date-time string',
  (value) => (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(value) ? iso(new Date(value)) : undefined),
);

/** An array whose every element `each` converts. Empty default `[]`. */
export const arrayOf = <T>(each: Converter<T>): Converter<T[]> & { readonly empty: T[] } =>
  converter<T[]>(
    `an array of ${each.expected.replace(/^an? /, '')}s`,
    (value) => {
      if (!Array.isArray(value)) return undefined;
      const converted: T[] = [];
      for (const element of value) {
        const one = each.from(element);
        if (one === undefined) return undefined;
        converted.push(one);
      }
      return converted;
    },
    [],
  );

/** One of a fixed set of strings. */
export const oneOf = <const V extends string>(values: readonly V[], empty: V): Converter<V> & { readonly empty: V } =>
  converter(`one of ${values.map((value) => JSON.stringify(value)).join(', ')}`, (value) => (values.includes(value as V) ? (value as V) : undefined), empty);
