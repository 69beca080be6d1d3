// The socialnet session (README.md): an lsd token plus the doc ids
// of the persisted GraphQL queries, both read from pages, never hard-coded.
//
// One session serves every request on every node. It lives in the service's shared state
// (`context.shared`: Redis on a cluster), or in a `SessionStore` given to the extractors, or
// else in this process (`MemorySessionStore`). `Sessions` decides when to reuse, replace or
// fetch one:
// - a content page that carries a complete session replaces the stored one (newest values win,
//   which is how rotated doc ids are picked up between the pages of a listing);
// - a request that needs a session and finds none (or one older than 15 minutes) loads the
//   home page `GET /`; concurrent requests share that one load, on every node (`shared.once`);
// - a stale-session error discards the session that failed and loads a new one, once for
//   all the requests that failed with that same session.
import type { ScannedPage, SjsContent } from './html.ts';
import { unrecognised } from './pages.ts';
import { PLATFORM } from './urls.ts';
import { UpstreamOutcome } from '../../upstream/outcomes.ts';
import type { Upstream } from '../../upstream/types.ts';
import type { SharedState } from '../../endpoints/types.ts';

/** Friendly names of the three persisted queries the extractor sends. */
export const QUERY_NAMES = {
  timeline: 'ProfileCometTimelineFeedRefetchQuery',
  reels: 'ProfileCometAppCollectionReelsRendererPaginationQuery',
  replies: 'Depth1CommentsListPaginationQuery',
} as const;

export type QueryName = (typeof QUERY_NAMES)[keyof typeof QUERY_NAMES];

export interface SocialnetSession {
  /** The lsd token. */
  lsd: string;
  /** Doc id by friendly name, for the three queries of `QUERY_NAMES`. */
  docIds: Record<QueryName, string>;
  /** When the page that carried it was received (epoch ms). */
  obtainedAt: number;
  /**
   * The proxy the page that carried it came through (UpstreamResponse.via): the session's
   * queries go through it alone. Absent without proxies.
   */
  via?: string;
}

/** Where the shared session lives. Values must survive a JSON round trip. */
export interface SessionStore {
  get(): Promise<SocialnetSession | null>;
  set(session: SocialnetSession | null): Promise<void>;
}

export class MemorySessionStore implements SessionStore {
  #session: SocialnetSession | null = null;

  async get(): Promise<SocialnetSession | null> {
    return this.#session;
  }

  async set(session: SocialnetSession | null): Promise<void> {
    this.#session = session;
  }
}

const LSD = /^[A-Za-z0-9_-]{6,64}$/;

export interface PageSession {
  lsd: string | null;
  /** The `CometRelayDocIds` map, or null when the page has no such define. */
  docIds: Record<string, unknown> | null;
}

/** The lsd of `__eqmc` (key `l`) and the `CometRelayDocIds` ids of a page, as found. */
export function readPageSession(page: ScannedPage, sjs: SjsContent): PageSession {
  let lsd: string | null = null;
  if (page.eqmc !== null) {
    try {
      const eqmc = JSON.parse(page.eqmc) as unknown;
      const value = eqmc !== null && typeof eqmc === 'object' ? (eqmc as Record<string, unknown>).l : undefined;
      if (typeof value === 'string' && LSD.test(value)) lsd = value;
    } catch {
      // not JSON: no lsd
    }
  }
  const define = sjs.defines.get('CometRelayDocIds');
  const ids = define !== null && typeof define === 'object' ? (define as Record<string, unknown>).ids : undefined;
  const docIds = ids !== null && typeof ids === 'object' && !Array.isArray(ids) ? (ids as Record<string, unknown>) : null;
  return { lsd, docIds };
}

/** The doc ids of the three queries, or the name of the first one missing. */
export function pickDocIds(docIds: Record<string, unknown>): Record<QueryName, string> | { missing: string } {
  const picked: Partial<Record<QueryName, string>> = {};
  for (const name of Object.values(QUERY_NAMES)) {
    const id = docIds[name];
    if (typeof id !== 'string' || id === '') return { missing: name };
    picked[name] = id;
  }
  return picked as Record<QueryName, string>;
}

/** A complete session from a page, or null when the page lacks part of one. */
export function sessionFromPage(found: PageSession, now: number): SocialnetSession | null {
  if (found.lsd === null || found.docIds === null) return null;
  const docIds = pickDocIds(found.docIds);
  return 'missing' in docIds ? null : { lsd: found.lsd, docIds, obtainedAt: now };
}

/** Identity of a session value, to tell whether the stored one is the one that failed. */
const keyOf = (session: SocialnetSession): string => `${session.obtainedAt}|${session.lsd}|${JSON.stringify(session.docIds)}`;

export interface SessionsOptions {
  /** How long a session is reused (at most 15 minutes, the default). */
  maxAgeMs?: number | undefined;
  now?: () => number;
}

/** What a session load needs from the request that starts it. */
export interface SessionContext {
  upstream: Upstream;
  signal: AbortSignal;
  deadline: number;
  /** The service's shared state, where the session lives when no store was given. */
  shared?: SharedState | undefined;
}

/** The session as a value of the shared state. */
const SHARED_NAME = 'session';

/** Loads the home page and reads its session; injected so that `Sessions` stays free of page rules. */
export type HomeLoader = (context: SessionContext) => Promise<SocialnetSession>;

const REMEMBERED_REFRESHES = 8;

export class Sessions {
  /** The store given, else the shared state of each request, else this process's memory. */
  readonly #store: SessionStore | null;
  readonly #memory = new MemorySessionStore();
  readonly #loadHome: HomeLoader;
  readonly #maxAgeMs: number;
  readonly #now: () => number;
  /** The home-page load in flight, shared by every request that waits for a session. */
  #flight: Promise<SocialnetSession> | null = null;
  /** Refreshes by the key of the session they replace: one per stale session. */
  readonly #refreshes = new Map<string, Promise<SocialnetSession>>();

  constructor(store: SessionStore | null, loadHome: HomeLoader, options: SessionsOptions = {}) {
    this.#store = store;
    this.#loadHome = loadHome;
    this.#maxAgeMs = options.maxAgeMs ?? 15 * 60 * 1000;
    this.#now = options.now ?? Date.now;
  }

  #storeOf(context: SessionContext): SessionStore {
    if (this.#store) return this.#store;
    const shared = context.shared;
    if (!shared) return this.#memory;
    return {
      get: async () => (await shared.get(SHARED_NAME)) as SocialnetSession | null,
      set: (session) => shared.set(SHARED_NAME, session, this.#maxAgeMs),
    };
  }

  #usable(session: SocialnetSession | null): session is SocialnetSession {
    if (session === null) return false;
    const age = this.#now() - session.obtainedAt;
    return age >= 0 && age < this.#maxAgeMs;
  }

  /** The stored session while it is usable, else a new one from the home page. */
  async get(context: SessionContext): Promise<SocialnetSession> {
    const stored = await this.#storeOf(context).get();
    if (this.#usable(stored)) return stored;
    return this.#load(context);
  }

  /** A session just read from a content page replaces the stored one. */
  async offer(session: SocialnetSession, context: SessionContext): Promise<void> {
    await this.#storeOf(context).set(session);
  }

  /**
   * After a stale-session error with `stale`: the stored session when another page or request
   * has already replaced it, else a new one from the home page. Every request that failed with
   * the same session shares one refresh.
   */
  refresh(stale: SocialnetSession, context: SessionContext): Promise<SocialnetSession> {
    const key = keyOf(stale);
    const known = this.#refreshes.get(key);
    if (known !== undefined) return known;
    const store = this.#storeOf(context);
    const refresh = (async () => {
      const stored = await store.get();
      if (stored !== null && keyOf(stored) !== key && this.#usable(stored)) return stored;
      if (stored !== null && keyOf(stored) === key) await store.set(null);
      return this.#load(context);
    })();
    this.#refreshes.set(key, refresh);
    // A failed refresh is forgotten so that a later request may try again.
    refresh.catch(() => this.#refreshes.delete(key));
    while (this.#refreshes.size > REMEMBERED_REFRESHES) {
      const oldest = this.#refreshes.keys().next().value;
      if (oldest === undefined) break;
      this.#refreshes.delete(oldest);
    }
    return refresh;
  }

  /**
   * One home-page load at a time. A request that joined another's load and saw it fail as
   * transient (which may be that request's own time budget running out) tries once with its own.
   */
  async #load(context: SessionContext): Promise<SocialnetSession> {
    if (this.#flight !== null) {
      try {
        return await this.#flight;
      } catch (error) {
        if (!(error instanceof UpstreamOutcome && error.kind === 'transient') || context.signal.aborted) throw error;
        if (this.#flight !== null) return this.#flight;
      }
    }
    const flight = (async () => {
      // One load for the whole cluster: requests on other nodes wait for this one's session.
      const { shared } = context;
      const session = shared ? await shared.once('home-page', context.deadline, () => this.#loadHome(context)) : await this.#loadHome(context);
      await this.#storeOf(context).set(session);
      return session;
    })();
    this.#flight = flight;
    try {
      return await flight;
    } finally {
      if (this.#flight === flight) this.#flight = null;
    }
  }
}

/** A home page without lsd or doc ids is a block; one whose map lacks a query is unrecognised. */
export function homeSession(found: PageSession, now: number): SocialnetSession {
  if (found.lsd === null) throw new UpstreamOutcome('blocked', PLATFORM, 'the home page carries no lsd token');
  if (found.docIds === null) throw new UpstreamOutcome('blocked', PLATFORM, 'the home page carries no CometRelayDocIds');
  const docIds = pickDocIds(found.docIds);
  if ('missing' in docIds) throw unrecognised(`CometRelayDocIds of the home page lacks ${docIds.missing}`);
  return { lsd: found.lsd, docIds, obtainedAt: now };
}
