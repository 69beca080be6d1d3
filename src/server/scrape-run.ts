// One live scrape, whoever asks for it (an API request, a batch job's page, a monitor's run):
// the endpoints' compiled checks, identical scrapes in flight shared (on this node and across
// nodes), the extractor run under the request budget against the platform's upstream client,
// its output checked against the endpoint's schema, serialised once and stored in the cache, an
// unreadable page kept for the operator, and the credits given back.
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyBaseLogger } from 'fastify';
import type { EndpointDeclaration, ExtractResult, Extractor, SharedState, TargetParams, UpstreamPosition } from '../endpoints/types.ts';
import type { Stores } from '../store/types.ts';
import { isUpstreamOutcome, UpstreamOutcome } from '../upstream/outcomes.ts';
import type { Upstream, UpstreamResponse } from '../upstream/types.ts';
import type { Breakers } from './breakers.ts';
import { canonicalJson, type CursorSealer } from './cursors.ts';
import { ApiError, asApiError, UPSTREAM_BLOCKED_MESSAGE, type ErrorCode } from './errors.ts';
import type { Metrics } from './metrics.ts';
import { QueryValidator, queryAjv } from './query.ts';
import { joinFlight, sharedStates } from './shared-state.ts';

// ajv-formats is CommonJS: its function is both module.exports and module.exports.default.
const addFormats = addFormatsModule.default;

/**
 * Binds the upstream client to one platform, one request's signal and deadline. `release`,
 * when the binding has it, is called once the scrape is done with everything it fetched.
 */
export type UpstreamBinder = (platform: string, signal: AbortSignal, deadline: number) => Upstream & { release?: () => void };

export interface ScrapeSettings {
  upstream: UpstreamBinder;
  /** The built-in sandbox, for test-mode keys (TEST_MODE=on); absent: test keys are refused earlier. */
  testUpstream?: UpstreamBinder;
  /** One circuit breaker per platform. */
  breakers: Breakers;
  requestBudgetMs: number;
  reservationMarginMs: number;
  now: () => number;
  /** Aborted when the service shuts down. */
  shutdown: AbortSignal;
}

/** Drift samples kept per platform and endpoint in any hour, and the bytes of body kept of each. */
export const DRIFT_PER_HOUR = 10;
export const DRIFT_MAX_BYTES = 256 * 1024;

/** What every request of one endpoint shares. */
export interface EndpointRuntime {
  endpoint: EndpointDeclaration;
  query: QueryValidator;
  checkData: ValidateFunction;
}

/** One live scrape to run: what to fetch, where its result is cached, until when. */
export interface ScrapeJob {
  runtime: EndpointRuntime;
  /** The request that runs it (others may share its outcome). */
  requestId: string;
  /** A test-mode key's scrape: against the built-in sandbox, never cached, never judging the platform. */
  test?: boolean;
  target: TargetParams;
  targetKey: string;
  cacheKey: string;
  position: UpstreamPosition | null;
  deadline: number;
  log: FastifyBaseLogger;
  /** A batch job's page: its cache entry may be written with others (CacheStore.set's `together`). */
  together?: boolean;
}

/** The position a cursor carries and when the live scrape that produced it ran. */
export type Cursor = { position: UpstreamPosition; scrapedAt: number };

/**
 * A finished live scrape: the serialised `data` as UTF-8, encoded once for the cache and the
 * answer, and when it was scraped. Bytes only, not also the text: a scrape holds its result
 * while the store writes it and settles the charge, and what it holds across those waits
 * outlives a young collection and is promoted (see `scrape`).
 */
export interface Scraped {
  bytes: Buffer;
  scrapedAt: number;
}

/** The text of a scrape's `data`, for the few that need it (a batch job's page, another node). */
export const scrapedJson = (scraped: Scraped): string => scraped.bytes.toString('utf8');

export function compileEndpoints(endpoints: readonly EndpointDeclaration[]): Map<string, EndpointRuntime> {
  const query = queryAjv();
  const output = new Ajv({ allErrors: false, strict: false });
  addFormats(output, ['date-time', 'uri']);
  return new Map(
    endpoints.map((endpoint) => [
      endpoint.id,
      { endpoint, query: new QueryValidator(endpoint, query), checkData: output.compile(endpoint.data) },
    ]),
  );
}

/** The scrapes of this node: shared while in flight, aborted at their deadline or at shutdown. */
export class LiveScrapes {
  readonly #stores: Stores;
  /** Each platform's state shared across requests and nodes (socialnet's session). */
  readonly #sharedState: (platform: string) => SharedState;
  readonly #sealer: CursorSealer;
  readonly #metrics: Metrics;
  readonly #settings: ScrapeSettings;
  readonly #inFlight = new Map<string, Promise<Scraped>>();
  /** One controller per scrape in flight, aborted at its deadline or at shutdown. */
  readonly #running = new Set<AbortController>();

  constructor(stores: Stores, sealer: CursorSealer, metrics: Metrics, settings: ScrapeSettings) {
    this.#stores = stores;
    this.#sharedState = sharedStates(stores);
    this.#sealer = sealer;
    this.#metrics = metrics;
    this.#settings = settings;
    // Not AbortSignal.any([deadline, shutdown]) per scrape: Node keeps each such signal in the
    // shutdown signal's set of dependants and prunes that set from finalizers that walk all of
    // it, which under sustained load held the event loop for seconds at a time.
    settings.shutdown.addEventListener('abort', () => {
      for (const controller of this.#running) controller.abort(settings.shutdown.reason);
    });
  }

  /** Gives a reservation's credit back (`reason` labels the count). */
  async refund(reservationId: string, reason: string): Promise<void> {
    // Counted only when this call gave the credit back, not when the sweep of abandoned
    // reservations already had (it counts its own).
    if ((await this.#stores.ledger.refund(reservationId)).refunded) this.#metrics.creditsRefunded.inc({ reason });
  }

  /** Identical scrapes in flight share one upstream fetch: on this node, and through `flights` across nodes. */
  shared(key: string, deadline: number, run: () => Promise<Scraped>): Promise<Scraped> {
    const existing = this.#inFlight.get(key);
    if (existing) {
      this.#metrics.singleFlightShared.inc({ endpoint: key.slice(0, key.indexOf('|')) });
      return existing;
    }
    const flights = this.#stores.flights;
    // Across nodes the result travels as JSON: its text and time, not its bytes.
    const portable = async (): Promise<{ json: string; scrapedAt: number }> => {
      const scraped = await run();
      return { json: scrapedJson(scraped), scrapedAt: scraped.scrapedAt };
    };
    const shared = flights
      ? joinFlight(flights, key, deadline, portable, scrapeFailures).then(({ json, scrapedAt }): Scraped => ({ bytes: Buffer.from(json), scrapedAt }))
      : run();
    const promise = shared.finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, promise);
    return promise;
  }

  /**
   * Fetches and extracts, then keeps the result. The cache is written once the extraction's
   * frames are done: whatever a scrape still references while the store writes (the pages, the
   * extracted objects, the result's text) survives a young collection and is promoted, to be
   * freed only by a full one. Under `bench:live`'s load, 12.8 and 13.3 KB a scrape were promoted
   * when the write came from inside those frames, 6.4 and 6.7 KB now (`node --trace-gc-nvp`,
   * alternated; README, "Tests and benchmarks").
   */
  async scrape(job: ScrapeJob): Promise<Scraped> {
    const scraped = await this.#fetchAndExtract(job);
    if (!job.test) await this.#stores.cache.set(job.cacheKey, job.targetKey, { bytes: scraped.bytes, storedAt: scraped.scrapedAt }, { together: job.together === true });
    return scraped;
  }

  async #fetchAndExtract(job: ScrapeJob): Promise<Scraped> {
    const { endpoint } = job.runtime;
    const { deadline } = job;
    const extractor = endpoint.extractor;
    if (!extractor) throw new ApiError('NOT_IMPLEMENTED', `${endpoint.path} is not available yet.`);
    const controller = new AbortController();
    const { signal } = controller;
    if (this.#settings.shutdown.aborted) controller.abort(this.#settings.shutdown.reason);
    const timer = setTimeout(
      () => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
      Math.max(1, deadline - this.#settings.now()),
    );
    this.#running.add(controller);
    let upstream: ReturnType<UpstreamBinder> | null = null;
    // The last answer the platform's mapping looked at: the page that broke it, when one does.
    let seen: UpstreamResponse | null = null;
    try {
      const binder = job.test ? this.#settings.testUpstream : this.#settings.upstream;
      if (!binder) throw new ApiError('FORBIDDEN', 'Test mode is off on this service.');
      const bound = (upstream = binder(endpoint.platform, signal, deadline));
      const watched: Upstream = async (request) => {
        seen = await bound({ ...request, classify: (answer) => ((seen = answer), request.classify?.(answer)) });
        return seen;
      };
      return await this.#extract(job, extractor, watched, signal);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'UPSTREAM_UNRECOGNISED' && !job.test) await this.#captureDrift(job, seen, error);
      throw error;
    } finally {
      clearTimeout(timer);
      this.#running.delete(controller);
      // The upstream answers (and what the extractor made of them) are no longer held.
      upstream?.release?.();
    }
  }

  /** Keeps the answer that broke a mapping for the operator (bounded), and counts it. Never fails the request. */
  async #captureDrift({ runtime, requestId, log }: ScrapeJob, answer: UpstreamResponse | null, error: ApiError): Promise<void> {
    const { endpoint } = runtime;
    this.#metrics.unrecognisedPages.inc({ platform: endpoint.platform, endpoint: endpoint.id });
    const body = answer?.body ?? '';
    const truncated = Buffer.byteLength(body) > DRIFT_MAX_BYTES;
    try {
      await this.#stores.drift.add(
        {
          at: new Date(this.#settings.now()).toISOString(),
          platform: endpoint.platform,
          endpoint: endpoint.id,
          requestId,
          reason: isUpstreamOutcome(error.cause) ? error.cause.message : error.message,
          path: answer?.path ?? '',
          status: answer?.status ?? 0,
          headers: Object.fromEntries(Object.entries(answer?.headers ?? {}).filter(([name]) => name !== 'set-cookie' && name !== 'cookie')),
          body: truncated ? Buffer.from(body).subarray(0, DRIFT_MAX_BYTES).toString('utf8') : body,
          truncated,
        },
        DRIFT_PER_HOUR,
      );
    } catch (storeError) {
      log.warn({ err: storeError }, 'drift sample not kept');
    }
  }

  async #extract({ runtime, target, targetKey, position, deadline, log, test = false }: ScrapeJob, extractor: Extractor, upstream: Upstream, signal: AbortSignal): Promise<Scraped> {
    const { endpoint } = runtime;
    // A test key's scrape of the sandbox says nothing of the platform, and is never cached.
    const record = (failed: boolean) => {
      if (!test) this.#settings.breakers.record(endpoint.platform, failed);
    };
    let result: ExtractResult;
    try {
      result = await extractor({ params: target, position }, { signal, deadline, log, upstream, shared: this.#sharedState(endpoint.platform) });
    } catch (error) {
      if (!isUpstreamOutcome(error) && signal.aborted) {
        // The budget ran out, or the service is shutting down, while the extractor waited on
        // something other than the upstream client: the source did not answer in time.
        this.#metrics.upstreamOutcomes.inc({ platform: endpoint.platform, outcome: 'transient' });
        record(true);
        throw outcomeError(new UpstreamOutcome('transient', endpoint.platform, 'the time budget ran out', { cause: error }), endpoint);
      }
      const kind = isUpstreamOutcome(error) ? error.kind : 'error';
      this.#metrics.upstreamOutcomes.inc({ platform: endpoint.platform, outcome: kind });
      if (isUpstreamOutcome(error)) {
        // Blocks and transient failures count against the platform; any other answer shows it up
        // (not the service's own lack of capacity, which says nothing of the platform).
        if (error.kind !== 'overloaded') record(error.kind === 'blocked' || error.kind === 'transient');
        if ((error.kind === 'not_found' || error.kind === 'gated') && !test) await this.#stores.cache.deleteTarget(targetKey);
        throw outcomeError(error, endpoint);
      }
      throw error;
    }
    const scrapedAt = this.#settings.now();
    const data = assemble(endpoint, cursorBinding(target, test), result, scrapedAt, this.#sealer);
    if (!runtime.checkData(data)) {
      const problem = runtime.checkData.errors?.[0];
      const where = problem ? `${problem.instancePath || '/'} ${problem.message ?? ''}`.trim() : 'unknown field';
      this.#metrics.upstreamOutcomes.inc({ platform: endpoint.platform, outcome: 'unrecognised' });
      record(false);
      throw outcomeError(new UpstreamOutcome('unrecognised', endpoint.platform, `extracted data does not match the endpoint schema: data${where}`), endpoint);
    }
    this.#metrics.upstreamOutcomes.inc({ platform: endpoint.platform, outcome: 'ok' });
    record(false);
    return { bytes: Buffer.from(JSON.stringify(data)), scrapedAt };
  }
}

/** How a failed scrape travels to the nodes waiting for it: as the API error it answers with. */
const scrapeFailures = {
  describe: (error: unknown): { code: ErrorCode; message: string; headers: Record<string, string> } => {
    const shared = asApiError(error);
    return { code: shared.code, message: shared.message, headers: shared.headers };
  },
  rebuild: (failure: { code: ErrorCode; message: string; headers: Record<string, string> }) => new ApiError(failure.code, failure.message, { headers: failure.headers }),
};

/** The cache key of one page of a target: its query's `baseKey` and the upstream position (null: the first page). */
export const pageKey = (baseKey: string, position: UpstreamPosition | null): string => `${baseKey}|${position ? canonicalJson(position) : ''}`;

/**
 * What a cursor is bound to: its target and, for a test-mode key, test mode, whose positions are
 * the sandbox's. A cursor of one mode is refused to a key of the other.
 */
export const cursorBinding = (target: TargetParams, test: boolean): TargetParams => (test ? { ...target, '~mode': 'test' } : target);

/** Puts the extractor's data in the schema's field order, with `paging` and `fetchedAt` (its cursor bound to `binding`). */
function assemble(
  endpoint: EndpointDeclaration,
  binding: TargetParams,
  result: ExtractResult,
  scrapedAt: number,
  sealer: CursorSealer,
): Record<string, unknown> {
  const extra: Record<string, unknown> = { fetchedAt: new Date(scrapedAt).toISOString() };
  if (endpoint.paging) {
    const { field, flag, end } = endpoint.paging;
    const next = result.next ?? null;
    extra.paging = { [field]: next ? sealer.seal(endpoint.id, binding, next, scrapedAt) : end, [flag]: next !== null };
  }
  const ordered: Record<string, unknown> = {};
  for (const name of Object.keys(endpoint.data.properties)) {
    const value = name in extra ? extra[name] : result.data[name];
    if (value !== undefined) ordered[name] = value;
  }
  for (const name of Object.keys(result.data)) if (!(name in ordered)) ordered[name] = result.data[name];
  return ordered;
}

export function outcomeError(outcome: UpstreamOutcome, endpoint: EndpointDeclaration): ApiError {
  switch (outcome.kind) {
    case 'not_found':
    case 'gated':
      return new ApiError('NOT_FOUND', 'The content does not exist, was deleted, is private, or has no public content.', { cause: outcome });
    case 'blocked':
    case 'transient':
      // One code and Retry-After for both; the message tells a refusal from an outage.
      return new ApiError('UPSTREAM_BLOCKED', UPSTREAM_BLOCKED_MESSAGE[outcome.kind === 'blocked' ? 'blocked' : 'unavailable'](endpoint.platform), {
        cause: outcome,
        headers: { 'retry-after': '30' },
      });
    case 'rejected_cursor':
      return new ApiError('BAD_REQUEST', `${endpoint.platform} no longer accepts this position; fetch the first page again.`, { cause: outcome });
    case 'overloaded':
      // The service's own limit, not the source's: 503 like any temporary lack of capacity.
      return new ApiError('SERVICE_UNAVAILABLE', 'The service is busy; retry shortly.', { cause: outcome, headers: { 'retry-after': '5' } });
    case 'unrecognised':
      // The outcome's text (parser internals, page content) goes to the log, not to the client.
      return new ApiError('UPSTREAM_UNRECOGNISED', `The ${endpoint.platform} page could not be read; the platform may have changed it.`, {
        cause: outcome,
      });
  }
}
