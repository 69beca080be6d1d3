// Admission to API routes, the first thing their requests pass: the caller (team and key) from
// a valid key, or 401, with failing attempts limited per address; then the team's rolling rate
// limit, with the x-ratelimit-* headers on every answer that passed it, or 429.
import type { FastifyPluginCallback, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { lookupGate } from '../../store/gate.ts';
import type { Admission, Gate, Stores, Team } from '../../store/types.ts';
import { addressKey } from '../connections.ts';
import { ApiError } from '../errors.ts';
import { hashKey, isTestKey, looksLikeKey, sameHash } from '../keys.ts';
import { everyWhileOpen } from './maintenance.ts';
import { RATE_WINDOW_MS, rateHeaders, rateLimited } from './rate-limit.ts';

/** The header of a request the service makes in-process for one of its keys (the dashboard's try-it panel). */
export const INTERNAL_CALLER = 'x-internal-caller';

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
  readonly #pending = new Map<string, string>();
  readonly #stores: Stores;

  constructor(stores: Stores) {
    this.#stores = stores;
  }

  touch(keyId: string, at: string): void {
    this.#pending.set(keyId, at);
  }

  async flush(): Promise<void> {
    if (this.#pending.size === 0) return;
    const batch = new Map(this.#pending);
    this.#pending.clear();
    await this.#stores.accounts.recordKeyUse(batch);
  }
}

/** The key the request presents: `x-api-key` or `Authorization: Bearer`; both must agree. */
function presentedKey(request: FastifyRequest): { key: string | null; conflict: boolean } {
  const header = request.headers['x-api-key'];
  const fromHeader = typeof header === 'string' && header.trim() !== '' ? header.trim() : null;
  const authorization = request.headers.authorization;
  let fromBearer: string | null = null;
  if (typeof authorization === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match) fromBearer = match[1] ?? null;
  }
  if (fromHeader !== null && fromBearer !== null && fromHeader !== fromBearer) return { key: null, conflict: true };
  return { key: fromHeader ?? fromBearer, conflict: false };
}

/**
 * The admission of a request with a valid key, counted against its team's rate limit. Only
 * failing attempts are limited per client address (`request.ip`, which is the forwarded address
 * behind a trusted proxy): a valid key is never refused by that limit, so that one client's bad
 * key cannot lock out the others behind the same NAT, proxy or load balancer. A valid key costs
 * what the gate costs (a key lookup and a limiter call, or one Redis call on a cluster).
 */
async function admit(request: FastifyRequest, stores: Stores, gate: Gate, keyUse: KeyUseRecorder, now: number, internal: string | undefined): Promise<Admission> {
  const { key, conflict } = presentedKey(request);
  let admitted: Admission | null = null;
  let hash = '';
  const asKey = request.headers[INTERNAL_CALLER];
  if (internal !== undefined && typeof asKey === 'string' && key === null) {
    // The dashboard's try-it panel, in-process: `<secret>.<key id>` (the secret never leaves the process).
    const dot = asKey.indexOf('.');
    if (dot > 0 && sameHash(asKey.slice(0, dot), internal)) hash = (await stores.accounts.activeKeyHash(asKey.slice(dot + 1))) ?? '';
    if (hash !== '') admitted = await gate.admit(hash, RATE_WINDOW_MS, now);
  } else if (!conflict && key !== null && looksLikeKey(key)) {
    hash = hashKey(key);
    admitted = await gate.admit(hash, RATE_WINDOW_MS, now);
  }
  if (admitted !== null && sameHash(admitted.hash, hash)) {
    keyUse.touch(admitted.key.id, new Date(now).toISOString());
    return admitted;
  }
  return refuse(request, stores, now, key, conflict);
}

/**
 * Checks the key a request presents without admitting the request (nothing counted against the
 * team), for a route whose calls each go through the API afterwards (MCP): the key, or the
 * API's own refusal, 401 or 429 past the address's failed attempts.
 */
export async function checkPresentedKey(request: FastifyRequest, stores: Stores, now: number): Promise<string> {
  const { key, conflict } = presentedKey(request);
  if (!conflict && key !== null && looksLikeKey(key) && (await stores.accounts.findActiveKey(hashKey(key))) !== null) return key;
  return refuse(request, stores, now, key, conflict);
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
  stores: Stores;
  now: () => number;
  /** How often key last-use times are written. */
  keyUseFlushMs: number;
  /** The secret of in-process requests made for a key (INTERNAL_CALLER); none: such requests are refused. */
  internalSecret?: string;
  /** TEST_MODE: whether test-mode keys are served (else they get 403). */
  testMode?: boolean;
}

const auth: FastifyPluginCallback<AuthOptions> = (app, { stores, now, keyUseFlushMs, internalSecret, testMode = false }, done) => {
  const keyUse = new KeyUseRecorder(stores);
  everyWhileOpen(app, keyUseFlushMs, () => keyUse.flush(), 'key use flush');
  app.addHook('onClose', () => keyUse.flush());
  const gate = stores.gate ?? lookupGate(stores);
  app.decorateRequest('caller', null as unknown as Caller);
  app.addHook('onRequest', async (request, reply) => {
    const { team, key, decision } = await admit(request, stores, gate, keyUse, now(), internalSecret);
    const test = isTestKey(key);
    request.caller = { team, keyId: key.id, keyName: key.name, test };
    request.state.team = team.id;
    rateHeaders(reply, decision);
    if (test && !testMode) {
      throw new ApiError('FORBIDDEN', 'Test mode is off on this service: test keys (psk_test_) are refused. Use a live key, or ask the operator to start the service with TEST_MODE=on.');
    }
    if (!decision.allowed) throw rateLimited(decision, `Rate limit of ${decision.limit} requests per 60 seconds exceeded.`);
  });
  done();
};

/** Authenticates and rate-limits every route of the context it is registered in. */
export const authPlugin = fp(auth, { name: 'auth', dependencies: ['metrics'] });
