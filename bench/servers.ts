// Child process of bench/cache-hit.ts: the full service (auth, rate limit, cache, envelope;
// real SQLite store) and a bare Fastify route serving the same JSON body, on two ports.
import '../src/gc-tuning.ts';
import Fastify from 'fastify';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { endpoints } from '../src/endpoints/index.ts';
import { webhookConfig } from '../src/config.ts';
import { buildApp } from '../src/server/app.ts';
import { logDestination } from '../src/main.ts';
import { generateKey } from '../src/server/keys.ts';
import { openSqliteStores } from '../src/store/sqlite/index.ts';

const ENDPOINT = 'linkpage-a.profile';
const dir = mkdtempSync(join(tmpdir(), 'bench-'));
const stores = openSqliteStores({ path: join(dir, 'service.db') });
// The bench fills the cache once through a fixture-backed extractor plugged in through the
// extractor interface; every measured request is then a cache hit. The fixture is read here
// rather than through the API tests' harness: that imports node:test, whose async hook (on every
// promise and handle of the process) would be measured as part of the service.
const { paging: _paging, ...fixture } = JSON.parse(readFileSync(new URL('../test/fixtures/upstream/linkpage-a-expected-profile.json', import.meta.url), 'utf8')) as Record<string, unknown>;
const declarations = endpoints.map((endpoint) => (endpoint.id === ENDPOINT ? { ...endpoint, extractor: async () => ({ data: fixture, next: null }) } : endpoint));
// As the service runs: with its webhook dispatcher polling beside the requests, and its log at
// the default level (a line per request) going where `npm run serve > file` sends it.
const app = await buildApp({
  stores,
  endpoints: declarations,
  cursorSecret: 'bench-cursor-secret-0123456789',
  webhooks: { delivery: webhookConfig({}) },
  logger: { level: 'info', stream: logDestination(join(dir, 'service.log')) },
});
const team = await stores.accounts.createTeam({ name: 'bench', credits: 10, rateLimit: 1_000_000 });
const key = generateKey();
await stores.accounts.createKey({ teamId: team.id, name: 'bench', hash: key.hash, prefix: key.prefix, last4: key.last4 });
await app.listen({ port: 0, host: '127.0.0.1' });
const endpoint = endpoints.find((candidate) => candidate.id === ENDPOINT);
if (!endpoint) throw new Error('no endpoint');
const path = `${endpoint.path}?${new URLSearchParams({ ...endpoint.exampleQuery, cache_max_age: '30d' })}`;
const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
const first = await fetch(base + path, { headers: { 'x-api-key': key.key } });
const warm = await fetch(base + path, { headers: { 'x-api-key': key.key } });
const body = await warm.text();
if (first.status !== 200 || warm.status !== 200 || !(JSON.parse(body) as { meta: { cached: boolean } }).meta.cached) {
  throw new Error(`cache warm-up failed: ${first.status} ${warm.status} ${body.slice(0, 200)}`);
}

const bare = Fastify({ logger: false });
bare.get('/bare', async (_request, reply) => reply.header('content-type', 'application/json; charset=utf-8').send(body));
await bare.listen({ port: 0, host: '127.0.0.1' });

process.stdout.write(
  `${JSON.stringify({
    service: base + path,
    bare: `http://127.0.0.1:${(bare.server.address() as { port: number }).port}/bare`,
    key: key.key,
    bytes: Buffer.byteLength(body),
  })}\n`,
);
process.on('SIGTERM', async () => {
  await app.close();
  await bare.close();
  await stores.close();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
});
