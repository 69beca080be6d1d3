// The single declaration each endpoint makes. Routes, query validation, the output check, the
// OpenAPI document and the docs page are all generated from these objects.
import type { TObject } from 'typebox';
import type { LogFn } from 'pino';
import type { Upstream } from '../upstream/types.ts';

/** One validation problem: `path` names the parameter, `message` says why. */
export interface ValidationDetail {
  path: string;
  message: string;
}

/** Raw query after schema validation: every parameter is a string. */
export type RawQuery = Record<string, string | undefined>;

/**
 * The canonical form of a request's target: the parameters that say *what* is scraped
 * (canonical URL, page id, username, switches). It feeds the cache key and binds cursors.
 */
export type TargetParams = Record<string, string>;

export type NormaliseResult = { ok: true; params: TargetParams } | { ok: false; details: ValidationDetail[] };

/** How an endpoint pages: which query parameter carries the token and how `data.paging` looks. */
export interface PagingStyle {
  /** Query parameter that carries the token back (`cursor` or `pageToken`). */
  param: 'cursor' | 'pageToken';
  /** Name of the token field inside `data.paging`. */
  field: 'cursor' | 'pageToken';
  /** Name of the "more to come" flag inside `data.paging`. */
  flag: 'hasNextPage' | 'hasMore';
  /** What the token field holds at the end of a listing: `null`, or `""` for non-nullable strings. */
  end: null | '';
  /** Name of the array of `data` that holds the listing's items (`posts`, `comments`, …). */
  items: string;
}

/**
 * Where a listing continues upstream: a small JSON object (e.g. `{profileId, cursor}`) that the
 * service seals inside its own cursor and hands back to the extractor on the next call.
 */
export type UpstreamPosition = Readonly<Record<string, string | number | boolean | null>>;

export interface ExtractRequest {
  /** Canonical target parameters, as `normalise` returned them. */
  params: TargetParams;
  /** Upstream position carried by the client's cursor, or null for the first page. */
  position: UpstreamPosition | null;
}

export interface ExtractContext {
  /** Aborted when the request's time budget runs out or the service shuts down. */
  signal: AbortSignal;
  /** Epoch milliseconds by which the extraction must have finished. */
  deadline: number;
  log: { debug: LogFn; info: LogFn; warn: LogFn; error: LogFn };
  /** HTTP client bound to the endpoint's platform origin, this request's budget and signal. */
  upstream: Upstream;
  /**
   * What the platform shares between requests and, on a cluster, between nodes (e.g. a
   * session). The service always provides it; a platform used on its own keeps such state in
   * its own memory.
   */
  shared?: SharedState;
}

/** State of one platform, shared by every request on every node. Values survive a JSON round trip. */
export interface SharedState {
  /** The value stored under `name`, or null. */
  get(name: string): Promise<unknown>;
  /** Stores `value` for `ttlMs`; null deletes it. */
  set(name: string, value: unknown, ttlMs: number): Promise<void>;
  /**
   * Runs `load` once for all the concurrent callers of `name`, on every node; the others get
   * its value, or its failure. Waits at most until `deadline` (epoch ms) for another node.
   */
  once<T>(name: string, deadline: number, load: () => Promise<T>): Promise<T>;
}

export interface ExtractResult<T = Record<string, unknown>> {
  /** The endpoint's `data` without `fetchedAt` and without `paging`. */
  data: T;
  /** Upstream position of the next page, or null at the end of a listing. */
  next?: UpstreamPosition | null;
}

/**
 * Scrapes one target. Returns data or throws an `UpstreamOutcome`; it knows nothing of HTTP
 * status codes, credits or the cache.
 */
export type Extractor<T = Record<string, unknown>> = (request: ExtractRequest, context: ExtractContext) => Promise<ExtractResult<T>>;

/** What every endpoint of the API declares, scraping or not (the account's, src/account/). */
export interface ApiEndpoint {
  /** Stable identifier, e.g. `socialnet.profile.posts`; used in cache keys, cursors and metrics. */
  id: string;
  path: string;
  summary: string;
  description: string;
  /** Query parameters (all strings). */
  query: TObject;
  /** The full `data` object. */
  data: TObject;
  paging?: PagingStyle;
  /** A sample query for the docs. */
  exampleQuery: Record<string, string>;
}

export interface EndpointDeclaration extends ApiEndpoint {
  platform: string;
  /**
   * What the platform is, for the OpenAPI tag that groups its endpoints. Every endpoint of a
   * platform gives the same text (declare it once per platform and share it).
   */
  platformDescription: string;
  summary: string;
  description: string;
  /** Query parameters (all strings; `cache_max_age` is added by the core). */
  query: TObject;
  /** The full `data` object, `fetchedAt` and `paging` included. */
  data: TObject;
  paging?: PagingStyle;
  /**
   * Query parameters that change how a target is scraped, not which target it is (e.g.
   * `businessHours`): part of the cache key, but a 404 drops the target's entries for every value.
   */
  switches?: readonly string[];
  /** Cross-field rules and canonicalisation, run after the schema check. */
  normalise: (query: RawQuery) => NormaliseResult;
  /** Missing until the platform's extractor is built: the endpoint then answers 501. */
  extractor?: Extractor;
  /** A sample query for the docs. */
  exampleQuery: Record<string, string>;
}
