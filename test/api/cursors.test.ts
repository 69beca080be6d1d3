// Following cursors and page tokens through the API: every item once, the end of a listing,
// the exact position handed to the extractor, opacity, binding to endpoint and target, and
// cursors inside cached responses keeping their scrape time.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { endpoints } from '../../src/endpoints/index.ts';
import type { EndpointDeclaration } from '../../src/endpoints/types.ts';
import { startHarness, type Harness } from './harness.ts';
import { expectError, itemIds, ledgerState, pagedResult, POSITION_MARKER, positionOf, success, tokenOf, urlOf, variantQuery, type Success } from './support.ts';

const HOUR = 60 * 60 * 1000;
const paging = endpoints.filter((endpoint): endpoint is EndpointDeclaration & { paging: NonNullable<EndpointDeclaration['paging']> } =>
  Boolean(endpoint.paging),
);

/** Every readable rendering of a token: itself, and base64 / base64url decodings. */
const renderings = (token: string): string[] => [
  token,
  Buffer.from(token, 'base64url').toString('utf8'),
  Buffer.from(token, 'base64').toString('utf8'),
  Buffer.from(token, 'base64url').toString('latin1'),
  decodeURIComponent(token),
];

describe('following cursors', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ credits: 10_000, rateLimit: 1_000_000 });
    h.script = async (endpoint, request) => pagedResult(endpoint, request.position);
  });
  after(() => h.close());

  const withToken = (endpoint: EndpointDeclaration, token: string, query?: Record<string, string>, extra: Record<string, string> = {}) =>
    urlOf(endpoint, { [endpoint.paging?.param ?? 'cursor']: token, ...extra }, query);

  for (const endpoint of paging) {
    test(`${endpoint.path}: the client follows ${endpoint.paging.field} to the end and gets every item once`, async () => {
      const query = variantQuery(endpoint, 'follow');
      const calls = h.calls.length;
      const ids: string[] = [];
      const tokens: string[] = [];
      let body: Success = success(await h.get(urlOf(endpoint, {}, query)));
      for (;;) {
        ids.push(...itemIds(endpoint, body.data));
        const page = body.data.paging as Record<string, unknown>;
        assert.deepEqual(Object.keys(page), [endpoint.paging.field, endpoint.paging.flag]);
        if (!page[endpoint.paging.flag]) {
          assert.equal(page[endpoint.paging.field], endpoint.paging.end, 'end-of-listing value');
          break;
        }
        const token = page[endpoint.paging.field];
        assert.equal(typeof token, 'string');
        assert.notEqual(token, '');
        tokens.push(token as string);
        assert.ok(tokens.length < 10, 'the listing ends');
        body = success(await h.get(withToken(endpoint, token as string, query)));
      }
      assert.deepEqual(ids, ['p1-0', 'p1-1', 'p2-0', 'p2-1', 'p3-0', 'p3-1']);
      assert.equal(tokens.length, 2);
      // The extractor got exactly the positions that were sealed, with the canonical target.
      const made = h.calls.slice(calls);
      assert.deepEqual(
        made.map((call) => call.request.position),
        [null, positionOf(2), positionOf(3)],
      );
      for (const call of made) assert.deepEqual(call.request.params, made[0]?.request.params);

      // Opaque: neither the position nor its parts are readable in any decoding.
      for (const token of tokens) {
        assert.match(token, /^[A-Za-z0-9_-]+$/, 'URL-safe');
        for (const text of renderings(token)) {
          assert.doesNotMatch(text, new RegExp(POSITION_MARKER));
          assert.doesNotMatch(text, /"page"|"p"\s*:|marker/);
          assert.throws(() => JSON.parse(text) as unknown);
        }
      }
    });

    test(`${endpoint.path}: a token is bound to its endpoint and target`, async () => {
      const query = variantQuery(endpoint, 'bound');
      const token = String(tokenOf(endpoint, success(await h.get(urlOf(endpoint, {}, query))).data));
      const calls = h.calls.length;
      const before = await ledgerState(h, h.team.id);
      // Another target of the same endpoint, and the example target.
      for (const other of [variantQuery(endpoint, 'elsewhere'), endpoint.exampleQuery]) {
        const error = expectError(await h.get(withToken(endpoint, token, other)), 400, 'BAD_REQUEST', { authed: true });
        assert.match(error.message, /another endpoint or target/);
      }
      // Every other paging endpoint, with its own valid target.
      for (const other of paging.filter((candidate) => candidate.id !== endpoint.id)) {
        const url = urlOf(other, { [other.paging.param]: token });
        expectError(await h.get(url), 400, 'BAD_REQUEST', { authed: true });
      }
      assert.equal(h.calls.length, calls);
      assert.deepEqual(await ledgerState(h, h.team.id), before);
      // With its own target it works.
      success(await h.get(withToken(endpoint, token, query)));
    });
  }

  test('a posts cursor issued for a pageId is bound to that pageId', async () => {
    const posts = paging.find((endpoint) => endpoint.id === 'socialnet.profile.posts');
    assert.ok(posts);
    const token = String(tokenOf(posts, success(await h.get(urlOf(posts, {}, { pageId: '100064512345678' }))).data));
    success(await h.get(withToken(posts, token, { pageId: '100064512345678' })));
    expectError(await h.get(withToken(posts, token, { pageId: '100064512345679' })), 400, 'BAD_REQUEST', { authed: true });
    expectError(await h.get(withToken(posts, token, { url: 'https://www.socialnet.example/profile.php?id=100064512345678' })), 400, 'BAD_REQUEST', {
      authed: true,
    });
  });
});

describe('a cursor inside a cached response keeps its scrape time', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ credits: 10_000, rateLimit: 1_000_000 });
    h.script = async (endpoint, request) => pagedResult(endpoint, request.position);
  });
  after(() => h.close());

  for (const endpoint of paging) {
    test(`${endpoint.path}: after 25 h the cached next page is served with cache_max_age; otherwise 400`, async () => {
      const query = variantQuery(endpoint, 'aged');
      const param = endpoint.paging.param;
      const t0 = h.clock.now;
      const first = success(await h.get(urlOf(endpoint, {}, query)));
      const c1 = String(tokenOf(endpoint, first.data));
      const second = success(await h.get(urlOf(endpoint, { [param]: c1 }, query)));
      const c2 = String(tokenOf(endpoint, second.data));

      h.clock.now = t0 + 25 * HOUR;
      const calls = h.calls.length;
      const before = await ledgerState(h, h.team.id);

      // The cached first page carries the very same cursor, scraped at t0.
      const cachedFirst = success(await h.get(urlOf(endpoint, { cache_max_age: '30d' }, query)));
      assert.equal(cachedFirst.meta.cached, true);
      assert.equal(tokenOf(endpoint, cachedFirst.data), c1);

      // Following it with cache_max_age: the cached next page, whatever the cursor's age.
      const cachedSecond = success(await h.get(urlOf(endpoint, { [param]: c1, cache_max_age: '30d' }, query)));
      assert.equal(cachedSecond.meta.cached, true);
      assert.equal(cachedSecond.meta.cachedAt, new Date(t0).toISOString());
      assert.deepEqual(itemIds(endpoint, cachedSecond.data), ['p2-0', 'p2-1']);
      assert.equal(tokenOf(endpoint, cachedSecond.data), c2);

      // Without cache_max_age, with too small an age, or with no cached next page: expired.
      for (const url of [
        urlOf(endpoint, { [param]: c1 }, query),
        urlOf(endpoint, { [param]: c1, cache_max_age: '1d' }, query),
        urlOf(endpoint, { [param]: c2, cache_max_age: '30d' }, query),
      ]) {
        const error = expectError(await h.get(url), 400, 'BAD_REQUEST', { authed: true });
        assert.match(error.message, /fetch the first page again/, url);
      }
      assert.equal(h.calls.length, calls, 'no scrape');
      assert.deepEqual(await ledgerState(h, h.team.id), before, 'no charge');

      // A fresh first page gives a fresh cursor that works live.
      const fresh = success(await h.get(urlOf(endpoint, {}, query)));
      const next = success(await h.get(urlOf(endpoint, { [param]: String(tokenOf(endpoint, fresh.data)) }, query)));
      assert.equal(next.meta.cached, false);
      assert.deepEqual(itemIds(endpoint, next.data), ['p2-0', 'p2-1']);
      assert.deepEqual(h.calls.at(-1)?.request.position, positionOf(2));
    });
  }
});
