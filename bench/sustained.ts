// Sustained live load: minutes of live scrapes at a fixed rate below saturation, to show that
// the service never stalls as its write-ahead log, ledger and cache grow.
//   - Open loop: requests are issued on a fixed schedule whatever the answers do, and latency
//     counts from the scheduled time, so a stall shows as latency, not as a lower rate.
//   - Every request is a live scrape (no `cache_max_age`): each one writes the ledger and the
//     cache. 47 distinct linkpage-a targets, 50 connections.
//   - The upstream costs almost no CPU: the sandbox renders the 47 pages once, then a plain
//     HTTP server in this process replays their bytes, uncompressed.
//   - A `/healthz` probe on a connection of its own, every 500 ms.
// Prints per window: completed requests, errors, p50/p99/max latency (max includes the age of
// requests still unanswered), the probe's worst latency, requests in flight, the service's RSS,
// V8 heap in use and memory outside the heap (`external`, which holds array buffers), its CPU,
// and the sizes of the WAL and the database file; then a
// verdict: a stall is any window whose max latency, or any probe, exceeds --stall-ms (windows
// that begin within the first --warmup seconds are printed but not judged).
// With --gc the service runs with --expose-gc and collects fully before each window's memory
// figures, so the heap column counts live objects only (growth there is retained memory; RSS
// growth with a flat heap is the allocator's). --snapshot-at 30,90 writes a V8 heap snapshot
// of the service at those seconds (its path is printed; each pauses the service for seconds).
// Usage: npm run bench:sustained [-- --seconds 300 --rate 100 --connections 50 --window 10 --stall-ms 1000 --warmup 10 --gc --snapshot-at 30,90]
import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Client, Pool, request } from 'undici';
import { startSandbox } from '../sandbox/server.ts';
import { UNPACED_ENV } from '../src/config.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '300' },
    rate: { type: 'string', default: '100' },
    connections: { type: 'string', default: '50' },
    targets: { type: 'string', default: '47' },
    window: { type: 'string', default: '10' },
    'stall-ms': { type: 'string', default: '1000' },
    // The first seconds of a fresh process (compilation, the store's background thread starting)
    // are printed but kept out of the verdict.
    warmup: { type: 'string', default: '10' },
    gc: { type: 'boolean', default: false },
    'snapshot-at': { type: 'string', default: '' },
  },
});
const seconds = Number(values.seconds);
const rate = Number(values.rate);
const connections = Number(values.connections);
const targetCount = Number(values.targets);
const windowMs = Number(values.window) * 1000;
const stallMs = Number(values['stall-ms']);
const warmupMs = Number(values.warmup) * 1000;
const snapshotAt = values['snapshot-at'] === '' ? [] : values['snapshot-at'].split(',').map((at) => Number(at) * 1000).sort((a, b) => a - b);
for (const [name, value] of Object.entries({ seconds, rate, connections, targets: targetCount, window: windowMs, 'stall-ms': stallMs, 'snapshot-at': Math.min(...snapshotAt) })) {
  if (!(value > 0)) throw new Error(`--${name} must be a positive number`);
}

// ---- upstream: the sandbox's pages, recorded once and replayed ----------------------------

const upstreamPath = (n: number) => `/sustained${n}`;
const sandbox = await startSandbox({ seed: 'bench', portBase: 0 });
const pages = new Map<string, { status: number; type: string; body: Buffer }>();
// The sandbox answers only what looks like the service's client (a browser), uncompressed here.
const browser = {
  accept: 'text/html,application/xhtml+xml',
  'accept-encoding': 'identity',
  'accept-language': 'en-US,en;q=0.9',
  'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/142.0.0.0 Safari/537.36',
  'sec-fetch-mode': 'navigate',
  'sec-fetch-dest': 'document',
  'sec-fetch-site': 'none',
};
for (let n = 1; n <= targetCount; n += 1) {
  const response = await request(`${sandbox.origins['linkpage-a']}${upstreamPath(n)}`, { headers: browser });
  const body = Buffer.from(await response.body.arrayBuffer());
  if (response.statusCode !== 200) throw new Error(`sandbox answered ${response.statusCode} for ${upstreamPath(n)}`);
  pages.set(upstreamPath(n), { status: 200, type: String(response.headers['content-type'] ?? 'text/html'), body });
}
await sandbox.close();
const origin = createServer((incoming, outgoing) => {
  const page = pages.get(new URL(incoming.url ?? '/', 'http://origin.invalid').pathname);
  if (!page) return outgoing.writeHead(404).end();
  outgoing.writeHead(page.status, { 'content-type': page.type, 'content-length': page.body.length }).end(page.body);
});
origin.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
const originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;

// ---- the service, in a process of its own ------------------------------------------------

const nodeFlags = ['--disable-warning=ExperimentalWarning', ...(values.gc ? ['--expose-gc'] : [])];
const child = spawn(process.execPath, [...nodeFlags, new URL('./live-servers.ts', import.meta.url).pathname], {
  env: { ...UNPACED_ENV, ...process.env, LINKPAGE_A_ORIGIN: originUrl },
  stdio: ['pipe', 'pipe', 'inherit'],
});
const childLines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
const nextLine = async () => {
  const line = await childLines.next();
  if (line.done) throw new Error('the service closed its output');
  return line.value;
};
child.once('exit', (code) => {
  if (code !== 0 && code !== null) console.error(`service exited with ${code}`);
});
const info = JSON.parse(await nextLine()) as { service: string; key: string; dataDir: string };
/** One command to the service and its one-line answer; one at a time (the caller awaits). */
const ask = async <T>(command: string): Promise<T> => {
  child.stdin.write(`${command}\n`);
  return JSON.parse(await nextLine()) as T;
};
interface Memory {
  rss: number;
  heapUsed: number;
  external: number;
}
const database = join(info.dataDir, 'service.db');

const fileSize = (path: string) => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};
const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
/** CPU time of the service process in seconds (user + system; clock ticks of 1/100 s). */
const cpuSeconds = () => {
  const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
};

// ---- load --------------------------------------------------------------------------------

const pool = new Pool(info.service, { connections, headersTimeout: 120_000, bodyTimeout: 120_000 });
const probe = new Client(info.service, { headersTimeout: 120_000, bodyTimeout: 120_000 });
const headers = { 'x-api-key': info.key };

interface Window {
  latencies: number[];
  errors: number;
  probeMax: number;
}
const newWindow = (): Window => ({ latencies: [], errors: 0, probeMax: 0 });
let current = newWindow();
/** Scheduled times of the requests and probes not answered yet: a stall that has not ended yet counts too. */
const waiting = new Set<number>();
const waitingProbes = new Set<number>();
const firstErrors: string[] = [];

async function scrape(n: number, scheduled: number) {
  waiting.add(scheduled);
  try {
    const url = encodeURIComponent(`https://linkpage-a.example${upstreamPath(n)}`);
    const response = await pool.request({ path: `/v1/linkpage-a/profile?url=${url}`, method: 'GET', headers });
    const body = await response.body.text();
    if (response.statusCode !== 200) {
      current.errors += 1;
      if (firstErrors.length < 5) firstErrors.push(`${response.statusCode} ${body.slice(0, 200)}`);
    }
  } catch (error) {
    current.errors += 1;
    if (firstErrors.length < 5) firstErrors.push(String(error));
  } finally {
    waiting.delete(scheduled);
    current.latencies.push(performance.now() - scheduled);
  }
}

const probeLatencies: number[] = [];
let probeErrors = 0;
async function healthz(scheduled: number) {
  waitingProbes.add(scheduled);
  try {
    const response = await probe.request({ path: '/healthz', method: 'GET' });
    await response.body.dump();
    if (response.statusCode !== 200) probeErrors += 1;
  } catch {
    // Counted as an error; its latency (up to the client's timeout) is recorded all the same.
    probeErrors += 1;
  } finally {
    waitingProbes.delete(scheduled);
    const latency = performance.now() - scheduled;
    probeLatencies.push(latency);
    current.probeMax = Math.max(current.probeMax, latency);
  }
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
const mib = (bytes: number) => (bytes / 1048576).toFixed(1);

console.log(
  `sustained live scrapes: ${rate} req/s open loop for ${seconds} s, ${targetCount} linkpage-a targets, ${connections} connections, /healthz every 500 ms; stall = latency > ${stallMs} ms`,
);
console.log(
  `  window   count  errors   p50 ms   p99 ms   max ms  healthz max ms  in flight  RSS MiB  heap MiB  ext MiB  CPU %  WAL MiB  DB MiB${values.gc ? '   (heap after a full collection)' : ''}`,
);

const start = performance.now();
let issued = 0;
let probes = 0;
let stalls = 0;
let totalRequests = 0;
let totalErrors = 0;
let walPeak = 0;
let lastCpu = cpuSeconds();
let windowStart = start;
const pending = new Set<Promise<void>>();
const track = (promise: Promise<void>) => {
  pending.add(promise);
  void promise.finally(() => pending.delete(promise));
};

/** The window rows, printed in order: each waits for the service's memory figures. */
let reporting = Promise.resolve();
const report = () => {
  const now = performance.now();
  const done = current;
  current = newWindow();
  const sorted = done.latencies.sort((a, b) => a - b);
  const oldest = (set: Set<number>) => {
    let first = now;
    for (const scheduled of set) first = Math.min(first, scheduled);
    return now - first;
  };
  const max = Math.max(sorted.at(-1) ?? 0, oldest(waiting));
  done.probeMax = Math.max(done.probeMax, oldest(waitingProbes));
  const cpu = cpuSeconds();
  const cpuShare = ((cpu - lastCpu) / ((now - windowStart) / 1000)) * 100;
  lastCpu = cpu;
  const wal = fileSize(`${database}-wal`);
  walPeak = Math.max(walPeak, wal);
  const warmingUp = windowStart - start < warmupMs;
  const stalled = max > stallMs || done.probeMax > stallMs;
  if (stalled && !warmingUp) stalls += 1;
  totalRequests += sorted.length;
  totalErrors += done.errors;
  const rssNow = rss();
  const cpuCell = cpuShare.toFixed(0).padStart(6);
  const head = [
    `${Math.round((now - start) / 1000)} s`.padStart(8),
    String(sorted.length).padStart(7),
    String(done.errors).padStart(7),
    quantile(sorted, 0.5).toFixed(1).padStart(8),
    quantile(sorted, 0.99).toFixed(1).padStart(8),
    max.toFixed(0).padStart(8),
    done.probeMax.toFixed(1).padStart(15),
    String(waiting.size).padStart(10),
    mib(rssNow).padStart(8),
  ];
  const tail = [cpuCell, mib(wal).padStart(8), mib(fileSize(database)).padStart(7)];
  const flags = `${stalled ? '  STALL' : ''}${warmingUp ? '  (warm-up, not judged)' : ''}`;
  windowStart = now;
  reporting = reporting.then(async () => {
    const { memory } = await ask<{ memory: Memory }>('memory');
    console.log(`${[...head, mib(memory.heapUsed).padStart(9), mib(memory.external).padStart(8), ...tail].join(' ')}${flags}`);
  });
};
const snapshot = (at: number) => {
  reporting = reporting.then(async () => {
    const { snapshot: path } = await ask<{ snapshot: string }>('snapshot');
    console.log(`  heap snapshot at ${Math.round(at / 1000)} s: ${join(process.cwd(), path)}`);
  });
};

const endAt = start + seconds * 1000;
await new Promise<void>((resolve) => {
  const tick = setInterval(() => {
    const now = performance.now();
    const until = Math.min(now, endAt);
    // Every request due by now is issued, with the time it was due: a late tick (this process
    // was descheduled) does not hide latency either.
    while (start + (issued * 1000) / rate <= until) {
      const scheduled = start + (issued * 1000) / rate;
      track(scrape((issued % targetCount) + 1, scheduled));
      issued += 1;
    }
    while (start + probes * 500 <= until) {
      track(healthz(start + probes * 500));
      probes += 1;
    }
    if (now - windowStart >= windowMs) report();
    while (snapshotAt.length > 0 && now - start >= (snapshotAt[0] ?? Infinity)) snapshot(snapshotAt.shift() ?? 0);
    if (now >= endAt) {
      clearInterval(tick);
      resolve();
    }
  }, 5);
});
await Promise.all(pending);
if (current.latencies.length > 0) report();
await reporting;

const probeSorted = probeLatencies.sort((a, b) => a - b);
console.log(
  `total: ${totalRequests} scrapes, ${totalErrors} errors; healthz p50 ${quantile(probeSorted, 0.5).toFixed(1)} ms, max ${(probeSorted.at(-1) ?? 0).toFixed(1)} ms; WAL peak ${mib(walPeak)} MiB, database ${mib(fileSize(database))} MiB`,
);
for (const error of firstErrors) console.log(`  error: ${error}`);
if (probeErrors > 0) console.log(`  ${probeErrors} /healthz probes failed`);
const failures = totalErrors + probeErrors;
const verdict = stalls > 0 ? `STALL in ${stalls} window(s)` : failures > 0 ? `no stall, but ${failures} errors` : 'no stall';
console.log(`verdict: ${verdict}`);

await pool.close();
await probe.close();
child.kill('SIGTERM');
await new Promise((resolve) => child.once('exit', resolve));
origin.close();
process.exitCode = stalls > 0 || failures > 0 ? 1 : 0;
