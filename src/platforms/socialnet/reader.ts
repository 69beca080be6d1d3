// Typed reads from upstream JSON by key path. Every mapping line of the parse-* files reads one
// value through a `Node`: a required read that finds nothing of the right type ends the request
// as an unrecognised structure naming the missing path (README "Outcomes"); an `…OrNull` read
// gives null where the chapter's tables say a datum may be absent. Unknown keys are ignored.
import { UpstreamOutcome } from '../../upstream/outcomes.ts';

export const PLATFORM = 'socialnet';

export const unrecognised = (what: string): UpstreamOutcome => new UpstreamOutcome('unrecognised', PLATFORM, what);

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** One step of a dotted path: the key, and its array index when the key is all digits. */
interface Step {
  key: string;
  index: number | null;
  /** The key names a member every object inherits (`toString`, …): only an own one counts. */
  inherited: boolean;
}

/** `key` as an interned string (the one a property name literal gives), which reads fastest. */
const interned = (key: string): string => Object.keys({ [key]: 0 })[0] ?? key;

/**
 * The steps of a dotted path, split once: the mapping tables read the same few hundred literal
 * paths on every request, and splitting them each time cost more than the reads themselves.
 */
const STEPS = new Map<string, readonly Step[]>();
const MAX_CACHED_PATHS = 2_000;

function stepsOf(path: string): readonly Step[] {
  let steps = STEPS.get(path);
  if (steps === undefined) {
    steps = path.split('.').map((key) => ({
      key: interned(key),
      index: /^[0-9]+$/.test(key) ? Number(key) : null,
      inherited: key in Object.prototype,
    }));
    if (STEPS.size < MAX_CACHED_PATHS) STEPS.set(path, steps);
  }
  return steps;
}

/**
 * A JSON value plus a readable name of where it sits, for error messages. A node read from another
 * keeps that node and the path (or index) under it, and spells its name out only when asked:
 * most nodes never need it.
 */
export class Node {
  readonly value: unknown;
  readonly #base: Node | string;
  readonly #step: string | number;

  constructor(value: unknown, where: string);
  constructor(value: unknown, parent: Node, step: string | number);
  constructor(value: unknown, base: Node | string, step: string | number = '') {
    this.value = value;
    this.#base = base;
    this.#step = step;
  }

  /** Where the value sits, e.g. `timeline preloader.data.user.edges[2]`. */
  get where(): string {
    if (typeof this.#base === 'string') return this.#base;
    const base = this.#base.where;
    if (typeof this.#step === 'number') return `${base}[${this.#step}]`;
    return this.#step === '' ? base : `${base}.${this.#step}`;
  }

  /** Value at a dotted path (`a.b.0.c`); undefined when any step is missing or null. */
  get(path: string): unknown {
    let current: unknown = this.value;
    if (path === '') return current;
    for (const step of stepsOf(path)) {
      if (Array.isArray(current)) {
        current = step.index === null ? undefined : current[step.index];
      } else if (isObject(current)) {
        current = !step.inherited || Object.hasOwn(current, step.key) ? current[step.key] : undefined;
      } else {
        return undefined;
      }
      if (current === null || current === undefined) return undefined;
    }
    return current;
  }

  #missing(path: string, what: string): UpstreamOutcome {
    return unrecognised(`missing ${what} at ${new Node(undefined, this, path).where}`);
  }

  /** True when the path holds a non-null value. */
  has(path: string): boolean {
    return this.get(path) !== undefined;
  }

  /** A required JSON object. */
  node(path: string): Node {
    const value = this.get(path);
    if (!isObject(value)) throw this.#missing(path, 'an object');
    return new Node(value, this, path);
  }

  /** An object, or null when absent or null. */
  nodeOrNull(path: string): Node | null {
    const value = this.get(path);
    if (value === undefined) return null;
    if (!isObject(value)) throw this.#missing(path, 'an object');
    return new Node(value, this, path);
  }

  /** A required array, as nodes. */
  list(path: string): Node[] {
    return this.#list(path, this.get(path));
  }

  /** An array, or `[]` when absent or null. */
  listOrEmpty(path: string): Node[] {
    const value = this.get(path);
    return value === undefined ? [] : this.#list(path, value);
  }

  #list(path: string, value: unknown): Node[] {
    if (!Array.isArray(value)) throw this.#missing(path, 'an array');
    const array = new Node(value, this, path);
    return value.map((item, index) => new Node(item, array, index));
  }

  str(path: string): string {
    return this.#str(path, this.get(path));
  }

  strOrNull(path: string): string | null {
    const value = this.get(path);
    return value === undefined ? null : this.#str(path, value);
  }

  #str(path: string, value: unknown): string {
    if (typeof value !== 'string') throw this.#missing(path, 'a string');
    return value;
  }

  int(path: string): number {
    return this.#int(path, this.get(path));
  }

  intOrNull(path: string): number | null {
    const value = this.get(path);
    return value === undefined ? null : this.#int(path, value);
  }

  #int(path: string, value: unknown): number {
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw this.#missing(path, 'an integer');
    return value;
  }

  num(path: string): number {
    return this.#num(path, this.get(path));
  }

  numOrNull(path: string): number | null {
    const value = this.get(path);
    return value === undefined ? null : this.#num(path, value);
  }

  #num(path: string, value: unknown): number {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw this.#missing(path, 'a number');
    return value;
  }

  bool(path: string): boolean {
    return this.#bool(path, this.get(path));
  }

  boolOrNull(path: string): boolean | null {
    const value = this.get(path);
    return value === undefined ? null : this.#bool(path, value);
  }

  #bool(path: string, value: unknown): boolean {
    if (typeof value !== 'boolean') throw this.#missing(path, 'a boolean');
    return value;
  }
}
