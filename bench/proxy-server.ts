// Child process of bench/live-scrape.ts: the baselines. `/proxy`, a minimal Fastify route that
// fetches the upstream page named in its query with undici's `request` and returns its bytes as
// they came (compressed): what any service must do at the least to answer from a live page.
// `/fetch`, the same with undici's `fetch`, which decodes the page as WHATWG fetch does: what a
// plain proxy written with fetch does, a second reference. Prints its address as one JSON line;
// answers `cpu` on stdin with this process's CPU time.
import Fastify from 'fastify';
import { createInterface } from 'node:readline';
import { Agent, fetch, Pool } from 'undici';
import { cpuReport } from './cpu-profile.ts';

const proxy = Fastify({ logger: false });
const pools = new Map<string, Pool>();
// The same request headers as the service's client, compression included: the upstream does
// the same work for every client.
const HEADERS = {
  accept: 'text/html,application/xhtml+xml',
  'accept-encoding': 'gzip, deflate, br',
  'accept-language': 'en-US,en;q=0.9',
  'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/142.0.0.0 Safari/537.36',
  'sec-fetch-mode': 'navigate',
  'sec-fetch-dest': 'document',
  'sec-fetch-site': 'none',
};
proxy.get('/proxy', async (request, reply) => {
  const { origin, path } = request.query as { origin: string; path: string };
  let pool = pools.get(origin);
  if (!pool) pools.set(origin, (pool = new Pool(origin, { connections: 128 })));
  // The (compressed) bytes are passed through.
  const upstream = await pool.request({ path, method: 'GET', headers: HEADERS });
  const body = Buffer.from(await upstream.body.arrayBuffer());
  reply.code(upstream.statusCode).header('content-type', upstream.headers['content-type'] ?? 'text/html');
  const encoding = upstream.headers['content-encoding'];
  if (typeof encoding === 'string') reply.header('content-encoding', encoding);
  return reply.send(body);
});
const fetchAgent = new Agent({ connections: 128 });
proxy.get('/fetch', async (request, reply) => {
  const { origin, path } = request.query as { origin: string; path: string };
  const upstream = await fetch(new URL(path, origin), { headers: HEADERS, dispatcher: fetchAgent });
  const body = Buffer.from(await upstream.arrayBuffer());
  return reply
    .code(upstream.status)
    .header('content-type', upstream.headers.get('content-type') ?? 'text/html')
    .send(body);
});
await proxy.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ proxy: `http://127.0.0.1:${(proxy.server.address() as { port: number }).port}` })}\n`);
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === 'cpu') {
    process.stdout.write(cpuReport());
  }
});
process.on('SIGTERM', async () => {
  await proxy.close();
  process.exit(0);
});
