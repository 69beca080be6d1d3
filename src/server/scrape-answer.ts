// The answer to one API request of a scraping endpoint, once its caller is admitted and its
// query valid: a cached result (free), or a live scrape with its credit reserved, then kept or
// given back; a cached result may stand in for a failed scrape (stale_if_error), and a test-mode
// key's request scrapes the built-in sandbox. The 200 body is composed around the result's
// already serialised bytes.
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { utcDay, type CachedEntry, type Stores } from '../store/types.ts';
import { isUpstreamOutcome } from '../upstream/outcomes.ts';
import type { Caller } from './plugins/auth.ts';
import type { Outcome } from './plugins/metrics.ts';
import { CURSOR_LIFETIME_MS, type CursorSealer } from './cursors.ts';
import { ApiError, JSON_TYPE } from './errors.ts';
import type { Metrics } from './metrics.ts';
import type { ParsedQuery } from './query.ts';
import { cursorBinding, pageKey, type Cursor, type EndpointRuntime, type LiveScrapes, type ScrapeSettings, type Scraped } from './scrape-run.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Answers the API's requests of scraping endpoints. */
export class RequestAnswers {
  readonly #stores: Stores;
  readonly #scrapes: LiveScrapes;
  readonly #sealer: CursorSealer;
  readonly #metrics: Metrics;
  readonly #settings: ScrapeSettings;

  constructor(stores: Stores, scrapes: LiveScrapes, sealer: CursorSealer, metrics: Metrics, settings: ScrapeSettings) {
    this.#stores = stores;
    this.#scrapes = scrapes;
    this.#sealer = sealer;
    this.#metrics = metrics;
    this.#settings = settings;
  }

  /** Cache lookups made before Fastify saw the request (edge-hits.ts), by its raw request. */
  readonly #lookedUp = new WeakMap<IncomingMessage, { key: string; entry: CachedEntry | null }>();

  /** Hands the cache lookup made for `raw` before Fastify saw it (`entry` under `key`, null: none) to the request's answer, which reads the cache no more. */
  handOverLookup(raw: IncomingMessage, key: string, entry: CachedEntry | null): void {
    this.#lookedUp.set(raw, { key, entry });
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
    const cacheKey = pageKey(baseKey, cursor?.position ?? null);
    const now = this.#settings.now();

    // A test key never reads the cache.
    if (parsed.cacheMaxAgeMs !== null && !caller.test) {
      const early = this.#lookedUp.get(request.raw);
      const entry = early?.key === cacheKey ? early.entry : await this.#stores.cache.get(cacheKey);
      const hit = entry !== null && now - entry.storedAt <= parsed.cacheMaxAgeMs;
      this.#metrics.cacheLookups.inc({ endpoint: endpoint.id, result: hit ? 'hit' : 'miss' });
      if (hit) {
        outcome.cached = true;
        return cachedBody(entry, request.id, caller.team.credits);
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
      return cachedBody(entry, request.id, caller.team.credits, { stale: true });
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
    const scraped = await this.#scrapes.shared(`test|${cacheKey}`, deadline, () => this.#scrapes.scrape(job));
    return envelope(scraped.bytes, { requestId: request.id, creditsCharged: 0, creditsRemaining: caller.team.credits, cached: false, test: true });
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
      scraped = await this.#scrapes.shared(cacheKey, deadline, () =>
        this.#scrapes.scrape({ runtime, requestId: request.id, target, targetKey, cacheKey, position: cursor?.position ?? null, deadline, log: request.log }),
      );
    } catch (error) {
      await this.#scrapes.refund(reservation.reservationId, 'failed');
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
      await this.#scrapes.refund(reservation.reservationId, 'disconnected');
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
    return envelope(scraped.bytes, {
      requestId: request.id,
      creditsCharged: outcome.creditsCharged,
      creditsRemaining: settled.balance,
      cached: false,
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

/**
 * `meta.cachedAt` of the cached entries served lately, formatted once per entry rather than per
 * hit (0.46 µs each): the embedded store hands out the same entry object while it holds it in
 * memory. Entries the stores no longer hold are forgotten with them.
 */
const cachedAts = new WeakMap<CachedEntry, string>();

/**
 * A cached result's answer to the request `requestId` of a team holding `creditsRemaining`,
 * free; `stale` when it stands in for a failed live scrape.
 */
export function cachedBody(entry: CachedEntry, requestId: string, creditsRemaining: number, extra: { stale?: true } = {}): Buffer {
  let cachedAt = cachedAts.get(entry);
  if (cachedAt === undefined) cachedAts.set(entry, (cachedAt = new Date(entry.storedAt).toISOString()));
  return envelope(entry.bytes, { requestId, creditsCharged: 0, creditsRemaining, cached: true, cachedAt, ...extra });
}

/**
 * The success envelope, composed around the already serialised and encoded `data`: one buffer
 * allocated and the meta written into it (not encoded apart, then copied again).
 */
function envelope(data: Buffer, meta: Meta): Buffer {
  const tail = `,"meta":${JSON.stringify(meta)}}`;
  const body = Buffer.allocUnsafe(DATA_OPEN.length + data.length + Buffer.byteLength(tail));
  DATA_OPEN.copy(body, 0);
  data.copy(body, DATA_OPEN.length);
  body.write(tail, DATA_OPEN.length + data.length);
  return body;
}

/** Sends a 200 answer's body. */
export function sendOk(reply: FastifyReply, body: Buffer): void {
  reply.code(200).header('content-type', JSON_TYPE).send(body);
}
