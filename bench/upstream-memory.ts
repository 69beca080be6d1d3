// Peak memory of the service under many maximal upstream answers at once: 200 concurrent live
// scrapes of distinct shopfront targets (so single-flight merges none) against a local origin
// that answers every page with a 10 MB body (UPSTREAM_MAX_BYTES, the largest accepted), once
// with a declared length and once gzip-compressed and chunked (length unknown until the end).
// Each is run with the memory budget for upstream answers (UPSTREAM_MEMORY_BYTES, default
// 256 MB) and with it effectively off (1 TB). The bodies are not storefronts, so the scrapes
// that read them end in 502 UPSTREAM_UNRECOGNISED; those refused by the budget end in 503.
// Prints, per run, the answers by status, the time the 200 took and the service process's
// peak RSS (sampled every 20 ms in that process).
// Usage: npm run bench:upstream-memory [-- --concurrent 200 --budget 268435456]
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { Agent, request } from 'undici';

const { values } = parseArgs({
  options: {
    concurrent: { type: 'string', default: '200' },
    budget: { type: 'string', default: String(256 * 1024 * 1024) },
  },
});
const concurrent = Number(values.concurrent);
const MAX_BYTES = 10 * 1024 * 1024;
const OFF = String(1024 ** 4);

// A 10 MB page of plain HTML, sent as it is or gzip-compressed.
const line = '<p class="item">A line of an oversized storefront page, repeated to the size cap.</p>\n';
const page = Buffer.from(`<!doctype html><html><body>\n${line.repeat(Math.floor((MAX_BYTES - 64) / line.length))}</body></html>`);
const gzipped = gzipSync(page, { level: 6 });

async function startOrigin(encoding: 'identity' | 'gzip'): Promise<{ origin: string; close: () => Promise<void> }> {
  const server = http.createServer((_req, res) => {
    if (encoding === 'gzip') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'gzip' });
      res.end(gzipped);
    } else {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': String(page.length) });
      res.end(page);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** The service (bench/live-servers.ts) in a process of its own, so that its RSS is its own. */
async function startService(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', new URL('./live-servers.ts', import.meta.url).pathname], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const reader = createInterface({ input: child.stdout });
  const pending: ((line: string) => void)[] = [];
  reader.on('line', (text) => pending.shift()?.(text));
  const next = () => new Promise<string>((resolve) => pending.push(resolve));
  const info = JSON.parse(await next()) as { service: string; key: string };
  const peak = async () => {
    const answer = next();
    child.stdin.write('peak\n');
    return (JSON.parse(await answer) as { peakRss: number }).peakRss;
  };
  const stop = () => new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
  return { ...info, peak, stop };
}

const MiB = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MiB`;

async function run(encoding: 'identity' | 'gzip', budget: string, round: number) {
  const origin = await startOrigin(encoding);
  const service = await startService({ SHOPFRONT_ORIGIN: origin.origin, UPSTREAM_MAX_BYTES: String(MAX_BYTES), UPSTREAM_MEMORY_BYTES: budget });
  const agent = new Agent({ connections: concurrent });
  try {
    const atRest = await service.peak();
    const started = Date.now();
    const statuses = await Promise.all(
      Array.from({ length: concurrent }, async (_, index) => {
        const url = `${service.service}/v1/shopfront/shop?url=${encodeURIComponent(`https://www.shopfront.example/shop/m${round}x${index}`)}`;
        const response = await request(url, { dispatcher: agent, headers: { 'x-api-key': service.key } });
        await response.body.dump();
        return response.statusCode;
      }),
    );
    const elapsed = Date.now() - started;
    const peak = await service.peak();
    const counts = new Map<number, number>();
    for (const status of statuses) counts.set(status, (counts.get(status) ?? 0) + 1);
    const summary = [...counts].sort(([a], [b]) => a - b).map(([status, count]) => `${count}×${status}`).join(' ');
    const label = budget === OFF ? 'off (1 TB)' : MiB(Number(budget));
    console.log(`${encoding.padEnd(8)} | ${label.padEnd(10)} | ${summary.padEnd(20)} | ${String(elapsed).padStart(6)} ms | ${MiB(peak).padStart(8)} | ${MiB(atRest).padStart(7)}`);
  } finally {
    await agent.close();
    await service.stop();
    await origin.close();
  }
}

console.log(`${concurrent} concurrent live scrapes of distinct targets, every upstream answer ${MiB(page.length)} (gzip: ${(gzipped.length / 1024).toFixed(0)} KiB on the wire)`);
console.log('body     | budget     | answers              |   time    | peak RSS | at rest');
let round = 0;
for (const encoding of ['identity', 'gzip'] as const) {
  for (const budget of [values.budget, OFF]) {
    round += 1;
    await run(encoding, budget, round);
  }
}
