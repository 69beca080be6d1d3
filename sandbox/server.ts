// The sandbox upstream: one HTTP server per platform, each answering as the upstream contract
// (the platform's src/platforms/*/README.md) describes, from data generated from a seed. Global latency and a rate of flaky answers can
// be configured on top of the per-account behaviours.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import type { SandboxPlatform, SandboxRequest, SandboxResponse } from './common.ts';
import { platforms } from './platforms/index.ts';
import { listenFailure } from '../src/lifecycle.ts';

export interface SandboxOptions {
  seed?: string;
  host?: string;
  /** First port; platforms take consecutive ports in the order of `platforms`. 0 = any free ports. */
  portBase?: number;
  /** Added to every answer, in ms. */
  latencyMs?: number;
  /** Share of requests (0..1) answered with a 503 or a reset connection, chosen deterministically. */
  flakyRate?: number;
  /** Latency of `slow-` accounts, in ms. */
  slowMs?: number;
  /** Largest request body accepted, in bytes. */
  maxBodyBytes?: number;
  /** Told of every answer (for tests that check what the upstream served). */
  observe?: (served: ServedAnswer) => void;
  /** Client addresses every platform blocks (429), as a real one blocks an IP: e.g. one proxy's. */
  blockedAddresses?: readonly string[];
  /** Platforms that go down (503 to everything) for `downMs` after every `upMs` up, from the start. */
  outages?: Partial<Record<SandboxPlatform['name'], { upMs: number; downMs: number }>>;
}

/** What a test or an operator changes in a running sandbox. */
export interface SandboxControl {
  /** Blocks (429) or unblocks a client address on every platform. */
  block(address: string, blocked?: boolean): void;
  /** Takes a platform down (503 to everything) or brings it back, whatever its outage schedule. */
  down(platform: SandboxPlatform['name'], down?: boolean): void;
  /**
   * Serves a platform's pages in a new layout that the contract does not describe, as a platform
   * that changed its pages does (their mappings then fail as unrecognised), or the old one again.
   */
  changed(platform: SandboxPlatform['name'], changed?: boolean): void;
  /**
   * Rewrites the text of a platform's 200 answers (`edit` given the path and the body), as a page
   * that changed between two visits (a follower more); null serves them as generated again.
   */
  rewrite(platform: SandboxPlatform['name'], edit: ((path: string, body: string) => string) | null): void;
}

/** One answer of the sandbox: status 0 is a reset connection; `bytes` is the body before compression. */
export interface ServedAnswer {
  platform: SandboxPlatform['name'];
  method: string;
  /** Path and query. */
  path: string;
  status: number;
  bytes: number;
}

export interface RunningSandbox {
  /** Origin of each platform, e.g. `{ snapmsg: 'http://127.0.0.1:4102' }`. */
  origins: Record<SandboxPlatform['name'], string>;
  /** The environment variables that point the service at this sandbox. */
  env: Record<string, string>;
  control: SandboxControl;
  close(): Promise<void>;
}

/** A page of the new layout: well-formed, but nothing in it is where the contract says. */
const CHANGED_HTML = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Welcome</title></head><body><div id="app-root" data-layout="2027"><main class="feed-v2"></main></div><script src="/static/app.v2.js"></script></body></html>';
const CHANGED_JSON = JSON.stringify({ apiVersion: 2, result: { items: [], cursor: null } });

/** A sandbox's state that `SandboxControl` changes. */
interface Conditions {
  blocked: Set<string>;
  down: Map<string, boolean>;
  changed: Set<string>;
  rewrites: Map<string, (path: string, body: string) => string>;
  startedAt: number;
}

const ENV_OF: Record<SandboxPlatform['name'], string> = {
  socialnet: 'SOCIALNET_ORIGIN',
  snapmsg: 'SNAPMSG_ORIGIN',
  'linkpage-a': 'LINKPAGE_A_ORIGIN',
  'linkpage-b': 'LINKPAGE_B_ORIGIN',
  shopfront: 'SHOPFRONT_ORIGIN',
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function readBody(request: IncomingMessage, limit: number): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Compresses as the client allows: gzip or brotli, alternating by path so both get exercised. */
function encode(body: Buffer, accept: string, path: string): { body: Buffer; encoding?: string } {
  if (body.length < 512) return { body };
  const brotli = /\bbr\b/.test(accept);
  const gzip = /\bgzip\b/.test(accept);
  const preferBrotli = path.length % 2 === 0;
  // Moderate levels: the sandbox must not be the bottleneck of the service's benchmarks.
  if (brotli && (preferBrotli || !gzip)) return { body: brotliCompressSync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 4 } }), encoding: 'br' };
  if (gzip) return { body: gzipSync(body, { level: 4 }), encoding: 'gzip' };
  return { body };
}

function isDown(platform: SandboxPlatform['name'], options: Settings, conditions: Conditions): boolean {
  const forced = conditions.down.get(platform);
  if (forced !== undefined) return forced;
  const outage = options.outages[platform];
  if (!outage) return false;
  return (Date.now() - conditions.startedAt) % (outage.upMs + outage.downMs) >= outage.upMs;
}

function serve(platform: SandboxPlatform, options: Settings, conditions: Conditions): Server {
  const attempts = new Map<string, number>();
  let served = 0;
  return createServer(async (incoming: IncomingMessage, outgoing: ServerResponse) => {
    try {
      const from = String(incoming.socket.remoteAddress).replace(/^::ffff:/, '');
      const at = (status: number, bytes: number) =>
        options.observe?.({ platform: platform.name, method: incoming.method ?? 'GET', path: incoming.url ?? '/', status, bytes });
      if (conditions.blocked.has(from)) {
        at(429, 0);
        outgoing.writeHead(429, { 'content-type': 'text/plain', 'retry-after': '60' }).end();
        return;
      }
      if (isDown(platform.name, options, conditions)) {
        at(503, 19);
        outgoing.writeHead(503, { 'content-type': 'text/plain' }).end('Service Unavailable');
        return;
      }
      const url = new URL(incoming.url ?? '/', 'http://sandbox.invalid');
      const body = await readBody(incoming, options.maxBodyBytes);
      if (body === null) {
        outgoing.writeHead(413).end();
        return;
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(incoming.headers)) headers[name] = Array.isArray(value) ? value.join(', ') : (value ?? '');
      const request: SandboxRequest = { method: incoming.method ?? 'GET', path: url.pathname, query: url.searchParams, headers, body };
      const key = `${request.method} ${url.pathname}${url.search} ${body}`;
      const attempt = (attempts.get(key) ?? 0) + 1;
      if (attempts.size > 100_000) attempts.clear();
      attempts.set(key, attempt);
      served += 1;

      if (options.latencyMs > 0) await sleep(options.latencyMs);
      // Deterministic flakiness: every n-th request fails, alternating 503 and reset.
      if (options.flakyRate > 0) {
        const every = Math.max(1, Math.round(1 / options.flakyRate));
        if (served % every === 0) {
          const reset = (served / every) % 2 === 0;
          options.observe?.({ platform: platform.name, method: request.method, path: `${url.pathname}${url.search}`, status: reset ? 0 : 503, bytes: reset ? 0 : 19 });
          if (reset) incoming.socket.destroy();
          else outgoing.writeHead(503, { 'content-type': 'text/plain' }).end('Service Unavailable');
          return;
        }
      }

      const response: SandboxResponse = await platform.handle(request, { seed: options.seed, attempt, slowMs: options.slowMs });
      const where = { platform: platform.name, method: request.method, path: `${url.pathname}${url.search}` };
      if ('reset' in response) {
        options.observe?.({ ...where, status: 0, bytes: 0 });
        incoming.socket.destroy();
        return;
      }
      if (response.delayMs) await sleep(response.delayMs);
      if (conditions.changed.has(platform.name) && response.status === 200) {
        const json = /json/.test(response.headers?.['content-type'] ?? '');
        response.body = json ? CHANGED_JSON : CHANGED_HTML;
      }
      const rewrite = conditions.rewrites.get(platform.name);
      if (rewrite && response.status === 200) response.body = rewrite(`${url.pathname}${url.search}`, typeof response.body === 'string' ? response.body : response.body.toString('utf8'));
      const raw = typeof response.body === 'string' ? Buffer.from(response.body) : response.body;
      options.observe?.({ ...where, status: response.status, bytes: raw.length });
      const { body: payload, encoding } = encode(raw, headers['accept-encoding'] ?? '', url.pathname);
      const out: Record<string, string> = { ...response.headers, 'content-length': String(payload.length) };
      if (encoding) out['content-encoding'] = encoding;
      outgoing.writeHead(response.status, out);
      outgoing.end(request.method === 'HEAD' ? undefined : payload);
    } catch (error) {
      outgoing.writeHead(500, { 'content-type': 'text/plain' }).end(`sandbox error: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
}

type Settings = Required<Omit<SandboxOptions, 'observe'>> & Pick<SandboxOptions, 'observe'>;

export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const settings: Settings = {
    seed: options.seed ?? 'sandbox',
    host: options.host ?? '127.0.0.1',
    portBase: options.portBase ?? 0,
    latencyMs: options.latencyMs ?? 0,
    flakyRate: options.flakyRate ?? 0,
    slowMs: options.slowMs ?? 3_000,
    maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
    observe: options.observe,
    blockedAddresses: options.blockedAddresses ?? [],
    outages: options.outages ?? {},
  };
  const conditions: Conditions = { blocked: new Set(settings.blockedAddresses), down: new Map(), changed: new Set(), rewrites: new Map(), startedAt: Date.now() };
  const control: SandboxControl = {
    block: (address, blocked = true) => void (blocked ? conditions.blocked.add(address) : conditions.blocked.delete(address)),
    down: (platform, down = true) => void conditions.down.set(platform, down),
    changed: (platform, changed = true) => void (changed ? conditions.changed.add(platform) : conditions.changed.delete(platform)),
    rewrite: (platform, edit) => void (edit ? conditions.rewrites.set(platform, edit) : conditions.rewrites.delete(platform)),
  };
  const servers: Server[] = [];
  const origins = {} as Record<SandboxPlatform['name'], string>;
  const env: Record<string, string> = {};
  const close = async () => {
    await Promise.all(
      servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
          }),
      ),
    );
  };
  for (const [index, platform] of platforms.entries()) {
    const server = serve(platform, settings, conditions);
    server.keepAliveTimeout = 10_000;
    const port = settings.portBase === 0 ? 0 : settings.portBase + index;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, settings.host, () => resolve());
      });
    } catch (error) {
      // The platforms already listening must not keep their ports.
      await close();
      throw listenFailure(error, { host: settings.host, port, hostVariable: 'SANDBOX_HOST', portVariable: 'SANDBOX_PORT_BASE', portSetting: settings.portBase, name: platform.name });
    }
    servers.push(server);
    const { port: bound } = server.address() as { port: number };
    origins[platform.name] = `http://${settings.host}:${bound}`;
    env[ENV_OF[platform.name]] = origins[platform.name];
  }
  return { origins, env, control, close };
}
