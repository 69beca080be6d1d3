// Child process of bench/live-scrape.ts: the full service pointed at an upstream that runs in
// a process of its own (origins in the environment). Prints its address, a key and the data
// directory as one JSON line; answers `peak` (peak memory) and `cpu` (CPU time) on stdin.
// Also the service of bench/sustained.ts, which asks for this process's memory use (`memory`:
// V8 heap used, external and array buffers, after a full collection when Node runs with
// --expose-gc) and for heap snapshots (`snapshot`) to tell retained objects from heap growth.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { writeHeapSnapshot } from 'node:v8';
import { loadConfig, UNPACED_ENV } from '../src/config.ts';
import { endpoints } from '../src/endpoints/index.ts';
import { upstreamClient } from '../src/main.ts';
import { buildApp } from '../src/server/app.ts';
import { generateKey } from '../src/server/keys.ts';
import { openSqliteStores } from '../src/store/sqlite/index.ts';
import { cpuReport } from './cpu-profile.ts';

const dir = mkdtempSync(join(tmpdir(), 'bench-live-'));
const config = loadConfig({ ...UNPACED_ENV, ...process.env, DATA_DIR: dir, CURSOR_SECRET: 'bench-cursor-secret-0123456789' });
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

// The peak is sampled every 20 ms from the first `peak` or `reset-peak` command on, not before:
// even process.memoryUsage.rss(), which reads the resident size alone (process.memoryUsage()
// also walks the heap's spaces: 1.8% of the service's CPU), took 0.7% of the service's CPU in
// bench:live phase 1's profile, which asks for no peak.
let peakRss = process.memoryUsage.rss();
let sampler: NodeJS.Timeout | undefined;
const samplePeak = () => {
  sampler ??= setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 20).unref();
};

process.stdout.write(
  `${JSON.stringify({
    service: `http://127.0.0.1:${(app.server.address() as { port: number }).port}`,
    key: key.key,
    dataDir: dir,
  })}\n`,
);
// One command a line on stdin, one JSON line in answer on stdout.
createInterface({ input: process.stdin }).on('line', (line) => {
  const command = line.trim();
  if (command === 'peak') {
    samplePeak();
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
    process.stdout.write(`${JSON.stringify({ peakRss })}\n`);
  }
  if (command === 'cpu') {
    process.stdout.write(cpuReport());
  }
  if (command === 'reset-peak') {
    samplePeak();
    peakRss = process.memoryUsage.rss();
  }
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
  await client.close();
  await stores.close();
  process.exit(0);
});
