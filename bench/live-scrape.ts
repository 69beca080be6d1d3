// Live scrapes through the full API against a cheap upstream (bench/cheap-upstream.ts: the
// sandbox's pages, pre-rendered by a warm-up pass, then answered from memory), with the
// service, the baseline proxy (bench/proxy-server.ts) and the upstream in processes of their
// own, so that each one's CPU time is its own.
//   1. Throughput and CPU per request at zero upstream latency: the service against the proxy
//      (and, as a second reference, a proxy written with fetch, which decodes the page),
//      alternated under the same load generator. Every request in a round names a distinct
//      target and asks for a live result, so neither the cache nor single-flight helps.
//   2. Overhead over upstream latency at a fixed 50 ms upstream delay: service p50/p99 minus
//      the proxy's, at the same moderate load.
//   3. 2,000 concurrent live scrapes of distinct targets with 200 ms upstream latency: all
//      must succeed; peak memory of the service process.
//   4. A pool of 4 local CONNECT proxies (bench/connect-proxies.ts) against direct requests, at a
//      fixed 50 ms upstream latency: throughput and p99 of a service sending through the pool
//      against one sending directly, alternated under the same load.
// Usage: npm run bench:live [-- --platform linkpage-a|linkpage-b|shopfront|snapmsg --rounds 3
//   --seconds 5 --connections 50 --targets 20000 --profile]
// With --profile the service of phase 1 runs under `node --cpu-prof` and the top entries of
// its profile by self time are printed.
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { EventLoopUtilization } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { childProfile } from './cpu-profile.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    concurrent: { type: 'string', default: '2000' },
    targets: { type: 'string', default: '20000' },
    platform: { type: 'string', default: 'linkpage-a' },
    profile: { type: 'boolean', default: false },
    phases: { type: 'string', default: '1,2,3,4' },
    // Overhead is measured well below saturation, so that queueing does not count as overhead.
    'overhead-connections': { type: 'string', default: '4' },
  },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const concurrent = Number(values.concurrent);
const targetCount = Number(values.targets);
const phases = new Set(values.phases.split(','));

/** A distinct target per number, per platform: its API query, upstream page path and origin variable. */
const TARGETS: Record<string, { origin: string; target: (n: number) => { api: string; upstream: string } }> = {
  'linkpage-a': { origin: 'LINKPAGE_A_ORIGIN', target: (n) => ({ api: `/v1/linkpage-a/profile?url=https://linkpage-a.example/bench${n}`, upstream: `/bench${n}` }) },
  'linkpage-b': { origin: 'LINKPAGE_B_ORIGIN', target: (n) => ({ api: `/v1/linkpage-b/page?url=https://linkpage-b.example/bench${n}`, upstream: `/bench${n}` }) },
  shopfront: { origin: 'SHOPFRONT_ORIGIN', target: (n) => ({ api: `/v1/shopfront/shop?url=https://www.shopfront.example/shop/bench${n}`, upstream: `/shop/bench${n}` }) },
  snapmsg: { origin: 'SNAPMSG_ORIGIN', target: (n) => ({ api: `/v1/snapmsg/profile?username=bench${n}`, upstream: `/add/bench${n}` }) },
};
const found = TARGETS[values.platform];
if (!found) throw new Error(`--platform must be one of ${Object.keys(TARGETS).join(', ')}`);
const chosen = found;
const target = chosen.target;

/** A child process speaking one JSON line per command on stdin/stdout. */
function child(script: string, env: Record<string, string>, nodeFlags: string[] = []) {
  const process_ = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', ...nodeFlags, new URL(script, import.meta.url).pathname], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const queue: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  createInterface({ input: process_.stdout }).on('line', (line) => {
    const next = waiting.shift();
    if (next) next(line);
    else queue.push(line);
  });
  const next = <T>() => new Promise<string>((resolve) => (queue.length ? resolve(queue.shift() as string) : waiting.push(resolve))).then((line) => JSON.parse(line) as T);
  const ask = async <T>(command: string) => {
    process_.stdin.write(`${command}\n`);
    return next<T>();
  };
  const cpu = () => ask<{ cpuMicros: number; elu: EventLoopUtilization }>('cpu');
  const stop = () =>
    new Promise<void>((resolve) => {
      process_.once('exit', () => resolve());
      process_.kill('SIGTERM');
    });
  return { next, ask, cpu, stop };
}

type Process = ReturnType<typeof child>;

interface Servers {
  /** The origins of the cheap upstream, as the service's environment. */
  env: Record<string, string>;
  upstream: Process;
  service: Process & { url: string; key: string };
  proxy: Process & { url: string };
  origin: string;
}

async function startServers(latencyMs: number, serviceFlags: string[] = []): Promise<Servers> {
  const upstream = child('./cheap-upstream.ts', { SANDBOX_LATENCY_MS: String(latencyMs), SANDBOX_SEED: 'bench' });
  const env = await upstream.next<Record<string, string>>();
  const service = child('./live-servers.ts', env, serviceFlags);
  const proxy = child('./proxy-server.ts', {});
  const serviceInfo = await service.next<{ service: string; key: string }>();
  const proxyInfo = await proxy.next<{ proxy: string }>();
  return {
    env,
    upstream,
    service: { ...service, url: serviceInfo.service, key: serviceInfo.key },
    proxy: { ...proxy, url: proxyInfo.proxy },
    origin: env[chosen.origin] ?? '',
  };
}

let counter = 0;
async function load(url: string, headers: Record<string, string>, path: (n: number) => string, connectionCount: number, duration = seconds) {
  const result = await autocannon({
    url,
    connections: connectionCount,
    duration,
    headers,
    requests: [
      {
        setupRequest: (req) => {
          counter = (counter + 1) % targetCount;
          return { ...req, path: path(counter) };
        },
      },
    ],
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx (${JSON.stringify(result.statusCodeStats)}), ${result.errors} errors`);
  return { rps: result.requests.average, total: result.requests.total, p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max };
}

/**
 * A load run with the CPU time the measured process spent per request (all its threads), in
 * ms, and the share of the run its main thread was busy (1: the event loop was the limit).
 */
async function measured(process_: Process, run: () => ReturnType<typeof load>) {
  const before = await process_.cpu();
  const result = await run();
  const after = await process_.cpu();
  const busy = (after.elu.active - before.elu.active) / (after.elu.active + after.elu.idle - before.elu.active - before.elu.idle);
  return { ...result, cpuPerRequest: (after.cpuMicros - before.cpuMicros) / 1000 / result.total, busy };
}

const median = (numbers: number[]) => {
  const sorted = [...numbers].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

const serviceRequest = (servers: Servers) => ({ url: servers.service.url, headers: { 'x-api-key': servers.service.key }, path: (n: number) => target(n).api });
/** The baseline proxy's route: `proxy` passes the compressed page through, `fetch` decodes it (proxy-server.ts). */
const proxyRequest = (servers: Servers, route: 'proxy' | 'fetch' = 'proxy') => ({
  url: servers.proxy.url,
  headers: {},
  path: (n: number) => `/${route}?origin=${encodeURIComponent(servers.origin)}&path=${encodeURIComponent(target(n).upstream)}`,
});

/** Renders every target's page once, through the proxy, so that the upstream answers from memory. */
async function warmUp(servers: Servers) {
  const agent = new Agent({ connections: 64 });
  const p = proxyRequest(servers);
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < targetCount) {
        const n = next++;
        const response = await request(`${p.url}${p.path(n)}`, { dispatcher: agent });
        await response.body.dump();
        if (response.statusCode !== 200) throw new Error(`warm-up of target ${n}: ${response.statusCode}`);
      }
    }),
  );
  await agent.close();
}

async function phase(latencyMs: number, run: (servers: Servers) => Promise<void>, serviceFlags: string[] = []) {
  const servers = await startServers(latencyMs, serviceFlags);
  try {
    await warmUp(servers);
    await run(servers);
  } finally {
    await Promise.all([servers.service.stop(), servers.proxy.stop(), servers.upstream.stop()]);
  }
}

console.log(`platform ${values.platform}, ${targetCount} distinct targets pre-rendered by the cheap upstream`);
if (phases.has('1')) {
  console.log(`1. throughput and CPU per request, 0 ms upstream latency: ${rounds} rounds of ${seconds} s, ${connections} connections, alternated`);
  const profile = childProfile(values.profile);
  await phase(
    0,
    async (servers) => {
      const s = serviceRequest(servers);
      const p = proxyRequest(servers);
      const f = proxyRequest(servers, 'fetch');
      await load(p.url, p.headers, p.path, connections, 2);
      await load(f.url, f.headers, f.path, connections, 2);
      await load(s.url, s.headers, s.path, connections, 2);
      const service: { rps: number; cpu: number }[] = [];
      const proxy: { rps: number; cpu: number }[] = [];
      const fetched: { rps: number; cpu: number }[] = [];
      for (let round = 0; round < rounds; round += 1) {
        const pr = await measured(servers.proxy, () => load(p.url, p.headers, p.path, connections));
        const sr = await measured(servers.service, () => load(s.url, s.headers, s.path, connections));
        const fr = await measured(servers.proxy, () => load(f.url, f.headers, f.path, connections));
        proxy.push({ rps: pr.rps, cpu: pr.cpuPerRequest });
        service.push({ rps: sr.rps, cpu: sr.cpuPerRequest });
        fetched.push({ rps: fr.rps, cpu: fr.cpuPerRequest });
        console.log(
          `   round ${round + 1}: proxy ${pr.rps.toFixed(0)} req/s, ${pr.cpuPerRequest.toFixed(3)} ms CPU/req, main thread ${(pr.busy * 100).toFixed(0)}% busy` +
            ` | service ${sr.rps.toFixed(0)} req/s, ${sr.cpuPerRequest.toFixed(3)} ms CPU/req, main thread ${(sr.busy * 100).toFixed(0)}% busy, longest wait ${sr.max} ms` +
            ` | fetch proxy ${fr.rps.toFixed(0)} req/s, ${fr.cpuPerRequest.toFixed(3)} ms CPU/req`,
        );
      }
      const rate = (runs: { rps: number }[]) => median(runs.map((r) => r.rps));
      const cpu = (runs: { cpu: number }[]) => median(runs.map((r) => r.cpu)).toFixed(3);
      console.log(`   ratio service/proxy throughput: ${(rate(service) / rate(proxy)).toFixed(2)}x (target >= 0.5x); service/fetch proxy: ${(rate(service) / rate(fetched)).toFixed(2)}x`);
      console.log(`   CPU per request (median): service ${cpu(service)} ms (target <= 0.8 ms), proxy ${cpu(proxy)} ms, fetch proxy ${cpu(fetched)} ms`);
    },
    profile.flags,
  );
  profile.print('   ');
}

if (phases.has('2')) {
  const overheadConnections = Number(values['overhead-connections']);
  console.log(`2. overhead over a fixed 50 ms upstream latency, ${overheadConnections} connections`);
  await phase(50, async (servers) => {
    const s = serviceRequest(servers);
    const p = proxyRequest(servers);
    // Both warmed first, as in phase 1: otherwise the service's first requests (code not yet
    // optimised, statements not yet prepared) make its p99, which then measures a cold start.
    await load(p.url, p.headers, p.path, overheadConnections, 2);
    await load(s.url, s.headers, s.path, overheadConnections, 2);
    const pr = await load(p.url, p.headers, p.path, overheadConnections);
    const sr = await load(s.url, s.headers, s.path, overheadConnections);
    console.log(`   proxy p50 ${pr.p50} ms p99 ${pr.p99} ms | service p50 ${sr.p50} ms p99 ${sr.p99} ms`);
    console.log(
      `   service overhead over upstream: p50 ${(sr.p50 - 50).toFixed(1)} ms, p99 ${(sr.p99 - 50).toFixed(1)} ms (target <= 2 / 10 ms); over the proxy: p50 ${(sr.p50 - pr.p50).toFixed(1)} ms, p99 ${(sr.p99 - pr.p99).toFixed(1)} ms`,
    );
  });
}

if (phases.has('3')) {
  console.log(`3. ${concurrent} concurrent live scrapes of distinct targets, 200 ms upstream latency`);
  await phase(200, async (servers) => {
    const agent = new Agent({ connections: concurrent, pipelining: 0 });
    const { peakRss: before } = await servers.service.ask<{ peakRss: number }>('peak');
    const started = Date.now();
    const statuses = await Promise.all(
      Array.from({ length: concurrent }, async (_, i) => {
        const response = await request(`${servers.service.url}${target(i % targetCount).api}`, { headers: { 'x-api-key': servers.service.key }, dispatcher: agent });
        await response.body.dump();
        return response.statusCode;
      }),
    );
    const elapsed = Date.now() - started;
    const ok = statuses.filter((status) => status === 200).length;
    const { peakRss: peak } = await servers.service.ask<{ peakRss: number }>('peak');
    console.log(`   ${ok}/${concurrent} answered 200 in ${elapsed} ms; service process peak RSS ${(peak / 1048576).toFixed(0)} MiB (at rest ${(before / 1048576).toFixed(0)} MiB)`);
    await agent.close();
  });
}

if (phases.has('4')) {
  console.log(`4. a pool of 4 local proxies against direct requests, 50 ms upstream latency, ${rounds} rounds of ${seconds} s, alternated`);
  await phase(50, async (servers) => {
    const proxies = child('./connect-proxies.ts', { PROXIES: '4' });
    const { proxies: urls } = await proxies.next<{ proxies: string[] }>();
    const pooled = child('./live-servers.ts', { ...servers.env, UPSTREAM_PROXIES: urls.join(',') });
    try {
      const info = await pooled.next<{ service: string; key: string }>();
      const direct = serviceRequest(servers);
      const through = { url: info.service, headers: { 'x-api-key': info.key }, path: direct.path };
      await load(through.url, through.headers, through.path, connections, 2);
      const results: { direct: number[]; pooled: number[]; directP99: number[]; pooledP99: number[] } = { direct: [], pooled: [], directP99: [], pooledP99: [] };
      for (let round = 0; round < rounds; round += 1) {
        const d = await load(direct.url, direct.headers, direct.path, connections);
        const p = await load(through.url, through.headers, through.path, connections);
        const dl = await load(direct.url, direct.headers, direct.path, Number(values['overhead-connections']));
        const pl = await load(through.url, through.headers, through.path, Number(values['overhead-connections']));
        results.direct.push(d.rps);
        results.pooled.push(p.rps);
        results.directP99.push(dl.p99);
        results.pooledP99.push(pl.p99);
        console.log(`   round ${round + 1}: direct ${d.rps.toFixed(0)} req/s, p99 ${dl.p99} ms | through 4 proxies ${p.rps.toFixed(0)} req/s, p99 ${pl.p99} ms`);
      }
      console.log(
        `   through the pool / direct: throughput ${(median(results.pooled) / median(results.direct)).toFixed(2)}x, p99 overhead ${(median(results.pooledP99) - median(results.directP99)).toFixed(1)} ms`,
      );
    } finally {
      await Promise.all([pooled.stop(), proxies.stop()]);
    }
  });
}
