// Typed reads from upstream JSON by key path. Every mapping line of the parse-* files reads one
// value through a `Node`: a required read that finds nothing of the right type ends the request
// as an unrecognised structure naming the missing path (README "Outcomes"); an `…OrNull` read
// gives null where the chapter's tables say a datum may be absent. Unknown keys are ignored.
import { UpstreamOutcome } from '../../upstream/outcomes.ts';

export const PLATFORM = 'socialnet';

export const unrecognised = (what: string): UpstreamOutcome => new UpstreamOutcome('unrecognised', PLATFORM, what);

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** A JSON value plus a readable name of where it sits, for error messages. */
export class Node {
  readonly value: unknown;
  readonly where: string;

  constructor(value: unknown, where: string) {
    this.value = value;
    this.where = where;
  }

  /** Value at a dotted path (`a.b.0.c`); undefined when any step is missing or null. */
  get(path: string): unknown {
    let current: unknown = this.value;
    if (path === '') return current;
    for (const key of path.split('.')) {
      if (Array.isArray(current)) {
        current = /^[0-9]+$/.test(key) ? current[Number(key)] : undefined;
      } else if (isObject(current)) {
        current = Object.hasOwn(current, key) ? current[key] : undefined;
      } else {
        return undefined;
      }
      if (current === null || current === undefined) return undefined;
    }
    return current;
  }

  #name(path: string): string {
    return path === '' ? this.where : `${this.where}.${path}`;
  }

  #missing(path: string, what: string): UpstreamOutcome {
    return unrecognised(`missing ${what} at ${this.#name(path)}`);
  }

  /** True when the path holds a non-null value. */
  has(path: string): boolean {
    return this.get(path) !== undefined;
  }

  /** A required JSON object. */
  node(path: string): Node {
    const value = this.get(path);
    if (!isObject(value)) throw this.#missing(path, 'an object');
    return new Node(value, this.#name(path));
  }

  /** An object, or null when absent or null. */
  nodeOrNull(path: string): Node | null {
    const value = this.get(path);
    if (value === undefined) return null;
    if (!isObject(value)) throw this.#missing(path, 'an object');
    return new Node(value, this.#name(path));
  }

  /** A required array, as nodes. */
  list(path: string): Node[] {
    const value = this.get(path);
    if (!Array.isArray(value)) throw this.#missing(path, 'an array');
    const name = this.#name(path);
    return value.map((item, index) => new Node(item, `${name}[${index}]`));
  }

  /** An array, or `[]` when absent or null. */
  listOrEmpty(path: string): Node[] {
    return this.get(path) === undefined ? [] : this.list(path);
  }

  str(path: string): string {
    const value = this.get(path);
    if (typeof value !== 'string') throw this.#missing(path, 'a string');
    return value;
  }

  strOrNull(path: string): string | null {
    const value = this.get(path);
    if (value === undefined) return null;
    if (typeof value !== 'string') throw this.#missing(path, 'a string');
    return value;
  }

  int(path: string): number {
    const value = this.get(path);
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw this.#missing(path, 'an integer');
    return value;
  }

  intOrNull(path: string): number | null {
    return this.get(path) === undefined ? null : this.int(path);
  }

  num(path: string): number {
    const value = this.get(path);
    if (typeof value !== 'number' || !Number.isFinite(value)) throw this.#missing(path, 'a number');
    return value;
  }

  numOrNull(path: string): number | null {
    return this.get(path) === undefined ? null : this.num(path);
  }

  bool(path: string): boolean {
    const value = this.get(path);
    if (typeof value !== 'boolean') throw this.#missing(path, 'a boolean');
    return value;
  }

  boolOrNull(path: string): boolean | null {
    return this.get(path) === undefined ? null : this.bool(path);
  }
}
