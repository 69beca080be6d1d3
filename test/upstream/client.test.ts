// The shared upstream client against local node:http servers: browser-like headers, origin-only
// connections, decoding, the size cap, redirects within the platform, retries and timeouts
// inside the time budget, and connection pools per origin.
import { describe, test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import zlib from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { UpstreamClient } from '../../src/upstream/client.ts';
import type { UpstreamClientOptions } from '../../src/upstream/client.ts';
import { UpstreamOutcome } from '../../src/upstream/outcomes.ts';
import type { OutcomeKind } from '../../src/upstream/outcomes.ts';
import { fetchAndRead } from '../../src/upstream/read.ts';
import type { Upstream, UpstreamRequest, UpstreamResponse } from '../../src/upstream/types.ts';
import { refusedPort } from '../support/ports.ts';

const PLATFORM = 'snapmsg';
const HOSTS = ['www.snapmsg.example', 'snapmsg.example'];

interface Hit {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Which server-side connection carried the request (1, 2, ...). */
  socket: number;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, hit: Hit) => unknown;

interface TestServer {
  origin: string;
  port: number;
  hits: Hit[];
  /** Connections accepted so far. */
  connections(): number;
}

/** A server on 127.0.0.1, port 0, closed (connections included) when the test ends. */
async function startServer(t: TestContext, handler: Handler): Promise<TestServer> {
  const hits: Hit[] = [];
  const ids = new WeakMap<Socket, number>();
  let connections = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const hit: Hit = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        socket: ids.get(req.socket) ?? 0,
      };
      hits.push(hit);
      Promise.resolve(handler(req, res, hit)).catch((error: unknown) => {
        res.destroy(error as Error);
      });
    });
  });
  server.on('connection', (socket: Socket) => {
    connections += 1;
    ids.set(socket, connections);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, port, hits, connections: () => connections };
}

function makeClient(t: TestContext, origins: Record<string, string>, options: Partial<UpstreamClientOptions> = {}): UpstreamClient {
  const platforms: UpstreamClientOptions['platforms'] = {};
  for (const [platform, origin] of Object.entries(origins)) {
    platforms[platform] = { origin, hosts: platform === PLATFORM ? HOSTS : [`www.${platform}.example`, `${platform}.example`] };
  }
  const client = new UpstreamClient({ random: () => 0, ...options, platforms });
  t.after(() => client.close());
  return client;
}

interface CallOptions {
  budgetMs?: number;
  deadline?: number;
  signal?: AbortSignal;
  platform?: string;
}

function call(client: UpstreamClient, request: UpstreamRequest, options: CallOptions = {}): Promise<UpstreamResponse> {
  const deadline = options.deadline ?? Date.now() + (options.budgetMs ?? 3_000);
  return client.bind(options.platform ?? PLATFORM, options.signal ?? new AbortController().signal, deadline)(request);
}

/** Awaits the promise and checks it failed with the typed outcome of this kind. */
async function expectOutcome(promise: Promise<unknown>, kind: OutcomeKind, platform = PLATFORM): Promise<UpstreamOutcome> {
  let caught: unknown;
  let settled = false;
  try {
    await promise;
    settled = true;
  } catch (error) {
    caught = error;
  }
  assert.ok(!settled, `expected UpstreamOutcome('${kind}'), got a response`);
  assert.ok(caught instanceof UpstreamOutcome, `expected UpstreamOutcome('${kind}'), got ${String(caught)}`);
  assert.equal(caught.kind, kind, caught.message);
  assert.equal(caught.platform, platform);
  return caught;
}

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = Date.now();
  const value = await run();
  return { value, ms: Date.now() - start };
}

/** Resolves when the predicate holds, or fails after `ms` (bounded polling). */
async function eventually(predicate: () => boolean, ms: number, what: string): Promise<void> {
  const until = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > until) assert.fail(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const drainOrClose = (res: http.ServerResponse): Promise<void> =>
  new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });

/** Never answers (the test's cleanup closes the connection). */
const hang: Handler = () => undefined;

describe('headers', () => {
  test('a page request carries the browser-like navigation headers', async (t) => {
    const server = await startServer(t, (_req, res) => res.end('<html></html>'));
    const client = makeClient(t, { [PLATFORM]: server.origin });
    const response = await call(client, { path: '/add/lunavoss', kind: 'page' });
    assert.equal(response.status, 200);
    assert.equal(response.body, '<html></html>');
    assert.equal(server.hits.length, 1);
    const { headers, method, url } = server.hits[0]!;
    assert.equal(method, 'GET');
    assert.equal(url, '/add/lunavoss');
    const ua = String(headers['user-agent']);
    assert.match(ua, /^Mozilla\/5\.0 \((Windows NT|Macintosh|X11)/, 'a desktop browser user agent');
    assert.match(ua, /(Chrome|Firefox|Safari)\/\d+/);
    assert.doesNotMatch(ua, /Mobile|Android|iPhone|node|undici/i);
    assert.match(String(headers.accept), /^text\/html,/);
    assert.equal(headers['accept-language'], 'en-US,en;q=0.9');
    assert.equal(headers['sec-fetch-mode'], 'navigate');
    assert.equal(headers['sec-fetch-dest'], 'document');
    assert.equal(headers['sec-fetch-site'], 'none');
    const encodings = String(headers['accept-encoding']).split(',').map((value) => value.trim());
    for (const encoding of ['gzip', 'deflate', 'br']) assert.ok(encodings.includes(encoding), `accept-encoding has ${encoding}`);
    assert.equal(headers.host, `127.0.0.1:${server.port}`, 'Host is the configured origin');
  });

  test('an api request carries the XHR header set', async (t) => {
    const server = await startServer(t, (_req, res) => res.end('{}'));
    const client = makeClient(t, { [PLATFORM]: server.origin });
    await call(client, { path: '/api/feed?x=1', kind: 'api' });
    const { headers } = server.hits[0]!;
    assert.match(String(headers['user-agent']), /^Mozilla\/5\.0 /);
    assert.equal(headers['accept-language'], 'en-US,en;q=0.9');
    assert.match(String(headers.accept), /application\/json/);
    assert.doesNotMatch(String(headers.accept), /text\/html/);
    assert.equal(headers['sec-fetch-mode'], 'cors');
    assert.equal(headers['sec-fetch-dest'], 'empty');
    assert.equal(headers['sec-fetch-site'], 'same-origin');
    assert.match(String(headers['accept-encoding']), /gzip/);
    assert.equal(headers['upgrade-insecure-requests'], undefined, 'no navigation-only headers');
  });

  test('extra headers are sent (overriding defaults, once) and a POST body is sent', async (t) => {
    const server = await startServer(t, (_req, res) => res.end('ok'));
    const client = makeClient(t, { [PLATFORM]: server.origin });
    const body = 'variables=%7B%22id%22%3A%221%22%7D&doc_id=42';
    await call(client, {
      path: '/api/graphql/',
      kind: 'api',
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-FB-LSD': 'token-1', ACCEPT: '*/*' },
      body,
    });
    const hit = server.hits[0]!;
    assert.equal(hit.method, 'POST');
    assert.equal(hit.url, '/api/graphql/');
    assert.equal(hit.body, body);
    assert.equal(hit.headers['content-type'], 'application/x-www-form-urlencoded');
    assert.equal(hit.headers['x-fb-lsd'], 'token-1');
    assert.equal(hit.headers.accept, '*/*', 'the caller’s Accept replaces the default instead of joining it');
    assert.equal(hit.headers['sec-fetch-mode'], 'cors', 'defaults are kept beside the extra headers');
    assert.equal(hit.headers['accept-language'], 'en-US,en;q=0.9');
  });
});

describe('origin only', () => {
  test('every path goes to the configured origin, exactly as given', async (t) => {
    const server = await startServer(t, (_req, res) => res.end('ok'));
    const evil = await startServer(t, (_req, res) => res.end('evil'));
    const client = makeClient(t, { [PLATFORM]: server.origin });
    const paths = ['/a', '/shop/api/feed?x=1&y=%20z', '/@127.0.0.1:' + evil.port + '/x', '/%2F%2Fevil.test/x', `/http://127.0.0.1:${evil.port}/x`];
    for (const path of paths) {
      const response = await call(client, { path, kind: 'page' });
      assert.equal(response.status, 200);
      assert.equal(response.body, 'ok');
      assert.equal(response.path, path);
    }
    assert.deepEqual(server.hits.map((hit) => hit.url), paths);
    assert.equal(evil.connections(), 0);
  });

  test('absolute, protocol-relative and host-only paths are refused before any connection', async (t) => {
    const server = await startServer(t, (_req, res) => res.end('ok'));
    const evil = await startServer(t, (_req, res) => res.end('evil'));
    const client = makeClient(t, { [PLATFORM]: server.origin });
    const paths = [
      'http://evil.test/x',
      'https://evil.test/x',
      '//evil.test/x',
      `http://127.0.0.1:${evil.port}/x`,
      `//127.0.0.1:${evil.port}/x`,
      `127.0.0.1:${evil.port}/x`,
      'evil.test/x',
      '',
    ];
    for (const path of paths) {
      await assert.rejects(call(client, { path, kind: 'page' }), Error, `path ${JSON.stringify(path)} must be refused`);
    }
    assert.equal(server.connections(), 0);
    assert.equal(evil.connections(), 0);
  });

  test('a path with whitespace or CR/LF never reaches the wire', async (t) => {
    const server = await startServer(t, (_req, res) => res.end('ok'));
    const client = makeClient(t, { [PLATFORM]: server.origin }, { maxRetries: 1 });
    for (const path of ['/a b', '/a\r\nHost: evil.test\r\n\r\nGET /x', '/a\nx']) {
      await assert.rejects(call(client, { path, kind: 'page' }, { budgetMs: 1_000 }), Error, JSON.stringify(path));
    }
    assert.equal(server.connections(), 0);
  });

  test('a header name or value that is not valid HTTP is a programming error: thrown, never sent, never retried', async (t) => {
    const server = await startServer(t, (_req, res) => res.end('ok'));
    const client = makeClient(t, { [PLATFORM]: server.origin });
    for (const headers of [{ 'x-token': 'a\r\nHost: evil.test' } as Record<string, string>, { 'x-token': 'a\u0000b' }, { 'x bad': 'v' }, { 'x-b\u0001ad': 'v' }]) {
      await assert.rejects(call(client, { path: '/p', kind: 'api', headers }), (error) => error instanceof Error && !(error instanceof UpstreamOutcome), JSON.stringify(headers));
    }
    assert.equal(server.connections(), 0);
  });

  test('binding a platform without a configured origin fails', async (t) => {
    const server = await startServer(t, (_req, res) => res.end('ok'));
    const client = makeClient(t, { [PLATFORM]: server.origin });
    assert.throws(() => client.bind('evil.test', new AbortController().signal, Date.now() + 1000));
    assert.equal(server.connections(), 0);
  });
});

describe('decoding', () => {
  const text = 'héllo wörld 🌍 مرحبا '.repeat(200);
  const encoders: Record<string, (input: Buffer) => Buffer> = {
    gzip: (input) => zlib.gzipSync(input),
    'x-gzip': (input) => zlib.gzipSync(input),
    deflate: (input) => zlib.deflateSync(input),
    br: (input) => zlib.brotliCompressSync(input),
  };

  test('gzip, deflate and br bodies are decoded to UTF-8 text', async (t) => {
    const server = await startServer(t, (req, res) => {
      const encoding = (req.url ?? '').slice(1);
      const encode = encoders[encoding];
      if (!encode) return void res.end(text);
      const encoded = encode(Buffer.from(text, 'utf8'));
      res.writeHead(200, { 'content-encoding': encoding, 'content-length': String(encoded.length), 'content-type': 'text/html; charset=utf-8' });
      res.end(encoded);
    });
    const client = makeClient(t, { [PLATFORM]: server.origin });
    for (const encoding of [...Object.keys(encoders), 'identity']) {
      const response = await call(client, { path: `/${encoding}`, kind: 'page' });
      assert.equal(response.status, 200, encoding);
      assert.equal(response.body, text, `${encoding} body decoded`);
    }
    assert.equal(server.hits.length, Object.keys(encoders).length + 1, 'no retries');
  });

  test('an unsupported content-encoding is unrecognised, without retries', async (t) => {
    const server = await startServer(t, (req, res) => {
      res.writeHead(200, { 'content-encoding': decodeURIComponent((req.url ?? '').slice(1)) });
      res.end('whatever bytes');
    });
    const client = makeClient(t, { [PLATFORM]: server.origin });
    for (const encoding of ['compress', 'zstd', 'gzip, br']) {
      await expectOutcome(call(client, { path: `/${encodeURIComponent(encoding)}`, kind: 'page' }), 'unrecognised');
    }
    assert.equal(server.hits.length, 3);
    // Refusing the body must not leave an unhandled stream error behind (it used to crash the process).
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 20));
  });

  test('a corrupt compressed body is retried and then transient, never a raw error', async (t) => {
    const server = await startServer(t, (req, res) => {
      if (req.url === '/gzip-garbage') {
        res.writeHead(200, { 'content-encoding': 'gzip' });
        return void res.end('definitely not gzip');
      }
      if (req.url === '/gzip-truncated') {
        res.writeHead(200, { 'content-encoding': 'gzip' });
        return void res.end(zlib.gzipSync(Buffer.from(text)).subarray(0, 40));
      }
      if (req.url === '/deflate-garbage') {
        res.writeHead(200, { 'content-encoding': 'deflate' });
        return void res.end('definitely not deflate');
      }
      if (req.url === '/br-garbage') {
        res.writeHead(200, { 'content-encoding': 'br' });
        return void res.end('definitely not brotli, definitely not');
      }
      res.end('fine');
    });
    const client = makeClient(t, { [PLATFORM]: server.origin }, { maxRetries: 2, connections: 1 });
    for (const path of ['/gzip-garbage', '/gzip-truncated', '/deflate-garbage', '/br-garbage']) {
      const before = server.hits.length;
      await expectOutcome(call(client, { path, kind: 'page' }), 'transient');
      assert.equal(server.hits.length - before, 3, `${path}: first attempt and 2 retries`);
    }
  });

  test('a corrupt compressed body does not hold its connection', async (t) => {
    const large = Buffer.alloc(4 * 1024 * 1024, 7);
    const server = await startServer(t, (req, res) => {
      if (req.url === '/bad') {
        res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': String(large.length) });
        return void res.end(large);
      }
      res.end('fine');
    });
    // One connection, long body timeout: a half-read body left in the pool would block the next request.
    const client = makeClient(t, { [PLATFORM]: server.origin }, { maxRetries: 0, connections: 1, bodyTimeoutMs: 10_000 });
    await expectOutcome(call(client, { path: '/bad', kind: 'page' }), 'transient');
    const { value, ms } = await timed(() => call(client, { path: '/next', kind: 'page' }, { budgetMs: 3_000 }));
    assert.equal(value.body, 'fine');
    assert.ok(ms < 1_000, `next request took ${ms} ms`);
  });
});

describe('size cap', () => {
  const CAP = 4 * 1024;

  test('a body of exactly the cap is accepted; one byte more is unrecognised (declared or chunked)', async (t) => {
    const server = await startServer(t, (req, res) => {
      const [, size, mode] = (req.url ?? '').split('/');
      const body = Buffer.alloc(Number(size), 'a');
      if (mode === 'chunked') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write(body.subarray(0, 100));
        return void res.end(body.subarray(100));
      }
      res.writeHead(200, { 'content-length': String(body.length) });
      res.end(body);
    });
    const client = makeClient(t, { [PLATFORM]: server.origin }, { maxBodyBytes: CAP });
    for (const mode of ['declared', 'chunked']) {
      const response = await call(client, { path: `/${CAP}/${mode}`, kind: 'page' });
      assert.equal(response.body.length, CAP, mode);
      await expectOutcome(call(client, { path: `/${CAP + 1}/${mode}`, kind: 'page' }), 'unrecognised');
    }
    assert.equal(server.hits.length, 4, 'an oversized body is not retried');
  });

  test('a declared content-length over the cap is refused without reading the body', async (t) => {
    let closed = false;
    const server = await startServer(t, (_req, res) => {
      res.on('close', () => (closed = true));
      res.writeHead(200, { 'content-length': String(1_000_000) });
      res.write(Buffer.alloc(1024, 'a')); // then stalls: reading it all would end in a timeout
    });
    const client = makeClient(t, { [PLATFORM]: server.origin }, { maxBodyBytes: CAP, bodyTimeoutMs: 5_000 });
    const { ms } = await timed(() => expectOutcome(call(client, { path: '/big', kind: 'page' }, { budgetMs: 5_000 }), 'unrecognised'));
    assert.ok(ms < 1_000, `refused after ${ms} ms`);
    assert.equal(server.hits.length, 1);
    await eventually(() => closed, 2_000, 'the client closes the connection');
  });

  test('a streamed body over the cap is cut off while streaming', async (t) => {
    const total = 64 * 1024 * 1024;
    let result: { written: number; finished: boolean } | undefined;
    const server = await startServer(t, async (_req, res) => {
      const chunk = Buffer.alloc(16 * 1024, 'a');
      let closed = false;
      res.on('close', () => (closed = true));
      res.writeHead(200, { 'content-type': 'text/plain' }); // no length: chunked
      let written = 0;
      while (written < total && !closed) {
        written += chunk.length;
        if (!res.write(chunk)) await drainOrClose(res);
      }
      if (!closed) res.end();
      result = { written, finished: !closed };
    });
    const client = makeClient(t, { [PLATFORM]: server.origin }, { maxBodyBytes: 64 * 1024 });
    await expectOutcome(call(client, { path: '/stream', kind: 'page' }, { budgetMs: 5_000 }), 'unrecognised');
    await eventually(() => result !== undefined, 3_000, 'the server stops writing');
    assert.equal(result!.finished, false, 'the server saw the connection closed before it finished');
    assert.ok(result!.written < total / 4, `the server wrote ${result!.written} bytes`);
    assert.equal(server.hits.length, 1);
  });

  test('a gzip or br bomb (small compressed, huge decoded) is unrecognised', async (t) => {
    const zeros = Buffer.alloc(32 * 1024 * 1024);
    const bombs: Record<string, Buffer> = { gzip: zlib.gzipSync(zeros), br: zlib.brotliCompressSync(zeros) };
    const server = await startServer(t, (req, res) => {
      const encoding = (req.url ?? '').slice(1);
      const bomb = bombs[encoding]!;
      res.writeHead(200, { 'content-encoding': encoding, 'content-length': String(bomb.length) });
      res.end(bomb);
    });
    const client = makeClient(t, { [PLATFORM]: server.origin }, { maxBodyBytes: 64 * 1024 });
    for (const encoding of Object.keys(bombs)) {
      assert.ok(bombs[encoding]!.length < 64 * 1024, 'the compressed body itself is under the cap');
      await expectOutcome(call(client, { path: `/${encoding}`, kind: 'page' }), 'unrecognised');
    }
    assert.equal(server.hits.length, 2);
  });

  test('a compressed body larger than a small cap (and the memory budget) is unrecognised, not overloaded', async (t) => {
    const noise = zlib.gzipSync(randomBytes(16 * 1024));
    const server = await startServer(t, (_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': String(noise.length) });
      res.end(noise);
    });
    const client = makeClient(t, { [PLATFORM]: server.origin }, { maxBodyBytes: 4 * 1024, memoryBytes: 4 * 1024 });
    await expectOutcome(call(client, { path: '/noise', kind: 'page' }), 'unrecognised');
    assert.equal(client.memory.used, 0);
  });

  test('the default cap is 10 MB of decoded body', async (t) => {
    const tenMb = 10 * 1024 * 1024;
    const bodies: Record<string, Buffer> = {
      '/at-cap': zlib.gzipSync(Buffer.alloc(tenMb, 'a')),
      '/over-cap': zlib.gzipSync(Buffer.alloc(tenMb + 1, 'a')),
    };
    const server = await startServer(t, (req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      res.end(bodies[req.url ?? '']);
    });
    const client = makeClient(t, { [PLATFORM]: server.origin });
    const response = await call(client, { path: '/at-cap', kind: 'page' }, { budgetMs: 5_000 });
    assert.equal(response.body.length, tenMb);
    await expectOutcome(call(client, { path: '/over-cap', kind: 'page' }, { budgetMs: 5_000 }), 'unrecognised');
  });
});

describe('redirects', () => {
  test('relative Locations are followed on the origin and the final path is returned', async (t) => {
    const server = await startServer(t, (req, res) => {
      const routes: Record<string, string> = { '/a': '/b?x=1', '/dir/a': 'c?y=2', '/up/a': '../top#frag' };
      const location = routes[req.url ?? ''];
      if (location) {
        res.writeHead(302, { location });
        return void res.end();
      }
      res.end(`final ${req.url}`);
    });
    const client = makeClient(t, { [PLATFORM]: server.origin });
    const cases: [string, string][] = [
      ['/a', '/b?x=1'],
      ['/dir/a', '/dir/c?y=2'],
      ['/up/a', '/top'],
    ];
    for (const [from, to] of cases) {
      const response = await call(client, { path: from, kind: 'page' });
      assert.equal(response.status, 200);
      assert.equal(response.path, to);
      assert.equal(response.body, `final ${to}`);
      assert.equal(response.offPlatformLocation, undefined);
    }
    assert.deepEqual(server.hits.map((hit) => hit.url), ['/a', '/b?x=1', '/dir/a', '/dir/c?y=2', '/up/a', '/top']);
  });

  test('absolute Locations on the platform’s hosts are followed on the origin (same path and query)', async (t) => {
    const evil = await startServer(t, (_req, res) => res.end('evil'));
    const locations = ['https://snapmsg.example/z?q=1', 'http://www.snapmsg.example/w', 'https://WWW.SNAPMSG.EXAMPLE/up?a=%20b'];
    const server = await startServer(t, (req, res) => {
      const index = Number(/^\/start\/(\d)$/.exec(req.url ?? '')?.[1] ?? -1);
      if (index >= 0) {
        res.writeHead(301, { location: locations[index]! });
        return void res.end();
      }
      res.end(`final ${req.url}`);
    });
    const client = makeClient(t, { [PLATFORM]: server.origin });
    const expected = ['/z?q=1', '/w', '/up?a=%20b'];
    for (const [index, path] of expected.entries()) {
      const response = await call(client, { path: `/start/${index}`, kind: 'page' });
      assert.equal(response.status, 200);
      assert.equal(response.path, path);
      assert.equal(response.body, `final ${path}`);
    }
    assert.equal(server.hits.length, 6);
    assert.equal(evil.connections(), 0);
  });

  test('303 (and 302) after a POST continue as GET without the body; 307 keeps POST and body', async (t) => {
    const server = await startServer(t, (req, res) => {
      const status = Number(/^\/form\/(\d{3})$/.exec(req.url ?? '')?.[1] ?? 0);
      if (status) {
        res.writeHead(status, { location: '/done' });
        return void res.end();
      }
      res.end('done');
    });
    const client = makeClient(t, { [PLATFORM]: server.origin });
    for (const status of [303, 302, 307]) {
      const before = server.hits.length;
      const response = await call(client, {
        path: `/form/${status}`,
        kind: 'api',
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'a=1',
      });
      assert.equal(response.status, 200);
      assert.equal(response.path, '/done');
      const [first, second] = server.hits.slice(before);
      assert.equal(first!.method, 'POST');
      assert.equal(first!.body, 'a=1');
      if (status === 307) {
        assert.equal(second!.method, 'POST', '307 keeps the method');
        assert.equal(second!.body, 'a=1', '307 keeps the body');
      } else {
        assert.equal(second!.method, 'GET', `${status} after POST continues as GET`);
        assert.equal(second!.body, '');
      }
    }
  });

  test('5 redirects are followed; a 6th is blocked', async (t) => {
    const server = await startServer(t, (req, res) => {
      const match = /^\/(\w+)\/(\d+)$/.exec(req.url ?? '');
      const [, chain, step] = match ?? [];
      const length = chain === 'five' ? 5 : 6;
      if (match && Number(step) < length) {
        res.writeHead(302, { location: `/${chain}/${Number(step) + 1}` });
        return void res.end();
      }
      res.end('end of chain');
    });
    const client = makeClient(t, { [PLATFORM]: server.origin });
    const response = await call(client, { path: '/five/0', kind: 'page' });
    assert.equal(response.status, 200);
    assert.equal(response.path, '/five/5');
    assert.equal(server.hits.length, 6);
    await expectOutcome(call(client, { path: '/six/0', kind: 'page' }), 'blocked');
    assert.deepEqual(
      server.hits.slice(6).map((hit) => hit.url),
      ['/six/0', '/six/1', '/six/2', '/six/3', '/six/4', '/six/5'],
      'the 6th redirect is not followed',
    );
  });

  test('a Location on another host is not followed but returned, and no connection goes there', async (t) => {
    const evil = await startServer(t, (_req, res) => res.end('evil'));
    const locations = [
      'https://evil.test/x',
      'https://www.snapmsg.example.evil.test/x',
      'https://snapmsg.example.evil.test/',
      'https://evilsnapmsg.example/',
      'https://www.snapmsg.example@evil.test/',
      'https://www.snapmsg.example:pw@evil.test/',
      'https://evil.test/?next=https://www.snapmsg.example/',
      'https://evil.test#@www.snapmsg.example/',
      '//evil.test/x',
      '/\\evil.test/x',
      `http://127.0.0.1:${evil.port}/x`,
      `//127.0.0.1:${evil.port}/x`,
      `/\\127.0.0.1:${evil.port}/x`,
      `http://www.snapmsg.example@127.0.0.1:${evil.port}/x`,
      'javascript:alert(1)',
      'ftp://www.snapmsg.example/x',
    ];
    const server = await startServer(t, (req, res) => {
      if (req.url === '/hop') {
        res.writeHead(302, { location: '/off/0' });
        return void res.end();
      }
      const index = Number(/^\/off\/(\d+)$/.exec(req.url ?? '')?.[1] ?? -1);
      res.writeHead(302, { location: locations[index] ?? '/' });
      res.end('moved');
    });
    const client = makeClient(t, { [PLATFORM]: server.origin });
    for (const [index, location] of locations.entries()) {
      const response = await call(client, { path: `/off/${index}`, kind: 'page' });
      assert.equal(response.status, 302, location);
      assert.equal(response.offPlatformLocation, location, `${location} is returned, not followed`);
      assert.equal(response.path, `/off/${index}`);
    }
    assert.equal(server.hits.length, locations.length, 'nothing followed on the origin either');
    // After an on-platform hop, the off-platform Location still stops the chain.
    const response = await call(client, { path: '/hop', kind: 'page' });
    assert.equal(response.offPlatformLocation, locations[0]);
    assert.equal(response.path, '/off/0');
    assert.equal(evil.connections(), 0);
  });
});

describe('retries and timeouts', () => {
  test('503 then 200: retried, 200 after exactly 2 attempts', async (t) => {
    const server = await startServer(t, (_req, res) => {
      res.statusCode = server.hits.length === 1 ? 503 : 200;
      res.end(res.statusCode === 200 ? 'ok' : 'unavailable');
    });
    const client = makeClient(t, { [PLATFORM]: server.origin });
    const response = await call(client, { path: '/p', kind: 'page' });
    assert.equal(response.status, 200);
    assert.equal(response.body, 'ok');
    assert.equal(server.hits.length, 2);
  });

  test('a reset connection then 200: retried, 200', async (t) => {
    const server = await startServer(t, (req, res) => {
      if (server.hits.length === 1) return void req.socket.destroy();
      res.end('ok');
    });
    const client = makeClient(t, { [PLATFORM]: server.origin });
    const response = await call(client, { path: '/p', kind: 'page' });
    assert.equal(response.status, 200);
    assert.equal(response.body, 'ok');
    assert.equal(server.hits.length, 2);
  });

  test('a reset in the middle of the body then 200: retried, 200', async (t) => {
    const server = await startServer(t, (req, res) => {
      if (server.hits.length === 1) {
        res.writeHead(200, { 'content-length': '1000' });
        res.write('partial');
        setTimeout(() => req.socket.destroy(), 20);
        return;
      }
      res.end('ok');
    });
    const client = makeClient(t, { [PLATFORM]: server.origin });
    const response = await call(client, { path: '/p', kind: 'page' });
    assert.equal(response.body, 'ok');
    assert.equal(server.hits.length, 2);
  });

  test('always 5xx: transient after the retries, within the budget', async (t) => {
    const statuses = [500, 502, 503, 504, 503];
    const server = await startServer(t, (_req, res) => {
      res.statusCode = statuses[(server.hits.length - 1) % statuses.length]!;
      res.end('down');
    });
    const client = makeClient(t, { [PLATFORM]: server.origin });
    const { ms } = await timed(() => expectOutcome(call(client, { path: '/p', kind: 'page' }, { budgetMs: 2_000 }), 'transient'));
    assert.equal(server.hits.length, 5, 'the first attempt and 4 retries (the default)');
    assert.ok(ms < 2_000 + 200, `took ${ms} ms`);
  });

  test('5xx until the budget ends: transient, and backoff never sleeps past the deadline', async (t) => {
    const server = await startServer(t, (_req, res) => {
      res.statusCode = 503;
      res.end();
    });
    let draws = 0;
    const client = makeClient(t, { [PLATFORM]: server.origin }, {
      maxRetries: 1_000,
      backoffMs: 40,
      random: () => {
        draws += 1;
        return 0.9;
      },
    });
    const budgetMs = 1_200;
    const { ms } = await timed(() => expectOutcome(call(client, { path: '/p', kind: 'page' }, { budgetMs }), 'transient'));
    assert.ok(ms <= budgetMs + 150, `took ${ms} ms for a ${budgetMs} ms budget`);
    assert.ok(server.hits.length >= 3, `${server.hits.length} attempts`);
    assert.ok(server.hits.length < 100, 'backoff grows');
    assert.ok(draws >= server.hits.length - 1, 'the jitter uses the injected random source');
  });

  test('jitter uses the injected random: 0 retries at once, near 1 waits and gives up before the deadline', async (t) => {
    const server = await startServer(t, (_req, res) => {
      res.statusCode = 503;
      res.end();
    });
    // backoffMs 10 s: with Math.random the retries could not fit in the budget.
    const immediate = makeClient(t, { [PLATFORM]: server.origin }, { backoffMs: 10_000, random: () => 0 });
    const fast = await timed(() => expectOutcome(call(immediate, { path: '/p', kind: 'page' }, { budgetMs: 3_000 }), 'transient'));
    assert.equal(server.hits.length, 5);
    assert.ok(fast.ms < 1_000, `random 0 retried at once (${fast.ms} ms)`);

    let draws = 0;
    const slow = makeClient(t, { [PLATFORM]: server.origin }, {
      backoffMs: 400,
      random: () => {
        draws += 1;
        return 0.999;
      },
    });
    const before = server.hits.length;
    const waited = await timed(() => expectOutcome(call(slow, { path: '/p', kind: 'page' }, { budgetMs: 1_000 }), 'transient'));
    // attempt 1 at 0, waits ~399 ms, attempt 2 at ~400; the next wait (~799 ms) would pass the deadline.
    assert.equal(server.hits.length - before, 2);
    assert.ok(draws >= 1);
    assert.ok(waited.ms >= 350, `the first backoff was slept (${waited.ms} ms)`);
    assert.ok(waited.ms < 1_000, `gave up before the deadline instead of sleeping past it (${waited.ms} ms)`);
  });

  test('429 is blocked without a retry', async (t) => {
    const server = await startServer(t, (_req, res) => {
      res.writeHead(429, { 'retry-after': '1' });
      res.end('slow down');
    });
    const client = makeClient(t, { [PLATFORM]: server.origin });
    await expectOutcome(call(client, { path: '/p', kind: 'page' }), 'blocked');
    assert.equal(server.hits.length, 1);
  });

  test('404 and 403 are returned as they are, with their body, without a retry', async (t) => {
    const server = await startServer(t, (req, res) => {
      res.statusCode = Number((req.url ?? '').slice(1));
      res.end(`status ${res.statusCode}`);
    });
    const client = makeClient(t, { [PLATFORM]: server.origin });
    for (const status of [404, 403, 410]) {
      const response = await call(client, { path: `/${status}`, kind: 'page' });
      assert.equal(response.status, status);
      assert.equal(response.body, `status ${status}`);
    }
    assert.equal(server.hits.length, 3);
  });

  test('headers slower than the budget: transient, returned promptly at the deadline', async (t) => {
    const server = await startServer(t, hang);
    const client = makeClient(t, { [PLATFORM]: server.origin }, { headersTimeoutMs: 10_000 });
    const budgetMs = 700;
    const { ms } = await timed(() => expectOutcome(call(client, { path: '/slow', kind: 'page' }, { budgetMs }), 'transient'));
    assert.ok(ms >= budgetMs - 150, `did not give up early (${ms} ms)`);
    assert.ok(ms < budgetMs + 250, `returned at the deadline (${ms} ms)`);
  });

  test('the header timeout applies inside the budget and is retried', async (t) => {
    const server = await startServer(t, hang);
    const client = makeClient(t, { [PLATFORM]: server.origin }, { headersTimeoutMs: 150 });
    const budgetMs = 1_200;
    const { ms } = await timed(() => expectOutcome(call(client, { path: '/slow', kind: 'page' }, { budgetMs }), 'transient'));
    assert.ok(server.hits.length >= 2, `timed-out attempts are retried (${server.hits.length})`);
    assert.ok(ms < budgetMs + 250, `${ms} ms`);
  });

  test('a body that stalls after the headers: transient (body timeout, retried)', async (t) => {
    const server = await startServer(t, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<html>partial');
    });
    const client = makeClient(t, { [PLATFORM]: server.origin }, { bodyTimeoutMs: 150 });
    const budgetMs = 1_200;
    const { ms } = await timed(() => expectOutcome(call(client, { path: '/stall', kind: 'page' }, { budgetMs }), 'transient'));
    assert.ok(server.hits.length >= 2, `timed-out attempts are retried (${server.hits.length})`);
    assert.ok(ms < budgetMs + 250, `${ms} ms`);
  });

  test('a body that stalls until the deadline: transient at the deadline', async (t) => {
    const server = await startServer(t, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<html>partial');
    });
    const client = makeClient(t, { [PLATFORM]: server.origin }, { bodyTimeoutMs: 10_000 });
    const budgetMs = 600;
    const { ms } = await timed(() => expectOutcome(call(client, { path: '/stall', kind: 'page' }, { budgetMs }), 'transient'));
    assert.ok(ms < budgetMs + 250, `${ms} ms`);
  });

  test('a refused connection is transient within the budget', async (t) => {
    const server = await startServer(t, (_req, res) => res.end('ok'));
    const closed = await refusedPort();
    t.after(() => closed.release());
    const client = makeClient(t, { [PLATFORM]: closed.origin }, { connectTimeoutMs: 200 });
    const { ms } = await timed(() => expectOutcome(call(client, { path: '/p', kind: 'page' }, { budgetMs: 1_000 }), 'transient'));
    assert.ok(ms < 1_000 + 250, `${ms} ms`);
    assert.equal(server.connections(), 0);
  });

  test('an already aborted signal or a passed deadline: no request is made', async (t) => {
    const server = await startServer(t, (_req, res) => res.end('ok'));
    const client = makeClient(t, { [PLATFORM]: server.origin });
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(call(client, { path: '/p', kind: 'page' }, { signal: controller.signal }), UpstreamOutcome);
    await assert.rejects(call(client, { path: '/p', kind: 'page' }, { deadline: Date.now() - 1 }), UpstreamOutcome);
    assert.equal(server.connections(), 0);
    assert.equal(server.hits.length, 0);
  });

  test('aborting the signal mid-request ends the call promptly', async (t) => {
    const server = await startServer(t, hang);
    const client = makeClient(t, { [PLATFORM]: server.origin });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    const { ms } = await timed(() =>
      expectOutcome(call(client, { path: '/p', kind: 'page' }, { signal: controller.signal, budgetMs: 5_000 }), 'transient'),
    );
    assert.ok(ms < 600, `${ms} ms`);
    assert.equal(server.hits.length, 1, 'not retried after the abort');
  });
});

/** What a raw origin writes back for one request: bytes, then the socket is ended (or left open). */
type RawAnswer = (request: number) => { bytes: Buffer | string; end?: boolean };

interface RawServer {
  origin: string;
  /** Request heads received so far. */
  requests(): number;
}

/**
 * A `net` server that writes whatever bytes the test gives it, so that the client meets
 * malformed HTTP no well-behaved server library would produce. Each request head (up to the
 * blank line) gets one answer; the connection is ended after it unless `end` is false.
 */
async function startRawServer(t: TestContext, answer: RawAnswer): Promise<RawServer> {
  let requests = 0;
  const sockets = new Set<Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let pending = '';
    socket.on('data', (chunk: Buffer) => {
      pending += chunk.toString('latin1');
      let end: number;
      while ((end = pending.indexOf('\r\n\r\n')) >= 0) {
        pending = pending.slice(end + 4);
        requests += 1;
        const reply = answer(requests);
        socket.write(reply.bytes);
        if (reply.end !== false) socket.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, requests: () => requests };
}

const OK_ANSWER = 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok';

/** Malformed answers an origin (or something posing as one) may send, by name. */
const MALFORMED: Record<string, string | Buffer> = {
  'an invalid status line': 'HTTP/1.1 2OO OK\r\nContent-Length: 2\r\n\r\nok',
  'an unknown protocol in the status line': 'HTTX/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
  'a control character in a header name': 'HTTP/1.1 200 OK\r\nX-Bad\u0001Name: v\r\nContent-Length: 2\r\n\r\nok',
  'a NUL in a header value': 'HTTP/1.1 200 OK\r\nX-Value: a\u0000b\r\nContent-Length: 2\r\n\r\nok',
  'non-HTTP bytes': 'SSH-2.0-OpenSSH_9.6\r\n\r\n',
  'binary bytes': Buffer.from([0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03, 0x0d, 0x0a, 0x0d, 0x0a]),
  'a bare CR in the header section': 'HTTP/1.1 200 OK\rContent-Length: 2\r\n\r\nok',
  'a bare CR inside a header line': 'HTTP/1.1 200 OK\r\nX-A: 1\rX-B: 2\r\nContent-Length: 2\r\n\r\nok',
  'a body shorter than its content-length': 'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort',
  'two different content-lengths': 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok!',
  'content-length and chunked together': 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n',
  'an invalid chunk size': 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nhello\r\n0\r\n\r\n',
  'a chunked body cut off': 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc',
  'a header section over the size limit': `HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\nContent-Length: 2\r\n\r\nok`,
  'a connection closed inside the headers': 'HTTP/1.1 200 OK\r\nContent-Le',
  'a connection closed after the status line': 'HTTP/1.1 200 OK\r\n',
  'an invalid content-length': 'HTTP/1.1 200 OK\r\nContent-Length: 12abc\r\n\r\nok',
  'a header line without a colon': 'HTTP/1.1 200 OK\r\nNoColonHere\r\nContent-Length: 2\r\n\r\nok',
  'a 101 Switching Protocols to a plain request': 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n',
  'an HTTP/0.9-style answer without status line': '<html>hello</html>',
};

describe('classify: the platform judges an answer inside the retry loop', () => {
  test('an answer classified transient is retried: 200 on the second attempt, the accepted object returned', async (t) => {
    const server = await startServer(t, (_req, res) => res.end(server.hits.length === 1 ? 'for (;;);' : 'for (;;);{"data":{}}'));
    const client = makeClient(t, { [PLATFORM]: server.origin });
    const seen: UpstreamResponse[] = [];
    const response = await call(client, {
      path: '/api/graphql/',
      kind: 'api',
      method: 'POST',
      body: 'q=1',
      classify: (answer) => {
        seen.push(answer);
        if (answer.body === 'for (;;);') throw new UpstreamOutcome('transient', PLATFORM, 'empty GraphQL body');
      },
    });
    assert.equal(response.body, 'for (;;);{"data":{}}');
    assert.equal(server.hits.length, 2);
    assert.deepEqual(server.hits.map((hit) => [hit.method, hit.body]), [['POST', 'q=1'], ['POST', 'q=1']], 'the retry is the same request');
    assert.equal(seen.length, 2);
    assert.equal(seen[1], response, 'the client returns the object classify accepted');
  });

  test('always transient: retried as a 5xx is (same count), then transient naming the last problem', async (t) => {
    const server = await startServer(t, (_req, res) => res.end('partial'));
    const client = makeClient(t, { [PLATFORM]: server.origin }, { maxRetries: 3 });
    let calls = 0;
    const outcome = await expectOutcome(
      call(client, {
        path: '/p',
        kind: 'api',
        classify: () => {
          calls += 1;
          throw new UpstreamOutcome('transient', PLATFORM, 'timeline without its page_info line');
        },
      }),
      'transient',
    );
    assert.equal(server.hits.length, 4, 'the first attempt and 3 retries');
    assert.equal(calls, 4);
    assert.match(outcome.message, /page_info/);
  });

  test('always transient: the backoff and the time budget bound the retries', async (t) => {
    const server = await startServer(t, (_req, res) => res.end('partial'));
    const client = makeClient(t, { [PLATFORM]: server.origin }, { maxRetries: 1_000, backoffMs: 40, random: () => 0.9 });
    const budgetMs = 1_000;
    const { ms } = await timed(() =>
      expectOutcome(
        call(client, { path: '/p', kind: 'page', classify: () => { throw new UpstreamOutcome('transient', PLATFORM, 'cut off'); } }, { budgetMs }),
        'transient',
      ),
    );
    assert.ok(ms <= budgetMs + 150, `took ${ms} ms for a ${budgetMs} ms budget`);
    assert.ok(server.hits.length >= 3, `${server.hits.length} attempts`);
    assert.ok(server.hits.length < 40, `backoff grows (${server.hits.length} attempts)`);
  });

  test('any other outcome ends the request at once, unchanged, without a retry', async (t) => {
    const server = await startServer(t, (_req, res) => res.end('<html>login wall</html>'));
    const client = makeClient(t, { [PLATFORM]: server.origin });
    for (const kind of ['blocked', 'not_found', 'gated', 'unrecognised', 'rejected_cursor'] as const) {
      const before = server.hits.length;
      const thrown = new UpstreamOutcome(kind, PLATFORM, `judged ${kind}`);
      const caught = await expectOutcome(call(client, { path: `/${kind}`, kind: 'page', classify: () => { throw thrown; } }), kind);
      assert.equal(caught, thrown, 'the very error classify threw');
      assert.equal(server.hits.length - before, 1, `${kind}: one attempt`);
    }
  });

  test('an error that is not an outcome (a bug in a reader) is not retried, even with a network-like code', async (t) => {
    const server = await startServer(t, (_req, res) => res.end('ok'));
    const client = makeClient(t, { [PLATFORM]: server.origin });
    const bug = Object.assign(new TypeError('cannot read properties of undefined'), { code: 'ECONNRESET' });
    await assert.rejects(call(client, { path: '/p', kind: 'page', classify: () => { throw bug; } }), (error) => error === bug);
    assert.equal(server.hits.length, 1);
  });

  test('block: a block recognised in an answer of any status ends the request, a 5xx included, without a retry', async (t) => {
    const server = await startServer(t, (req, res) => {
      res.writeHead(req.url === '/ok' ? 200 : 503, { 'content-type': 'text/html' });
      res.end(req.url === '/plain' ? 'upstream overloaded' : '<form action="/errors/validateCaptcha">');
    });
    const client = makeClient(t, { [PLATFORM]: server.origin }, { maxRetries: 2 });
    const block = (answer: UpstreamResponse) => (answer.body.includes('validateCaptcha') ? 'captcha page' : null);
    const blocked = await expectOutcome(call(client, { path: '/captcha', kind: 'page', block }), 'blocked');
    assert.equal(blocked.message, 'captcha page');
    assert.equal(server.hits.length, 1, 'a block is not retried, whatever its status');
    await expectOutcome(call(client, { path: '/ok', kind: 'page', block }), 'blocked');
    assert.equal(server.hits.length, 2);
    await expectOutcome(call(client, { path: '/plain', kind: 'page', block }), 'transient');
    assert.equal(server.hits.length - 2, 3, 'a 5xx without the block: the first attempt and 2 retries');
  });

  test('classify sees only final answers: not 5xx, 429, empty 200s or followed redirects; an off-platform redirect with its Location', async (t) => {
    const server = await startServer(t, (req, res) => {
      if (req.url === '/hop') return void res.writeHead(302, { location: '/flaky' }).end();
      if (req.url === '/flaky') {
        const tries = server.hits.filter((hit) => hit.url === '/flaky').length;
        if (tries === 1) return void res.writeHead(503).end();
        if (tries === 2) return void res.end('');
        return void res.end('page');
      }
      if (req.url === '/away') return void res.writeHead(302, { location: 'https://evil.test/' }).end();
      res.writeHead(429).end();
    });
    const client = makeClient(t, { [PLATFORM]: server.origin });
    const seen: { status: number; path: string; body: string; away?: string }[] = [];
    const classify = (answer: UpstreamResponse) => void seen.push({ status: answer.status, path: answer.path, body: answer.body, away: answer.offPlatformLocation });
    const response = await call(client, { path: '/hop', kind: 'page', classify });
    assert.equal(response.body, 'page');
    await call(client, { path: '/away', kind: 'page', classify });
    await expectOutcome(call(client, { path: '/limited', kind: 'page', classify }), 'blocked');
    assert.deepEqual(seen, [
      { status: 200, path: '/flaky', body: 'page', away: undefined },
      { status: 302, path: '/away', body: '', away: 'https://evil.test/' },
    ]);
  });

  test('fetchAndRead returns what the reader made of the accepted answer, reading each attempt once', async (t) => {
    const server = await startServer(t, (_req, res) => res.end(server.hits.length === 1 ? '{"done":false}' : '{"done":true,"n":7}'));
    const client = makeClient(t, { [PLATFORM]: server.origin });
    let reads = 0;
    const read = (answer: UpstreamResponse): number => {
      reads += 1;
      const value = JSON.parse(answer.body) as { done: boolean; n?: number };
      if (!value.done) throw new UpstreamOutcome('transient', PLATFORM, 'incomplete');
      return value.n ?? 0;
    };
    const upstream = client.bind(PLATFORM, new AbortController().signal, Date.now() + 3_000);
    assert.equal(await fetchAndRead(upstream, { path: '/p', kind: 'api' }, read), 7);
    assert.equal(reads, 2, 'one read per attempt, none after');
    assert.equal(server.hits.length, 2);

    // An Upstream that ignores `classify` (a test double): the answer is read once it is returned.
    const double: Upstream = async (request) => ({ status: 200, headers: {}, body: '{"done":true,"n":3}', path: request.path });
    assert.equal(await fetchAndRead(double, { path: '/p', kind: 'api' }, read), 3);
  });
});

describe('malformed HTTP from the origin', () => {
  for (const [shape, bytes] of Object.entries(MALFORMED)) {
    test(`${shape}: retried, then transient (never a raw error)`, async (t) => {
      const server = await startRawServer(t, () => ({ bytes }));
      const client = makeClient(t, { [PLATFORM]: server.origin }, { maxRetries: 2 });
      await expectOutcome(call(client, { path: '/p', kind: 'page' }, { budgetMs: 3_000 }), 'transient');
      assert.equal(server.requests(), 3, 'the first attempt and 2 retries');
    });
  }

  test('an https origin that does not speak TLS: transient (the TLS error is an upstream failure)', async (t) => {
    // Answers the TLS ClientHello with plain HTTP at once.
    const server = net.createServer((socket) => {
      socket.on('error', () => undefined);
      socket.once('data', () => socket.end(OK_ANSWER));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    const client = makeClient(t, { [PLATFORM]: `https://127.0.0.1:${port}` }, { maxRetries: 1 });
    const { ms } = await timed(() => expectOutcome(call(client, { path: '/p', kind: 'page' }, { budgetMs: 3_000 }), 'transient'));
    assert.ok(ms < 2_000, `the TLS failure itself ended each attempt (${ms} ms), not a timeout`);
  });

  test('an origin whose name does not resolve: transient within the budget', async (t) => {
    const client = makeClient(t, { [PLATFORM]: 'http://no-such-origin.invalid' }, { maxRetries: 1, connectTimeoutMs: 500 });
    const { ms } = await timed(() => expectOutcome(call(client, { path: '/p', kind: 'page' }, { budgetMs: 1_500 }), 'transient'));
    assert.ok(ms < 1_500 + 500, `${ms} ms`);
  });

  test('malformed once, then a good answer: 200 after 2 attempts', async (t) => {
    for (const [shape, bytes] of Object.entries(MALFORMED)) {
      const server = await startRawServer(t, (request) => ({ bytes: request === 1 ? bytes : OK_ANSWER }));
      const client = makeClient(t, { [PLATFORM]: server.origin });
      const response = await call(client, { path: '/p', kind: 'page' }, { budgetMs: 3_000 });
      assert.equal(response.status, 200, shape);
      assert.equal(response.body, 'ok', shape);
      assert.equal(server.requests(), 2, shape);
    }
  });
});

describe('pools', () => {
  test('concurrent requests to one origin share at most `connections` keep-alive connections', async (t) => {
    const server = await startServer(t, (req, res) => {
      setTimeout(() => res.end(`ok ${req.url}`), 30);
    });
    const client = makeClient(t, { [PLATFORM]: server.origin }, { connections: 3 });
    const responses = await Promise.all(Array.from({ length: 15 }, (_, index) => call(client, { path: `/p/${index}`, kind: 'page' })));
    assert.deepEqual(
      responses.map((response) => response.body),
      Array.from({ length: 15 }, (_, index) => `ok /p/${index}`),
    );
    const sockets = new Set(server.hits.map((hit) => hit.socket));
    assert.ok(sockets.size <= 3, `${sockets.size} connections for a pool of 3`);
    assert.ok(server.connections() <= 3);
    const opened = server.connections();
    for (let index = 0; index < 5; index += 1) await call(client, { path: '/again', kind: 'page' });
    assert.equal(server.connections(), opened, 'later requests reuse the kept-alive connections');
  });

  test('two platforms with different origins each get their own pool', async (t) => {
    const one = await startServer(t, (_req, res) => setTimeout(() => res.end('one'), 20));
    const two = await startServer(t, (_req, res) => setTimeout(() => res.end('two'), 20));
    const client = makeClient(t, { [PLATFORM]: one.origin, shopfront: two.origin }, { connections: 2 });
    const requests = Array.from({ length: 8 }, (_, index) =>
      call(client, { path: `/x/${index}`, kind: 'api' }, { platform: index % 2 === 0 ? PLATFORM : 'shopfront' }),
    );
    const bodies = (await Promise.all(requests)).map((response) => response.body);
    assert.deepEqual(bodies, ['one', 'two', 'one', 'two', 'one', 'two', 'one', 'two']);
    assert.deepEqual(one.hits.map((hit) => hit.url), ['/x/0', '/x/2', '/x/4', '/x/6']);
    assert.deepEqual(two.hits.map((hit) => hit.url), ['/x/1', '/x/3', '/x/5', '/x/7']);
    assert.ok(one.connections() >= 1 && one.connections() <= 2, `${one.connections()} connections to the first origin`);
    assert.ok(two.connections() >= 1 && two.connections() <= 2, `${two.connections()} connections to the second origin`);
  });
});
