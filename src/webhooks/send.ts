// One delivery attempt over HTTP: a POST through the address guard's lookup (guard.ts), bounded
// in everything the receiver controls: the time (one timeout over connection, answer and body),
// the answer read (64 KB at most, the first 1 KB kept), redirects (never followed: a 3xx is a
// failure) and connections (a few per receiver's origin).
import type { Agent } from 'undici';
import { undici } from '../upstream/undici.ts';
import { checkUrl, guardedLookup, RefusedAddressError, systemResolver, type GuardSettings, type Resolver } from './guard.ts';

export interface SendSettings {
  guard: GuardSettings;
  resolver?: Resolver;
  /** One attempt's time, all of it (default 10 s). */
  timeoutMs: number;
  /** Connections at once per receiver's origin, on this node (default 2). */
  connectionsPerOrigin?: number;
}

export interface AttemptResult {
  delivered: boolean;
  /** Null when no answer came. */
  status: number | null;
  durationMs: number;
  /** The first 1 KB of the answer. */
  response: string;
  error: string | null;
}

/** Bytes of an answer kept (shown in the deliveries log). */
export const KEPT_BYTES = 1_024;
/** Bytes of an answer read at most; the rest is not read (the connection is closed). */
export const READ_BYTES = 64 * 1_024;
/** The User-Agent of every attempt. */
const USER_AGENT = 'pagescrape-webhooks/1';

export class Sender {
  readonly #settings: SendSettings;
  /** Made at the first attempt, with undici (see upstream/undici.ts). */
  #agent: Agent | null = null;
  #closed = false;

  constructor(settings: SendSettings) {
    this.#settings = settings;
  }

  #dispatcher(): Agent {
    if (this.#agent) return this.#agent;
    if (this.#closed) throw new Error('the sender is closed');
    const settings = this.#settings;
    const lookup = guardedLookup(settings.guard, settings.resolver ?? systemResolver);
    this.#agent = new (undici().Agent)({
      connect: { lookup: lookup as never, timeout: settings.timeoutMs },
      connections: settings.connectionsPerOrigin ?? 2,
      headersTimeout: settings.timeoutMs,
      bodyTimeout: settings.timeoutMs,
      keepAliveTimeout: 4_000,
      pipelining: 1,
    });
    return this.#agent;
  }

  async send(url: string, headers: Record<string, string>, body: string, signal?: AbortSignal): Promise<AttemptResult> {
    const started = performance.now();
    const elapsed = () => Math.round((performance.now() - started) * 10) / 10;
    const checked = checkUrl(url, this.#settings.guard);
    if (!checked.ok) return { delivered: false, status: null, durationMs: elapsed(), response: '', error: `The URL is refused: ${checked.message}` };
    const timeout = AbortSignal.timeout(this.#settings.timeoutMs);
    const bound = signal ? AbortSignal.any([timeout, signal]) : timeout;
    try {
      const answer = await undici().request(checked.url, {
        method: 'POST',
        dispatcher: this.#dispatcher(),
        signal: bound,
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': USER_AGENT },
        body,
      });
      const chunks: Buffer[] = [];
      let read = 0;
      let cut = false;
      for await (const chunk of answer.body as AsyncIterable<Buffer>) {
        const room = READ_BYTES - read;
        chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
        read += Math.min(chunk.length, room);
        if (read >= READ_BYTES) {
          cut = true;
          break;
        }
      }
      if (cut) answer.body.destroy();
      const response = Buffer.concat(chunks).subarray(0, KEPT_BYTES).toString('utf8');
      const { statusCode: status } = answer;
      const delivered = status >= 200 && status < 300;
      const error = delivered ? null : status >= 300 && status < 400 ? `Redirects are not followed (${status}${answer.headers.location ? ` to ${String(answer.headers.location).slice(0, 200)}` : ''})` : `The receiver answered ${status}`;
      return { delivered, status, durationMs: elapsed(), response, error };
    } catch (err) {
      return { delivered: false, status: null, durationMs: elapsed(), response: '', error: describe(err, timeout.aborted, signal?.aborted === true, this.#settings.timeoutMs) };
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#agent?.destroy().catch(() => {});
  }
}

function describe(err: unknown, timedOut: boolean, stopped: boolean, timeoutMs: number): string {
  if (stopped) return 'The attempt was cut short by a shutdown';
  if (timedOut) return `No complete answer within ${timeoutMs / 1_000} s`;
  const refused = err instanceof RefusedAddressError ? err : (err as { cause?: unknown }).cause instanceof RefusedAddressError ? ((err as { cause: RefusedAddressError }).cause) : null;
  if (refused) return `The address is refused: ${refused.message}`;
  const e = err as { code?: string; message?: string };
  if (e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT' || e.code === 'UND_ERR_CONNECT_TIMEOUT') return `No complete answer within ${timeoutMs / 1_000} s`;
  return `${e.code ? `${e.code}: ` : ''}${(e.message ?? String(err)).slice(0, 300)}`;
}
