// The Nuxt payload (README.md, "The payload"): a devalue "flattened array". The
// `devalue` package does the decoding, with revivers for Nuxt's own markers; markers that
// devalue knows but the README's table does not list are refused like any unknown marker. Decoding is
// lazy: the root and `data` are only walked member by member, and devalue decodes just the
// values the mapping needs (the `error` and the PROFILE), so markers elsewhere cannot matter.
import { unflatten } from 'devalue';

/** The payload does not have what the README says; the message names what is missing. */
export class PayloadProblem extends Error {
  override name = 'PayloadProblem';
}

/** Nuxt's reactivity markers carry no data: decoding unwraps them. */
const WRAPPERS = new Set(['ShallowReactive', 'Reactive', 'ShallowRef', 'Ref']);

/** `EmptyRef` / `EmptyShallowRef`: a falsy value written as text. */
function emptyRef(text: unknown): unknown {
  if (typeof text !== 'string') throw new PayloadProblem('an EmptyRef whose value is not a string');
  if (text === '_') return undefined;
  if (text === '0n') return 0n;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new PayloadProblem(`an EmptyRef holding ${JSON.stringify(text)}`);
  }
}

const refuse = (type: string) => (): never => {
  throw new PayloadProblem(`an unknown marker "${type}"`);
};

/** Markers devalue decodes natively although the README's table does not list them. */
const NOT_IN_CONTRACT = [
  'URL', 'URLSearchParams', 'ArrayBuffer', 'DataView',
  'Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Float16Array',
  'Int32Array', 'Uint32Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array',
  'Temporal.Duration', 'Temporal.Instant', 'Temporal.PlainDate', 'Temporal.PlainTime', 'Temporal.PlainDateTime',
  'Temporal.PlainMonthDay', 'Temporal.PlainYearMonth', 'Temporal.ZonedDateTime',
];

const REVIVERS: Record<string, (value: unknown) => unknown> = {
  ...Object.fromEntries(NOT_IN_CONTRACT.map((type) => [type, refuse(type)])),
  ...Object.fromEntries([...WRAPPERS].map((type) => [type, (value: unknown) => value])),
  EmptyRef: emptyRef,
  EmptyShallowRef: emptyRef,
  NuxtError: (value: unknown) => value,
};

/** devalue's sparse-array form (a leading `-7`) is not in the README's table either. */
const OPERATIONS = {
  createSparseArray: (): never => {
    throw new PayloadProblem('an unknown negative index -7');
  },
};

export class NuxtPayload {
  readonly #values: unknown[];

  /** Parses the script text; a payload that is not a non-empty JSON array is refused. */
  constructor(text: string) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new PayloadProblem('the __NUXT_DATA__ payload is not valid JSON');
    }
    if (!Array.isArray(parsed) || parsed.length === 0) throw new PayloadProblem('the __NUXT_DATA__ payload is not a non-empty array');
    this.#values = parsed;
  }

  /**
   * Member indexes of the object at `index` (a plain object or a `["null", …]` object, through
   * any reactivity wrappers), without decoding the members.
   */
  members(index: number, what: string): Map<string, number> {
    for (let depth = 0; depth < 32; depth += 1) {
      const raw = index >= 0 ? this.#values[index] : undefined;
      if (raw === null || typeof raw !== 'object') break;
      if (!Array.isArray(raw)) {
        return new Map(Object.entries(raw as Record<string, unknown>).filter((entry): entry is [string, number] => typeof entry[1] === 'number'));
      }
      const [marker, ...rest] = raw as unknown[];
      if (typeof marker !== 'string') break;
      if (WRAPPERS.has(marker) && typeof rest[0] === 'number') {
        index = rest[0];
        continue;
      }
      if (marker === 'null') {
        const members = new Map<string, number>();
        for (let i = 0; i + 1 < rest.length; i += 2) {
          const key = rest[i];
          const value = rest[i + 1];
          if (typeof key === 'string' && typeof value === 'number') members.set(key, value);
        }
        return members;
      }
      throw new PayloadProblem(`${what} is an unknown marker "${marker}"`);
    }
    throw new PayloadProblem(`${what} is not an object`);
  }

  /** Decodes the value at `index` and everything it references. */
  decode(index: number, what: string): unknown {
    if (index < 0) return index === -1 || index === -2 ? undefined : this.#special(index, what);
    if (index >= this.#values.length) throw new PayloadProblem(`${what} points outside the payload`);
    // devalue decodes from index 0: decode a copy whose root is the wanted value.
    const rooted = this.#values.slice();
    rooted[0] = this.#values[index];
    try {
      return unflatten(rooted, REVIVERS, { operations: OPERATIONS });
    } catch (error) {
      if (error instanceof PayloadProblem) throw new PayloadProblem(`${what} holds ${error.message}`);
      const message = error instanceof Error ? error.message : String(error);
      throw new PayloadProblem(`${what} cannot be decoded (${message.replace(/^Unknown type /, 'unknown marker ')})`);
    }
  }

  #special(index: number, what: string): unknown {
    switch (index) {
      case -3:
        return NaN;
      case -4:
        return Infinity;
      case -5:
        return -Infinity;
      case -6:
        return -0;
      default:
        throw new PayloadProblem(`${what} is an unknown negative index ${index}`);
    }
  }
}

/** What the payload holds for a username: a not-found error page, or the decoded PROFILE. */
export type PayloadProfile = { kind: 'not_found'; why: string } | { kind: 'profile'; profile: unknown };

const isStatus404 = (error: unknown): boolean =>
  error !== null && typeof error === 'object' && Number((error as { statusCode?: unknown }).statusCode) === 404;

/**
 * The root's `error` (a `statusCode` 404 means not found, whatever the HTTP status), then the
 * `data` entry `profile:{username}` (or the only `profile:` entry), decoded.
 */
export function profileOf(text: string, username: string): PayloadProfile {
  const payload = new NuxtPayload(text);
  const root = payload.members(0, 'the payload root');
  const errorIndex = root.get('error');
  const error = errorIndex === undefined ? undefined : payload.decode(errorIndex, 'the payload error');
  if (isStatus404(error)) return { kind: 'not_found', why: 'error page' };
  const dataIndex = root.get('data');
  if (dataIndex === undefined) throw new PayloadProblem('the payload root has no "data"');
  const entries = [...payload.members(dataIndex, 'the payload data')].filter(([key]) => key.startsWith('profile:'));
  const entry = entries.find(([key]) => key === `profile:${username}`) ?? (entries.length === 1 ? entries[0] : undefined);
  if (entry === undefined) {
    const status = error !== null && typeof error === 'object' ? ` (error page, statusCode ${String((error as { statusCode?: unknown }).statusCode)})` : '';
    throw new PayloadProblem(entries.length === 0 ? `the payload data has no "profile:" entry${status}` : 'the payload data has several "profile:" entries');
  }
  const profile = payload.decode(entry[1], `the payload entry "${entry[0]}"`);
  if (profile === null || profile === undefined) throw new PayloadProblem(`the payload entry "${entry[0]}" is empty`);
  return { kind: 'profile', profile };
}
