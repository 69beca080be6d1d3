// The service's scrapes, as the routes, batch jobs and monitors ask for them: an API request's
// answer (scrape-answer.ts), a batch job's page and a monitor's run (here), each through the
// same live scrape (scrape-run.ts): cache, circuit breaker, reserved credit, shared flights.
import type { IncomingMessage } from 'node:http';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { TargetParams, UpstreamPosition } from '../endpoints/types.ts';
import { utcDay, type CachedEntry, type Stores } from '../store/types.ts';
import type { Caller } from './plugins/auth.ts';
import type { Outcome } from './plugins/metrics.ts';
import type { CursorSealer } from './cursors.ts';
import { ApiError } from './errors.ts';
import { JobCredits } from './job-credits.ts';
import type { Metrics } from './metrics.ts';
import type { ParsedQuery } from './query.ts';
import { RequestAnswers } from './scrape-answer.ts';
import { cursorBinding, LiveScrapes, pageKey, scrapedJson, type Cursor, type EndpointRuntime, type ScrapeSettings } from './scrape-run.ts';

export { sendOk } from './scrape-answer.ts';
export { compileEndpoints, DRIFT_MAX_BYTES, DRIFT_PER_HOUR } from './scrape-run.ts';
export type { Cursor, EndpointRuntime, ScrapeSettings, UpstreamBinder } from './scrape-run.ts';

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

export class ScrapeService {
  readonly #stores: Stores;
  readonly #sealer: CursorSealer;
  readonly #metrics: Metrics;
  readonly #settings: ScrapeSettings;
  readonly #scrapes: LiveScrapes;
  readonly #answers: RequestAnswers;
  readonly #credits: JobCredits;

  constructor(stores: Stores, sealer: CursorSealer, metrics: Metrics, settings: ScrapeSettings) {
    this.#stores = stores;
    this.#sealer = sealer;
    this.#metrics = metrics;
    this.#settings = settings;
    this.#scrapes = new LiveScrapes(stores, sealer, metrics, settings);
    this.#answers = new RequestAnswers(stores, this.#scrapes, sealer, metrics, settings);
    this.#credits = new JobCredits(stores.ledger);
  }

  /**
   * The position the request's cursor (or page token) carries, null without one: a 400 when
   * it is malformed, forged, or was issued for another endpoint, target or mode of key.
   */
  cursorOf(runtime: EndpointRuntime, caller: Caller, parsed: ParsedQuery): Cursor | null {
    return this.#answers.cursorOf(runtime, caller, parsed);
  }

  /** Hands a cache lookup made before Fastify saw the request to its answer (edge-hits.ts). */
  handOverLookup(raw: IncomingMessage, key: string, entry: CachedEntry | null): void {
    this.#answers.handOverLookup(raw, key, entry);
  }

  /**
   * The 200 answer's body of a request whose caller is known, whose query `parsed` has passed
   * validation and whose `cursor` is open; null when the client left before it (nothing to send).
   */
  answer(runtime: EndpointRuntime, caller: Caller, parsed: ParsedQuery, cursor: Cursor | null, request: FastifyRequest, reply: FastifyReply, outcome: Outcome): Promise<Buffer | null> {
    return this.#answers.answer(runtime, caller, parsed, cursor, request, reply, outcome);
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
      await this.#scrapes.refund(reservationId, 'failed');
      return 0;
    }
    const settled = await this.#stores.ledger.commit(reservationId);
    if (!settled.charged) return 0;
    this.#metrics.creditsCharged.inc({ endpoint: runtime.endpoint.id });
    return 1;
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
    const cacheKey = pageKey(parsed.baseKey, position);
    const now = this.#settings.now();
    if (parsed.cacheMaxAgeMs !== null && !who.test) {
      const entry = await this.#stores.cache.get(cacheKey);
      const hit = entry !== null && now - entry.storedAt <= parsed.cacheMaxAgeMs;
      this.#metrics.cacheLookups.inc({ endpoint: endpoint.id, result: hit ? 'hit' : 'miss' });
      if (hit) return { data: entry.bytes.toString('utf8'), cached: true, reservationId: null };
    }
    if (!endpoint.extractor) throw new ApiError('NOT_IMPLEMENTED', `${endpoint.path} is not available yet.`);
    const deadline = now + this.#settings.requestBudgetMs;
    // Its cache entry written with the job's other pages scraped at the same time.
    const job = { runtime, requestId: who.requestId, target: parsed.params, targetKey: parsed.targetKey, cacheKey, position, deadline, log: who.log, together: true };
    if (who.test) {
      const scraped = await this.#scrapes.shared(`test|${cacheKey}`, deadline, () => this.#scrapes.scrape({ ...job, test: true }));
      return { data: scrapedJson(scraped), cached: false, reservationId: null };
    }
    const admission = this.#settings.breakers.admit(endpoint.platform);
    if (!admission.ok) {
      this.#metrics.breakerRejections.inc({ platform: endpoint.platform });
      throw new ApiError('UPSTREAM_BLOCKED', `${endpoint.platform} is failing; requests to it are paused. Retry in ${admission.retryAfterSeconds} s.`);
    }
    try {
      const day = utcDay(now);
      // Held until the job's store commits it with the page; past this deadline (a node that
      // died) the sweep of abandoned reservations gives it back. Reserved with the job's other
      // pages asking at the same time (job-credits.ts).
      const reservation = await this.#credits.reserve(who.teamId, who.requestId, deadline + this.#settings.reservationMarginMs, { id: who.keyId, day });
      if (!reservation.ok) {
        if (reservation.reason === 'key-limit') {
          throw new ApiError('KEY_CREDIT_LIMIT', `The daily credit limit of the key that made this job or monitor (${reservation.limit} credits) is spent (${reservation.spent} today); it resets at midnight UTC.`);
        }
        throw new ApiError('INSUFFICIENT_CREDITS', `A live scrape costs 1 credit; the balance is ${reservation.balance}.`);
      }
      try {
        const scraped = await this.#scrapes.shared(cacheKey, deadline, () => this.#scrapes.scrape(job));
        return { data: scrapedJson(scraped), cached: false, reservationId: reservation.reservationId };
      } catch (error) {
        await this.#scrapes.refund(reservation.reservationId, 'failed');
        throw error;
      }
    } finally {
      if (admission.probe) this.#settings.breakers.release(endpoint.platform);
    }
  }

  /** Gives back a job page's credit that could not be stored (its claim was lost). */
  async refundJobPage(reservationId: string): Promise<void> {
    await this.#scrapes.refund(reservationId, 'failed');
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
}
