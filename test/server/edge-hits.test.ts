// Plain cache hits answered before Fastify (src/server/edge-hits.ts): the same answer, record,
// access line and counts as the route's, the rate limit counted once, and every other request
// left to the route. Two apps over the same stores, one with the edge path and one without.
import assert from 'node:assert/strict';
import { Agent, request as httpRequest } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { byId, startHarness, type Harness } from '../api/harness.ts';
import { failingStores, sleep, until, urlOf, variantQuery } from '../api/support.ts';
import type { Stores } from '../../src/store/types.ts';
import { generateKey } from '../../src/server/keys.ts';

interface Answer {
  status: number;
  /** Header names and values in the order they were sent. */
  headers: [string, string][];
  body: string;
}

function get(app: FastifyInstance, path: string, headers: Record<string, string>, options: { agent?: Agent; body?: string } = {}): Promise<Answer> {
  const { port } = app.server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const sent = httpRequest({ host: '127.0.0.1', port, path, method: 'GET', headers, agent: options.agent ?? false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        const pairs: [string, string][] = [];
        for (let i = 0; i < response.rawHeaders.length; i += 2) pairs.push([(response.rawHeaders[i] ?? '').toLowerCase(), response.rawHeaders[i + 1] ?? '']);
        resolve({ status: response.statusCode ?? 0, headers: pairs, body });
      });
    });
    sent.on('error', reject);
    sent.end(options.body);
  });
}

const header = (answer: Answer, name: string) => answer.headers.find(([key]) => key === name)?.[1];

/** Counts the requests Fastify answers (refused ones too): those the edge path left to the routes. */
const counting = (seen: { count: number }) => (app: FastifyInstance) =>
  app.addHook('onResponse', (_request, _reply, done) => {
    seen.count++;
    done();
  });

/** A logger whose lines the test reads. */
const capture = (lines: Record<string, unknown>[]) => ({ level: 'info', stream: { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) } });

/** Counts the cache's lookups (`get`) of the stores the app is given. */
const countingLookups = (lookups: { count: number }) => (stores: Stores): Stores => ({
  ...stores,
  cache: new Proxy(stores.cache, {
    get(cache, property) {
      const value: unknown = Reflect.get(cache, property, cache);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (property === 'get') lookups.count++;
        return (value as (...a: unknown[]) => unknown).apply(cache, args);
      };
    },
  }),
});

const accessLines = (lines: Record<string, unknown>[], requestId: string) => lines.filter((line) => line.msg === 'request' && line.requestId === requestId);

describe('cache hits answered before Fastify', () => {
  const endpoint = byId('linkpage-a.profile');
  const HIT = urlOf(endpoint, { cache_max_age: '30d' });
  let edge: Harness;
  let route: Harness;
  const edgeSeen = { count: 0 };
  const edgeLookups = { count: 0 };
  const routeSeen = { count: 0 };
  const edgeLog: Record<string, unknown>[] = [];
  const routeLog: Record<string, unknown>[] = [];

  before(async () => {
    edge = await startHarness({ app: { logger: capture(edgeLog) }, beforeReady: counting(edgeSeen), wrapStores: countingLookups(edgeLookups) });
    route = await startHarness({ nodeOf: edge, app: { logger: capture(routeLog), edgeHits: false }, beforeReady: counting(routeSeen) });
    await edge.app.listen({ port: 0, host: '127.0.0.1' });
    await route.app.listen({ port: 0, host: '127.0.0.1' });
    // The first request scrapes and caches; the following ones are hits.
    assert.equal((await edge.get(HIT)).statusCode, 200);
  });
  after(async () => {
    await route.close();
    await edge.close();
  });

  test('a hit gets the route’s answer: status, headers in order, body, request record, access line and counts', async () => {
    const before = { edge: edgeSeen.count, route: routeSeen.count };
    const fromEdge = await get(edge.app, HIT, { 'x-api-key': edge.key });
    const fromRoute = await get(route.app, HIT, { 'x-api-key': edge.key });
    assert.equal(edgeSeen.count, before.edge, 'answered before Fastify');
    assert.equal(routeSeen.count, before.route + 1, 'answered by the route');

    assert.equal(fromEdge.status, 200);
    assert.equal(fromRoute.status, 200);
    const names = (answer: Answer) => answer.headers.map(([name]) => name);
    assert.deepEqual(names(fromEdge), names(fromRoute));
    const varying = new Set(['x-request-id', 'date', 'x-ratelimit-remaining']);
    const fixed = (answer: Answer) => answer.headers.filter(([name]) => !varying.has(name));
    assert.deepEqual(fixed(fromEdge), fixed(fromRoute));
    // One more request counted on the edge's side (the one that warmed the cache) when each app
    // has a window of its own (the embedded stores), one less when they share it (Redis).
    assert.equal(Math.abs(Number(header(fromEdge, 'x-ratelimit-remaining')) - Number(header(fromRoute, 'x-ratelimit-remaining'))), 1);

    const edgeBody = JSON.parse(fromEdge.body) as { data: unknown; meta: Record<string, unknown> };
    const routeBody = JSON.parse(fromRoute.body) as { data: unknown; meta: Record<string, unknown> };
    const edgeId = header(fromEdge, 'x-request-id') ?? '';
    const routeId = header(fromRoute, 'x-request-id') ?? '';
    assert.equal(edgeBody.meta.requestId, edgeId);
    assert.equal(routeBody.meta.requestId, routeId);
    assert.deepEqual({ ...edgeBody, meta: { ...edgeBody.meta, requestId: null } }, { ...routeBody, meta: { ...routeBody.meta, requestId: null } });
    assert.equal(edgeBody.meta.cached, true);

    // The request records, as the account's views list them.
    await edge.app.writeRecords();
    await route.app.writeRecords();
    const { records } = await edge.stores.requests.list({ teamId: edge.team.id, limit: 1000 });
    const recordOf = (requestId: string) => {
      const found = records.find((record) => record.requestId === requestId);
      assert.ok(found, `a record of ${requestId}`);
      const { requestId: _id, at, durationMs, ...rest } = found;
      assert.ok(Math.abs(at - Date.now()) < 60_000 && durationMs >= 0);
      return rest;
    };
    assert.deepEqual(recordOf(edgeId), recordOf(routeId));
    assert.equal(recordOf(edgeId).cached, true);

    // One access line each, with the same fields.
    const lineOf = (lines: Record<string, unknown>[], requestId: string) => {
      const found = accessLines(lines, requestId);
      assert.equal(found.length, 1, `one access line of ${requestId}`);
      const { requestId: _id, time: _time, durationMs, ...rest } = found[0] as Record<string, unknown>;
      assert.equal(typeof durationMs, 'number');
      return rest;
    };
    assert.deepEqual(lineOf(edgeLog, edgeId), lineOf(routeLog, routeId));

    // The request and the cache hit counted on each app's /metrics.
    const counted = async (h: Harness) => {
      const text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
      const value = (pattern: RegExp) => {
        const found = pattern.exec(text)?.[1];
        assert.ok(found !== undefined, `${pattern} in /metrics`);
        return Number(found);
      };
      return {
        requests: value(new RegExp(`^api_requests_total\\{endpoint="${endpoint.id}",status="200"\\} (\\d+)$`, 'm')),
        hits: value(new RegExp(`^api_cache_lookups_total\\{endpoint="${endpoint.id}",result="hit"\\} (\\d+)$`, 'm')),
      };
    };
    const edgeCounts = await counted(edge);
    const routeCounts = await counted(route);
    const seen = edgeSeen.count;
    const more = await get(edge.app, HIT, { authorization: `Bearer ${edge.key}` });
    assert.equal(more.status, 200, 'a key as a bearer token too');
    assert.equal(edgeSeen.count, seen);
    assert.deepEqual(await counted(edge), { requests: edgeCounts.requests + 1, hits: edgeCounts.hits + 1 });
    assert.ok(routeCounts.requests >= 1 && routeCounts.hits >= 1);
  });

  test('hits answered in one turn of the event loop are written together, each once, with its own id, record and line', async () => {
    const seen = edgeSeen.count;
    const answers = await Promise.all(Array.from({ length: 30 }, () => get(edge.app, HIT, { 'x-api-key': edge.key })));
    assert.equal(edgeSeen.count, seen);
    const ids = answers.map((answer) => {
      assert.equal(answer.status, 200);
      const id = header(answer, 'x-request-id') ?? '';
      assert.equal((JSON.parse(answer.body) as { meta: { requestId: string } }).meta.requestId, id);
      return id;
    });
    assert.equal(new Set(ids).size, 30);
    // Each its own count of the limit: 30 consecutive values of remaining.
    const remaining = answers.map((answer) => Number(header(answer, 'x-ratelimit-remaining'))).sort((a, b) => a - b);
    assert.equal(remaining.at(-1)! - remaining[0]!, 29);
    await edge.app.writeRecords();
    const { records } = await edge.stores.requests.list({ teamId: edge.team.id, limit: 1000 });
    for (const id of ids) {
      assert.equal(records.filter((record) => record.requestId === id).length, 1, `one record of ${id}`);
      assert.equal(accessLines(edgeLog, id).length, 1, `one access line of ${id}`);
    }
  });

  test('pipelined requests on one connection are answered in order, hits written at the turn’s end among the route’s answers', async () => {
    const { port } = edge.app.server.address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    const ask = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\nx-api-key: ${edge.key}\r\n\r\n`;
    let received = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    // A hit, a 422 from the route, a hit, the route's account endpoint, a hit.
    socket.write(ask(HIT) + ask(`${HIT}&unknown=1`) + ask(HIT) + ask('/v1/account') + ask(HIT));
    /** The answers received so far, read by their content-length. */
    const answers = () => {
      const found: { status: string; body: string }[] = [];
      let rest = received;
      for (;;) {
        const headEnd = rest.indexOf('\r\n\r\n');
        if (headEnd < 0) return found;
        const head = rest.subarray(0, headEnd).toString('latin1');
        const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? Number.NaN);
        const body = rest.subarray(headEnd + 4, headEnd + 4 + length);
        if (body.length < length) return found;
        found.push({ status: head.slice(9, 12), body: body.toString('utf8') });
        rest = rest.subarray(headEnd + 4 + length);
      }
    };
    const answered = await until(() => answers().length === 5, 5000);
    socket.destroy();
    assert.ok(answered, `${answers().length} answers: ${answers().map(({ status }) => status).join(" ")}`);
    const kinds = answers().map(({ status, body }) => {
      const parsed = JSON.parse(body) as { data?: unknown; meta?: { cached?: boolean }; error?: unknown };
      return `${status} ${parsed.error ? 'error' : parsed.meta?.cached === true ? 'hit' : 'other'}`;
    });
    assert.deepEqual(kinds, ['200 hit', '422 error', '200 hit', '200 other', '200 hit']);
  });

  test('the rate limit counts a hit once; the hit it refuses is answered by the route with the same count', async () => {
    const limited = await edge.newTeam(10, 2);
    const seen = edgeSeen.count;
    const first = await get(edge.app, HIT, { 'x-api-key': limited.key });
    const second = await get(edge.app, HIT, { 'x-api-key': limited.key });
    assert.deepEqual([first.status, second.status], [200, 200]);
    assert.deepEqual([header(first, 'x-ratelimit-remaining'), header(second, 'x-ratelimit-remaining')], ['1', '0']);
    assert.equal(edgeSeen.count, seen);
    const lookups = edgeLookups.count;
    const refused = await get(edge.app, HIT, { 'x-api-key': limited.key });
    assert.equal(refused.status, 429);
    assert.equal(edgeSeen.count, seen + 1, 'the 429 is the route’s');
    assert.equal(edgeLookups.count, lookups, 'a refused hit does not read the cache');
    assert.equal((JSON.parse(refused.body) as { error: { code: string } }).error.code, 'RATE_LIMITED');
    assert.equal(header(refused, 'x-ratelimit-remaining'), '0');
    assert.match(header(refused, 'retry-after') ?? '', /^[1-9]\d*$/);
    // Two admitted in the window, whichever path answered: the route's own count agrees.
    const again = await edge.get(HIT, { 'x-api-key': limited.key });
    assert.equal(again.statusCode, 429);
  });

  test('every request that is not a plain hit of a live key is left to the route', async () => {
    const paged = byId('shopfront.shop');
    assert.equal((await edge.get(urlOf(paged, { cache_max_age: '30d' }))).statusCode, 200);
    const testKey = generateKey('test');
    await edge.stores.accounts.createKey({ teamId: edge.team.id, name: 'test mode', hash: testKey.hash, prefix: testKey.prefix, last4: testKey.last4 });
    const cases: [string, string, Record<string, string>, number, string?][] = [
      ['without cache_max_age (a live scrape)', urlOf(endpoint), { 'x-api-key': edge.key }, 200],
      ['with a cursor', urlOf(paged, { cache_max_age: '30d', [paged.paging?.param ?? '']: 'not-a-cursor' }), { 'x-api-key': edge.key }, 400],
      ['with an Idempotency-Key', HIT, { 'x-api-key': edge.key, 'idempotency-key': 'edge-hits-test-key' }, 200],
      ['with a test key (test mode off)', HIT, { 'x-api-key': testKey.key }, 403],
      ['with an unknown key', HIT, { 'x-api-key': 'psk_live_unknownunknownunknown' }, 401],
      ['with two different keys', HIT, { 'x-api-key': edge.key, authorization: 'Bearer psk_live_another' }, 401],
      ['without a key', HIT, {}, 401],
      ['with an invalid query', `${HIT}&unknown=1`, { 'x-api-key': edge.key }, 422],
      ['with a body', HIT, { 'x-api-key': edge.key, 'content-length': '2' }, 200, '{}'],
      ['at a path with a trailing slash', HIT.replace('?', '/?'), { 'x-api-key': edge.key }, 404],
    ];
    for (const [what, path, headers, status, body] of cases) {
      const seen = edgeSeen.count;
      const lookups = edgeLookups.count;
      const answer = await get(edge.app, path, headers, body === undefined ? {} : { body });
      assert.equal(answer.status, status, `${what}: ${answer.body.slice(0, 200)}`);
      assert.equal(edgeSeen.count, seen + 1, `${what}: answered by the route`);
      // As on the route, a request whose key is refused never reaches the cache.
      if (status === 401 || status === 403) assert.equal(edgeLookups.count, lookups, `${what}: the cache not read`);
    }
    // A miss, and a cached entry older than the age asked for: the route scrapes live, without
    // reading the cache again.
    const missing = urlOf(endpoint, { cache_max_age: '30d' }, variantQuery(endpoint, 'edge-miss'));
    const old = urlOf(endpoint, { cache_max_age: '1d' });
    for (const [what, path, later] of [['a miss', missing, 0], ['an entry too old', old, 2 * 24 * 60 * 60 * 1000]] as const) {
      edge.clock.now += later;
      try {
        const seen = edgeSeen.count;
        const lookups = edgeLookups.count;
        const live = await get(edge.app, path, { 'x-api-key': edge.key });
        assert.equal(live.status, 200, what);
        assert.equal((JSON.parse(live.body) as { meta: { cached: boolean; creditsCharged: number } }).meta.creditsCharged, 1, what);
        assert.equal(edgeSeen.count, seen + 1, `${what}: answered by the route`);
        assert.equal(edgeLookups.count, lookups + 1, `${what}: the cache read once`);
      } finally {
        edge.clock.now -= later;
      }
    }
  });

  test('a store that fails under the edge path leaves the request to the route, which answers with the error’s envelope', async () => {
    const failing = new Set<string>();
    const seen = { count: 0 };
    const h = await startHarness({ wrapStores: failingStores(failing), beforeReady: counting(seen) });
    try {
      await h.app.listen({ port: 0, host: '127.0.0.1' });
      assert.equal((await h.get(HIT)).statusCode, 200);
      const remaining = async () => Number(header(await get(h.app, HIT, { 'x-api-key': h.key }), 'x-ratelimit-remaining'));
      for (const method of ['cache.get', 'accounts.findActiveKey']) {
        failing.clear();
        const left = await remaining();
        failing.add(method);
        const before = seen.count;
        const answer = await get(h.app, HIT, { 'x-api-key': h.key });
        assert.equal(answer.status, 503, `${method}: ${answer.body.slice(0, 200)}`);
        assert.equal((JSON.parse(answer.body) as { error: { code: string } }).error.code, 'SERVICE_UNAVAILABLE');
        assert.equal(seen.count, before + 1, `${method}: answered by the route`);
        failing.clear();
        // The request that failed counted once against the limit, whichever path admitted it.
        if (method === 'cache.get') assert.equal(await remaining(), left - 2, `${method}: counted once`);
      }
      failing.clear();
      assert.equal((await get(h.app, HIT, { 'x-api-key': h.key })).status, 200);
    } finally {
      await h.close();
    }
  });

  test('while the app closes, hits are left to the route; one answered as closing begins closes its connection', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const isClosing = edge.app.isClosing;
    try {
      // The edge reads the app's closing state at each request.
      edge.app.isClosing = () => true;
      let seen = edgeSeen.count;
      assert.equal((await get(edge.app, HIT, { 'x-api-key': edge.key })).status, 200);
      assert.equal(edgeSeen.count, seen + 1, 'left to the route (the errors plugin answers 503 once Fastify closes)');

      // Not closing when the hit arrives, closing by the time it is answered.
      let reads = 0;
      edge.app.isClosing = () => reads++ > 0;
      seen = edgeSeen.count;
      const closed = new Promise<void>((resolve) => agent.once('free', (socket) => socket.once('close', () => resolve())));
      assert.equal((await get(edge.app, HIT, { 'x-api-key': edge.key }, { agent })).status, 200);
      assert.equal(edgeSeen.count, seen, 'answered before Fastify');
      // Well before the server's keep-alive timeout (5 s) would close it anyway.
      assert.equal(await Promise.race([closed.then(() => true), sleep(1_000).then(() => false)]), true, 'the connection is closed after the answer');
    } finally {
      edge.app.isClosing = isClosing;
      agent.destroy();
    }
  });
});
