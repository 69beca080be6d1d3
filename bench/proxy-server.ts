// Child process of bench/live-scrape.ts: the baseline. A minimal Fastify route that fetches
// the upstream page named in its query with undici and returns its bytes as they came: what
// any service must do at the least to answer from a live page. Prints its address as one JSON
// line; answers `cpu` on stdin with this process's CPU time.
import Fastify from 'fastify';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';
import { cpuReport } from './cpu-profile.ts';

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
