// Cache hits answered before Fastify sees the request. A plain cache hit (a GET of a scraping
// endpoint with a live key, a valid query with `cache_max_age`, no cursor, no Idempotency-Key,
// no body) is answered here from the same pieces as the route's: the door's admission (counted
// against the team's limit), the endpoint's query validator, the cache, the envelope, the
// headers, then its metrics, request record and access line. Every other request goes on to
// Fastify, and so do a request the rate limit refuses and a miss, with the admission made here
// (Door.handOver) and, for a miss, the cache lookup (ScrapeService.handOverLookup): the route
// answers them, and nothing is looked up or counted twice. As on the route, the key comes before
// the cache: a request whose key is refused never reads it.
//
// What it buys: Fastify's routing, request and reply objects, hooks, validation stage and async
// handler cost a cache hit about a fifth of its CPU. Measured with two apps over one store in
// one process, one with this path and one without, alternated (bench/servers.ts's service, 50
// connections, 6 rounds of 3 s): 138.8 -> 113.6 µs of main-thread CPU a hit, 7,028 -> 8,343
// hits a second.
//
// The hits answered in one turn of the event loop are written together as it ends
// (setImmediate), not each as soon as it is ready. They leave in one burst, so the client is
// woken once for all of them rather than once each (on a virtualised machine, waking an idle
// core is an exit to the hypervisor, charged to the writer: `perf` showed 13 µs a hit of it
// against 3 µs for a bare route), and the client's next requests come back together, so that
// the costs each turn has whatever it carries (the poll, the embedded store's check of its data
// version) are shared by more of them. No answer waits longer than the turn that made it. Same
// measurement, written at once -> at the turn's end: 131.5 -> 81.5 µs of main-thread CPU a hit,
// 7,287 -> 11,004 hits a second, latency p50 6 -> 3 ms and p99 15.5 -> 12.5 ms.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'fast-querystring';
import type { CachedEntry, RequestRecord, Stores } from '../store/types.ts';
import { accessLine } from './access-line.ts';
import { announcesBody } from './body.ts';
import { answerStamp, JSON_TYPE } from './errors.ts';
import { newRequestId } from './ids.ts';
import { TEST_KEY_PREFIX } from './keys.ts';
import type { Metrics } from './metrics.ts';
import { presentedKey, type Door } from './plugins/auth.ts';
import { rateHeaderValues } from './plugins/rate-limit.ts';
import type { ParsedQuery } from './query.ts';
import { cachedBody } from './scrape-answer.ts';
import { pageKey, type EndpointRuntime } from './scrape-run.ts';
import { IDEMPOTENCY_HEADER } from '../work/idempotency.ts';
import type { FastifyBaseLogger } from 'fastify';

export interface EdgeHitsOptions {
  /** The scraping endpoints by path. */
  byPath: ReadonlyMap<string, EndpointRuntime>;
  door: Door;
  cache: Stores['cache'];
  /** Takes the cache lookup of a request left to the route (ScrapeService.handOverLookup). */
  handOverLookup: (raw: IncomingMessage, key: string, entry: CachedEntry | null) => void;
  metrics: Metrics;
  /** The app's logger: the access line goes where the route's would. */
  log: FastifyBaseLogger;
  addRecord: (record: RequestRecord) => void;
  now: () => number;
  /** Whether the app has begun to close (its requests get the 503 of the errors plugin). */
  closing: () => boolean;
}

/** A request this path may answer: its endpoint, query and key, read without counting anything. */
interface Candidate {
  runtime: EndpointRuntime;
  path: string;
  parsed: ParsedQuery & { cacheMaxAgeMs: number };
  key: string;
}

export class EdgeHits {
  readonly #options: EdgeHitsOptions;
  readonly #writeAccess: ReturnType<typeof accessLine>;
  /** The answers of this turn of the event loop, written when it ends. */
  #ready: (() => void)[] = [];

  constructor(options: EdgeHitsOptions) {
    this.#options = options;
    this.#writeAccess = accessLine(options.log);
  }

  /** Answers `request` when it is a plain cache hit, else passes it to `next`. */
  readonly serve = (request: IncomingMessage, response: ServerResponse, next: RequestListener): void => {
    let candidate: Candidate | null;
    try {
      candidate = this.#candidate(request);
    } catch {
      // Whatever this path cannot read, the route answers (a 4xx, or its own error).
      candidate = null;
    }
    if (candidate === null) {
      next(request, response);
      return;
    }
    this.#answer(request, response, candidate).then(
      (answered) => {
        if (!answered) next(request, response);
      },
      // A store that fails here fails the route too, which answers with the error's envelope.
      () => next(request, response),
    );
  };

  #candidate(request: IncomingMessage): Candidate | null {
    const { headers, url = '' } = request;
    if (this.#options.closing() || request.method !== 'GET' || announcesBody(headers) || headers[IDEMPOTENCY_HEADER] !== undefined) return null;
    const mark = url.indexOf('?');
    const path = mark < 0 ? url : url.slice(0, mark);
    const runtime = this.#options.byPath.get(path);
    if (runtime === undefined) return null;
    const { key, conflict } = presentedKey(headers);
    // Test keys never read the cache; the route answers a refused or malformed key.
    if (key === null || conflict || key.startsWith(TEST_KEY_PREFIX)) return null;
    // As Fastify's router parses it (find-my-way, with fast-querystring).
    const query = mark < 0 || mark === url.length - 1 ? {} : (parseQuery(url.slice(mark + 1)) as Record<string, unknown>);
    // Without it the cache is not read: a live scrape's query is checked by its route alone.
    if (query.cache_max_age === undefined) return null;
    const checked = runtime.query.check(query);
    if (!('value' in checked)) return null;
    const parsed = checked.value;
    if (parsed.cacheMaxAgeMs === null || parsed.token !== null) return null;
    return { runtime, path, parsed: parsed as Candidate['parsed'], key };
  }

  async #answer(request: IncomingMessage, response: ServerResponse, { runtime, path, parsed, key }: Candidate): Promise<boolean> {
    const { door, cache, metrics, now } = this.#options;
    const started = performance.now();
    const at = now();
    // The key first, as on the route: a request it refuses never reaches the cache.
    const admission = await door.admitKey(key, at);
    if (admission === null) return false;
    const { team, key: record, decision } = admission;
    // From here, the route answers with the admission made here (a 429, a miss, a failing store).
    if (!decision.allowed) {
      door.handOver(request, admission);
      return false;
    }
    const cacheKey = pageKey(parsed.baseKey, null);
    const entry = await cache.get(cacheKey).catch((error: unknown) => {
      door.handOver(request, admission);
      throw error;
    });
    if (entry === null || at - entry.storedAt > parsed.cacheMaxAgeMs) {
      door.handOver(request, admission);
      this.#options.handOverLookup(request, cacheKey, entry);
      return false;
    }
    const endpoint = runtime.endpoint.id;
    metrics.cacheLookups.inc({ endpoint, result: 'hit' });
    const requestId = newRequestId();
    const body = cachedBody(entry, requestId, team.credits);
    this.#atTurnEnd(() => {
      response.writeHead(200, { ...answerStamp(requestId), ...rateHeaderValues(decision), 'content-type': JSON_TYPE, 'content-length': body.length });
      response.end(body);
      // As the errors plugin does: a connection answered once closing has begun is not kept.
      if (this.#options.closing()) request.socket.end();
      const elapsed = performance.now() - started;
      const durationMs = Math.round(elapsed * 100) / 100;
      metrics.countRequest(endpoint, 200, elapsed / 1000);
      this.#options.addRecord({ requestId, at: Math.trunc(Date.now() - elapsed), teamId: team.id, keyId: record.id, endpoint: path, status: 200, errorCode: null, credits: 0, cached: true, durationMs });
      this.#writeAccess({ requestId, team: team.id, endpoint, method: 'GET', path, status: 200, credits: 0, cached: true, durationMs });
    });
    return true;
  }

  #atTurnEnd(write: () => void): void {
    if (this.#ready.length === 0) setImmediate(this.#writeReady);
    this.#ready.push(write);
  }

  readonly #writeReady = (): void => {
    const ready = this.#ready;
    this.#ready = [];
    for (const write of ready) {
      try {
        write();
      } catch (error) {
        this.#options.log.error({ err: error }, 'a cache hit could not be written');
      }
    }
  };
}
