// The path of one API request after authentication and the rate limit: validate, cache,
// reserve a credit, scrape (shared with identical scrapes in flight), check the output,
// store it, then keep or give back the credit.
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { EndpointDeclaration, ExtractResult, Extractor, SharedState, TargetParams, UpstreamPosition } from '../endpoints/types.ts';
import { utcDay, type CachedEntry, type Stores } from '../store/types.ts';
import { isUpstreamOutcome, UpstreamOutcome } from '../upstream/outcomes.ts';
import type { Upstream, UpstreamResponse } from '../upstream/types.ts';
import type { Caller } from './plugins/auth.ts';
import type { Outcome } from './plugins/metrics.ts';
import type { Breakers } from './breakers.ts';
import { canonicalJson, CURSOR_LIFETIME_MS, type CursorSealer } from './cursors.ts';
import { ApiError, asApiError, JSON_TYPE, UPSTREAM_BLOCKED_MESSAGE, type ErrorCode } from './errors.ts';
import type { Metrics } from './metrics.ts';
import { QueryValidator, queryAjv, type ParsedQuery } from './query.ts';
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

const DAY_MS = 24 * 60 * 60 * 1000;

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
interface ScrapeJob {
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
}

/** Who a batch job's page is scraped for: the job's team and key, and the request id its record carries. */
export interface JobScraper {
  teamId: string;
  keyId: string;
  test: boolean;
  requestId: string;
  log: FastifyBaseLogger;
}

/** A job's page: its `data` serialised, and the reservation of its credit to commit with it (null: free). */
export interface JobPageResult {
  data: string;
  cached: boolean;
  reservationId: string | null;
}

/** The position a cursor carries and when the live scrape that produced it ran. */
export type Cursor = { position: UpstreamPosition; scrapedAt: number };

/** A finished live scrape: the serialised `data` and when it was scraped. */
interface Scraped {
  json: string;
  scrapedAt: number;
}

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

export class ScrapeService {
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

  /**
   * The position the request's cursor (or page token) carries, null without one: a 400 when
   * it is malformed, forged, or was issued for another endpoint, target or mode of key.
   */
  cursorOf(runtime: EndpointRuntime, caller: Caller, parsed: ParsedQuery): Cursor | null {
    if (parsed.token === null) return null;
    const { endpoint } = runtime;
    const opened = this.#sealer.open(parsed.token, endpoint.id, cursorBinding(parsed.params, caller.test));
    if (!opened.ok) {
      throw new ApiError(
        'BAD_REQUEST',
        opened.problem === 'foreign'
          ? `The ${endpoint.paging?.param} was issued for another endpoint or target, or to a key of the other mode (test or live); repeat the parameters of the first call with the same key.`
          : `The ${endpoint.paging?.param} is malformed or was not issued by this service.`,
      );
    }
    return opened.cursor;
  }

  /**
   * The 200 answer's body of a request whose caller is known, whose query `parsed` has passed
   * validation and whose `cursor` is open; null when the client left before it (nothing to send).
   */
  async answer(runtime: EndpointRuntime, caller: Caller, parsed: ParsedQuery, cursor: Cursor | null, request: FastifyRequest, reply: FastifyReply, outcome: Outcome): Promise<Buffer | null> {
    const { endpoint } = runtime;
    const { baseKey } = parsed;
    const cacheKey = `${baseKey}|${cursor ? canonicalJson(cursor.position) : ''}`;
    const now = this.#settings.now();

    // A test key never reads the cache.
    if (parsed.cacheMaxAgeMs !== null && !caller.test) {
      const entry = await this.#stores.cache.get(cacheKey);
      const hit = entry !== null && now - entry.storedAt <= parsed.cacheMaxAgeMs;
      this.#metrics.cacheLookups.inc({ endpoint: endpoint.id, result: hit ? 'hit' : 'miss' });
      if (hit) {
        outcome.cached = true;
        return cachedBody(request, caller, entry);
      }
    }

    if (cursor && now - cursor.scrapedAt > CURSOR_LIFETIME_MS) {
      throw new ApiError('BAD_REQUEST', `The ${endpoint.paging?.param} has expired (they last 24 hours); fetch the first page again.`);
    }
    if (!endpoint.extractor) {
      throw new ApiError('NOT_IMPLEMENTED', `${endpoint.path} is not available yet.`);
    }
    if (caller.test) return this.#testScrape(runtime, caller, parsed, request, cursor, cacheKey, now);

    /** The cached result that stands in for a failed live scrape (`stale_if_error`), or null. */
    const stale = async (error: unknown): Promise<Buffer | null> => {
      if (parsed.staleIfErrorMs === null || !(error instanceof ApiError) || (error.status !== 502 && error.status !== 503)) return null;
      let entry: CachedEntry | null;
      try {
        entry = await this.#stores.cache.get(cacheKey);
      } catch {
        return null; // the store is down too: the failure stands
      }
      if (entry === null || this.#settings.now() - entry.storedAt > parsed.staleIfErrorMs) return null;
      this.#metrics.staleServed.inc({ endpoint: endpoint.id });
      outcome.cached = true;
      outcome.creditsCharged = 0;
      return cachedBody(request, caller, entry, { stale: true });
    };

    const admission = this.#settings.breakers.admit(endpoint.platform);
    if (!admission.ok) {
      this.#metrics.breakerRejections.inc({ platform: endpoint.platform });
      const paused = new ApiError('UPSTREAM_BLOCKED', `${endpoint.platform} is failing; requests to it are paused. Retry in ${admission.retryAfterSeconds} s.`, {
        headers: { 'retry-after': String(admission.retryAfterSeconds) },
      });
      const standIn = await stale(paused);
      if (standIn) return standIn;
      throw paused;
    }
    try {
      return await this.#live(runtime, caller, parsed, request, reply, outcome, cursor, cacheKey, now);
    } catch (error) {
      const standIn = await stale(error);
      if (standIn) return standIn;
      throw error;
    } finally {
      // A probe whose scrape ended without an upstream outcome lets the next request probe.
      if (admission.probe) this.#settings.breakers.release(endpoint.platform);
    }
  }

  /**
   * A live scrape the service makes for a team on its own (a monitor's run): never from the
   * cache, through the same breakers, single flight, pace, extractors and cache writes as a
   * request's, its credit reserved first (counted against the key `who.keyId`'s daily limit).
   * `skipped` holds the 402 when the credit cannot be reserved (nothing is charged); otherwise the
   * serialised `data` and the reservation, to keep (`settle`) once the result is stored, null for
   * a test-mode run (the sandbox, free). A failure throws the ApiError a request would have
   * answered with, its credit given back.
   */
  async scrapeFor(
    runtime: EndpointRuntime,
    parsed: ParsedQuery,
    who: { teamId: string; keyId: string; test: boolean },
    requestId: string,
    log: FastifyBaseLogger,
  ): Promise<{ skipped: ApiError } | { json: string; reservationId: string | null }> {
    // A batch job's page without the cache (a monitor's run is always live) and without a cursor.
    try {
      const page = await this.jobPage(runtime, { ...who, requestId, log }, { ...parsed, cacheMaxAgeMs: null }, null);
      return { json: page.data, reservationId: page.reservationId };
    } catch (error) {
      if (error instanceof ApiError && (error.code === 'KEY_CREDIT_LIMIT' || error.code === 'INSUFFICIENT_CREDITS')) return { skipped: error };
      throw error;
    }
  }

  /** Counts the credit of a `scrapeFor` kept by the store (with the run it paid for). */
  charged(runtime: EndpointRuntime): void {
    this.#metrics.creditsCharged.inc({ endpoint: runtime.endpoint.id });
  }

  /** Keeps (`keep`) or gives back the credit of a `scrapeFor`; the credits charged (0 or 1). */
  async settle(runtime: EndpointRuntime, reservationId: string, keep: boolean): Promise<number> {
    if (!keep) {
      await this.#refund(reservationId, 'failed');
      return 0;
    }
    const settled = await this.#stores.ledger.commit(reservationId);
    if (!settled.charged) return 0;
    this.#metrics.creditsCharged.inc({ endpoint: runtime.endpoint.id });
    return 1;
  }

  /**
   * A test-mode key's request: a live scrape of the built-in sandbox, free, that never reads or
   * writes the cache and shares flights only with other test requests.
   */
  async #testScrape(
    runtime: EndpointRuntime,
    caller: Caller,
    parsed: ParsedQuery,
    request: FastifyRequest,
    cursor: Cursor | null,
    cacheKey: string,
    now: number,
  ): Promise<Buffer> {
    const deadline = now + this.#settings.requestBudgetMs;
    const job = { runtime, requestId: request.id, target: parsed.params, targetKey: parsed.targetKey, cacheKey, position: cursor?.position ?? null, deadline, log: request.log, test: true };
    const scraped = await this.#shared(`test|${cacheKey}`, deadline, () => this.#scrape(job));
    return envelope(Buffer.from(scraped.json), { requestId: request.id, creditsCharged: 0, creditsRemaining: caller.team.credits, cached: false, test: true });
  }

  /**
   * One page of a batch job's item, through the same path as a request: the cache (with
   * `cache_max_age`), the breaker, a reservation of its credit (charged to the job's key), the
   * scrape shared with identical ones in flight. The reservation is left pending: the job's store
   * commits it with the stored page, in one transaction (JobStore.savePage). A failed scrape is
   * refunded here. Throws the ApiError a request would have been answered with.
   */
  async jobPage(runtime: EndpointRuntime, who: JobScraper, parsed: ParsedQuery, position: UpstreamPosition | null): Promise<JobPageResult> {
    const { endpoint } = runtime;
    const cacheKey = `${parsed.baseKey}|${position ? canonicalJson(position) : ''}`;
    const now = this.#settings.now();
    if (parsed.cacheMaxAgeMs !== null && !who.test) {
      const entry = await this.#stores.cache.get(cacheKey);
      const hit = entry !== null && now - entry.storedAt <= parsed.cacheMaxAgeMs;
      this.#metrics.cacheLookups.inc({ endpoint: endpoint.id, result: hit ? 'hit' : 'miss' });
      if (hit) return { data: entry.bytes.toString('utf8'), cached: true, reservationId: null };
    }
    if (!endpoint.extractor) throw new ApiError('NOT_IMPLEMENTED', `${endpoint.path} is not available yet.`);
    const deadline = now + this.#settings.requestBudgetMs;
    const job = { runtime, requestId: who.requestId, target: parsed.params, targetKey: parsed.targetKey, cacheKey, position, deadline, log: who.log };
    if (who.test) {
      const scraped = await this.#shared(`test|${cacheKey}`, deadline, () => this.#scrape({ ...job, test: true }));
      return { data: scraped.json, cached: false, reservationId: null };
    }
    const admission = this.#settings.breakers.admit(endpoint.platform);
    if (!admission.ok) {
      this.#metrics.breakerRejections.inc({ platform: endpoint.platform });
      throw new ApiError('UPSTREAM_BLOCKED', `${endpoint.platform} is failing; requests to it are paused. Retry in ${admission.retryAfterSeconds} s.`);
    }
    try {
      const day = utcDay(now);
      // Held until the job's store commits it with the page; past this deadline (a node that
      // died) the sweep of abandoned reservations gives it back.
      const reservation = await this.#stores.ledger.reserve(who.teamId, 1, who.requestId, deadline + this.#settings.reservationMarginMs, { id: who.keyId, day });
      if (!reservation.ok) {
        if (reservation.reason === 'key-limit') {
          throw new ApiError('KEY_CREDIT_LIMIT', `The daily credit limit of the key that made this job or monitor (${reservation.limit} credits) is spent (${reservation.spent} today); it resets at midnight UTC.`);
        }
        throw new ApiError('INSUFFICIENT_CREDITS', `A live scrape costs 1 credit; the balance is ${reservation.balance}.`);
      }
      try {
        const scraped = await this.#shared(cacheKey, deadline, () => this.#scrape(job));
        return { data: scraped.json, cached: false, reservationId: reservation.reservationId };
      } catch (error) {
        await this.#refund(reservation.reservationId, 'failed');
        throw error;
      }
    } finally {
      if (admission.probe) this.#settings.breakers.release(endpoint.platform);
    }
  }

  /** Gives back a job page's credit that could not be stored (its claim was lost). */
  async refundJobPage(reservationId: string): Promise<void> {
    await this.#refund(reservationId, 'failed');
  }

  /** Where the listing of a stored page goes on: the position its cursor carries; null at its end. */
  nextPosition(runtime: EndpointRuntime, data: string, params: TargetParams, test: boolean): UpstreamPosition | null {
    const paging = runtime.endpoint.paging;
    if (!paging) return null;
    const page = (JSON.parse(data) as { paging?: Record<string, unknown> }).paging;
    const token = page?.[paging.field];
    if (page?.[paging.flag] !== true || typeof token !== 'string' || token === '') return null;
    const opened = this.#sealer.open(token, runtime.endpoint.id, cursorBinding(params, test));
    return opened.ok ? opened.cursor.position : null;
  }

  /** The position a cursor given in a job's params carries; null when it is not one of this service's for that target. */
  openCursor(runtime: EndpointRuntime, token: string, params: TargetParams, test: boolean): UpstreamPosition | null {
    const opened = this.#sealer.open(token, runtime.endpoint.id, cursorBinding(params, test));
    return opened.ok ? opened.cursor.position : null;
  }

  /** The live scrape of a request: reserve its credit, scrape (shared with identical ones), keep the charge or refund it. */
  async #live(
    runtime: EndpointRuntime,
    caller: Caller,
    parsed: ParsedQuery,
    request: FastifyRequest,
    reply: FastifyReply,
    outcome: Outcome,
    cursor: Cursor | null,
    cacheKey: string,
    now: number,
  ): Promise<Buffer | null> {
    const { endpoint } = runtime;
    const target = parsed.params;
    const { targetKey } = parsed;
    const deadline = now + this.#settings.requestBudgetMs;
    const day = utcDay(now);
    const reservation = await this.#stores.ledger.reserve(caller.team.id, 1, request.id, deadline + this.#settings.reservationMarginMs, { id: caller.keyId, day });
    if (!reservation.ok) {
      if (reservation.reason === 'key-limit') {
        const resets = new Date(Date.parse(`${day}T00:00:00.000Z`) + DAY_MS).toISOString();
        throw new ApiError(
          'KEY_CREDIT_LIMIT',
          `This key's daily credit limit of ${reservation.limit} credits is spent (${reservation.spent} today); it resets at ${resets} (midnight UTC). Cached results are still served.`,
        );
      }
      throw new ApiError('INSUFFICIENT_CREDITS', `A live scrape costs 1 credit; the balance is ${reservation.balance}.`);
    }

    let clientGone = false;
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) clientGone = true;
    });

    let scraped: Scraped;
    try {
      scraped = await this.#shared(cacheKey, deadline, () =>
        this.#scrape({ runtime, requestId: request.id, target, targetKey, cacheKey, position: cursor?.position ?? null, deadline, log: request.log }),
      );
    } catch (error) {
      await this.#refund(reservation.reservationId, 'failed');
      if (error instanceof ApiError && error.code === 'UPSTREAM_UNRECOGNISED' && isUpstreamOutcome(error.cause)) {
        // Logged per request (requests sharing one scrape each get their line), with the detail
        // the answer leaves out.
        const outcome = error.cause;
        request.log.warn({ platform: endpoint.platform, problem: outcome.message, err: outcome.cause ?? outcome }, 'unrecognised upstream page');
      }
      throw error;
    }
    if (clientGone || request.raw.socket?.destroyed) {
      // Nobody receives the answer: the credit goes back; the result stays cached.
      await this.#refund(reservation.reservationId, 'disconnected');
      return null;
    }
    const settled = await this.#stores.ledger.commit(reservation.reservationId);
    if (settled.charged) {
      this.#metrics.creditsCharged.inc({ endpoint: endpoint.id });
      outcome.creditsCharged = 1;
    } else {
      // The reservation outlived its deadline and was refunded as abandoned (the service
      // stalled past the budget and its margin). The result is good and already cached: it is
      // served, but nothing is charged and the response says so.
      request.log.warn({ reservationId: reservation.reservationId }, 'reservation refunded as abandoned before its commit; served without charge');
    }
    return envelope(Buffer.from(scraped.json), {
      requestId: request.id,
      creditsCharged: outcome.creditsCharged,
      creditsRemaining: settled.balance,
      cached: false,
    });
  }

  async #refund(reservationId: string, reason: string): Promise<void> {
    // Counted only when this call gave the credit back, not when the sweep of abandoned
    // reservations already had (it counts its own).
    if ((await this.#stores.ledger.refund(reservationId)).refunded) this.#metrics.creditsRefunded.inc({ reason });
  }

  /** Identical scrapes in flight share one upstream fetch: on this node, and through `flights` across nodes. */
  #shared(key: string, deadline: number, run: () => Promise<Scraped>): Promise<Scraped> {
    const existing = this.#inFlight.get(key);
    if (existing) {
      this.#metrics.singleFlightShared.inc({ endpoint: key.slice(0, key.indexOf('|')) });
      return existing;
    }
    const flights = this.#stores.flights;
    const promise = (flights ? joinFlight(flights, key, deadline, run, scrapeFailures) : run()).finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, promise);
    return promise;
  }

  async #scrape(job: ScrapeJob): Promise<Scraped> {
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

  async #extract({ runtime, target, targetKey, cacheKey, position, deadline, log, test = false }: ScrapeJob, extractor: Extractor, upstream: Upstream, signal: AbortSignal): Promise<Scraped> {
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
    const json = JSON.stringify(data);
    if (!test) await this.#stores.cache.set(cacheKey, targetKey, { value: json, storedAt: scrapedAt });
    return { json, scrapedAt };
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

/**
 * What a cursor is bound to: its target and, for a test-mode key, test mode, whose positions are
 * the sandbox's. A cursor of one mode is refused to a key of the other.
 */
const cursorBinding = (target: TargetParams, test: boolean): TargetParams => (test ? { ...target, '~mode': 'test' } : target);

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

function outcomeError(outcome: UpstreamOutcome, endpoint: EndpointDeclaration): ApiError {
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

interface Meta {
  requestId: string;
  creditsCharged: number;
  creditsRemaining: number;
  cached: boolean;
  cachedAt?: string;
  /** A cached result served because the live scrape failed (stale_if_error). */
  stale?: true;
  /** A test-mode key's answer, from the built-in sandbox. */
  test?: true;
}

const DATA_OPEN = Buffer.from('{"data":');

/** A cached result's answer, free; `stale` when it stands in for a failed live scrape. */
function cachedBody(request: FastifyRequest, caller: Caller, entry: CachedEntry, extra: { stale?: true } = {}): Buffer {
  return envelope(entry.bytes, {
    requestId: request.id,
    creditsCharged: 0,
    creditsRemaining: caller.team.credits,
    cached: true,
    cachedAt: new Date(entry.storedAt).toISOString(),
    ...extra,
  });
}

/** The success envelope, composed around the already serialised and encoded `data`. */
function envelope(data: Buffer, meta: Meta): Buffer {
  const tail = Buffer.from(`,"meta":${JSON.stringify(meta)}}`);
  return Buffer.concat([DATA_OPEN, data, tail], DATA_OPEN.length + data.length + tail.length);
}

/** Sends a 200 answer's body. */
export function sendOk(reply: FastifyReply, body: Buffer): void {
  reply.code(200).header('content-type', JSON_TYPE).send(body);
}
