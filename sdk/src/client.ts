// The client: one typed method per endpoint (generated.ts), `paginate` for the listings, and the
// one request they all go through, which retries what is worth retrying and turns every error
// answer into its code's error class. It needs nothing but `fetch` and Web Crypto's `randomUUID`.
import { ConnectionError, PageScrapeError, TimeoutError, UnexpectedResponseError, type ErrorDetail } from './errors.ts';
import { ENDPOINTS, ERRORS, EndpointMethods, type Changes, type Endpoints } from './generated.ts';
import type { ApiResponse, ClientOptions, PaginateOptions, RequestOptions } from './types.ts';
import { Jobs } from './jobs.ts';
import { Monitors } from './monitors.ts';
import { Webhooks } from './webhooks.ts';

const DEFAULT_BASE_URL = 'http://127.0.0.1:3000';
const DEFAULTS = { timeoutMs: 60_000, maxRetries: 3, maxRetryDelayMs: 60_000 };
/**
 * Answers worth another attempt: the service gave up waiting for the request (408), the same
 * `Idempotency-Key` is still being answered (409 `IDEMPOTENCY_IN_PROGRESS`), rate limited (429),
 * source unavailable (502), service busy (503). None of them is charged.
 */
const RETRYABLE_STATUSES = new Set([408, 429, 502, 503]);
const RETRYABLE_CODES = new Set(['IDEMPOTENCY_IN_PROGRESS']);
/** Connection failures that happen before a request reaches the service. */
const NEVER_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);
/** Waits at most for an attempt of the same call still being answered (409 IDEMPOTENCY_IN_PROGRESS). */
const MAX_IN_PROGRESS_WAITS = 100;
/** Back-off without `Retry-After`: 0.5 s, 1 s, 2 s, … up to 8 s, each with jitter. */
const BACKOFF_BASE_MS = 500;
const BACKOFF_MAX_MS = 8_000;

/**
 * Web Crypto: global in browsers and in Node 19 and later; Node 18 has it only as `node:crypto`'s
 * `webcrypto` (its global is behind a flag), imported then and only then.
 */
type RandomUUID = { randomUUID(): string };
const webCrypto: RandomUUID = (globalThis as { crypto?: RandomUUID }).crypto ?? (await import('node:crypto')).webcrypto;

/** A fresh `Idempotency-Key`: a random UUID. */
export const newIdempotencyKey = (): string => webCrypto.randomUUID();

/** Whether `error` is worth another attempt of the same call (with the same `Idempotency-Key`). */
export function isRetryable(error: PageScrapeError): boolean {
  if (error instanceof ConnectionError || error instanceof TimeoutError) return true;
  return RETRYABLE_STATUSES.has(error.status) || RETRYABLE_CODES.has(error.code);
}

/** One request to make, and to make again on a retry: the same method, URL, body and key. */
interface Call {
  method: 'GET' | 'PATCH' | 'POST' | 'DELETE';
  url: string;
  body?: string;
  idempotencyKey?: string;
}

type Table = typeof ENDPOINTS;
/** The path of every endpoint that pages. */
export type PagedPath = { [P in keyof Table]: Table[P]['paging'] extends null ? never : P }[keyof Table];
/** The items of a paged endpoint's listing: a post, a comment, a reply, a reel, a request record. */
export type ItemOf<P extends PagedPath> = Table[P]['paging'] extends { items: infer K }
  ? K extends keyof Endpoints[P]['data']
    ? Endpoints[P]['data'][K] extends readonly (infer Item)[]
      ? Item
      : never
    : never
  : never;

const environment = (name: string): string | undefined => (typeof process === 'undefined' ? undefined : process.env[name]) || undefined;

export class PageScrape extends EndpointMethods {
  /** The service's address, without a trailing slash. */
  readonly baseUrl: string;
  readonly #apiKey: string;
  readonly #fetch: typeof fetch;
  readonly #defaults: typeof DEFAULTS;
  /** The team's webhook endpoints (`/v1/webhooks`). */
  readonly webhooks = new Webhooks((method, path, body, options) => this.send(method, path, body, {}, options));
  /** Monitors: pages watched on a schedule, each change a JSON Patch (`client.monitors.create({ … })`). */
  /** Batch jobs: `create`, `get`, `list`, `cancel`, `retry`, `wait`, `results`. */
  readonly jobs: Jobs = new Jobs(this);
  readonly monitors = new Monitors((method, path, body, query, options) => this.send(method, path, body, query, options));

  constructor(options: ClientOptions = {}) {
    super();
    const apiKey = options.apiKey ?? environment('PAGESCRAPE_API_KEY');
    if (!apiKey) throw new TypeError('No API key: pass { apiKey } or set PAGESCRAPE_API_KEY.');
    const baseUrl = options.baseUrl ?? environment('PAGESCRAPE_BASE_URL') ?? DEFAULT_BASE_URL;
    if (!/^https?:\/\//i.test(baseUrl)) throw new TypeError(`The base URL must start with http:// or https://, not ${JSON.stringify(baseUrl)}.`);
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.#apiKey = apiKey;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#defaults = {
      timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
      maxRetries: options.maxRetries ?? DEFAULTS.maxRetries,
      maxRetryDelayMs: options.maxRetryDelayMs ?? DEFAULTS.maxRetryDelayMs,
    };
  }

  /**
   * Sends a request other than a scrape (a webhook's, a monitor's or a batch job's creation,
   * change, deletion or run) and answers its `data` and `meta`. A POST carries an `Idempotency-Key` (the caller's
   * `idempotencyKey`, else one made here) kept across its own retries, so that every failure may be retried without doing it twice (PATCH and
   * DELETE are safe to repeat by their nature); retries as `get` does.
   */
  async send<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, query: Record<string, unknown> = {}, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const call: Call = {
      method,
      url: this.#url(path, query),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(method === 'POST' ? { idempotencyKey: options.idempotencyKey ?? newIdempotencyKey() } : {}),
    };
    return (await this.#call(call, options)) as ApiResponse<T>;
  }

  /**
   * Calls the endpoint at `path` with `query` and answers its `data` and `meta`. A scraping call
   * carries an `Idempotency-Key` (the caller's `idempotencyKey`, else a fresh random one), the
   * same on each of its attempts, so the service runs it and charges it at most once however
   * often it is sent. Retries, up to `maxRetries` times, every failure worth it: a connection
   * refused or cut (even after the request was sent), an attempt past `timeoutMs`, and a 408,
   * 409 `IDEMPOTENCY_IN_PROGRESS`, 429, 502 or 503 answer; after the answer's `Retry-After`,
   * else after an exponential back-off, each wait with jitter. Throws the error class of the
   * answer's code (`NotFoundError`, …), a `TimeoutError`, or a `ConnectionError`; an aborted
   * `signal` rejects with its reason.
   */
  async get<P extends keyof Endpoints>(path: P, query: Endpoints[P]['query'], options: RequestOptions = {}): Promise<ApiResponse<Endpoints[P]['data']>> {
    const url = this.#url(path, query as Record<string, unknown>);
    const scrapes = (ENDPOINTS as Record<string, { scrapes?: boolean } | undefined>)[path]?.scrapes === true;
    const call: Call = { method: 'GET', url, ...(scrapes ? { idempotencyKey: options.idempotencyKey ?? newIdempotencyKey() } : {}) };
    return (await this.#call(call, options)) as ApiResponse<Endpoints[P]['data']>;
  }

  /**
   * Changes a setting of the account (`PATCH` of `path`, its `{parameters}` filled from
   * `params`) and answers its `data` and `meta`. Setting a value twice leaves it as once, so it
   * is retried like `get`.
   */
  async change<P extends keyof Changes>(path: P, params: Changes[P]['params'], body: Changes[P]['body'], options: RequestOptions = {}): Promise<ApiResponse<Changes[P]['data']>> {
    const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String((params as Record<string, unknown>)[name] ?? '')));
    const call: Call = { method: 'PATCH', url: `${this.baseUrl}${filled}`, body: JSON.stringify(body) };
    return (await this.#call(call, options)) as ApiResponse<Changes[P]['data']>;
  }

  /** Makes `call`, and makes it again (the same request, the same key) while it fails in a way worth retrying. */
  async #call(call: Call, options: RequestOptions): Promise<ApiResponse<unknown>> {
    const maxRetries = options.maxRetries ?? this.#defaults.maxRetries;
    const timeoutMs = options.timeoutMs ?? this.#defaults.timeoutMs;
    // Waits for an attempt of this very call that the service is still answering (409
    // IDEMPOTENCY_IN_PROGRESS, after a cut connection or a timeout) do not use up `maxRetries`:
    // that attempt runs within the service's own time budget. They go on for at most one
    // attempt's time (`timeoutMs`) from the first, and MAX_IN_PROGRESS_WAITS times.
    let inProgressSince: number | null = null;
    let inProgressWaits = 0;
    for (let attempt = 0; ; ) {
      options.signal?.throwIfAborted();
      let error: PageScrapeError;
      try {
        return await this.#attempt(call, options);
      } catch (caught) {
        if (!(caught instanceof PageScrapeError)) throw caught;
        error = caught;
      }
      let inProgress = false;
      if (error.code === 'IDEMPOTENCY_IN_PROGRESS' && maxRetries > 0) {
        inProgressSince ??= Date.now();
        inProgress = Date.now() - inProgressSince < timeoutMs && inProgressWaits < MAX_IN_PROGRESS_WAITS;
      }
      if (!isRetryable(error) || (attempt >= maxRetries && !inProgress)) throw error;
      const delay = this.#delay(error, attempt);
      if (delay === null) throw error;
      if (inProgress) inProgressWaits++;
      else attempt++;
      // A wait for the attempt in progress names the retry it stands for, without using it up.
      options.onRetry?.({ error, retry: inProgress ? Math.min(attempt + 1, maxRetries) : attempt, maxRetries, delayMs: delay });
      await sleep(delay, options.signal);
    }
  }

  /**
   * Every item of a listing, following the endpoint's own cursor or page token to its end (or
   * to `maxPages`, or as far as `maxCredits` allows). The listing tells, as it goes and when it
   * ends, how many pages and items it read and the credits they cost.
   *
   * ```ts
   * const listing = client.paginate('/v1/shopfront/shop', { url: 'https://www.shopfront.example/shop/lunacooks' });
   * for await (const post of listing) console.log(post.id, post.title);
   * console.log(listing.creditsSpent);
   * ```
   */
  paginate<P extends PagedPath>(path: P, query: Endpoints[P]['query'], options: PaginateOptions<ApiResponse<Endpoints[P]['data']>> = {}): Listing<ItemOf<P>> {
    const paging = ENDPOINTS[path].paging;
    if (!paging) throw new TypeError(`${path} does not page.`);
    const maxPages = options.maxPages ?? Infinity;
    const maxCredits = options.maxCredits ?? Infinity;
    const read = async function* (this: PageScrape, listing: Listing<ItemOf<P>>): AsyncGenerator<ItemOf<P>> {
      let pageQuery = query;
      let token: unknown;
      for (;;) {
        // Another page is to come: a bound may stop the listing before it is requested.
        if (listing.pages >= maxPages) listing.stoppedBy = 'maxPages';
        else if (listing.creditsSpent + 1 > maxCredits) listing.stoppedBy = 'maxCredits';
        if (listing.stoppedBy !== null) break;
        // Each page is a call of its own, with a fresh key: one key is for one request.
        const page = await this.get(path, pageQuery, { ...options, idempotencyKey: undefined });
        const data = page.data as unknown as Record<string, unknown>;
        listing.record(page.meta);
        options.onPage?.(page);
        const items = data[paging.items];
        if (!Array.isArray(items)) throw new UnexpectedResponseError(`${path} answered without its \`${paging.items}\` list.`, { code: 'UNEXPECTED_RESPONSE', status: 200, requestId: page.meta.requestId });
        for (const item of items as ItemOf<P>[]) {
          listing.items++;
          yield item;
        }
        const state = data.paging as Record<string, unknown> | undefined;
        if (!state?.[paging.flag]) break;
        const next = state[paging.field];
        if (typeof next !== 'string' || next === '' || next === token) {
          throw new UnexpectedResponseError(`${path} said more was to come but gave no new \`${paging.field}\`.`, { code: 'UNEXPECTED_RESPONSE', status: 200, requestId: page.meta.requestId });
        }
        token = next;
        pageQuery = { ...query, [paging.param]: next };
      }
      listing.done = true;
    };
    return new Listing((listing) => read.call(this, listing));
  }

  #url(path: string, query: Record<string, unknown>): string {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== null) search.append(name, String(value));
    const encoded = search.toString();
    return `${this.baseUrl}${path}${encoded ? `?${encoded}` : ''}`;
  }

  /** One request: answers the envelope, or throws a `PageScrapeError` (or the signal's reason). */
  async #attempt(call: Call, options: RequestOptions): Promise<ApiResponse<unknown>> {
    const timeoutMs = options.timeoutMs ?? this.#defaults.timeoutMs;
    const controller = new AbortController();
    const timeout = new TimeoutError(`No complete answer within ${timeoutMs} ms.`, { code: 'TIMEOUT', status: 0 });
    const timer = setTimeout(() => controller.abort(timeout), timeoutMs);
    const forward = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', forward, { once: true });
    let response: Response;
    let text: string;
    try {
      const headers: Record<string, string> = { 'x-api-key': this.#apiKey, accept: 'application/json' };
      if (call.idempotencyKey !== undefined) headers['idempotency-key'] = call.idempotencyKey;
      if (call.body !== undefined) headers['content-type'] = 'application/json';
      response = await this.#fetch(call.url, { method: call.method, headers, ...(call.body !== undefined ? { body: call.body } : {}), signal: controller.signal });
      text = await response.text();
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (controller.signal.aborted) throw timeout;
      throw new ConnectionError(`Could not reach ${this.baseUrl}: ${describe(error)}.`, { code: 'CONNECTION_ERROR', status: 0, cause: error, mayHaveReached: !neverSent(error) });
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', forward);
    }
    return this.#read(response, text);
  }

  /** A streamed answer (the NDJSON of a job's results): the response, its body unread; a `PageScrapeError` for an error answer. */
  async stream(path: string, options: { signal?: AbortSignal } = {}): Promise<Response> {
    let response: Response;
    try {
      response = await this.#fetch(`${this.baseUrl}${path}`, { headers: { 'x-api-key': this.#apiKey, accept: 'application/x-ndjson', 'accept-encoding': 'gzip' }, signal: options.signal });
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      throw new ConnectionError(`Could not reach ${this.baseUrl}: ${describe(error)}.`, { code: 'CONNECTION_ERROR', status: 0, cause: error, mayHaveReached: !neverSent(error) });
    }
    if (response.ok) return response;
    // An error answer is the API's envelope: read as any call's.
    this.#read(response, await response.text());
    throw new UnexpectedResponseError(`HTTP ${response.status}`, { code: 'UNEXPECTED_RESPONSE', status: response.status });
  }

  /** An answer read: its envelope, or the `PageScrapeError` of its code thrown. */
  #read(response: Response, text: string): ApiResponse<unknown> {
    const requestId = response.headers.get('x-request-id');
    const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (response.ok) {
      if (isRecord(body) && 'data' in body && isRecord(body.meta)) return body as unknown as ApiResponse<unknown>;
      throw new UnexpectedResponseError(`HTTP ${response.status} without the API's envelope.`, { code: 'UNEXPECTED_RESPONSE', status: response.status, requestId });
    }
    const error = isRecord(body) && isRecord(body.error) ? body.error : undefined;
    const code = typeof error?.code === 'string' ? error.code : undefined;
    const init = {
      status: response.status,
      requestId: typeof error?.requestId === 'string' ? error.requestId : requestId,
      details: Array.isArray(error?.details) ? (error.details as ErrorDetail[]) : [],
      retryAfter,
    };
    const message = typeof error?.message === 'string' ? error.message : `HTTP ${response.status} ${response.statusText}`.trim();
    if (code !== undefined && code in ERRORS) throw new ERRORS[code as keyof typeof ERRORS].error(message, { ...init, code });
    throw new UnexpectedResponseError(message, { ...init, code: code ?? 'UNEXPECTED_RESPONSE' });
  }

  /** How long to wait before retrying after `error`, or null when the answer asks for longer than allowed. */
  #delay(error: PageScrapeError, attempt: number): number | null {
    const jitter = 1 + Math.random() * 0.2;
    if (error.retryAfter !== null) {
      const wait = error.retryAfter * 1000;
      return wait > this.#defaults.maxRetryDelayMs ? null : Math.min(wait * jitter, this.#defaults.maxRetryDelayMs);
    }
    // "Equal jitter": half the back-off, plus a random part of the other half.
    const backoff = Math.min(BACKOFF_BASE_MS * 2 ** attempt, BACKOFF_MAX_MS);
    return backoff / 2 + Math.random() * (backoff / 2);
  }
}

/**
 * The items of a listing, as an async iterable (iterate it once), with what reading them cost so
 * far: `pages`, `items`, `creditsSpent`, `creditsRemaining`; `done` once the listing ended or a
 * bound stopped it (`stoppedBy` tells which).
 */
export class Listing<Item> implements AsyncIterable<Item> {
  pages = 0;
  items = 0;
  /** Credits charged for the pages read: 1 per live scrape, 0 per cache hit. */
  creditsSpent = 0;
  /** The team's balance after the last page, null before the first. */
  creditsRemaining: number | null = null;
  /** True once the end of the listing, or a bound (`maxPages`, `maxCredits`), was reached. */
  done = false;
  /** The bound that stopped the listing before its end; null while it goes on, and when it ended. */
  stoppedBy: 'maxPages' | 'maxCredits' | null = null;
  readonly #source: AsyncGenerator<Item>;

  /** `read` yields the items and counts each page with `record`. */
  constructor(read: (listing: Listing<Item>) => AsyncGenerator<Item>) {
    this.#source = read(this);
  }

  /** Counts a page read. */
  record(meta: { creditsCharged: number; creditsRemaining: number }): void {
    this.pages++;
    this.creditsSpent += meta.creditsCharged;
    this.creditsRemaining = meta.creditsRemaining;
  }

  [Symbol.asyncIterator](): AsyncIterator<Item> {
    return this.#source;
  }

  /** Every item of the listing, in an array. */
  async toArray(): Promise<Item[]> {
    const all: Item[] = [];
    for await (const item of this) all.push(item);
    return all;
  }
}

/** The network codes of a failed `fetch` (its cause, or each attempt of its cause). */
function networkCodes(error: unknown): string[] {
  const cause = (error as { cause?: { code?: unknown; errors?: { code?: unknown }[] } } | null)?.cause;
  return [cause?.code, ...(cause?.errors ?? []).map((each) => each.code)].filter((code): code is string => typeof code === 'string');
}

/** Whether a failed `fetch` failed before its request could reach the service (refused, no such host, …): told by `ConnectionError.mayHaveReached`. */
function neverSent(error: unknown): boolean {
  const codes = networkCodes(error);
  return codes.length > 0 && codes.every((code) => NEVER_SENT.has(code));
}

/** A failed `fetch`, in words: its message and the network's. */
function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause instanceof Error && cause.message ? `${message} (${cause.message})` : message;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `Retry-After` in seconds: a number of seconds or an HTTP date; null when absent or unreadable. */
function parseRetryAfter(header: string | null): number | null {
  if (header === null || header.trim() === '') return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, (date - Date.now()) / 1000);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = () => {
      signal?.removeEventListener('abort', abort);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', abort, { once: true });
  });
}
