// Query validation of one endpoint: the declaration's schema plus `cache_max_age`, every
// problem reported at once (a parameter it does not declare is one), then the declaration's own
// cross-field rules.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { LRUCache } from 'lru-cache';
import { Type, type TObject } from 'typebox';
import type { EndpointDeclaration, RawQuery, TargetParams, ValidationDetail } from '../endpoints/types.ts';
import { EnumParam } from '../endpoints/schemas/common.ts';
import { unknownNameMessage } from '../../sdk/src/names.ts';
import { canonicalJson } from './cursors.ts';
import { validationError, type ApiError } from './errors.ts';

export const CACHE_MAX_AGES = { '1d': 1, '3d': 3, '7d': 7, '14d': 14, '30d': 30 } as const;
export type CacheMaxAge = keyof typeof CACHE_MAX_AGES;
const DAY_MS = 24 * 60 * 60 * 1000;

export const cacheMaxAgeParam = EnumParam(
  Object.keys(CACHE_MAX_AGES) as CacheMaxAge[],
  'Return a cached result of at most this age for 0 credits when one exists; otherwise scrape live and refresh the cache.',
);

export const staleIfErrorParam = EnumParam(
  Object.keys(CACHE_MAX_AGES) as CacheMaxAge[],
  'When the live scrape fails with a 502 or a 503, return a cached result of at most this age instead, for 0 credits, with `meta.stale: true`.',
);

/**
 * The declaration's query schema with the common `cache_max_age` and `stale_if_error` added;
 * closed: any other parameter is refused.
 */
export function fullQuerySchema(endpoint: EndpointDeclaration): TObject {
  return Type.Object(
    { ...endpoint.query.properties, cache_max_age: Type.Optional(cacheMaxAgeParam), stale_if_error: Type.Optional(staleIfErrorParam) },
    { additionalProperties: false },
  );
}

/**
 * The problem of a name nobody declared: it names the closest declared one when one is close,
 * else every declared one. `noun` says what the names are (`parameter`, `field`). The rule and
 * the words are the SDK command line's too (sdk/src/names.ts), which refuses an unknown flag
 * before it asks.
 */
export function unknownName(name: string, declared: readonly string[], noun = 'parameter'): ValidationDetail {
  return { path: name, message: unknownNameMessage(name, declared, noun) };
}

export interface ParsedQuery {
  params: TargetParams;
  /** The cache entries of the target without its switches (a 404 drops them all). */
  targetKey: string;
  /** The cache key of the target with its switches, without a position. */
  baseKey: string;
  cacheMaxAgeMs: number | null;
  /** `stale_if_error`: the age of a cached result that may stand in for a failed live scrape. */
  staleIfErrorMs: number | null;
  token: string | null;
}

type Checked = { value: ParsedQuery } | { error: ApiError };

/**
 * Valid queries remembered per endpoint, the least recently used forgotten first beyond these
 * bounds. Canonicalisation is a pure function of the query; served from memory, a repeated
 * query (the common case: clients poll the same targets) skips the schema check, the
 * platform's URL rules and the cache-key encoding. Measured with `npm run bench` (cache hits):
 * 0.64–0.71x the bare route with it, 0.48x without. A query is remembered under its declared
 * parameters alone (one with any other is refused), and what it holds is counted in bytes:
 * some 3,000 typical queries fit, and at least 60 of the longest (a URL and a cursor at their limits).
 */
export const MEMO_LIMITS = { entries: 10_000, bytes: 2 * 1024 * 1024 } as const;

/** Bytes an entry holds at most (two per character), with its objects' overhead. */
function memoBytes(key: string, { value }: { value: ParsedQuery }): number {
  let characters = key.length + value.targetKey.length + value.baseKey.length + (value.token?.length ?? 0);
  for (const [name, param] of Object.entries(value.params)) characters += name.length + param.length;
  return 2 * characters + 256;
}

function describe(error: ErrorObject): ValidationDetail {
  const base = error.instancePath.replace(/^\//, '').split('/')[0] ?? '';
  switch (error.keyword) {
    case 'required':
      return { path: String((error.params as { missingProperty: string }).missingProperty), message: 'Required' };
    case 'maxLength':
      return { path: base, message: `Must be at most ${(error.params as { limit: number }).limit} characters` };
    case 'minLength':
      return { path: base, message: 'Must not be empty' };
    case 'enum':
      return { path: base, message: `Must be one of: ${(error.params as { allowedValues: string[] }).allowedValues.join(', ')}` };
    case 'pattern':
      return { path: base, message: 'Has an invalid format' };
    default:
      return { path: base, message: error.message ?? 'Invalid' };
  }
}

/** A query schema, compiled, with the names it declares. */
class QuerySchema {
  readonly #validate: ValidateFunction;
  /** The declared names, in the declaration's order. */
  readonly names: readonly string[];
  readonly #declared: ReadonlySet<string>;

  constructor(schema: TObject, ajv: Ajv) {
    this.#validate = ajv.compile(schema);
    this.names = Object.keys(schema.properties);
    this.#declared = new Set(this.names);
  }

  /**
   * What the schema finds wrong with a query, one problem per parameter: a name it does not
   * declare is one, and so is a parameter given more than once. `passed` holds the parameters
   * without a problem, for cross-field rules.
   */
  problems(query: Record<string, unknown>): { single: RawQuery; passed: RawQuery; details: ValidationDetail[]; add: (detail: ValidationDetail) => void } {
    const details: ValidationDetail[] = [];
    const seen = new Set<string>();
    const add = (detail: ValidationDetail) => {
      if (seen.has(detail.path)) return;
      seen.add(detail.path);
      details.push(detail);
    };
    const single: RawQuery = {};
    for (const [name, value] of Object.entries(query)) {
      if (!this.#declared.has(name)) add(unknownName(name, this.names));
      else if (Array.isArray(value)) add({ path: name, message: 'Given more than once; give it once' });
      else single[name] = value as string;
    }
    const validate = this.#validate;
    if (!validate(single)) for (const error of validate.errors ?? []) add(describe(error));
    const passed: RawQuery = {};
    for (const [name, value] of Object.entries(single)) if (!seen.has(name)) passed[name] = value;
    return { single, passed, details, add };
  }
}

/**
 * The query of an endpoint that scrapes nothing: its schema, then its own cross-field rules
 * (`rules`, given the parameters that passed). A Fastify validator, like QueryValidator's.
 */
export class PlainQueryValidator {
  readonly #schema: QuerySchema;
  readonly #rules: (query: RawQuery) => ValidationDetail[];

  constructor(schema: TObject, rules: (query: RawQuery) => ValidationDetail[], ajv: Ajv) {
    this.#schema = new QuerySchema(schema, ajv);
    this.#rules = rules;
  }

  readonly check = (query: Record<string, unknown> | null): { value: RawQuery } | { error: ApiError } => {
    const { single, passed, details, add } = this.#schema.problems(query ?? {});
    for (const detail of this.#rules(passed)) add(detail);
    return details.length > 0 ? { error: validationError(details) } : { value: single };
  };
}

export class QueryValidator {
  readonly #schema: QuerySchema;
  readonly #endpoint: EndpointDeclaration;
  readonly #switches: ReadonlySet<string>;
  readonly #remembered = new LRUCache<string, { value: ParsedQuery }>({ max: MEMO_LIMITS.entries, maxSize: MEMO_LIMITS.bytes, sizeCalculation: (value, key) => memoBytes(key, value) });

  constructor(endpoint: EndpointDeclaration, ajv: Ajv) {
    this.#endpoint = endpoint;
    this.#schema = new QuerySchema(fullQuerySchema(endpoint), ajv);
    this.#switches = new Set(endpoint.switches ?? []);
  }

  /** What the memo holds now. */
  get memo(): { entries: number; bytes: number } {
    return { entries: this.#remembered.size, bytes: this.#remembered.calculatedSize };
  }

  /**
   * The canonical target and options, or a 422 listing every problem: a Fastify validator,
   * whose `value` replaces `request.query` and whose `error` goes to the error handler.
   */
  readonly check = (query: Record<string, unknown> | null): Checked => {
    const given = query ?? {};
    const key = this.#memoKey(given);
    const known = key === null ? undefined : this.#remembered.get(key);
    if (known !== undefined) return known;
    const checked = this.#check(given);
    // Only valid queries: each refused one gets an error of its own.
    if (key !== null && 'value' in checked) this.#remembered.set(key, checked);
    return checked;
  };

  /**
   * The memo's key of a query: the values of the declared parameters, in their declared order.
   * None for a query with any other parameter, or one given twice (never valid, never remembered).
   */
  #memoKey(query: Record<string, unknown>): string | null {
    const values: (string | null)[] = [];
    let given = 0;
    for (const name of this.#schema.names) {
      const value = query[name];
      if (value === undefined) values.push(null);
      else if (typeof value !== 'string') return null;
      else {
        values.push(value);
        given++;
      }
    }
    return Object.keys(query).length === given ? JSON.stringify(values) : null;
  }

  #check(query: Record<string, unknown>): Checked {
    const { single, details, add, passed } = this.#schema.problems(query);
    // Cross-field rules only on parameters that passed their own checks.
    const normalised = this.#endpoint.normalise(passed);
    if (!normalised.ok) for (const detail of normalised.details) add(detail);
    if (details.length > 0 || !normalised.ok) return { error: validationError(details) };

    const maxAge = single.cache_max_age as CacheMaxAge | undefined;
    const staleAge = single.stale_if_error as CacheMaxAge | undefined;
    const tokenParam = this.#endpoint.paging?.param;
    const token = tokenParam ? (single[tokenParam] ?? null) : null;
    // Shared by every request with the same query: read-only.
    const params = Object.freeze(normalised.params);
    const id = this.#endpoint.id;
    const unswitched = Object.fromEntries(Object.entries(params).filter(([name]) => !this.#switches.has(name)));
    return {
      value: Object.freeze({
        params,
        targetKey: `${id}|${canonicalJson(unswitched)}`,
        baseKey: `${id}|${canonicalJson(params)}`,
        cacheMaxAgeMs: maxAge ? CACHE_MAX_AGES[maxAge] * DAY_MS : null,
        staleIfErrorMs: staleAge ? CACHE_MAX_AGES[staleAge] * DAY_MS : null,
        token,
      }),
    };
  }
}

export function queryAjv(): Ajv {
  return new Ajv({ allErrors: true, coerceTypes: false, useDefaults: false, strict: false });
}
