// End-to-end: the service, with its real upstream client and extractors, over real HTTP
// against the sandbox upstream running on local ports.
import type { BreakerSettings } from '../../src/server/breakers.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { loadConfig, UNPACED_ENV } from '../../src/config.ts';
import { endpoints } from '../../src/endpoints/index.ts';
import { upstreamClient } from '../../src/main.ts';
import { buildApp } from '../../src/server/app.ts';
import { generateKey } from '../../src/server/keys.ts';
import { openSqliteStores } from '../../src/store/sqlite/index.ts';
import type { Stores, Team } from '../../src/store/types.ts';
import { startSandbox, type RunningSandbox, type SandboxOptions } from '../../sandbox/server.ts';

export interface Envelope {
  data: Record<string, unknown>;
  meta: { requestId: string; creditsCharged: number; creditsRemaining: number; cached: boolean; cachedAt?: string };
}
export interface ErrorEnvelope {
  error: { code: string; message: string; requestId: string; details?: { path: string; message: string }[] };
}

export interface E2e {
  base: string;
  app: FastifyInstance;
  stores: Stores;
  sandbox: RunningSandbox;
  team: Team;
  key: string;
  /** GET over real HTTP with the team's key. */
  get(path: string, query?: Record<string, string>): Promise<{ status: number; headers: Headers; body: Envelope & ErrorEnvelope }>;
  balance(): Promise<number>;
  close(): Promise<void>;
}

export interface E2eOptions {
  sandbox?: SandboxOptions;
  requestBudgetMs?: number;
  credits?: number;
  /** Environment overrides after the sandbox's, e.g. another origin for one platform. */
  env?: Record<string, string>;
  /** The platforms' circuit breakers; the production defaults otherwise. */
  breaker?: BreakerSettings;
}

export async function startE2e(options: E2eOptions = {}): Promise<E2e> {
  const sandbox = await startSandbox({ seed: 'e2e', ...options.sandbox });
  const dir = mkdtempSync(join(tmpdir(), 'e2e-'));
  const config = loadConfig({ DATA_DIR: dir, CURSOR_SECRET: 'e2e-cursor-secret-0123456789abcdef', ...sandbox.env, ...UNPACED_ENV, ...options.env });
  const stores = openSqliteStores({ path: join(dir, 'service.db') });
  const client = upstreamClient(config);
  const app = await buildApp({
    stores,
    endpoints,
    cursorSecret: config.cursorSecret,
    upstream: (platform, signal, deadline) => client.bind(platform, signal, deadline),
    requestBudgetMs: options.requestBudgetMs ?? 5_000,
    breaker: options.breaker,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const team = await stores.accounts.createTeam({ name: 'e2e', credits: options.credits ?? 100_000, rateLimit: 1_000_000 });
  const generated = generateKey();
  await stores.accounts.createKey({ teamId: team.id, name: 'e2e', hash: generated.hash, prefix: generated.prefix, last4: generated.last4 });
  return {
    base,
    app,
    stores,
    sandbox,
    team,
    key: generated.key,
    async get(path, query = {}) {
      const url = `${base}${path}${Object.keys(query).length ? `?${new URLSearchParams(query)}` : ''}`;
      const response = await fetch(url, { headers: { 'x-api-key': generated.key } });
      return { status: response.status, headers: response.headers, body: (await response.json()) as Envelope & ErrorEnvelope };
    },
    balance: async () => (await stores.ledger.balance(team.id)) ?? Number.NaN,
    async close() {
      await app.close();
      await client.close();
      await stores.close();
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
