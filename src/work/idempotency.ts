// Safe retries: a request that carries an `Idempotency-Key` claims the key (for its team and the
// mode of its key) before it runs. Its 2xx answer is kept for 24 hours and replayed byte for byte
// to the same request sent again with the same key, charged nothing; any other end frees the key,
// so that the same request may be sent again and run afresh. Meanwhile the same key answers 409
// to the same request and 422 to any other. Checked after validation, before the cache.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, brotliDecompress, brotliDecompressSync, constants } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, JSON_TYPE } from '../server/errors.ts';
import type { Metrics } from '../server/metrics.ts';
import type { ParsedQuery } from '../server/query.ts';
import type { IdempotencyScope, IdempotencyStore, KeptAnswer } from '../store/types.ts';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** The header a replayed answer carries. */
export const REPLAYED_HEADER = 'idempotent-replayed';
/** How long a 2xx answer is kept for its key. */
export const KEEP_MS = 24 * 60 * 60 * 1000;
/** 1 to 255 visible ASCII characters. */
const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;

/**
 * Kept answers are stored compressed (Brotli at its fastest quality): a scrape's JSON shrinks
 * to a quarter or less in about 25 µs per 5 KB, and every request that carries a key writes
 * its answer, so the bytes written are most of what a key costs. Above this size the work goes
 * to the thread pool rather than hold the event loop.
 */
const SYNC_BELOW_BYTES = 64 * 1024;
const BROTLI = { params: { [constants.BROTLI_PARAM_QUALITY]: 1 } };
const compressAsync = promisify(brotliCompress);
const decompressAsync = promisify(brotliDecompress);
const compress = (body: Buffer): Buffer | Promise<Buffer> => (body.length < SYNC_BELOW_BYTES ? brotliCompressSync(body, BROTLI) : compressAsync(body, BROTLI));
const decompress = (stored: Buffer): Buffer | Promise<Buffer> => (stored.length < SYNC_BELOW_BYTES / 4 ? brotliDecompressSync(stored) : decompressAsync(stored));

/** The `Idempotency-Key` of a request, or a 422 naming it. */
export function idempotencyKeyOf(header: string | string[]): string {
  if (typeof header === 'string' && KEY_FORMAT.test(header)) return header;
  throw new ApiError('VALIDATION_ERROR', 'The Idempotency-Key header is invalid; see details.', {
    details: [
      {
        path: 'Idempotency-Key',
        message: Array.isArray(header) ? 'Given more than once; give it once' : 'Must be 1 to 255 visible ASCII characters (no spaces)',
      },
    ],
  });
}

/**
 * What makes two requests the same: method, path, the parameters as the cache key normalises
 * them, `cache_max_age`, `stale_if_error` and the cursor.
 */
export function scrapeFingerprint(method: string, path: string, parsed: ParsedQuery): string {
  return createHash('sha256')
    .update(JSON.stringify([method, path, parsed.baseKey, parsed.cacheMaxAgeMs, parsed.staleIfErrorMs, parsed.token]))
    .digest('base64url');
}

/** JSON with every object's keys sorted, at any depth: equal bodies give equal text. */
function canonicalBody(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalBody).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value).sort().map((name) => `${JSON.stringify(name)}:${canonicalBody((value as Record<string, unknown>)[name])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What makes two POSTs the same: method, path and the body as canonical JSON. */
export function bodyFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256').update(JSON.stringify([method, path])).update(canonicalBody(body)).digest('base64url');
}

export interface IdempotencySettings {
  now: () => number;
  /**
   * How long a claim holds its key without an end: the request's time budget and its margin. A
   * node that died mid-request holds the key no longer than that.
   */
  lockMs: number;
}

export class IdempotentRequests {
  readonly #store: IdempotencyStore;
  readonly #metrics: Metrics;
  readonly #settings: IdempotencySettings;

  constructor(store: IdempotencyStore, metrics: Metrics, settings: IdempotencySettings) {
    this.#store = store;
    this.#metrics = metrics;
    this.#settings = settings;
  }

  /**
   * Answers a request that carries a valid key: the kept answer of the same request, 409 while
   * it runs, 422 when the key is another request's; otherwise runs `run` under a claim of the key
   * and sends its answer, kept when it is one (null: nobody is left to answer).
   */
  async answer(scope: IdempotencyScope, fingerprint: string, request: FastifyRequest, reply: FastifyReply, run: () => Promise<KeptAnswer | null>): Promise<void> {
    const now = this.#settings.now();
    const claim = await this.#store.claim(scope, fingerprint, request.id, now + this.#settings.lockMs, now);
    this.#metrics.idempotentRequests.inc({ outcome: claim.outcome });
    switch (claim.outcome) {
      case 'kept':
        reply.header(REPLAYED_HEADER, 'true');
        sendAnswer(reply, { ...claim.answer, body: await decompress(claim.answer.body) });
        return;
      case 'running':
        throw new ApiError('IDEMPOTENCY_IN_PROGRESS', 'A request with this Idempotency-Key is still being answered; send it again in 1 s with the same key.', {
          headers: { 'retry-after': '1' },
        });
      case 'reused':
        throw new ApiError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used for a different request in the last 24 hours; use a fresh key for each request.', {
          details: [{ path: 'Idempotency-Key', message: 'Used for another path or other parameters' }],
        });
      case 'claimed':
        break;
    }
    let answer: KeptAnswer | null;
    try {
      answer = await run();
    } catch (error) {
      await this.#release(scope, request);
      throw error;
    }
    if (answer === null || answer.status < 200 || answer.status > 299) {
      await this.#release(scope, request);
    } else {
      try {
        // Kept before it is sent: a client that retries once it has the answer finds it.
        if (!(await this.#store.keep(scope, request.id, { ...answer, body: await compress(answer.body) }, this.#settings.now() + KEEP_MS))) {
          request.log.warn({ idempotencyKey: scope.key }, 'idempotency claim lost before its answer was kept (held past its lock deadline)');
        }
      } catch (error) {
        // The answer stands; the key stays claimed until its lock deadline, then frees.
        request.log.error({ err: error, idempotencyKey: scope.key }, 'idempotent answer not kept');
      }
    }
    if (answer !== null) sendAnswer(reply, answer);
  }

  async #release(scope: IdempotencyScope, request: FastifyRequest): Promise<void> {
    try {
      await this.#store.release(scope, request.id);
    } catch (error) {
      // The key stays claimed until its lock deadline; the request's own answer matters more.
      request.log.error({ err: error, idempotencyKey: scope.key }, 'idempotency key not released');
    }
  }
}

/** Sends a JSON answer: its status, `location` when it has one, and its body as it is. */
export function sendAnswer(reply: FastifyReply, answer: KeptAnswer): void {
  reply.code(answer.status).header('content-type', JSON_TYPE);
  if (answer.location !== null) reply.header('location', answer.location);
  reply.send(answer.body);
}
