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
import { start } from '../src/main.ts';
import { generateKey } from '../src/server/keys.ts';
import { openSqliteStores } from '../src/store/sqlite/index.ts';
import { cpuReport } from './cpu-profile.ts';

const dir = mkdtempSync(join(tmpdir(), 'bench-live-'));
// The service as `npm run serve` starts it (main.ts: its garbage collector's settings, its log at
// the default level with a line per request, its webhook dispatcher, job runner and monitor
// scheduler), on its default settings but for these: the pace lifted (the environment may set
// it again, or add proxies), a free port, a budget of 30 s for phase 3's 2,000 scrapes at once,
// and room for the load generator, one client address holding up to 2,000 connections. Its
// log goes to a file in its data directory, as `npm run serve > file` would send it.
const config = loadConfig({
  ...UNPACED_ENV,
  ...process.env,
  DATA_DIR: dir,
  CURSOR_SECRET: 'bench-cursor-secret-0123456789',
  HOST: '127.0.0.1',
  PORT: '0',
  REQUEST_BUDGET_MS: '30000',
  MAX_CONNECTIONS: '10000',
  MAX_CONNECTIONS_PER_ADDRESS: '10000',
});
const stores = openSqliteStores({ path: join(dir, 'service.db') });
const running = await start(config, stores, { log: join(dir, 'service.log') });
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
    service: running.address,
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
// SIGTERM drains and stops the service, as it does `npm run serve` (main.ts).
