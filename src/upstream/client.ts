// The HTTP client every platform shares. Requests go only to the platform's configured origin,
// carry browser-like headers, run inside the API request's time budget with connect, header
// and body timeouts, are retried with jittered backoff when the failure is transient, follow
// at most 5 redirects within the platform, are decoded (gzip, deflate, br) and capped in size
// while streaming, and counted against the process-wide memory budget for upstream bodies
// while the scrape holds them (./memory.ts). Each kind of failure ends as a typed outcome.
import type { Pool } from 'undici';
import { MemoryBudget, type MemoryLease } from './memory.ts';
import { UpstreamOutcome } from './outcomes.ts';
import { DIRECT, type EgressState, type Pacer } from './pacing.ts';
import { ProxyPool, type Proxy, type ProxySpec } from './proxies.ts';
import type { Upstream, UpstreamRequest, UpstreamResponse } from './types.ts';
import { API_HEADERS, isProxyFailure, lowerCase, PAGE_HEADERS, sleep, Transient, transportProblem } from './transport.ts';
import { readBody, type BodyCharge } from './body.ts';
import { undici } from './undici.ts';


export interface PlatformOrigin {
  /** Scheme, host and optional port where requests go. */
  origin: string;
  /** Hosts the platform's own URLs use (canonical and aliases): redirects there are followed on the origin. */
  hosts: readonly string[];
}

export interface UpstreamClientOptions {
  platforms: Record<string, PlatformOrigin>;
  /** Largest decoded body accepted; default 10 MB. */
  maxBodyBytes?: number;
  /** Decoded upstream bytes all scrapes together may hold; default 256 MB, at least `maxBodyBytes`. */
  memoryBytes?: number;
  /** Longest wait for a share of `memoryBytes` before the answer is refused as overloaded; default 2 s. */
  memoryWaitMs?: number;
  connectTimeoutMs?: number;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  /** Retries of a transient failure (after the first attempt), budget permitting; default 4. */
  maxRetries?: number;
  /** First backoff step; it doubles each retry (full jitter); default 100 ms. */
  backoffMs?: number;
  /** Connections per origin; default 128. */
  connections?: number;
  /** For tests: the random source of the jitter. */
  random?: () => number;
  /** Paces each platform's attempts and bounds how many run at once (./pacing.ts); none: no bound. */
  pacer?: Pacer;
  /** Each platform's proxies (./proxies.ts); a platform without sends from this machine's address. */
  proxies?: Record<string, readonly ProxySpec[]>;
}

/** Proxies a request moves on to after the first one met a block or could not be reached. */
const PROXY_SWITCHES = 2;

const MAX_REDIRECTS = 5;

/** An `Upstream` bound to one scrape; `release` gives back the memory its answers hold. */
export type BoundUpstream = Upstream & { release: () => void };

const CHARGE = Symbol('body charge');
type ChargedRequest = UpstreamRequest & { [CHARGE]?: BodyCharge };

/** What one hop ends with: the answer, and the path to follow when it is a redirect within the platform. */
type Hop = { response: UpstreamResponse; next?: undefined } | { response: UpstreamResponse; next: string };
/** An attempt is not started with less time than this left in the budget. */
const MIN_ATTEMPT_MS = 50;

export class UpstreamClient {
  readonly #platforms: Record<string, PlatformOrigin>;
  readonly #pools = new Map<string, Pool>();
  readonly #options: Required<Omit<UpstreamClientOptions, 'platforms' | 'pacer' | 'proxies'>>;
  readonly #memory: MemoryBudget;
  readonly #pacer: Pacer | undefined;
  readonly #proxies = new Map<string, ProxyPool>();

  constructor(options: UpstreamClientOptions) {
    this.#platforms = options.platforms;
    this.#pacer = options.pacer;
    for (const [platform, specs] of Object.entries(options.proxies ?? {})) {
      if (specs.length > 0) this.#proxies.set(platform, new ProxyPool(specs, options.connections ?? 128));
    }
    this.#options = {
      maxBodyBytes: options.maxBodyBytes ?? 10 * 1024 * 1024,
      memoryBytes: options.memoryBytes ?? 256 * 1024 * 1024,
      memoryWaitMs: options.memoryWaitMs ?? 2_000,
      connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
      headersTimeoutMs: options.headersTimeoutMs ?? 10_000,
      bodyTimeoutMs: options.bodyTimeoutMs ?? 10_000,
      maxRetries: options.maxRetries ?? 4,
      backoffMs: options.backoffMs ?? 100,
      connections: options.connections ?? 128,
      random: options.random ?? Math.random,
    };
    if (this.#options.memoryBytes < this.#options.maxBodyBytes) {
      throw new Error(`the memory budget (${this.#options.memoryBytes} bytes) must be at least the largest body accepted (${this.#options.maxBodyBytes} bytes)`);
    }
    this.#memory = new MemoryBudget(this.#options.memoryBytes);
  }

  /** The memory budget's state: bytes held by all scrapes, its capacity, requests waiting for a share. */
  get memory(): { used: number; capacity: number; waiting: number } {
    return { used: this.#memory.used, capacity: this.#memory.capacity, waiting: this.#memory.waiting };
  }

  /**
   * The `Upstream` an extractor uses: one platform, one request's signal and deadline. The
   * answers it returns keep their bytes counted until `release` (called when the scrape is
   * done with them and with what it made of them), or until `signal` aborts.
   */
  bind(platform: string, signal: AbortSignal, deadline: number): BoundUpstream {
    const target = this.#platforms[platform];
    if (!target) throw new Error(`no origin configured for platform ${platform}`);
    const lease = this.#memory.lease();
    const release = () => {
      signal.removeEventListener('abort', release);
      lease.release();
    };
    signal.addEventListener('abort', release, { once: true });
    const upstream: Upstream = (request) => this.#fetch(platform, target, request, signal, deadline, lease);
    return Object.assign(upstream, { release });
  }

  async close(): Promise<void> {
    await Promise.all([...this.#pools.values()].map((pool) => pool.close()));
    this.#pools.clear();
    await Promise.all([...this.#proxies.values()].map((proxies) => proxies.close()));
  }

  /** Each egress's queue and waits on this node (none without a pace). */
  paceStates(): EgressState[] {
    return this.#pacer?.states() ?? [];
  }

  /** Each proxy of a platform by label, and until when it is benched (epoch ms; 0: in use). */
  proxyStates(platform: string): Record<string, number> {
    return Object.fromEntries((this.#proxies.get(platform)?.proxies ?? []).map((proxy) => [proxy.label, proxy.benchedUntil > Date.now() ? proxy.benchedUntil : 0]));
  }

  #pool(origin: string): Pool {
    let pool = this.#pools.get(origin);
    if (!pool) {
      pool = new (undici().Pool)(origin, {
        connections: this.#options.connections,
        connect: { timeout: this.#options.connectTimeoutMs },
        keepAliveTimeout: 10_000,
        headersTimeout: this.#options.headersTimeoutMs,
        bodyTimeout: this.#options.bodyTimeoutMs,
      });
      this.#pools.set(origin, pool);
    }
    return pool;
  }

  async #fetch(platform: string, target: PlatformOrigin, request: UpstreamRequest, signal: AbortSignal, deadline: number, lease: MemoryLease): Promise<UpstreamResponse> {
    // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
    if (!request.path.startsWith('/') || request.path.startsWith('//') || /[\s\u0000-\u001f\u007f]/.test(request.path)) {
      // A programming error in an extractor, not an upstream failure: never retried.
      throw new Error(`upstream path must be an origin-relative path without spaces or control characters, got ${JSON.stringify(request.path)}`);
    }
    this.#checkHeaders(request.headers ?? {});
    // The returned answer's bytes stay with the lease; a failed call gives back all it took.
    const charge: BodyCharge = { lease, bytes: 0 };
    try {
      return await this.#hops(platform, target, request, signal, deadline, charge);
    } catch (error) {
      lease.give(charge.bytes);
      charge.bytes = 0;
      throw error;
    }
  }

  /** Follows redirects within the platform, each hop with its retries. */
  async #hops(platform: string, target: PlatformOrigin, request: UpstreamRequest, signal: AbortSignal, deadline: number, charge: BodyCharge): Promise<UpstreamResponse> {
    let path = request.path;
    let method = request.method ?? 'GET';
    let body = request.body;
    for (let hop = 0; ; hop += 1) {
      const hopRequest: ChargedRequest = { ...request, path, method, body, [CHARGE]: charge };
      const step = await this.#withRetries(platform, target.origin, hopRequest, signal, deadline, (response) => {
        const location = response.status >= 300 && response.status < 400 ? response.headers.location : undefined;
        if (location === undefined) return { response };
        const next = this.#redirectPath(target, path, location);
        if (next === null) return { response: { ...response, offPlatformLocation: location } };
        return { response, next };
      });
      if (step.next === undefined) return step.response;
      const { response, next } = step;
      if (hop + 1 > MAX_REDIRECTS) throw new UpstreamOutcome('blocked', platform, `more than ${MAX_REDIRECTS} redirects, last to ${response.headers.location}`);
      path = next;
      // 303, and 301/302 after a POST, continue as GET as browsers do.
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
      }
    }
  }

  /** Header names and values undici would refuse (CR, LF, NUL): a programming error in an extractor, never sent. */
  #checkHeaders(headers: Record<string, string>): void {
    for (const [name, value] of Object.entries(headers)) {
      // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || typeof value !== 'string' || /[\r\n\u0000]/.test(value)) {
        throw new Error(`upstream header ${JSON.stringify(name)} must be a token with a value without CR, LF or NUL`);
      }
    }
  }

  /** Path and query to follow on the origin, or null when the Location leaves the platform. */
  #redirectPath(target: PlatformOrigin, currentPath: string, location: string): string | null {
    let url: URL;
    try {
      url = new URL(location, `https://${target.hosts[0] ?? 'platform.invalid'}${currentPath}`);
    } catch {
      return null;
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
    if (url.username || url.password) return null;
    if (!target.hosts.includes(url.hostname.toLowerCase())) return null;
    return `${url.pathname}${url.search}`;
  }

  /**
   * One hop: attempts until an answer is accepted, with jittered backoff inside the budget.
   * Each answer is judged in this order: the request's `block`; 429 is a block; a 5xx or an
   * empty 200 is transient;
   * `hop` says whether it is a redirect to follow; any other answer goes to the request's
   * `classify`, whose `UpstreamOutcome('transient')` is retried like a 5xx.
   */
  async #withRetries(
    platform: string,
    origin: string,
    request: UpstreamRequest,
    signal: AbortSignal,
    deadline: number,
    hop: (response: UpstreamResponse) => Hop,
  ): Promise<Hop> {
    let lastProblem = 'no attempt could be made within the time budget';
    /**
     * Whether an attempt of this hop reached the platform. When none did, the time went in the
     * service's own queue (the pace) and the failure is the service's lack of capacity
     * (`overloaded`: 503, not counted by the platform's breaker), never the platform's.
     */
    let asked = false;
    /**
     * Time this hop spent waiting for its turns, and asking the platform; and whether the platform
     * itself failed (a 5xx, an empty answer, a broken transport), as opposed to an attempt cut
     * short by the budget. An attempt cut short after a longer wait in our queue than the platform
     * had is the service's lack of capacity too.
     */
    let queuedMs = 0;
    let askedMs = 0;
    let platformFailed = false;
    const proxies = this.#proxies.get(platform);
    /** The proxies of this hop that met a block or could not be reached (benched, not used again). */
    const failed = new Set<Proxy>();
    for (let attempt = 0; attempt <= this.#options.maxRetries; attempt += 1) {
      if (attempt > 0) {
        const step = Math.min(2_000, this.#options.backoffMs * 2 ** (attempt - 1));
        const wait = Math.floor(this.#options.random() * step);
        if (Date.now() + wait + MIN_ATTEMPT_MS > deadline) break;
        await sleep(wait, signal);
      }
      const remaining = deadline - Date.now();
      if (remaining < MIN_ATTEMPT_MS || signal.aborted) break;
      let proxy: Proxy | null = null;
      /** The proxies this attempt may go out through; none: this machine's own address. */
      let candidates: Proxy[] = [];
      const pinned = request.via !== undefined ? proxies?.byLabel(request.via) : undefined;
      if (pinned) {
        // Bound to the proxy it must use (a session's): never another one.
        if (pinned.benchedUntil > Date.now()) throw new UpstreamOutcome('blocked', platform, `${pinned.label}, which this request is bound to, is benched`);
        candidates = [pinned];
      } else if (proxies) {
        candidates = proxies.usable(failed, Date.now());
        if (candidates.length === 0) throw new UpstreamOutcome('blocked', platform, `no proxy for ${platform} is usable now (${lastProblem})`);
      }
      let response: UpstreamResponse;
      try {
        // Every attempt takes its turn in the pace of the egress (proxy or own address) whose
        // turn comes first (an `overloaded` refusal ends the request).
        const waitFrom = Date.now();
        let done: (() => void) | null = null;
        if (this.#pacer) {
          const slot = await this.#pacer.take(platform, candidates.length > 0 ? candidates.map((candidate) => candidate.label) : [DIRECT], deadline, signal);
          done = slot.release;
          proxy = candidates.find((candidate) => candidate.label === slot.egress) ?? null;
        } else {
          // Without a pace, the proxies in turn (usable() starts from the next one).
          proxy = candidates[0] ?? null;
        }
        const askedAt = Date.now();
        queuedMs += askedAt - waitFrom;
        if (deadline - askedAt < MIN_ATTEMPT_MS) {
          // The turn came too late to ask anything (a negative time would also be refused by
          // the timers as a programming error, and then taken for the platform's).
          done?.();
          break;
        }
        asked = true;
        try {
          response = await this.#attempt(platform, origin, request, signal, deadline - askedAt, proxy);
        } finally {
          askedMs += Date.now() - askedAt;
          done?.();
        }
        // A block the platform recognises whatever the status (shopfront's captcha page may come
        // with a 503) ends the request before a 5xx could be retried.
        const block = request.block?.(response) ?? null;
        if (block !== null) throw new UpstreamOutcome('blocked', platform, block);
        if (response.status === 429) throw new UpstreamOutcome('blocked', platform, 'HTTP 429 Too Many Requests');
        if (response.status >= 500) throw new Transient(`HTTP ${response.status}`);
        // Every platform's README ("Signals") counts an empty 200 as a transient failure.
        if (response.status === 200 && response.body.trim() === '') throw new Transient('empty 200 body');
      } catch (error) {
        if (error instanceof UpstreamOutcome) {
          // With a pool a block is the address's, not the request's: bench the proxy, move on.
          if (proxy && error.kind === 'blocked') {
            proxy.bench(Date.now());
            failed.add(proxy);
            lastProblem = `${proxy.label}: ${error.message}`;
            if (failed.size <= PROXY_SWITCHES && !pinned) continue;
            throw new UpstreamOutcome('blocked', platform, `blocked through ${failed.size} proxies (last: ${lastProblem})`, { cause: error });
          }
          throw error;
        }
        if (error instanceof undici().errors.ResponseExceededMaxSizeError) {
          throw new UpstreamOutcome('unrecognised', platform, `response larger than undici's size limit`, { cause: error });
        }
        if (error instanceof Transient) {
          lastProblem = error.message;
          platformFailed = true;
          continue;
        }
        if (signal.aborted) {
          lastProblem = 'the time budget ran out';
          break;
        }
        const problem = transportProblem(error);
        if (problem === null) throw error;
        const name = (error as Error)?.name;
        // An attempt cut short at the budget's end (its abort, or a timeout bounded by what was
        // left of the budget) says nothing yet of whose the delay was.
        if (name !== 'AbortError' && name !== 'TimeoutError' && Date.now() < deadline) platformFailed = true;
        lastProblem = proxy ? `${proxy.label}: ${problem}` : problem;
        if (proxy && !pinned && failed.size < PROXY_SWITCHES && isProxyFailure(error)) {
          // The proxy could not be reached or refused the tunnel: benched, another one is tried.
          proxy.bench(Date.now());
          failed.add(proxy);
        }
        continue;
      }
      proxy?.succeeded();
      const step = hop(response);
      if (step.next !== undefined || request.classify === undefined) return step;
      // The platform's rules, outside the transport's error handling: whatever they throw is theirs.
      try {
        request.classify(step.response);
      } catch (error) {
        if (!(error instanceof UpstreamOutcome && error.kind === 'transient')) throw error;
        lastProblem = error.message;
        continue;
      }
      return step;
    }
    if (!asked || (!platformFailed && queuedMs > askedMs)) {
      throw new UpstreamOutcome('overloaded', platform, `the time budget ran out waiting for ${platform}'s turn in the pace (${queuedMs} ms waiting, ${askedMs} ms asking)`);
    }
    throw new UpstreamOutcome('transient', platform, `upstream unavailable: ${lastProblem}`);
  }

  async #attempt(platform: string, origin: string, request: UpstreamRequest, signal: AbortSignal, remaining: number, proxy: Proxy | null): Promise<UpstreamResponse> {
    const headers: Record<string, string> = { ...(request.kind === 'page' ? PAGE_HEADERS : API_HEADERS), ...lowerCase(request.headers ?? {}) };
    // A new attempt means the previous answer of this call was discarded (retried or a redirect
    // followed): its bytes go back.
    const charge = (request as ChargedRequest)[CHARGE];
    if (charge) {
      charge.lease.give(charge.bytes);
      charge.bytes = 0;
    }
    const attemptDeadline = Date.now() + remaining;
    // The attempt ends when the request's signal aborts or its time is up. Its own controller and
    // a timer cleared when it ends: AbortSignal.any with AbortSignal.timeout cost 7.8 µs an
    // attempt against 1.5 µs, and left the timer armed for the rest of the budget.
    const controller = new AbortController();
    const attemptSignal = controller.signal;
    const forward = () => controller.abort(signal.reason);
    if (signal.aborted) forward();
    else signal.addEventListener('abort', forward, { once: true });
    const timer = setTimeout(() => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), Math.min(remaining, 2 ** 31 - 1));
    try {
      const response = await (proxy ? proxy.dispatcher : this.#pool(origin)).request({
        origin,
        path: request.path,
        method: request.method ?? 'GET',
        headers,
        body: request.body,
        signal: attemptSignal,
        headersTimeout: Math.min(this.#options.headersTimeoutMs, remaining),
        bodyTimeout: Math.min(this.#options.bodyTimeoutMs, remaining),
      });
      const responseHeaders: Record<string, string> = {};
      for (const [name, value] of Object.entries(response.headers)) {
        if (value !== undefined) responseHeaders[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
      }
      const serverError = response.statusCode >= 500;
      if (response.statusCode >= 300 && response.statusCode !== 304 && (response.statusCode < 400 || (serverError && !request.block) || response.statusCode === 429)) {
        // Redirects, 429s, and server errors in which the platform looks for no block: the body
        // is not needed.
        await response.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
        return { status: response.statusCode, headers: responseHeaders, body: '', path: request.path, ...(proxy ? { via: proxy.label } : {}) };
      }
      const body = await readBody({ cap: this.#options.maxBodyBytes, memoryWaitMs: this.#options.memoryWaitMs, memory: this.#memory }, platform, response.body, responseHeaders['content-encoding'], responseHeaders['content-length'], charge, attemptSignal, attemptDeadline);
      return { status: response.statusCode, headers: responseHeaders, body, path: request.path, ...(proxy ? { via: proxy.label } : {}) };
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', forward);
    }
  }
}
