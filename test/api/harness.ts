// An in-process service for API tests: the real app, real stores, and test extractors plugged
// in through the extractor interface. Each test extractor answers with the contract's expected
// data for its endpoint unless a test scripts another behaviour.
//
// The stores are the embedded SQLite store in a temporary directory, or, when TEST_STORES is
// `scale-out` (the files under test/scale-out/ set it), PostgreSQL and Redis: a schema and a key
// prefix of their own per harness, in a database of the test process dropped at its end.
import type { Upstream } from '../../src/upstream/types.ts';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { endpoints } from '../../src/endpoints/index.ts';
import type { EndpointDeclaration, ExtractRequest, ExtractResult, Extractor, UpstreamPosition } from '../../src/endpoints/types.ts';
import { buildApp, type AppOptions } from '../../src/server/app.ts';
import { generateKey } from '../../src/server/keys.ts';
import { openSqliteStores, type SqliteStoreOptions } from '../../src/store/sqlite/index.ts';
import type { Stores, Team } from '../../src/store/types.ts';
import { openPostgresStores } from '../../src/store/postgres/index.ts';
import { withRedis } from '../../src/store/redis/index.ts';
import { after } from 'node:test';
import { testBackends, type TestBackends } from '../support/backends.ts';

/** Which store set the harness runs on: `embedded` (the default) or `scale-out`. */
export const STORE_SET = process.env.TEST_STORES === 'scale-out' ? 'scale-out' : 'embedded';

let backends: Promise<TestBackends> | undefined;
after(async () => {
  if (backends) await (await backends).drop();
});

/** Opens stores over the same data (as a second process would, e.g. the CLI); `redisPrefix` and `databaseUrl` on the scale-out set. */
type Opener = (() => Promise<Stores>) & { redisPrefix?: string; databaseUrl?: string };

async function storeSet(dir: string, set: 'embedded' | 'scale-out', sqlite: Partial<SqliteStoreOptions> | undefined): Promise<Opener> {
  // Options of the SQLite store are for tests of the embedded set alone.
  if (set === 'embedded' || sqlite) return async () => openSqliteStores({ ...sqlite, path: join(dir, 'service.db') });
  backends ??= testBackends();
  const b = await backends;
  const url = await b.freshDatabaseUrl();
  const prefix = b.freshPrefix();
  let migrated = false;
  const open: Opener = async () => {
    const stores = await openPostgresStores({ url, schema: migrated ? 'check' : 'migrate' });
    migrated = true;
    return withRedis(stores, { url: b.redisUrl, prefix });
  };
  open.redisPrefix = prefix;
  open.databaseUrl = url;
  return open;
}

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'upstream');

/** The expected-data fixture that each endpoint's test extractor answers with. */
export const FIXTURE_OF: Record<string, string> = {
  'socialnet.profile.posts': 'socialnet-expected-profile-posts.json',
  'socialnet.profile.reels': 'socialnet-expected-reels.json',
  'socialnet.post.comment.replies': 'socialnet-expected-replies.json',
  'socialnet.profile': 'socialnet-expected-profile.json',
  'snapmsg.profile': 'snapmsg-expected-profile.json',
  'snapmsg.spotlight.comments': 'snapmsg-expected-comments-page.json',
  'linkpage-a.profile': 'linkpage-a-expected-profile.json',
  'linkpage-b.page': 'linkpage-b-expected-page.json',
  'shopfront.shop': 'shopfront-expected-shop.json',
};

export const readFixture = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(FIXTURES, name), 'utf8')) as Record<string, unknown>;

/** Splits an expected-data fixture into what an extractor returns: data without paging, and the next position. */
export function fixtureResult(endpoint: EndpointDeclaration): ExtractResult {
  const { paging, ...data } = readFixture(FIXTURE_OF[endpoint.id] ?? '');
  let next: UpstreamPosition | null = null;
  if (endpoint.paging && paging && typeof paging === 'object') {
    const token = (paging as Record<string, unknown>)[endpoint.paging.field];
    if (token && typeof token === 'object') next = (token as { $position: UpstreamPosition }).$position;
  }
  return { data, next };
}

/** An extractor as a test writes it; `upstream` is the one the app binds (AppOptions.upstream). */
export type Script = (endpoint: EndpointDeclaration, request: ExtractRequest, signal: AbortSignal, upstream: Upstream) => Promise<ExtractResult>;

export const byId = (id: string): EndpointDeclaration => {
  const endpoint = endpoints.find((candidate) => candidate.id === id);
  if (!endpoint) throw new Error(`no endpoint ${id}`);
  return endpoint;
};

/** A valid query string for an endpoint, from its declared example. */
export const exampleQuery = (endpoint: EndpointDeclaration, extra: Record<string, string> = {}): string =>
  new URLSearchParams({ ...endpoint.exampleQuery, ...extra }).toString();

export interface Harness {
  app: FastifyInstance;
  stores: Stores;
  dir: string;
  /** Stores over the same data, as another process (the operator CLI, another node) opens them. */
  openAnother: (() => Promise<Stores>) & { redisPrefix?: string; databaseUrl?: string };
  team: Team;
  key: string;
  keyId: string;
  /** Every extractor call, in order. */
  calls: { endpoint: string; request: ExtractRequest }[];
  /** Replace to script extractor behaviour; the default answers with the fixture. */
  script: Script;
  /** The test clock (epoch ms); move it to age caches and cursors. */
  clock: { now: number };
  get(path: string, headers?: Record<string, string>, extra?: Partial<InjectOptions>): ReturnType<FastifyInstance['inject']>;
  newTeam(credits: number, rateLimit?: number): Promise<{ team: Team; key: string; keyId: string }>;
  balance(teamId?: string): Promise<number>;
  ledgerSum(teamId?: string): Promise<number>;
  close(): Promise<void>;
}

export const defaultScript: Script = async (endpoint) => fixtureResult(endpoint);

export interface HarnessOptions {
  credits?: number;
  rateLimit?: number;
  /** Endpoints that get no extractor (answer 501). */
  without?: string[];
  app?: Partial<AppOptions>;
  /** Wrap the stores, e.g. to make them fail. */
  wrapStores?: (stores: Stores) => Stores;
  /** Options of the SQLite store, e.g. a bound on its size (the harness then runs on SQLite). */
  sqlite?: Partial<SqliteStoreOptions>;
  /** Another node: this harness opens the stores of `node` (its own app, extractors and clock). */
  nodeOf?: Harness;
  /** The store set, when not the one TEST_STORES names. */
  set?: 'embedded' | 'scale-out';
  /** Opens the stores instead (e.g. on backends a test starts and stops itself). */
  open?: () => Promise<Stores>;
  /** Called with the app before it is ready (to add a hook, say). */
  beforeReady?: (app: FastifyInstance) => void;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'api-test-'));
  const openAnother = options.open ?? (options.nodeOf ? options.nodeOf.openAnother : await storeSet(dir, options.set ?? STORE_SET, options.sqlite));
  const realStores = await openAnother();
  const stores = options.wrapStores ? options.wrapStores(realStores) : realStores;
  const clock = { now: Date.now() };
  const harness = { calls: [], script: defaultScript, clock } as unknown as Harness;
  const extractorFor = (endpoint: EndpointDeclaration): Extractor => async (request, context) => {
    harness.calls.push({ endpoint: endpoint.id, request });
    return harness.script(endpoint, request, context.signal, context.upstream);
  };
  const declarations = endpoints.map((endpoint) =>
    options.without?.includes(endpoint.id) ? { ...endpoint, extractor: undefined } : { ...endpoint, extractor: extractorFor(endpoint) },
  );
  const app = await buildApp({
    stores,
    endpoints: declarations,
    cursorSecret: 'test-cursor-secret-0123456789abcdef',
    now: () => clock.now,
    // The tests read the counters in-process.
    openMetrics: true,
    ...options.app,
  });
  options.beforeReady?.(app);
  await app.ready();

  const newTeam = async (credits: number, rateLimit = 100) => {
    const team = await realStores.accounts.createTeam({ name: `team-${Math.random().toString(36).slice(2, 8)}`, credits, rateLimit });
    const generated = generateKey();
    const record = await realStores.accounts.createKey({ teamId: team.id, name: 'test', hash: generated.hash, prefix: generated.prefix, last4: generated.last4 });
    return { team, key: generated.key, keyId: record.id };
  };
  const first = options.nodeOf
    ? { team: options.nodeOf.team, key: options.nodeOf.key, keyId: options.nodeOf.keyId }
    : await newTeam(options.credits ?? 100, options.rateLimit ?? 1000);
  Object.assign(harness, {
    app,
    stores: realStores,
    dir,
    openAnother,
    ...first,
    newTeam,
    get: (path: string, headers: Record<string, string> = { 'x-api-key': first.key }, extra: Partial<InjectOptions> = {}) =>
      app.inject({ method: 'GET', url: path, headers, ...extra }),
    balance: async (teamId = first.team.id) => (await realStores.ledger.balance(teamId)) ?? Number.NaN,
    ledgerSum: async (teamId = first.team.id) => (await realStores.ledger.entries(teamId, 1_000_000)).reduce((sum, entry) => sum + entry.amount, 0),
    close: async () => {
      await app.close();
      await realStores.close();
      rmSync(dir, { recursive: true, force: true });
    },
  });
  return harness;
}
