// What an extractor sees of the upstream HTTP client. The core binds one `Upstream` to the
// endpoint's platform: requests go only to that platform's configured origin, never to a host
// taken from user input.

export interface UpstreamRequest {
  /** Path and query on the platform's origin, e.g. `/add/lunavoss` or `/shop/api/feed?x=1`. */
  path: string;
  method?: 'GET' | 'POST';
  /**
   * `page`: a browser navigation (Accept text/html, Sec-Fetch-Mode navigate, Sec-Fetch-Dest
   * document, Sec-Fetch-Site none). `api`: an XHR/fetch call (Accept JSON, Sec-Fetch-Mode cors,
   * Sec-Fetch-Dest empty, Sec-Fetch-Site same-origin).
   */
  kind: 'page' | 'api';
  /** Extra headers beyond the browser-like defaults (e.g. `content-type`, platform tokens). */
  headers?: Record<string, string>;
  /** Request body (e.g. a form-encoded or JSON string) for POST. */
  body?: string;
  /**
   * The platform's judgement of an answer, made inside the client's retry loop. The client
   * calls it on every answer it would return: after its own rules (429 is a block; a 5xx, a
   * reset, a timeout, malformed HTTP or an empty 200 body are retried) and after following
   * redirects within the platform, so it sees the final answer, `offPlatformLocation` set
   * when the platform sent the request elsewhere.
   *
   * - Returning accepts the answer: the client returns that very object.
   * - Throwing `UpstreamOutcome('transient')` makes the answer a transient failure (e.g.
   *   socialnet's GraphQL body that is empty after `for (;;);`): it is retried with the same
   *   backoff, retry count and time budget as a 5xx, and when they run out the request ends in
   *   `UpstreamOutcome('transient')`.
   * - Throwing anything else (a block, not found, unrecognised, or a bug) ends the request at
   *   once with that error, unchanged and not retried.
   *
   * `fetchAndRead` (./read.ts) builds it from a platform's reader and returns what the reader
   * made of the accepted answer.
   */
  classify?: (response: UpstreamResponse) => void;
  /**
   * A block the platform recognises in an answer of any status, checked before the client's own
   * rules: e.g. shopfront's captcha page, usually a 200 but sometimes a 503, which must end the
   * request as a block rather than be retried as a 5xx. Returns why it is a block, or null.
   * When given, the bodies of 5xx answers are read (within the size cap) for it to look at.
   */
  block?: (response: UpstreamResponse) => string | null;
  /**
   * The proxy (its label, from `UpstreamResponse.via`) this request must go through, e.g. the one
   * a session was obtained through. When that proxy is benched, or the platform blocks it, the
   * request ends blocked: it never moves on to another proxy.
   */
  via?: string;
}

export interface UpstreamResponse {
  /** Final HTTP status after following redirects within the platform. */
  status: number;
  /** Response headers, names lower-cased. */
  headers: Record<string, string>;
  /** Decoded (gzip/deflate/br) body as UTF-8 text. */
  body: string;
  /** Path and query of the final request, after redirects. */
  path: string;
  /**
   * Set when the platform redirected off its own hosts: the `Location` it named (not
   * followed). `status` is then the 3xx status. Each platform says what that means.
   */
  offPlatformLocation?: string;
  /** The proxy the answer came through (`scheme://host:port`), when the platform has proxies. */
  via?: string;
}

/**
 * Fetches from the bound platform's origin. Retries transient failures (5xx, resets,
 * timeouts, malformed HTTP, an empty 200 body, and answers the request's `classify` calls
 * transient) with backoff inside the request's time budget and then throws
 * `UpstreamOutcome('transient')`; throws `UpstreamOutcome('blocked')` on HTTP 429; throws
 * `UpstreamOutcome('unrecognised')` when the body exceeds the size cap. Every other status
 * (200, 3xx off the platform, 4xx) is returned for the platform's rules to judge, once
 * `classify` (when given) has accepted it. A request that could never be sent as built (a
 * path or header that is not valid HTTP) is a programming error: a plain `Error`, not retried.
 */
export type Upstream = (request: UpstreamRequest) => Promise<UpstreamResponse>;
