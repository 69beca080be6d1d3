// Child process of bench/live-scrape.ts: the full service pointed at the sandbox upstream
// (which runs in a process of its own, origins in the environment), and a minimal Fastify
// proxy route that fetches the same upstream page with undici and returns its bytes. Prints
// their addresses and the data directory as one JSON line, and this process's peak memory on
// request. Also the service of bench/sustained.ts, which asks for this process's memory use
// (`memory`: V8 heap used, external and array buffers, after a full collection when Node runs
// with --expose-gc) and for heap snapshots (`snapshot`) to tell retained objects from heap growth.
import Fastify from 'fastify';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { writeHeapSnapshot } from 'node:v8';
import { Pool } from 'undici';
import { loadConfig } from '../src/config.ts';
import { endpoints } from '../src/endpoints/index.ts';
import { upstreamClient } from '../src/main.ts';
import { buildApp } from '../src/server/app.ts';
import { generateKey } from '../src/server/keys.ts';
import { openSqliteStores } from '../src/store/sqlite/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'bench-live-'));
const config = loadConfig({ ...process.env, DATA_DIR: dir, CURSOR_SECRET: 'bench-cursor-secret-0123456789' });
const stores = openSqliteStores({ path: join(dir, 'service.db') });
const client = upstreamClient(config);
const app = await buildApp({
  stores,
  endpoints,
  cursorSecret: config.cursorSecret,
  upstream: (platform, signal, deadline) => client.bind(platform, signal, deadline),
  requestBudgetMs: 30_000,
  // The load generator is one client address holding up to 2,000 connections at once.
  connections: { maxConnections: 10_000, maxConnectionsPerAddress: 10_000 },
});
await app.listen({ port: 0, host: '127.0.0.1' });
const team = await stores.accounts.createTeam({ name: 'bench', credits: 1_000_000_000, rateLimit: 10_000_000 });
const key = generateKey();
await stores.accounts.createKey({ teamId: team.id, name: 'bench', hash: key.hash, prefix: key.prefix, last4: key.last4 });

// The proxy: same upstream page, undici, bytes returned as they came.
const proxy = Fastify({ logger: false });
const pools = new Map<string, Pool>();
proxy.get('/proxy', async (request, reply) => {
  const { origin, path } = request.query as { origin: string; path: string };
  let pool = pools.get(origin);
  if (!pool) pools.set(origin, (pool = new Pool(origin, { connections: 128 })));
  // The same request headers as the service's client, compression included: the upstream does
  // the same work for both; the proxy passes the (compressed) bytes through.
  const upstream = await pool.request({
    path,
    method: 'GET',
    headers: {
      accept: 'text/html,application/xhtml+xml',
      'accept-encoding': 'gzip, deflate, br',
      'accept-language': 'en-US,en;q=0.9',
      'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/142.0.0.0 Safari/537.36',
      'sec-fetch-mode': 'navigate',
      'sec-fetch-dest': 'document',
      'sec-fetch-site': 'none',
    },
  });
  const body = Buffer.from(await upstream.body.arrayBuffer());
  reply.code(upstream.statusCode).header('content-type', upstream.headers['content-type'] ?? 'text/html');
  const encoding = upstream.headers['content-encoding'];
  if (typeof encoding === 'string') reply.header('content-encoding', encoding);
  return reply.send(body);
});
await proxy.listen({ port: 0, host: '127.0.0.1' });

let peakRss = process.memoryUsage().rss;
setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 20).unref();

process.stdout.write(
  `${JSON.stringify({
    service: `http://127.0.0.1:${(app.server.address() as { port: number }).port}`,
    proxy: `http://127.0.0.1:${(proxy.server.address() as { port: number }).port}`,
    key: key.key,
    dataDir: dir,
  })}\n`,
);
// One command a line on stdin, one JSON line in answer on stdout.
createInterface({ input: process.stdin }).on('line', (line) => {
  const command = line.trim();
  if (command === 'peak') process.stdout.write(`${JSON.stringify({ peakRss })}\n`);
  if (command === 'reset-peak') peakRss = process.memoryUsage().rss;
  if (command === 'memory') {
    // A full collection first when it is available, so heapUsed counts live objects only.
    const collected = typeof globalThis.gc === 'function';
    if (collected) globalThis.gc?.();
    const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
    process.stdout.write(`${JSON.stringify({ memory: { rss, heapUsed, heapTotal, external, arrayBuffers, collected } })}\n`);
  }
  if (command === 'snapshot') process.stdout.write(`${JSON.stringify({ snapshot: writeHeapSnapshot(undefined) })}\n`);
});
process.on('SIGTERM', async () => {
  await app.close();
  await proxy.close();
  await client.close();
  await stores.close();
  process.exit(0);
});
