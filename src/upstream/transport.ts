// What the upstream client sends and how it reads what goes wrong: the browser-like headers, the
// failures of the transport (transient or a mistake of ours), of a proxy, and the body decoders.
// Used by client.ts alone.
import { brotliDecompressSync, createBrotliDecompress, createGunzip, createInflate, gunzipSync, inflateSync } from 'node:zlib';
import type { Transform } from 'node:stream';
import { UpstreamOutcome } from './outcomes.ts';
import { undici } from './undici.ts';

const USER_AGENT =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36';

const BASE_HEADERS = {
  'user-agent': USER_AGENT,
  'accept-language': 'en-US,en;q=0.9',
  'accept-encoding': 'gzip, deflate, br',
  'sec-ch-ua': '"Chromium";v="142", "Google Chrome";v="142", "Not_A Brand";v="99"',
  'sec-ch-ua-mobile': '?0',
  'sec-ch-ua-platform': '"Windows"',
};
export const PAGE_HEADERS = {
  ...BASE_HEADERS,
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8',
  'sec-fetch-mode': 'navigate',
  'sec-fetch-dest': 'document',
  'sec-fetch-site': 'none',
  'sec-fetch-user': '?1',
  'upgrade-insecure-requests': '1',
};
export const API_HEADERS = {
  ...BASE_HEADERS,
  accept: 'application/json, text/plain, */*',
  'sec-fetch-mode': 'cors',
  'sec-fetch-dest': 'empty',
  'sec-fetch-site': 'same-origin',
};

/** A failure of the proxy itself (unreachable, or refusing the tunnel), not of the platform behind it. */
export function isProxyFailure(error: unknown): boolean {
  const code = (error as { code?: string }).code ?? (error as { cause?: { code?: string } }).cause?.code;
  return (
    error instanceof undici().errors.ConnectTimeoutError ||
    (error instanceof Error && /proxy/i.test(error.message)) ||
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET' ||
    code === 'EHOSTUNREACH' ||
    code === 'UND_ERR_SOCKET'
  );
}

/** A failure worth another attempt. */
export class Transient extends Error {}

/**
 * undici's codes for a request that undici refused to send as we built it: a programming
 * error of ours, never retried. Every other failure of the transport is the origin's (or the
 * network's) doing and transient.
 */
const REQUEST_MISTAKES = new Set(['UND_ERR_INVALID_ARG', 'UND_ERR_INVALID_RETURN_VALUE', 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH', 'UND_ERR_NOT_SUPPORTED']);

const errorCode = (error: unknown): string | undefined => {
  const own = (error as { code?: unknown })?.code;
  if (typeof own === 'string') return own;
  const cause = (error as { cause?: { code?: unknown } })?.cause?.code;
  return typeof cause === 'string' ? cause : undefined;
};

/**
 * What went wrong when a request failed in the transport (connecting, TLS, writing, parsing
 * the answer, reading or decoding the body), for the retry loop: a short description when the
 * failure is transient, or null when it is not the upstream's (then it is rethrown as it is).
 *
 * - malformed HTTP (undici's `HTTPParserError`, codes `HPE_*`: an invalid status line, a
 *   control character in a header, non-HTTP bytes, a bare CR, a bad chunk size or
 *   content-length), a body shorter than its content-length, headers over the size limit,
 *   a socket closed, reset or timed out, a pool closing (`UndiciError`s), DNS and connection
 *   errors (`ENOTFOUND`, `ECONNREFUSED`, …), TLS errors and corrupt compressed bodies (a
 *   `code` from Node or OpenSSL), an abort or timeout of the attempt: transient;
 * - `InvalidArgumentError` and the other undici errors about the request we built, and errors
 *   without a code (a `TypeError` in our own code): not the upstream's, rethrown.
 */
export function transportProblem(error: unknown): string | null {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof undici().errors.HTTPParserError || (error as Error)?.name === 'HTTPParserError') {
    return `malformed HTTP from the upstream: ${message}`;
  }
  const code = errorCode(error);
  if (code !== undefined && REQUEST_MISTAKES.has(code)) return null;
  if (error instanceof undici().errors.UndiciError) return `${code ?? 'UND_ERR'}: ${message}`;
  const name = (error as Error)?.name;
  if (name === 'AbortError' || name === 'TimeoutError') return message;
  // System (errno), TLS (OpenSSL) and zlib errors all carry a string code.
  if (code !== undefined) return `${code}: ${message}`;
  return null;
}

/** The content-encodings the client decodes. */
export type Encoding = 'gzip' | 'deflate' | 'br';

/** The encoding a `content-encoding` header names; null: none. Any other encoding is refused. */
export function encodingOf(header: string | undefined): Encoding | null {
  switch ((header ?? '').trim().toLowerCase()) {
    case '':
    case 'identity':
      return null;
    case 'gzip':
    case 'x-gzip':
      return 'gzip';
    case 'deflate':
      return 'deflate';
    case 'br':
      return 'br';
    default:
      throw new UpstreamOutcome('unrecognised', 'upstream', `unsupported content-encoding "${header}"`);
  }
}

/** A streaming decoder, for bodies too large to decode in one call (see `decodeWhole`). */
export function decoderFor(encoding: Encoding): Transform {
  if (encoding === 'gzip') return createGunzip();
  return encoding === 'deflate' ? createInflate() : createBrotliDecompress();
}

/**
 * A whole compressed body decoded in one synchronous call, or null when it decodes to more than
 * `maxBytes`. Corrupt or truncated input throws zlib's error (it carries a `code`).
 */
export function decodeWhole(encoding: Encoding, input: Buffer, maxBytes: number): Buffer | null {
  const options = { maxOutputLength: maxBytes };
  try {
    if (encoding === 'gzip') return gunzipSync(input, options);
    return encoding === 'deflate' ? inflateSync(input, options) : brotliDecompressSync(input, options);
  } catch (error) {
    if (error instanceof RangeError && (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') return null;
    throw error;
  }
}

export const lowerCase = (headers: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0 || signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
