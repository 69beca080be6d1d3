// Child process of bench/live-scrape.ts: a cheap upstream. The sandbox runs in this process
// behind one front server per platform; the front answers each distinct request (method, path
// and query, accepted encodings and language) with the bytes the sandbox gave the first time,
// so that after a warm-up pass the pages are pre-rendered and the upstream's own work (page
// generation, compression) no longer costs the measured processes' machine time twice. Prints
// the fronts' origins as the service's environment variables, one JSON line; answers `cpu` on
// stdin with this process's CPU time.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';
import { startSandbox } from '../sandbox/server.ts';
import { cpuReport } from './cpu-profile.ts';

interface Stored {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

const latencyMs = Number(process.env.SANDBOX_LATENCY_MS ?? '0');
const sandbox = await startSandbox({ seed: process.env.SANDBOX_SEED ?? 'bench' });
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'date', 'content-length']);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function front(origin: string) {
  const pool = new Pool(origin, { connections: 64 });
  const pages = new Map<string, Promise<Stored>>();
  const fill = async (incoming: IncomingMessage): Promise<Stored> => {
    // The client's own request headers, as they came: the platforms' contracts read more than the
    // encoding and the user agent (shopfront answers its captcha page to a request without
    // `Accept-Language`), so none is left out.
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(incoming.headers)) {
      if (!HOP_BY_HOP.has(name) && name !== 'host' && value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    const answer = await pool.request({ path: incoming.url ?? '/', method: 'GET', headers });
    const stored: Record<string, string> = {};
    for (const [name, value] of Object.entries(answer.headers)) {
      if (!HOP_BY_HOP.has(name) && value !== undefined) stored[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    return { status: answer.statusCode, headers: stored, body: Buffer.from(await answer.body.arrayBuffer()) };
  };
  const server = createServer((incoming: IncomingMessage, outgoing: ServerResponse) => {
    if (incoming.method !== 'GET') {
      outgoing.writeHead(405).end();
      return;
    }
    // Keyed on the headers that change the answer for the bench's clients: the encoding, and the
    // language (shopfront takes a request without one for a bot's). The user agent and `Accept`
    // are not keyed: the proxy's and the service's differ but are both a browser's, and the
    // proxy's warm-up is to pre-render the pages the service then asks for.
    const key = `${incoming.url} ${incoming.headers['accept-encoding'] ?? ''} ${incoming.headers['accept-language'] ?? ''}`;
    let page = pages.get(key);
    if (!page) pages.set(key, (page = fill(incoming)));
    page.then(
      async (stored) => {
        if (latencyMs > 0) await sleep(latencyMs);
        outgoing.writeHead(stored.status, { ...stored.headers, 'content-length': String(stored.body.length) }).end(stored.body);
      },
      () => outgoing.writeHead(502).end(),
    );
  });
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

const env: Record<string, string> = {};
for (const [name, origin] of Object.entries(sandbox.env)) env[name] = await front(origin);
process.stdout.write(`${JSON.stringify(env)}\n`);
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === 'cpu') {
    process.stdout.write(cpuReport());
  }
});
process.on('SIGTERM', () => process.exit(0));
