// Admission to API routes, the first thing their requests pass: the caller (team and key) from
// a valid key, or 401, with failing attempts limited per address; then the team's rolling rate
// limit, with the x-ratelimit-* headers on every answer that passed it, or 429.
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { lookupGate, teamWindow } from '../../store/gate.ts';
import type { Admission, Gate, Stores, Team } from '../../store/types.ts';
import { addressKey } from '../connections.ts';
import { ApiError } from '../errors.ts';
import { hashKey, isTestKey, looksLikeKey, sameHash } from '../keys.ts';
import { everyWhileOpen } from './maintenance.ts';
import { RATE_WINDOW_MS, rateHeaders, rateLimited } from './rate-limit.ts';

/** Failed authentications allowed per client address per window; further failing ones get 429. */
export const AUTH_FAILURES_PER_WINDOW = 30;

export interface Caller {
  team: Team;
  keyId: string;
  keyName: string;
  /** A test-mode key (`psk_test_`): its scrapes go to the built-in sandbox, free, and skip the cache. */
  test: boolean;
}

/**
 * Remembers when each key was last used and writes the times in batches, so that a request
 * never waits on a write for it.
 */
export class KeyUseRecorder {
  /** Key id -> epoch ms of its latest use; formatted when written (a date string per request cost 0.46 µs). */
  readonly #pending = new Map<string, number>();
  readonly #stores: Stores;

  constructor(stores: Stores) {
    this.#stores = stores;
  }

  touch(keyId: string, at: number): void {
    this.#pending.set(keyId, at);
  }

  async flush(): Promise<void> {
    if (this.#pending.size === 0) return;
    const batch = new Map([...this.#pending].map(([keyId, at]) => [keyId, new Date(at).toISOString()]));
    this.#pending.clear();
    await this.#stores.accounts.recordKeyUse(batch);
  }
}

/** The key a request presents: `x-api-key` or `Authorization: Bearer`; both must agree. */
export function presentedKey(headers: IncomingHttpHeaders): { key: string | null; conflict: boolean } {
  const header = headers['x-api-key'];
  const fromHeader = typeof header === 'string' && header.trim() !== '' ? header.trim() : null;
  const authorization = headers.authorization;
  let fromBearer: string | null = null;
  if (typeof authorization === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match) fromBearer = match[1] ?? null;
  }
  if (fromHeader !== null && fromBearer !== null && fromHeader !== fromBearer) return { key: null, conflict: true };
  return { key: fromHeader ?? fromBearer, conflict: false };
}

/** The header of a request the service makes in-process for one of its keys, counted as any (the dashboard's try-it panel). */
const INTERNAL_CALLER = 'x-internal-caller';
/** The header of an in-process request made under an admission already counted (an MCP tool call). */
const HANDED_ADMISSION = 'x-internal-admission';

/**
 * The door of API requests: the admission of a request with a valid key, counted against its
 * team's rate limit. Only failing attempts are limited per client address (`request.ip`, which
 * is the forwarded address behind a trusted proxy): a valid key is never refused by that limit,
 * so that one client's bad key cannot lock out the others behind the same NAT, proxy or load
 * balancer. A valid key costs what the gate costs (a key lookup and a limiter call, or one Redis
 * call on a cluster).
 *
 * In-process requests carry a secret that never leaves the process: the dashboard's as one of
 * the team's keys (counted), an MCP tool call's under the admission of the POST that asked for
 * it (counted already, so not again).
 */
export class Door {
  readonly keyUse: KeyUseRecorder;
  readonly #stores: Stores;
  readonly #gate: Gate;
  readonly #testMode: boolean;
  readonly #secret = randomBytes(32).toString('hex');
  /** The admissions handed to in-process requests, while those run. */
  readonly #handed = new Map<string, Admission>();
  #handedSeq = 0;
  /** Admissions made before Fastify saw the request (edge-hits.ts), taken by its auth hook. */
  readonly #early = new WeakMap<IncomingMessage, Admission>();

  /** `testMode`: whether test-mode keys are served (else they get 403). */
  constructor(stores: Stores, testMode = false) {
    this.#stores = stores;
    this.#gate = stores.gate ?? lookupGate(stores);
    this.#testMode = testMode;
    this.keyUse = new KeyUseRecorder(stores);
  }

  /** The headers of an in-process request made as the key `keyId`, counted as any request. */
  asKey(keyId: string): Record<string, string> {
    return { [INTERNAL_CALLER]: `${this.#secret}.${keyId}` };
  }

  /** Runs `call` with the headers of in-process requests admitted as `admission` again, without counting them. */
  async handing<T>(admission: Admission, call: (headers: Record<string, string>) => Promise<T>): Promise<T> {
    const id = String(++this.#handedSeq);
    this.#handed.set(id, admission);
    try {
      return await call({ [HANDED_ADMISSION]: `${this.#secret}.${id}` });
    } finally {
      this.#handed.delete(id);
    }
  }

  /**
   * The admission of the request, counted against its team's rolling limit (`count` times: the
   * messages of an MCP batch); throws the API's 401 (or 429 past the address's failures). Not
   * yet enforced: see `enforce`.
   */
  async admit(request: FastifyRequest, now: number, count = 1): Promise<Admission> {
    let admission = await this.#admission(request, now);
    for (let more = count - 1; more > 0 && admission.decision.allowed; more--) {
      admission = { ...admission, decision: await this.#stores.limiter.hit(teamWindow(admission), admission.team.rateLimit, RATE_WINDOW_MS, now) };
    }
    return admission;
  }

  /**
   * The admission of a key presented in a request's headers, counted against its team's limit
   * (the last use of the key noted); null for a key that is not an active one (nothing counted).
   */
  async admitKey(key: string, now: number): Promise<Admission | null> {
    if (!looksLikeKey(key)) return null;
    const hash = hashKey(key);
    const admitted = await this.#gate.admit(hash, RATE_WINDOW_MS, now);
    if (admitted === null || !sameHash(admitted.hash, hash)) return null;
    this.keyUse.touch(admitted.key.id, now);
    return admitted;
  }

  /** Hands the admission made for `raw` before Fastify saw it to the request's auth hook, which counts it no more. */
  handOver(raw: IncomingMessage, admission: Admission): void {
    this.#early.set(raw, admission);
  }

  /** Sets the x-ratelimit-* headers of an admission; throws 403 (a test key, test mode off) or 429. */
  enforce(request: FastifyRequest, reply: FastifyReply, { team, key, decision }: Admission): void {
    request.state.team = team.id;
    rateHeaders(reply, decision);
    if (isTestKey(key) && !this.#testMode) {
      throw new ApiError('FORBIDDEN', 'Test mode is off on this service: test keys (psk_test_) are refused. Use a live key, or ask the operator to start the service with TEST_MODE=on.');
    }
    if (!decision.allowed) throw rateLimited(decision, `Rate limit of ${decision.limit} requests per 60 seconds exceeded.`);
  }

  async #admission(request: FastifyRequest, now: number): Promise<Admission> {
    const early = this.#early.get(request.raw);
    if (early) return early;
    const { key, conflict } = presentedKey(request.headers);
    const handed = key === null ? this.#internal(request.headers[HANDED_ADMISSION]) : null;
    const asKey = key === null ? this.#internal(request.headers[INTERNAL_CALLER]) : null;
    if (handed !== null) {
      const admission = this.#handed.get(handed);
      if (admission) return admission;
    } else if (asKey !== null) {
      const hash = (await this.#stores.accounts.activeKeyHash(asKey)) ?? '';
      const admitted = hash === '' ? null : await this.#gate.admit(hash, RATE_WINDOW_MS, now);
      if (admitted !== null && sameHash(admitted.hash, hash)) {
        this.keyUse.touch(admitted.key.id, now);
        return admitted;
      }
    } else if (!conflict && key !== null) {
      const admitted = await this.admitKey(key, now);
      if (admitted !== null) return admitted;
    }
    return refuse(request, this.#stores, now, key, conflict);
  }

  /** What follows the secret in an in-process header (`<secret>.<what>`), or null. */
  #internal(header: string | string[] | undefined): string | null {
    if (typeof header !== 'string') return null;
    const dot = header.indexOf('.');
    return dot > 0 && sameHash(header.slice(0, dot), this.#secret) ? header.slice(dot + 1) : null;
  }
}

/** Refuses a request without a valid key: 401, or 429 once its address has failed too often. */
async function refuse(request: FastifyRequest, stores: Stores, now: number, key: string | null, conflict: boolean): Promise<never> {
  // A failure counts only while the address is under its limit; past it, failures are 429
  // until the rolling window frees (the refused ones are not counted, so it does free).
  // Per IPv4 address or IPv6 /64: a client commonly holds a whole /64 and could rotate in it.
  const failures = await stores.limiter.hit(`authfail:${addressKey(request.ip)}`, AUTH_FAILURES_PER_WINDOW, RATE_WINDOW_MS, now);
  if (!failures.allowed) throw rateLimited(failures, 'Too many failed authentication attempts from this address.');
  const message = conflict
    ? 'The x-api-key and Authorization headers carry different keys.'
    : key === null
      ? 'An API key is required: send it in the x-api-key header or as Authorization: Bearer <key>.'
      : 'The API key is invalid or has been revoked.';
  throw new ApiError('UNAUTHORIZED', message);
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller; set on API routes before their query is read. */
    caller: Caller;
  }
}

export interface AuthOptions {
  door: Door;
  now: () => number;
  /** How often key last-use times are written. */
  keyUseFlushMs: number;
}

const auth: FastifyPluginCallback<AuthOptions> = (app, { door, now, keyUseFlushMs }, done) => {
  everyWhileOpen(app, keyUseFlushMs, () => door.keyUse.flush(), 'key use flush');
  app.addHook('onClose', () => door.keyUse.flush());
  app.decorateRequest('caller', null as unknown as Caller);
  app.addHook('onRequest', async (request, reply) => {
    const admission = await door.admit(request, now());
    const { team, key } = admission;
    request.caller = { team, keyId: key.id, keyName: key.name, test: isTestKey(key) };
    door.enforce(request, reply, admission);
  });
  done();
};

/** Authenticates and rate-limits every route of the context it is registered in. */
export const authPlugin = fp(auth, { name: 'auth', dependencies: ['metrics'] });
