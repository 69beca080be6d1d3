// Live scrapes through the full API against the sandbox upstream.
//   1. Throughput at zero added upstream latency: the service against a minimal Fastify proxy
//      route that fetches the same upstream page with undici and returns its bytes, alternated
//      under the same load generator. Every request names a distinct target, so neither the
//      cache nor single-flight helps the service.
//   2. Overhead over upstream latency at a fixed 50 ms upstream delay: service p50/p99 minus
//      the proxy's, at the same moderate load.
//   3. 2,000 concurrent live scrapes of distinct targets with 200 ms upstream latency: all
//      must succeed; peak memory of the service process.
// Usage: npm run bench:live [-- --platform linkpage-a|linkpage-b|shopfront|snapmsg --rounds 3 --seconds 5 --connections 50]
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    concurrent: { type: 'string', default: '2000' },
    platform: { type: 'string', default: 'linkpage-a' },
    // Overhead is measured well below saturation, so that queueing does not count as overhead.
    'overhead-connections': { type: 'string', default: '4' },
  },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const concurrent = Number(values.concurrent);

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

function lines(child: { stdout: Readable }) {
  const reader = createInterface({ input: child.stdout });
  const queue: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  reader.on('line', (line) => {
    const next = waiting.shift();
    if (next) next(line);
    else queue.push(line);
  });
  return () => new Promise<string>((resolve) => (queue.length ? resolve(queue.shift() as string) : waiting.push(resolve)));
}

async function startSandbox(latencyMs: number) {
  const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', new URL('../sandbox/main.ts', import.meta.url).pathname], {
    env: { ...process.env, SANDBOX_PORT_BASE: '0', SANDBOX_LATENCY_MS: String(latencyMs), SANDBOX_SEED: 'bench' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const next = lines(child);
  const env: Record<string, string> = {};
  await next(); // heading
  for (let i = 0; i < 5; i += 1) {
    const match = /export (\w+)=(\S+)/.exec(await next());
    if (match?.[1] && match[2]) env[match[1]] = match[2];
  }
  return { child, env };
}

async function startServers(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', new URL('./live-servers.ts', import.meta.url).pathname], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const next = lines(child);
  const info = JSON.parse(await next()) as { service: string; proxy: string; key: string };
  const peak = async () => {
    child.stdin.write('peak\n');
    return (JSON.parse(await next()) as { peakRss: number }).peakRss;
  };
  return { child, info, peak, origin: env[chosen.origin] ?? '' };
}

let counter = 0;
async function load(url: string, headers: Record<string, string>, path: (n: number) => string, connectionCount: number) {
  const result = await autocannon({
    url,
    connections: connectionCount,
    duration: seconds,
    headers,
    requests: [
      {
        setupRequest: (req) => {
          counter += 1;
          return { ...req, path: path(counter) };
        },
      },
    ],
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}

const median = (numbers: number[]) => {
  const sorted = [...numbers].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

async function phase(latencyMs: number, run: (servers: Awaited<ReturnType<typeof startServers>>) => Promise<void>) {
  const sandbox = await startSandbox(latencyMs);
  const servers = await startServers(sandbox.env);
  try {
    await run(servers);
  } finally {
    servers.child.kill('SIGTERM');
    sandbox.child.kill('SIGTERM');
  }
}

const serviceRequest = (servers: Awaited<ReturnType<typeof startServers>>) => ({
  url: servers.info.service,
  headers: { 'x-api-key': servers.info.key },
  path: (n: number) => target(n).api,
});
const proxyRequest = (servers: Awaited<ReturnType<typeof startServers>>) => ({
  url: servers.info.proxy,
  headers: {},
  path: (n: number) => `/proxy?origin=${encodeURIComponent(servers.origin)}&path=${encodeURIComponent(target(n).upstream)}`,
});

console.log(`platform ${values.platform}`);
console.log(`1. throughput, 0 ms upstream latency: ${rounds} rounds of ${seconds} s, ${connections} connections, alternated`);
await phase(0, async (servers) => {
  const s = serviceRequest(servers);
  const p = proxyRequest(servers);
  await load(p.url, p.headers, p.path, connections);
  await load(s.url, s.headers, s.path, connections);
  const service: number[] = [];
  const proxy: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const pr = await load(p.url, p.headers, p.path, connections);
    const sr = await load(s.url, s.headers, s.path, connections);
    proxy.push(pr.rps);
    service.push(sr.rps);
    console.log(`   round ${round + 1}: proxy ${pr.rps.toFixed(0)} req/s | service ${sr.rps.toFixed(0)} req/s`);
  }
  console.log(`   ratio service/proxy: ${(median(service) / median(proxy)).toFixed(2)}x (target >= 0.5x)`);
});

const overheadConnections = Number(values['overhead-connections']);
console.log(`2. overhead over a fixed 50 ms upstream latency, ${overheadConnections} connections`);
await phase(50, async (servers) => {
  const s = serviceRequest(servers);
  const p = proxyRequest(servers);
  const pr = await load(p.url, p.headers, p.path, overheadConnections);
  const sr = await load(s.url, s.headers, s.path, overheadConnections);
  console.log(`   proxy p50 ${pr.p50} ms p99 ${pr.p99} ms | service p50 ${sr.p50} ms p99 ${sr.p99} ms`);
  console.log(`   service overhead over upstream: p50 ${(sr.p50 - 50).toFixed(1)} ms, p99 ${(sr.p99 - 50).toFixed(1)} ms (target <= 2 / 10 ms); over the proxy: p50 ${(sr.p50 - pr.p50).toFixed(1)} ms, p99 ${(sr.p99 - pr.p99).toFixed(1)} ms`);
});

console.log(`3. ${concurrent} concurrent live scrapes of distinct targets, 200 ms upstream latency`);
await phase(200, async (servers) => {
  const agent = new Agent({ connections: concurrent, pipelining: 0 });
  const before = await servers.peak();
  const started = Date.now();
  const statuses = await Promise.all(
    Array.from({ length: concurrent }, async (_, i) => {
      const response = await request(`${servers.info.service}${target(1_000_000 + i).api}`, { headers: { 'x-api-key': servers.info.key }, dispatcher: agent });
      await response.body.dump();
      return response.statusCode;
    }),
  );
  const elapsed = Date.now() - started;
  const ok = statuses.filter((status) => status === 200).length;
  const peak = await servers.peak();
  console.log(`   ${ok}/${concurrent} answered 200 in ${elapsed} ms; service process peak RSS ${(peak / 1048576).toFixed(0)} MiB (at rest ${(before / 1048576).toFixed(0)} MiB)`);
  await agent.close();
});
