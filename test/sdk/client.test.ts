// The SDK's own behaviour, against a scripted HTTP server (a test double of the service): which
// answers it retries and how long it waits, timeouts and aborts, the error class of every code,
// the options and environment it reads, and a listing that never ends.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { listenAgain, refusedPort } from '../support/ports.ts';
import {
  ConnectionError,
  ERRORS,
  NotFoundError,
  PageScrape,
  PageScrapeError,
  RateLimitedError,
  ServiceUnavailableError,
  TimeoutError,
  UnexpectedResponseError,
  UpstreamBlockedError,
  ValidationError,
} from '../../sdk/dist/index.js';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

const META = { requestId: 'req_1', creditsCharged: 1, creditsRemaining: 9, cached: false };
const json = (status: number, body: unknown, headers: Record<string, string> = {}): Handler => (_request, response) => {
  response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
};
const failure = (status: number, code: string, headers: Record<string, string> = {}, details?: unknown[]): Handler =>
  json(status, { error: { code, message: `${code} happened`, requestId: `req_${code}`, ...(details ? { details } : {}) } }, headers);
const ok = (data: unknown = { fine: true }): Handler => json(200, { data, meta: META });

describe('SDK client against a scripted server', () => {
  const server = createServer((request, response) => {
    const at = Date.now();
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      seen.push({
        url: request.url ?? '',
        key: request.headers['x-api-key'],
        at,
        method: request.method ?? '',
        idempotencyKey: request.headers['idempotency-key'],
        contentType: request.headers['content-type'],
        body: Buffer.concat(chunks).toString(),
      });
      const handler = script.shift() ?? failure(500, 'INTERNAL_ERROR');
      handler(request, response);
    });
  });
  let script: Handler[] = [];
  let seen: {
    url: string;
    key: string | string[] | undefined;
    at: number;
    method: string;
    idempotencyKey: string | string[] | undefined;
    contentType: string | string[] | undefined;
    body: string;
  }[] = [];
  let base = '';
  const client = (options: ConstructorParameters<typeof PageScrape>[0] = {}) => new PageScrape({ baseUrl: base, apiKey: 'psk_live_x', ...options });

  before(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  beforeEach(() => {
    script = [];
    seen = [];
  });

  test('sends the key and the query under their contract names, and answers the envelope', async () => {
    script = [ok({ profile: { username: 'lunavoss' } })];
    const answer = await client().get('/v1/snapmsg/profile', { username: 'luna voss', cache_max_age: '1d' });
    assert.deepEqual(answer, { data: { profile: { username: 'lunavoss' } }, meta: META });
    assert.equal(seen[0]?.url, '/v1/snapmsg/profile?username=luna+voss&cache_max_age=1d');
    assert.equal(seen[0]?.key, 'psk_live_x');
  });

  test('a base URL with a path and a trailing slash', async () => {
    script = [ok()];
    await new PageScrape({ baseUrl: `${base}/api/`, apiKey: 'k' }).account();
    assert.equal(seen[0]?.url, '/api/v1/account');
  });

  test('429, 502 and 503 are retried after Retry-After, then the answer comes', async () => {
    script = [failure(429, 'RATE_LIMITED', { 'retry-after': '0.3' }), failure(502, 'UPSTREAM_BLOCKED', { 'retry-after': '0' }), failure(503, 'SERVICE_UNAVAILABLE', { 'retry-after': '0' }), ok()];
    const answer = await client().account();
    assert.deepEqual(answer.data, { fine: true });
    assert.equal(seen.length, 4);
    const waited = (seen[1]?.at ?? 0) - (seen[0]?.at ?? 0);
    assert.ok(waited >= 300 && waited < 5_000, `waited ${waited} ms for Retry-After: 0.3`);
  });

  test('an HTTP-date Retry-After is honoured too', async () => {
    script = [failure(429, 'RATE_LIMITED', { 'retry-after': new Date(Date.now() + 1_000).toUTCString() }), ok()];
    await client().account();
    const waited = (seen[1]?.at ?? 0) - (seen[0]?.at ?? 0);
    assert.ok(waited >= 0 && waited < 5_000, `waited ${waited} ms`);
  });

  test('retries are bounded: after maxRetries the last error is thrown, with its class and fields', async () => {
    script = Array.from({ length: 5 }, () => failure(503, 'SERVICE_UNAVAILABLE', { 'retry-after': '0' }));
    const error = await client({ maxRetries: 2 }).account().catch((caught: unknown) => caught);
    assert.ok(error instanceof ServiceUnavailableError);
    assert.deepEqual([error.code, error.status, error.requestId, error.retryAfter], ['SERVICE_UNAVAILABLE', 503, 'req_SERVICE_UNAVAILABLE', 0]);
    assert.equal(seen.length, 3);
  });

  test('without Retry-After, an exponential back-off with jitter', async () => {
    script = [failure(502, 'UPSTREAM_BLOCKED'), failure(502, 'UPSTREAM_BLOCKED'), ok()];
    await client().account();
    const first = (seen[1]?.at ?? 0) - (seen[0]?.at ?? 0);
    const second = (seen[2]?.at ?? 0) - (seen[1]?.at ?? 0);
    assert.ok(first >= 240 && first < 5_000, `first wait ${first} ms (0.25 to 0.5 s)`);
    assert.ok(second >= 490 && second < 5_000, `second wait ${second} ms (0.5 to 1 s)`);
  });

  test('an answer asking to wait longer than maxRetryDelayMs is thrown at once', async () => {
    script = [failure(429, 'RATE_LIMITED', { 'retry-after': '120' }), ok()];
    const error = await client({ maxRetryDelayMs: 5_000 }).account().catch((caught: unknown) => caught);
    assert.ok(error instanceof RateLimitedError);
    assert.equal(error.retryAfter, 120);
    assert.equal(seen.length, 1);
  });

  test('4xx answers are not retried', async () => {
    script = [failure(404, 'NOT_FOUND'), ok()];
    const error = await client().snapmsgProfile({ username: 'gone' }).catch((caught: unknown) => caught);
    assert.ok(error instanceof NotFoundError && error instanceof PageScrapeError && error instanceof Error);
    assert.equal(error.message, 'NOT_FOUND happened');
    assert.equal(seen.length, 1);

    script = [failure(422, 'VALIDATION_ERROR', {}, [{ path: 'username', message: 'Required' }])];
    const invalid = await client().snapmsgProfile({ username: '' }).catch((caught: unknown) => caught);
    assert.ok(invalid instanceof ValidationError);
    assert.deepEqual(invalid.details, [{ path: 'username', message: 'Required' }]);
  });

  test('every error code of the API has its own class', async () => {
    for (const [code, { status, error: ErrorClass }] of Object.entries(ERRORS)) {
      script = [failure(status, code)];
      const error = await client({ maxRetries: 0 }).account().catch((caught: unknown) => caught);
      assert.ok(error instanceof ErrorClass, code);
      assert.deepEqual([error.code, error.status, error.name], [code, status, ErrorClass.name]);
    }
    assert.equal(new Set(Object.values(ERRORS).map((entry) => entry.error)).size, Object.keys(ERRORS).length);
  });

  test('an answer that is not the envelope (a proxy page) is an UnexpectedResponseError; a 502 one is retried', async () => {
    script = [(_request, response) => response.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>'), ok()];
    assert.deepEqual((await client().account()).data, { fine: true });
    script = [(_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<html>')];
    const error = await client().account().catch((caught: unknown) => caught);
    assert.ok(error instanceof UnexpectedResponseError);
    assert.equal(error.status, 200);
  });

  test('an attempt longer than timeoutMs is a TimeoutError, once the retries are spent', async () => {
    script = [() => undefined, () => undefined];
    const started = Date.now();
    const error = await client({ timeoutMs: 200, maxRetries: 1 }).account().catch((caught: unknown) => caught);
    assert.ok(error instanceof TimeoutError);
    assert.equal(error.code, 'TIMEOUT');
    assert.equal(seen.length, 2);
    assert.ok(Date.now() - started < 3_000);
  });

  test('an AbortSignal stops a call and the wait before a retry', async () => {
    script = [failure(503, 'SERVICE_UNAVAILABLE', { 'retry-after': '30' })];
    const controller = new AbortController();
    const reason = new Error('stop');
    setTimeout(() => controller.abort(reason), 100);
    const started = Date.now();
    const error = await client().account({}, { signal: controller.signal }).catch((caught: unknown) => caught);
    assert.equal(error, reason);
    assert.ok(Date.now() - started < 2_000, 'did not wait out the Retry-After');

    script = [() => undefined];
    const hung = new AbortController();
    setTimeout(() => hung.abort(reason), 100);
    assert.equal(await client().account({}, { signal: hung.signal }).catch((caught: unknown) => caught), reason);
  });

  test('a service that cannot be reached is a ConnectionError, after the retries', async () => {
    const closed = await refusedPort();
    const error = await new PageScrape({ baseUrl: closed.origin, apiKey: 'k', maxRetries: 1 })
      .account()
      .catch((caught: unknown) => caught)
      .finally(() => closed.release());
    assert.ok(error instanceof ConnectionError);
    assert.deepEqual([error.code, error.status, error.requestId, error.mayHaveReached], ['CONNECTION_ERROR', 0, null, false]);
  });

  test('a refused connection is retried: a service that comes up in time answers', async () => {
    const late = createServer((_request, response) => ok()(_request, response));
    late.listen(0, '127.0.0.1');
    await once(late, 'listening');
    const port = (late.address() as AddressInfo).port;
    late.close();
    await once(late, 'close');
    // Back on its port (the client knows no other), once whatever took it meanwhile lets it go.
    setTimeout(() => void listenAgain(late, port), 100);
    try {
      const answer = await new PageScrape({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'k', maxRetries: 3 }).account();
      assert.deepEqual(answer.data, { fine: true });
    } finally {
      late.close();
    }
  });

  test('a connection that breaks after the request was sent is retried with the same Idempotency-Key', async () => {
    script = [(_request, response) => response.socket?.destroy(), ok({ profile: { username: 'lunavoss' } })];
    const retries: { code: string; mayHaveReached: boolean | undefined }[] = [];
    const answer = await client().snapmsgProfile(
      { username: 'lunavoss' },
      { onRetry: ({ error }) => retries.push({ code: error.code, mayHaveReached: error instanceof ConnectionError ? error.mayHaveReached : undefined }) },
    );
    assert.deepEqual(answer.data, { profile: { username: 'lunavoss' } });
    assert.equal(seen.length, 2, 'sent twice');
    assert.deepEqual(retries, [{ code: 'CONNECTION_ERROR', mayHaveReached: true }]);
    const [first, second] = seen.map((request) => request.idempotencyKey);
    assert.match(String(first), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a random UUID');
    assert.equal(second, first, 'the retry carried the same key');

    // Every failure of the cut kind, to the end of the retries: the ConnectionError, still telling it may have reached.
    seen = [];
    script = Array.from({ length: 3 }, (): Handler => (_request, response) => response.socket?.destroy());
    const error = await client({ maxRetries: 2 }).snapmsgProfile({ username: 'lunavoss' }).catch((caught: unknown) => caught);
    assert.ok(error instanceof ConnectionError);
    assert.equal(error.mayHaveReached, true);
    assert.equal(seen.length, 3);
    assert.equal(new Set(seen.map((request) => request.idempotencyKey)).size, 1);
  });

  test('each scraping call has a fresh key; a caller\'s own key is sent as given; free calls carry none', async () => {
    script = [ok(), ok(), ok(), ok()];
    await client().snapmsgProfile({ username: 'a' });
    await client().snapmsgProfile({ username: 'a' });
    await client().snapmsgProfile({ username: 'a' }, { idempotencyKey: 'order-1234/profile' });
    await client().account();
    const keys = seen.map((request) => request.idempotencyKey);
    assert.equal(typeof keys[0], 'string');
    assert.notEqual(keys[0], keys[1]);
    assert.equal(keys[2], 'order-1234/profile');
    assert.equal(keys[3], undefined, 'GET /v1/account is free and safe to repeat: no key');

    // A caller's key is kept across the call's retries too.
    seen = [];
    script = [failure(502, 'UPSTREAM_BLOCKED', { 'retry-after': '0' }), ok()];
    await client().snapmsgProfile({ username: 'a' }, { idempotencyKey: 'mine' });
    assert.deepEqual(seen.map((request) => request.idempotencyKey), ['mine', 'mine']);
  });

  test('409 IDEMPOTENCY_IN_PROGRESS is retried after its Retry-After, with the same key; 422 IDEMPOTENCY_KEY_REUSED is not', async () => {
    script = [failure(409, 'IDEMPOTENCY_IN_PROGRESS', { 'retry-after': '0.3' }), ok({ replayed: true })];
    const answer = await client().snapmsgProfile({ username: 'a' }, { idempotencyKey: 'k-409' });
    assert.deepEqual(answer.data, { replayed: true });
    assert.deepEqual(seen.map((request) => request.idempotencyKey), ['k-409', 'k-409']);
    const waited = (seen[1]?.at ?? 0) - (seen[0]?.at ?? 0);
    assert.ok(waited >= 300 && waited < 5_000, `waited ${waited} ms for Retry-After: 0.3`);

    seen = [];
    script = [failure(422, 'IDEMPOTENCY_KEY_REUSED'), ok()];
    await assert.rejects(client().snapmsgProfile({ username: 'b' }, { idempotencyKey: 'k-409' }), (error: unknown) => error instanceof PageScrapeError && error.code === 'IDEMPOTENCY_KEY_REUSED');
    assert.equal(seen.length, 1);

    // A 409 of another kind (CONFLICT) is the resource's state, not worth the same request again.
    seen = [];
    script = [failure(409, 'CONFLICT'), ok()];
    await assert.rejects(client().snapmsgProfile({ username: 'b' }), (error: unknown) => error instanceof PageScrapeError && error.status === 409);
    assert.equal(seen.length, 1);
  });

  test('waiting out 409 IDEMPOTENCY_IN_PROGRESS uses up no retry, for at most timeoutMs', async () => {
    // A cut connection (a counted retry), then the first attempt still running for three answers: answered with maxRetries 1.
    const inProgress = failure(409, 'IDEMPOTENCY_IN_PROGRESS', { 'retry-after': '0' });
    script = [(_request, response) => response.socket?.destroy(), inProgress, inProgress, inProgress, ok({ kept: true })];
    const events: [string, number][] = [];
    const answer = await client({ maxRetries: 1 }).snapmsgProfile({ username: 'a' }, { onRetry: ({ error, retry }) => events.push([error.code, retry]) });
    assert.deepEqual(answer.data, { kept: true });
    assert.deepEqual(events, [['CONNECTION_ERROR', 1], ['IDEMPOTENCY_IN_PROGRESS', 1], ['IDEMPOTENCY_IN_PROGRESS', 1], ['IDEMPOTENCY_IN_PROGRESS', 1]]);
    assert.equal(new Set(seen.map((request) => request.idempotencyKey)).size, 1);

    // A service that says "in progress" for ever: the call ends after timeoutMs of it, with the 409.
    seen = [];
    script = Array.from({ length: 200 }, () => failure(409, 'IDEMPOTENCY_IN_PROGRESS', { 'retry-after': '0.1' }));
    const started = Date.now();
    const error = await client({ maxRetries: 1, timeoutMs: 500 }).snapmsgProfile({ username: 'a' }).catch((caught: unknown) => caught);
    assert.ok(error instanceof PageScrapeError && error.code === 'IDEMPOTENCY_IN_PROGRESS');
    assert.ok(Date.now() - started < 3_000, `gave up after ${Date.now() - started} ms`);
    assert.ok(seen.length >= 3 && seen.length <= 10, `${seen.length} attempts`);

    // maxRetries 0: not even that.
    seen = [];
    script = [inProgress, ok()];
    await assert.rejects(client({ maxRetries: 0 }).snapmsgProfile({ username: 'a' }), (caught: unknown) => caught instanceof PageScrapeError && caught.status === 409);
    assert.equal(seen.length, 1);
  });

  test('a 408 and an attempt past timeoutMs are retried, with the same key', async () => {
    script = [failure(408, 'REQUEST_TIMEOUT', { 'retry-after': '0' }), () => undefined, ok({ late: true })];
    const codes: string[] = [];
    const answer = await client({ timeoutMs: 300 }).snapmsgProfile({ username: 'a' }, { onRetry: ({ error }) => codes.push(error.code) });
    assert.deepEqual(answer.data, { late: true });
    assert.deepEqual(codes, ['REQUEST_TIMEOUT', 'TIMEOUT']);
    assert.equal(new Set(seen.map((request) => request.idempotencyKey)).size, 1);
    assert.equal(seen.length, 3);
  });

  test('paginate() gives each page a key of its own, even when the call was given one', async () => {
    const page = (posts: string[], pageToken: string) => ok({ posts: posts.map((id) => ({ id })), paging: { pageToken, hasMore: pageToken !== '' } });
    script = [page(['a'], 't1'), page(['b'], '')];
    const listing = client().paginate('/v1/shopfront/shop', { url: 'https://www.shopfront.example/shop/x' }, { idempotencyKey: 'ignored' });
    assert.deepEqual((await listing.toArray()).map((post) => post.id), ['a', 'b']);
    const keys = seen.map((request) => request.idempotencyKey);
    assert.equal(keys.length, 2);
    assert.ok(keys.every((key) => typeof key === 'string' && key !== 'ignored'));
    assert.notEqual(keys[0], keys[1]);
  });

  test('the account\'s settings: PATCH with a JSON body, the key id in the path', async () => {
    script = [ok({ balance: 5, lowBalanceAlert: 100 }), failure(503, 'SERVICE_UNAVAILABLE', { 'retry-after': '0' }), ok({ id: 'key/1', dailyCreditLimit: null })];
    const account = await client().accountUpdate({ lowBalanceAlert: 100 });
    assert.equal(account.data.lowBalanceAlert, 100);
    const key = await client().accountKeysUpdate('key/1', { dailyCreditLimit: null });
    assert.equal(key.data.dailyCreditLimit, null);
    assert.deepEqual(
      seen.map(({ method, url, contentType, body }) => [method, url, contentType, body]),
      [
        ['PATCH', '/v1/account', 'application/json', '{"lowBalanceAlert":100}'],
        ['PATCH', '/v1/account/keys/key%2F1', 'application/json', '{"dailyCreditLimit":null}'],
        ['PATCH', '/v1/account/keys/key%2F1', 'application/json', '{"dailyCreditLimit":null}'],
      ],
    );
  });

  test('the key and the base URL from the environment; a missing key is refused at once', () => {
    const saved = { key: process.env.PAGESCRAPE_API_KEY, base: process.env.PAGESCRAPE_BASE_URL };
    try {
      process.env.PAGESCRAPE_API_KEY = 'psk_live_env';
      process.env.PAGESCRAPE_BASE_URL = 'https://api.example.com/';
      assert.equal(new PageScrape().baseUrl, 'https://api.example.com');
      assert.equal(new PageScrape({ baseUrl: base }).baseUrl, base);
      delete process.env.PAGESCRAPE_API_KEY;
      delete process.env.PAGESCRAPE_BASE_URL;
      assert.throws(() => new PageScrape(), /No API key/);
      assert.equal(new PageScrape({ apiKey: 'k' }).baseUrl, 'http://127.0.0.1:3000');
      assert.throws(() => new PageScrape({ apiKey: 'k', baseUrl: 'file:///etc' }), /http:\/\/ or https:\/\//);
    } finally {
      if (saved.key === undefined) delete process.env.PAGESCRAPE_API_KEY;
      else process.env.PAGESCRAPE_API_KEY = saved.key;
      if (saved.base === undefined) delete process.env.PAGESCRAPE_BASE_URL;
      else process.env.PAGESCRAPE_BASE_URL = saved.base;
    }
  });

  test('paginate() follows the token under its endpoint\'s names, and refuses a listing that repeats its token', async () => {
    const page = (posts: string[], pageToken: string) => ok({ posts: posts.map((id) => ({ id })), paging: { pageToken, hasMore: pageToken !== '' } });
    script = [page(['a', 'b'], 't1'), page([], 't2'), page(['c'], '')];
    const listing = client().paginate('/v1/shopfront/shop', { url: 'https://www.shopfront.example/shop/x' });
    assert.deepEqual((await listing.toArray()).map((post) => post.id), ['a', 'b', 'c']);
    assert.deepEqual(seen.map((request) => new URL(request.url, base).searchParams.get('pageToken')), [null, 't1', 't2']);
    assert.deepEqual([listing.pages, listing.items, listing.creditsSpent, listing.creditsRemaining, listing.done], [3, 3, 3, 9, true]);

    seen = [];
    script = [page(['a'], 'same'), page(['b'], 'same')];
    const looping = client().paginate('/v1/shopfront/shop', { url: 'https://www.shopfront.example/shop/x' });
    await assert.rejects(looping.toArray(), UnexpectedResponseError);
    assert.equal(seen.length, 2);
  });

  test('onRetry tells each wait before a retry: why, which retry, and how long', async () => {
    script = [failure(429, 'RATE_LIMITED', { 'retry-after': '0.2' }), failure(503, 'SERVICE_UNAVAILABLE', { 'retry-after': '0' }), ok()];
    const events: { code: string; retry: number; maxRetries: number; delayMs: number }[] = [];
    const started = Date.now();
    await client().account({}, { onRetry: (event) => events.push({ code: event.error.code, retry: event.retry, maxRetries: event.maxRetries, delayMs: event.delayMs }) });
    assert.deepEqual(events.map(({ code, retry, maxRetries }) => [code, retry, maxRetries]), [['RATE_LIMITED', 1, 3], ['SERVICE_UNAVAILABLE', 2, 3]]);
    assert.ok((events[0]?.delayMs ?? 0) >= 200 && (events[0]?.delayMs ?? 0) <= 240, `Retry-After 0.2 s plus at most 20%: ${events[0]?.delayMs} ms`);
    assert.ok(Date.now() - started >= (events[0]?.delayMs ?? 0), 'told before the wait it names');

    // The listing's pages are calls of their own: each one's retries are told too.
    const page = (posts: string[], pageToken: string) => ok({ posts: posts.map((id) => ({ id })), paging: { pageToken, hasMore: pageToken !== '' } });
    script = [page(['a'], 't1'), failure(429, 'RATE_LIMITED', { 'retry-after': '0' }), page(['b'], '')];
    events.length = 0;
    const listing = client().paginate('/v1/shopfront/shop', { url: 'https://www.shopfront.example/shop/x' }, { onRetry: (event) => events.push({ code: event.error.code, retry: event.retry, maxRetries: event.maxRetries, delayMs: event.delayMs }) });
    assert.deepEqual((await listing.toArray()).map((post) => post.id), ['a', 'b']);
    assert.deepEqual(events.map(({ code, retry }) => [code, retry]), [['RATE_LIMITED', 1]]);

    // No retry, no call: the last error is thrown without a word.
    script = [failure(404, 'NOT_FOUND')];
    events.length = 0;
    await assert.rejects(client().account({}, { onRetry: (event) => events.push({ code: event.error.code, retry: event.retry, maxRetries: event.maxRetries, delayMs: event.delayMs }) }), NotFoundError);
    assert.deepEqual(events, []);
  });

  test('paginate() with maxCredits requests no page that could take the credits spent past it; cache hits cost nothing', async () => {
    const page = (id: string, pageToken: string, creditsCharged: number) =>
      json(200, { data: { posts: [{ id }], paging: { pageToken, hasMore: pageToken !== '' } }, meta: { ...META, creditsCharged } });
    // Two cache hits (0 credits), then live pages (1 credit each): 2 credits buy 4 pages.
    script = [page('a', 't1', 0), page('b', 't2', 0), page('c', 't3', 1), page('d', 't4', 1), page('e', 't5', 1), page('f', '', 1)];
    const listing = client().paginate('/v1/shopfront/shop', { url: 'https://www.shopfront.example/shop/x' }, { maxCredits: 2 });
    assert.deepEqual((await listing.toArray()).map((post) => post.id), ['a', 'b', 'c', 'd']);
    assert.deepEqual([seen.length, listing.pages, listing.creditsSpent, listing.done, listing.stoppedBy], [4, 4, 2, true, 'maxCredits']);

    // Bound 0: not even the first page, which could cost a credit.
    seen = [];
    const none = client().paginate('/v1/shopfront/shop', { url: 'https://www.shopfront.example/shop/x' }, { maxCredits: 0 });
    assert.deepEqual(await none.toArray(), []);
    assert.deepEqual([seen.length, none.pages, none.stoppedBy], [0, 0, 'maxCredits']);

    // A listing that ends within the bound ended: no bound stopped it.
    seen = [];
    script = [page('a', 't1', 1), page('b', '', 1)];
    const whole = client().paginate('/v1/shopfront/shop', { url: 'https://www.shopfront.example/shop/x' }, { maxCredits: 2, maxPages: 2 });
    assert.equal((await whole.toArray()).length, 2);
    assert.deepEqual([whole.done, whole.stoppedBy], [true, null]);

    seen = [];
    script = [page('a', 't1', 1), page('b', 't2', 1)];
    const paged = client().paginate('/v1/shopfront/shop', { url: 'https://www.shopfront.example/shop/x' }, { maxPages: 1 });
    assert.equal((await paged.toArray()).length, 1);
    assert.deepEqual([paged.done, paged.stoppedBy, seen.length], [true, 'maxPages', 1]);
  });

  test('an error in the middle of a listing is thrown from the loop, with the pages so far counted', async () => {
    script = [ok({ posts: [{ id: 'a' }], paging: { pageToken: 't1', hasMore: true } }), failure(502, 'UPSTREAM_BLOCKED')];
    const listing = client({ maxRetries: 0 }).paginate('/v1/shopfront/shop', { url: 'https://www.shopfront.example/shop/x' });
    const items: string[] = [];
    await assert.rejects(async () => {
      for await (const post of listing) items.push(post.id);
    }, UpstreamBlockedError);
    assert.deepEqual([items, listing.pages, listing.done], [['a'], 1, false]);
  });
});
