// Every error status of the API, on every endpoint where it
// applies: the envelope, the request id, the headers, and the ledger left as it was.
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { after, afterEach, before, describe, test } from 'node:test';
import { endpoints } from '../../src/endpoints/index.ts';
import type { EndpointDeclaration, ExtractResult } from '../../src/endpoints/types.ts';
import { roundTripChannel } from '../../src/store/round-trips.ts';
import { UpstreamOutcome, type OutcomeKind } from '../../src/upstream/outcomes.ts';
import { byId, defaultScript, exampleQuery, fixtureResult, startHarness, type Harness } from './harness.ts';
import {
  assertNotCharged,
  expectError,
  failingStores,
  ledgerState,
  success,
  tokenOf,
  urlOf,
  variantQuery,
  type Response,
} from './support.ts';

let tagCounter = 0;
const nextTag = () => ++tagCounter;
let addressCounter = 0;
/** A client address never used before, so that failed authentications never add up across tests. */
const freshAddress = () => {
  addressCounter++;
  return `10.77.${Math.floor(addressCounter / 250)}.${(addressCounter % 250) + 1}`;
};

const DAY = 24 * 60 * 60 * 1000;
const fail = (kind: OutcomeKind) => async (endpoint: EndpointDeclaration): Promise<ExtractResult> => {
  throw new UpstreamOutcome(kind, endpoint.platform, `scripted ${kind}`);
};

/** A query string with a parameter given twice. */
function twice(endpoint: EndpointDeclaration, name: string): string {
  const params = new URLSearchParams(endpoint.exampleQuery);
  params.append(name, params.get(name) ?? 'x');
  return `${endpoint.path}?${params.toString()}`;
}

/** Query without the named parameters. */
function without(endpoint: EndpointDeclaration, names: string[], extra: Record<string, string> = {}): string {
  const query: Record<string, string> = { ...endpoint.exampleQuery, ...extra };
  for (const name of names) delete query[name];
  return `${endpoint.path}?${new URLSearchParams(query).toString()}`;
}

/** Path to the first non-nullable string of `data` (per the endpoint's schema), to set it to null. */
function nonNullableStringPath(schema: Record<string, unknown>, value: unknown, path: (string | number)[] = []): (string | number)[] | null {
  if (schema.type === 'string' && typeof value === 'string') return path;
  if (schema.type === 'object' && value && typeof value === 'object' && !Array.isArray(value)) {
    const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
    for (const [name, child] of Object.entries(properties)) {
      const found = nonNullableStringPath(child, (value as Record<string, unknown>)[name], [...path, name]);
      if (found) return found;
    }
  }
  if (schema.type === 'array' && Array.isArray(value) && value.length > 0) {
    return nonNullableStringPath(schema.items as Record<string, unknown>, value[0], [...path, 0]);
  }
  return null;
}

/** Data that violates the endpoint's schema in one of three ways. */
const VIOLATIONS: Record<string, (endpoint: EndpointDeclaration) => ExtractResult> = {
  'a required field deleted': (endpoint) => {
    const result = fixtureResult(endpoint);
    const name = (endpoint.data.required as string[]).find((field) => field !== 'fetchedAt' && field !== 'paging');
    assert.ok(name);
    delete result.data[name];
    return result;
  },
  'a null in a non-nullable string': (endpoint) => {
    const result = fixtureResult(endpoint);
    const path = nonNullableStringPath(endpoint.data as unknown as Record<string, unknown>, result.data);
    assert.ok(path && path.length > 0, `${endpoint.id} has a non-nullable string`);
    let holder = result.data as Record<string | number, unknown>;
    for (const step of path.slice(0, -1)) holder = holder[step] as Record<string | number, unknown>;
    holder[path.at(-1) as string | number] = null;
    return result;
  },
  'an integer where a string belongs, deep inside': (endpoint) => {
    const result = fixtureResult(endpoint);
    const path = nonNullableStringPath(endpoint.data as unknown as Record<string, unknown>, result.data);
    assert.ok(path && path.length > 0);
    let holder = result.data as Record<string | number, unknown>;
    for (const step of path.slice(0, -1)) holder = holder[step] as Record<string | number, unknown>;
    holder[path.at(-1) as string | number] = 42;
    return result;
  },
  'an undeclared field': (endpoint) => {
    const result = fixtureResult(endpoint);
    result.data.internalDebug = { host: 'scraper-7' };
    return result;
  },
};

/** How often the cache was looked up for `endpoint` (the api_cache_lookups_total counter). */
async function cacheLookups(h: Harness, endpoint: string): Promise<number> {
  const text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
  let total = 0;
  for (const match of text.matchAll(/^api_cache_lookups_total\{([^}]*)\} (\d+)$/gm)) if ((match[1] ?? '').includes(`endpoint="${endpoint}"`)) total += Number(match[2]);
  return total;
}

describe('error answers on every endpoint', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ credits: 1_000_000, rateLimit: 1_000_000 });
  });
  after(() => h.close());
  afterEach(() => {
    h.script = defaultScript;
  });

  /** Runs `act` and asserts that it changed nothing of the team's credits. */
  const uncharged = async <T>(teamId: string, act: () => Promise<T>): Promise<T> => {
    const before = await h.balance(teamId);
    const result = await act();
    await assertNotCharged(h, teamId, before);
    return result;
  };
  const get = (url: string) => h.get(url);
  const getAs = (key: string, url: string, address = '127.0.0.1') => h.get(url, { 'x-api-key': key }, { remoteAddress: address });

  for (const endpoint of endpoints) {
    describe(endpoint.path, () => {
      const example = urlOf(endpoint);

      // ------------------------------------------------------------------ 401
      test('401 without a key, with an unknown, malformed or revoked key, and with two different keys', async () => {
        const calls = h.calls.length;
        await uncharged(h.team.id, async () => {
          const none = await h.get(example, {}, { remoteAddress: freshAddress() });
          expectError(none, 401, 'UNAUTHORIZED', { authed: false });
          const unknown = await getAs(`psk_live_${'Z'.repeat(32)}`, example, freshAddress());
          expectError(unknown, 401, 'UNAUTHORIZED', { authed: false });
          const malformed = await getAs('x', example, freshAddress());
          expectError(malformed, 401, 'UNAUTHORIZED', { authed: false });
          const badBearer = await h.get(example, { authorization: 'Bearer' }, { remoteAddress: freshAddress() });
          expectError(badBearer, 401, 'UNAUTHORIZED', { authed: false });
        });

        // Revoked as the CLI does it: another process opens the same database.
        const other = await h.newTeam(5, 1000);
        success(await getAs(other.key, example));
        const cli = await h.openAnother();
        try {
          assert.equal(await cli.accounts.revokeKey(other.keyId), true);
        } finally {
          await cli.close();
        }
        await uncharged(other.team.id, async () => {
          expectError(await getAs(other.key, example, freshAddress()), 401, 'UNAUTHORIZED', { authed: false });
          const bearer = await h.get(example, { authorization: `Bearer ${other.key}` }, { remoteAddress: freshAddress() });
          expectError(bearer, 401, 'UNAUTHORIZED', { authed: false });
        });

        // Two headers, two different valid keys.
        const third = await h.newTeam(5, 1000);
        await uncharged(h.team.id, () =>
          uncharged(third.team.id, async () => {
            const both = await h.get(example, { 'x-api-key': h.key, authorization: `Bearer ${third.key}` }, { remoteAddress: freshAddress() });
            const error = expectError(both, 401, 'UNAUTHORIZED', { authed: false });
            assert.match(error.message, /different/);
          }),
        );
        assert.equal(h.calls.length, calls + 1, 'only the one successful request reached the extractor');
      });

      test('a key as Authorization: Bearer alone works, and so do both headers carrying the same key', async () => {
        const team = await h.newTeam(5, 1000);
        const bearer = success(await h.get(example, { authorization: `Bearer ${team.key}` }));
        assert.equal(bearer.meta.creditsRemaining, 4);
        const lower = success(await h.get(example, { authorization: `bearer ${team.key}` }));
        assert.equal(lower.meta.creditsRemaining, 3);
        const both = success(await h.get(example, { 'x-api-key': team.key, authorization: `Bearer ${team.key}` }));
        assert.equal(both.meta.creditsRemaining, 2);
      });

      // ------------------------------------------------------------------ 402
      test('402 for a team without credits; a cache hit still answers 200 at 0 credits', async () => {
        const broke = await h.newTeam(0, 1000);
        const calls = h.calls.length;
        await uncharged(broke.team.id, async () => {
          const response = await getAs(broke.key, example);
          const error = expectError(response, 402, 'INSUFFICIENT_CREDITS', { authed: true });
          assert.match(error.message, /1 credit/);
        });
        assert.equal(h.calls.length, calls, 'no scrape without a credit');

        success(await get(example));
        await uncharged(broke.team.id, async () => {
          const hit = success(await getAs(broke.key, urlOf(endpoint, { cache_max_age: '1d' })));
          assert.equal(hit.meta.cached, true);
          assert.equal(hit.meta.creditsCharged, 0);
          assert.equal(hit.meta.creditsRemaining, 0);
          // Without the cache, still 402; validation comes before credits.
          expectError(await getAs(broke.key, example), 402, 'INSUFFICIENT_CREDITS', { authed: true });
          expectError(await getAs(broke.key, urlOf(endpoint, { cache_max_age: '2d' })), 422, 'VALIDATION_ERROR', { authed: true });
        });
      });

      // ------------------------------------------------------------------ 404
      for (const kind of ['not_found', 'gated'] as const) {
        test(`404 for the ${kind} outcome; cached results of the target are deleted`, async () => {
          const query = variantQuery(endpoint, nextTag());
          const first = success(await get(urlOf(endpoint, {}, query)));
          let nextUrl: string | null = null;
          if (endpoint.paging) {
            const token = tokenOf(endpoint, first.data);
            assert.equal(typeof token, 'string');
            nextUrl = urlOf(endpoint, { [endpoint.paging.param]: String(token) }, query);
            success(await get(nextUrl));
          }
          const cached = success(await get(urlOf(endpoint, { cache_max_age: '30d' }, query)));
          assert.equal(cached.meta.cached, true);

          h.script = fail(kind);
          const error = await uncharged(h.team.id, async () => expectError(await get(urlOf(endpoint, {}, query)), 404, 'NOT_FOUND', { authed: true }));
          assert.doesNotMatch(error.message, /scripted/);
          h.script = defaultScript;

          const calls = h.calls.length;
          const again = success(await get(urlOf(endpoint, { cache_max_age: '30d' }, query)));
          assert.equal(again.meta.cached, false, 'the deleted entry is not served');
          assert.equal(again.meta.creditsCharged, 1);
          assert.equal(h.calls.length, calls + 1);
          if (nextUrl) {
            const page = success(await get(`${nextUrl}&cache_max_age=30d`));
            assert.equal(page.meta.cached, false, 'the next page of the target is deleted as well');
            assert.equal(h.calls.length, calls + 2);
          }
        });
      }

      // ------------------------------------------------------------------ 404 / 405 routing
      test('405 with Allow: GET for every other method, before authentication', async () => {
        for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'HEAD'] as const) {
          const response = await h.app.inject({
            method,
            url: example,
            ...(method === 'POST' || method === 'PUT' ? { payload: { url: 'x' } } : {}),
            remoteAddress: freshAddress(),
          });
          assert.equal(response.headers.allow, 'GET', method);
          expectError(response, 405, 'METHOD_NOT_ALLOWED', { authed: false, head: method === 'HEAD' });
          if (method !== 'HEAD') assert.match(response.json<{ error: { message: string } }>().error.message, new RegExp(method));
        }
        // With a valid key as well: still 405, nothing counted or charged.
        await uncharged(h.team.id, async () => {
          const response = await h.app.inject({ method: 'DELETE', url: example, headers: { 'x-api-key': h.key } });
          expectError(response, 405, 'METHOD_NOT_ALLOWED', { authed: false });
        });
      });

      test('405 for every other method before its body is read: a body too large, of an unknown type, or malformed', async () => {
        const cases: { method: 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS'; headers: Record<string, string>; payload?: string }[] = [
          { method: 'POST', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ pad: 'x'.repeat(200_000) }) },
          { method: 'PUT', headers: { 'content-type': 'text/weird' }, payload: 'hello' },
          { method: 'PATCH', headers: { 'content-type': 'application/json' }, payload: '{not json' },
          { method: 'DELETE', headers: { 'content-type': 'application/json' }, payload: '{"a":1}' },
          { method: 'OPTIONS', headers: {} },
        ];
        await uncharged(h.team.id, async () => {
          for (const { method, headers, payload } of cases) {
            const response = await h.app.inject({ method, url: example, headers: { 'x-api-key': h.key, ...headers }, ...(payload ? { payload } : {}), remoteAddress: freshAddress() });
            assert.equal(response.headers.allow, 'GET', method);
            expectError(response, 405, 'METHOD_NOT_ALLOWED', { authed: false });
          }
        });
        // On an unknown path the same bodies are 404, not 400.
        for (const { method, headers, payload } of cases) {
          const response = await h.app.inject({ method, url: `${endpoint.path}/nope`, headers, ...(payload ? { payload } : {}), remoteAddress: freshAddress() });
          expectError(response, 404, 'NOT_FOUND', { authed: false });
        }
      });

      test('an unknown path below the endpoint is 404 before authentication, also with a trailing slash', async () => {
        for (const path of [`${endpoint.path}/extra`, `${endpoint.path}/`, endpoint.path.toUpperCase()]) {
          const response = await h.app.inject({ method: 'GET', url: `${path}?${exampleQuery(endpoint)}`, remoteAddress: freshAddress() });
          const error = expectError(response, 404, 'NOT_FOUND', { authed: false });
          assert.doesNotMatch(error.message, /method/i, path);
        }
      });

      // ------------------------------------------------------------------ 422
      test('422 for missing required parameters, one details item each', async () => {
        const required = Object.keys(endpoint.exampleQuery);
        await uncharged(h.team.id, async () => {
          const none = expectError(await get(without(endpoint, required)), 422, 'VALIDATION_ERROR', { authed: true });
          if (endpoint.id === 'socialnet.profile.posts') {
            // Neither of the pair is required alone: one item on `url` says one of them is.
            assert.equal(none.details?.length, 1);
            assert.equal(none.details?.[0]?.path, 'url');
            assert.match(none.details?.[0]?.message ?? '', /url or pageId is required/);
          } else {
            assert.deepEqual(none.details, required.map((path) => ({ path, message: 'Required' })));
          }
          if (required.length > 1) {
            for (const name of required) {
              const one = expectError(await get(without(endpoint, [name])), 422, 'VALIDATION_ERROR', { authed: true });
              assert.deepEqual(one.details, [{ path: name, message: 'Required' }]);
            }
          }
          // Empty is as good as missing.
          const first = required[0] ?? '';
          const empty = expectError(await get(urlOf(endpoint, { [first]: '' })), 422, 'VALIDATION_ERROR', { authed: true });
          assert.deepEqual(empty.details?.map((detail) => detail.path), [first]);
        });
      });

      test('422 lists every problem at once', async () => {
        const required = Object.keys(endpoint.exampleQuery);
        const error = await uncharged(h.team.id, async () =>
          expectError(await get(without(endpoint, required, { cache_max_age: '2d' })), 422, 'VALIDATION_ERROR', { authed: true }),
        );
        const paths = (error.details ?? []).map((detail) => detail.path).sort();
        const expected = endpoint.id === 'socialnet.profile.posts' ? ['cache_max_age', 'url'] : ['cache_max_age', ...required].sort();
        assert.deepEqual(paths, expected);
      });

      test('422 for a parameter given twice', async () => {
        const name = Object.keys(endpoint.exampleQuery)[0] ?? '';
        await uncharged(h.team.id, async () => {
          const error = expectError(await get(twice(endpoint, name)), 422, 'VALIDATION_ERROR', { authed: true });
          assert.deepEqual(error.details?.map((detail) => detail.path), [name]);
          const maxAge = expectError(await get(`${example}&cache_max_age=1d&cache_max_age=1d`), 422, 'VALIDATION_ERROR', { authed: true });
          assert.deepEqual(maxAge.details?.map((detail) => detail.path), ['cache_max_age']);
        });
      });

      test('422 for an invalid cache_max_age', async () => {
        await uncharged(h.team.id, async () => {
          for (const value of ['2d', '', '1D', '24h', '0d', '1d ', '30d,1d']) {
            const error = expectError(await get(urlOf(endpoint, { cache_max_age: value })), 422, 'VALIDATION_ERROR', { authed: true });
            assert.equal(error.details?.length, 1, value);
            assert.equal(error.details?.[0]?.path, 'cache_max_age');
            assert.match(error.details?.[0]?.message ?? '', /1d, 3d, 7d, 14d, 30d/);
          }
        });
      });

      test('422 for over-long parameters', async () => {
        const properties = endpoint.query.properties as Record<string, { maxLength?: number }>;
        await uncharged(h.team.id, async () => {
          for (const name of Object.keys(endpoint.exampleQuery)) {
            const limit = properties[name]?.maxLength;
            assert.ok(limit, `${name} has a length limit`);
            const value = name === 'url' ? `https://linkpage-a.example/${'a'.repeat(limit + 1 - 'https://linkpage-a.example/'.length)}` : 'a'.repeat(limit + 1);
            assert.equal(value.length, limit + 1);
            if (name === 'url') assert.equal(limit, 2048);
            const error = expectError(await get(urlOf(endpoint, { [name]: value })), 422, 'VALIDATION_ERROR', { authed: true });
            assert.deepEqual(error.details, [{ path: name, message: `Must be at most ${limit} characters` }]);
          }
          if (endpoint.paging) {
            const param = endpoint.paging.param;
            const error = expectError(await get(urlOf(endpoint, { [param]: 'A'.repeat(4097) })), 422, 'VALIDATION_ERROR', { authed: true });
            assert.deepEqual(error.details, [{ path: param, message: 'Must be at most 4096 characters' }]);
          }
        });
      });

      if ('url' in endpoint.exampleQuery) {
        test('422 on url for a URL of another host or scheme, or not a URL', async () => {
          const original = new URL(endpoint.exampleQuery.url ?? '');
          await uncharged(h.team.id, async () => {
            for (const url of [
              `https://evil.example${original.pathname}`,
              `https://${original.hostname}.evil.example${original.pathname}`,
              `ftp://${original.hostname}${original.pathname}`,
              `${original.hostname}${original.pathname}`,
              `https://user:pw@${original.hostname}${original.pathname}`,
              `https://${original.hostname}:8443${original.pathname}`,
              'javascript:alert(1)',
            ]) {
              const error = expectError(await get(urlOf(endpoint, { url })), 422, 'VALIDATION_ERROR', { authed: true });
              assert.equal(error.details?.length, 1, url);
              assert.equal(error.details?.[0]?.path, 'url', url);
            }
          });
        });
      }

      if (endpoint.id === 'socialnet.profile.posts') {
        test('422 for both url and pageId', async () => {
          const error = await uncharged(h.team.id, async () =>
            expectError(await get(urlOf(endpoint, { pageId: '100064512345678' })), 422, 'VALIDATION_ERROR', { authed: true }),
          );
          assert.deepEqual(error.details, [{ path: 'url', message: 'Give either url or pageId, not both' }]);
        });
      }

      test('422 for parameters the endpoint does not declare, each named with the closest declared name, before the cache and the credits', async () => {
        success(await get(urlOf(endpoint, { cache_max_age: '1d' })));
        const calls = h.calls.length;
        const lookups = await cacheLookups(h, endpoint.id);
        const first = Object.keys(endpoint.exampleQuery)[0] ?? '';
        // A typo of cache_max_age would have been a live scrape; a made-up name, a near miss of a
        // declared one (also given twice) and a tracking parameter are refused in the same answer.
        const query = new URLSearchParams({ ...endpoint.exampleQuery, 'cache-max-age': '1d', foo: 'bar', [`${first}x`]: 'y', utm_source: 'x' });
        query.append(`${first}x`, 'z');
        const error = await uncharged(h.team.id, async () => expectError(await get(`${endpoint.path}?${query.toString()}`), 422, 'VALIDATION_ERROR', { authed: true }));
        const declared = [...Object.keys(endpoint.query.properties), 'cache_max_age', 'stale_if_error'];
        assert.deepEqual(error.details, [
          { path: 'cache-max-age', message: 'Unknown parameter; did you mean cache_max_age?' },
          { path: 'foo', message: `Unknown parameter; the parameters are ${declared.join(', ')}` },
          { path: `${first}x`, message: `Unknown parameter; did you mean ${first}?` },
          { path: 'utm_source', message: `Unknown parameter; the parameters are ${declared.join(', ')}` },
        ]);
        // Every problem of the query at once: an unknown name beside missing and invalid ones.
        const required = Object.keys(endpoint.exampleQuery);
        const mixed = expectError(await get(without(endpoint, required, { cache_max_age: '2d', 'cache-max-age': '1d' })), 422, 'VALIDATION_ERROR', { authed: true });
        const expected = endpoint.id === 'socialnet.profile.posts' ? ['url'] : required;
        assert.deepEqual(mixed.details?.map((detail) => detail.path).sort(), ['cache-max-age', 'cache_max_age', ...expected].sort());
        assert.equal(h.calls.length, calls, 'nothing scraped');
        assert.equal(await cacheLookups(h, endpoint.id), lookups, 'the cache was not even looked up');
      });

      // ------------------------------------------------------------------ 429
      test('429 over the team rate limit, with Retry-After and the rate-limit headers', async () => {
        const team = await h.newTeam(10, 1);
        success(await getAs(team.key, example));
        const before = await ledgerState(h, team.team.id);
        const calls = h.calls.length;
        const response = await getAs(team.key, example);
        const error = expectError(response, 429, 'RATE_LIMITED', { authed: true });
        assert.ok(Number(response.headers['retry-after']) >= 1);
        assert.equal(response.headers['x-ratelimit-limit'], '1');
        assert.equal(response.headers['x-ratelimit-remaining'], '0');
        assert.ok(Number(response.headers['x-ratelimit-reset']) > 0);
        assert.match(error.message, new RegExp(`${response.headers['retry-after']} s`));
        await assertNotCharged(h, team.team.id, before.balance);
        assert.equal(h.calls.length, calls);
      });

      test('the stages in order: authentication, then the rate limit, then the query', async () => {
        const required = Object.keys(endpoint.exampleQuery);
        const invalid = without(endpoint, required, { cache_max_age: '2d' });
        expectError(await h.get(invalid, {}, { remoteAddress: freshAddress() }), 401, 'UNAUTHORIZED', { authed: false });
        const team = await h.newTeam(10, 1);
        expectError(await getAs(team.key, invalid), 422, 'VALIDATION_ERROR', { authed: true });
        // The invalid request counted: the next one, valid or not, is over the limit.
        expectError(await getAs(team.key, invalid), 429, 'RATE_LIMITED', { authed: true });
        expectError(await getAs(team.key, example), 429, 'RATE_LIMITED', { authed: true });
      });

      // ------------------------------------------------------------------ 500
      test('500 INTERNAL_ERROR for an unexpected fault, leaking nothing', async () => {
        const query = variantQuery(endpoint, nextTag());
        h.script = async () => {
          throw new Error('secret internals at /srv/x');
        };
        const error = await uncharged(h.team.id, async () => expectError(await get(urlOf(endpoint, {}, query)), 500, 'INTERNAL_ERROR', { authed: true }));
        assert.doesNotMatch(error.message, /secret|\/srv\/x|Error/);
        h.script = defaultScript;
        const calls = h.calls.length;
        const after = success(await get(urlOf(endpoint, { cache_max_age: '30d' }, query)));
        assert.equal(after.meta.cached, false, 'nothing was cached');
        assert.equal(h.calls.length, calls + 1);
      });

      // ------------------------------------------------------------------ 502
      const upstream: [string, OutcomeKind | null, string, (e: EndpointDeclaration) => Promise<ExtractResult>][] = [
        ['blocked', 'blocked', 'UPSTREAM_BLOCKED', fail('blocked')],
        ['transient', 'transient', 'UPSTREAM_BLOCKED', fail('transient')],
        ['unrecognised', 'unrecognised', 'UPSTREAM_UNRECOGNISED', fail('unrecognised')],
        ...Object.entries(VIOLATIONS).map(
          ([name, make]) => [`data with ${name}`, null, 'UPSTREAM_UNRECOGNISED', async (e: EndpointDeclaration) => make(e)] as [
            string,
            null,
            string,
            (e: EndpointDeclaration) => Promise<ExtractResult>,
          ],
        ),
      ];
      for (const [name, , code, script] of upstream) {
        test(`502 ${code} for ${name}; not charged, nothing cached`, async () => {
          const query = variantQuery(endpoint, nextTag());
          h.script = script;
          const response = await uncharged(h.team.id, () => get(urlOf(endpoint, {}, query)));
          assert.notEqual(response.statusCode, 200, response.body);
          const error = expectError(response, 502, code, { authed: true });
          if (code === 'UPSTREAM_BLOCKED') assert.ok(Number(response.headers['retry-after']) >= 1);
          // The message says which platform's page failed, and nothing of the parser or the data.
          if (code === 'UPSTREAM_UNRECOGNISED') assert.equal(error.message, `The ${endpoint.platform} page could not be read; the platform may have changed it.`);
          // A block is told as one: the platform refused the request, it was not merely down.
          if (name === 'blocked') assert.equal(error.message, `${endpoint.platform} blocked the request (its rate limit, a login wall, a challenge or a block page); retry later.`);
          if (name === 'transient') assert.equal(error.message, `${endpoint.platform} is temporarily unavailable; retry shortly.`);
          assert.doesNotMatch(error.message, /scripted|data\/|must |internalDebug/);
          h.script = defaultScript;
          const calls = h.calls.length;
          const after = success(await get(urlOf(endpoint, { cache_max_age: '30d' }, query)));
          assert.equal(after.meta.cached, false, 'nothing was cached');
          assert.equal(h.calls.length, calls + 1);
        });
      }

      // ------------------------------------------------------------------ 400
      const paging = endpoint.paging;
      if (paging) {
        const withToken = (token: string, query?: Record<string, string>) => urlOf(endpoint, { [paging.param]: token }, query);
        const firstToken = async (query?: Record<string, string>): Promise<string> => {
          const token = tokenOf(endpoint, success(await get(urlOf(endpoint, {}, query))).data);
          assert.equal(typeof token, 'string');
          return token as string;
        };

        test('400 for a malformed, truncated or altered token', async () => {
          const token = await firstToken();
          success(await get(withToken(token)));
          const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
          const altered: string[] = ['not a token', 'abc', '!!!!', 'A'.repeat(200), token.slice(0, -4), `${token}AAAA`, `${token}==`, token.slice(1)];
          for (const at of [0, 3, 11, 12, 20, Math.floor(token.length / 2), token.length - 17, token.length - 2]) {
            altered.push(token.slice(0, at) + (token[at] === 'A' ? 'B' : 'A') + token.slice(at + 1));
          }
          // Every other last character, including those that only change unused bits.
          for (const char of alphabet) if (char !== token.at(-1)) altered.push(token.slice(0, -1) + char);
          const calls = h.calls.length;
          await uncharged(h.team.id, async () => {
            for (const bad of altered) {
              const error = expectError(await get(withToken(bad)), 400, 'BAD_REQUEST', { authed: true });
              assert.match(error.message, new RegExp(paging.param));
            }
          });
          assert.equal(h.calls.length, calls);
        });

        test('400 for a token issued for another endpoint or another target', async () => {
          const others = endpoints.filter((other) => other.paging && other.id !== endpoint.id);
          const calls = h.calls.length;
          const foreign: string[] = [];
          for (const other of others) {
            const token = tokenOf(other, success(await get(urlOf(other))).data);
            foreign.push(String(token));
          }
          foreign.push(await firstToken(variantQuery(endpoint, nextTag())));
          const own = await firstToken();
          assert.equal(h.calls.length, calls + others.length + 2);
          await uncharged(h.team.id, async () => {
            for (const token of foreign) {
              const error = expectError(await get(withToken(token)), 400, 'BAD_REQUEST', { authed: true });
              assert.match(error.message, /another endpoint or target/);
            }
            // Our own token with another target.
            const error = expectError(await get(withToken(own, variantQuery(endpoint, nextTag()))), 400, 'BAD_REQUEST', { authed: true });
            assert.match(error.message, /another endpoint or target/);
          });
          assert.equal(h.calls.length, calls + others.length + 2);
        });

        test('400 for a malformed token comes before 402', async () => {
          const broke = await h.newTeam(0, 1000);
          await uncharged(broke.team.id, async () => {
            expectError(await getAs(broke.key, withToken('garbage')), 400, 'BAD_REQUEST', { authed: true });
          });
        });

        test('400 for a token that the upstream rejects; not charged', async () => {
          const token = await firstToken();
          h.script = async (e, request) => {
            if (request.position !== null) throw new UpstreamOutcome('rejected_cursor', e.platform, 'position gone');
            return fixtureResult(e);
          };
          const error = await uncharged(h.team.id, async () => expectError(await get(withToken(token)), 400, 'BAD_REQUEST', { authed: true }));
          assert.match(error.message, /fetch the first page again/);
          assert.deepEqual(h.calls.at(-1)?.request.position, fixtureResult(endpoint).next);
        });

        test('400 for an expired token: valid for exactly 24 hours from its scrape', async () => {
          const token = await firstToken();
          h.clock.now += DAY;
          success(await get(withToken(token)));
          h.clock.now += 1;
          const calls = h.calls.length;
          const error = await uncharged(h.team.id, async () => expectError(await get(withToken(token)), 400, 'BAD_REQUEST', { authed: true }));
          assert.match(error.message, /expired/);
          assert.match(error.message, /fetch the first page again/);
          assert.equal(h.calls.length, calls);
        });
      }
    });
  }

  test('an unknown path is 404 NOT_FOUND, with or without a key', async () => {
    for (const path of ['/v1', '/v1/nope', '/v2/snapmsg/profile', '/v1/snapmsg/profile/posts']) {
      expectError(await h.app.inject({ method: 'GET', url: path, remoteAddress: freshAddress() }), 404, 'NOT_FOUND', { authed: false });
      expectError(await h.app.inject({ method: 'POST', url: path, remoteAddress: freshAddress() }), 404, 'NOT_FOUND', { authed: false });
      await uncharged(h.team.id, async () => {
        expectError(await get(path), 404, 'NOT_FOUND', { authed: false });
      });
    }
  });
});

describe('socialnet profile: a 404 deletes the cached results of every switch combination of the target', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ credits: 100 });
  });
  after(() => h.close());

  test('a cached businessHours=false result is not served after the page answered 404', async () => {
    const endpoint = byId('socialnet.profile');
    success(await h.get(urlOf(endpoint, { businessHours: 'false' })));
    assert.equal(success(await h.get(urlOf(endpoint, { businessHours: 'false', cache_max_age: '1d' }))).meta.cached, true);
    h.script = fail('not_found');
    expectError(await h.get(urlOf(endpoint)), 404, 'NOT_FOUND', { authed: true });
    h.script = defaultScript;
    const calls = h.calls.length;
    const again = success(await h.get(urlOf(endpoint, { businessHours: 'false', cache_max_age: '1d' })));
    assert.equal(again.meta.cached, false);
    assert.equal(h.calls.length, calls + 1);
  });
});

describe('501 NOT_IMPLEMENTED for an endpoint without an extractor', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ credits: 10, without: endpoints.map((endpoint) => endpoint.id) });
  });
  after(() => h.close());

  for (const endpoint of endpoints) {
    test(`${endpoint.path}: 501 before any reservation, after validation`, async () => {
      const before = await ledgerState(h, h.team.id);
      const error = expectError(await h.get(urlOf(endpoint)), 501, 'NOT_IMPLEMENTED', { authed: true });
      assert.match(error.message, new RegExp(endpoint.path));
      expectError(await h.get(urlOf(endpoint, { cache_max_age: '7d' })), 501, 'NOT_IMPLEMENTED', { authed: true });
      expectError(await h.get(without(endpoint, Object.keys(endpoint.exampleQuery))), 422, 'VALIDATION_ERROR', { authed: true });
      const broke = await h.newTeam(0, 100);
      expectError(await h.get(urlOf(endpoint), { 'x-api-key': broke.key }), 501, 'NOT_IMPLEMENTED', { authed: true });
      const after = await ledgerState(h, h.team.id);
      assert.deepEqual(after, before, 'no reservation, no ledger row');
      assert.equal(h.calls.length, 0);
    });
  }
});

describe('503 SERVICE_UNAVAILABLE when a store is unreachable', () => {
  let h: Harness;
  const failing = new Set<string>();
  before(async () => {
    h = await startHarness({ credits: 1000, rateLimit: 100_000, wrapStores: failingStores(failing) });
  });
  after(() => h.close());
  afterEach(() => failing.clear());

  // Where the store fails, and whether the request got as far as the rate limit.
  const cases: [string, boolean, Record<string, string>][] = [
    ['accounts.findActiveKey', false, {}],
    ['limiter.hit', false, {}],
    ['cache.get', true, { cache_max_age: '1d' }],
    ['ledger.reserve', true, {}],
    ['cache.set', true, {}],
  ];
  let tag = 0;
  for (const endpoint of endpoints) {
    for (const [method, authed, extra] of cases) {
      test(`${endpoint.path}: ${method} failing gives 503 with Retry-After; not charged, nothing cached`, async () => {
        const query = variantQuery(endpoint, `s${++tag}`);
        const before = await h.balance();
        failing.add(method);
        const response = await h.get(urlOf(endpoint, extra, query));
        failing.clear();
        const error = expectError(response, 503, 'SERVICE_UNAVAILABLE', { authed });
        assert.ok(Number(response.headers['retry-after']) >= 1);
        assert.doesNotMatch(error.message, /ECONNREFUSED|10\.9\.8\.7|unreachable:/);
        await assertNotCharged(h, h.team.id, before);
        const calls = h.calls.length;
        const after: Response = await h.get(urlOf(endpoint, { cache_max_age: '30d' }, query));
        assert.equal(success(after).meta.cached, false, 'nothing was cached');
        assert.equal(h.calls.length, calls + 1);
      });
    }
  }

  test('failed key lookups while the store is down do not count as failed authentications', async () => {
    const endpoint = byId('linkpage-a.profile');
    failing.add('accounts.findActiveKey');
    for (let i = 0; i < 35; i++) {
      expectError(await h.get(urlOf(endpoint), { 'x-api-key': h.key }, { remoteAddress: '10.99.0.1' }), 503, 'SERVICE_UNAVAILABLE', { authed: false });
    }
    failing.clear();
    success(await h.get(urlOf(endpoint), { 'x-api-key': h.key }, { remoteAddress: '10.99.0.1' }));
  });
});

describe('429 after 30 failed authentications from one address in 60 seconds, for failing requests only', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ credits: 100 });
  });
  after(() => h.close());

  const WRONG = `psk_live_${'Q'.repeat(32)}`;

  test('the 31st failing request from that address is 429; a valid key from it is never refused; the window frees', async () => {
    const address = '192.0.2.10';
    const start = h.clock.now;
    for (let i = 0; i < 30; i++) {
      const endpoint = endpoints[i % endpoints.length] as EndpointDeclaration;
      const headers: Record<string, string> =
        i % 3 === 0 ? {} : i % 3 === 1 ? { 'x-api-key': WRONG } : { 'x-api-key': h.key, authorization: 'Bearer psk_live_other_key_000000' };
      h.clock.now = start + i * 1000;
      expectError(await h.get(urlOf(endpoint), headers, { remoteAddress: address }), 401, 'UNAUTHORIZED', { authed: false });
    }
    const endpoint = byId('linkpage-a.profile');
    const before = await h.balance();
    const failing: Record<string, string>[] = [{ 'x-api-key': WRONG }, {}, { authorization: 'Bearer nonsense' }, { 'x-api-key': h.key, authorization: `Bearer ${WRONG}` }];
    for (const headers of failing) {
      const wrong = await h.get(urlOf(endpoint), headers, { remoteAddress: address });
      const error = expectError(wrong, 429, 'RATE_LIMITED', { authed: false });
      assert.equal(wrong.headers['retry-after'], String(60 - 29));
      assert.match(error.message, /failed authentication/);
    }
    assert.equal(await h.balance(), before);
    assert.equal(h.calls.length, 0);

    // The valid key, from the same address, is served throughout.
    const valid = success(await h.get(urlOf(endpoint), { 'x-api-key': h.key }, { remoteAddress: address }));
    assert.equal(valid.meta.creditsCharged, 1);
    success(await h.get(urlOf(endpoint, { cache_max_age: '1d' }), { authorization: `Bearer ${h.key}` }, { remoteAddress: address }));
    // Another address is not affected either way.
    expectError(await h.get(urlOf(endpoint), { 'x-api-key': WRONG }, { remoteAddress: '192.0.2.11' }), 401, 'UNAUTHORIZED', { authed: false });

    // 60 s after the first failure one failing attempt is a 401 again; then 429 until the next frees.
    h.clock.now = start + 60_000;
    expectError(await h.get(urlOf(endpoint), { 'x-api-key': WRONG }, { remoteAddress: address }), 401, 'UNAUTHORIZED', { authed: false });
    expectError(await h.get(urlOf(endpoint), { 'x-api-key': WRONG }, { remoteAddress: address }), 429, 'RATE_LIMITED', { authed: false });
    h.clock.now = start + 29_000 + 60_000 + 60_000;
    expectError(await h.get(urlOf(endpoint), { 'x-api-key': WRONG }, { remoteAddress: address }), 401, 'UNAUTHORIZED', { authed: false });
  });

  test('IPv6 failures count per /64, so rotating addresses inside it does not escape the limit', async () => {
    const endpoint = byId('linkpage-a.profile');
    for (let i = 0; i < 30; i++) {
      const response = await h.get(urlOf(endpoint), { 'x-api-key': WRONG }, { remoteAddress: `2001:db8:7:7:${i.toString(16)}::1` });
      expectError(response, 401, 'UNAUTHORIZED', { authed: false });
    }
    expectError(await h.get(urlOf(endpoint), { 'x-api-key': WRONG }, { remoteAddress: '2001:db8:7:7:ffff::2' }), 429, 'RATE_LIMITED', { authed: false });
    expectError(await h.get(urlOf(endpoint), { 'x-api-key': WRONG }, { remoteAddress: '::ffff:192.0.2.77' }), 401, 'UNAUTHORIZED', { authed: false });
    expectError(await h.get(urlOf(endpoint), { 'x-api-key': WRONG }, { remoteAddress: '2001:db8:7:8::1' }), 401, 'UNAUTHORIZED', { authed: false });
  });

  test('fuzz: thousands of bad keys mixed with a valid key from one address: the valid key never gets 429, nothing is 5xx', async () => {
    const team = await h.newTeam(1_000_000, 1_000_000);
    const endpoint = byId('snapmsg.profile');
    const address = '198.51.100.7';
    // A deterministic generator, so that a failure can be replayed.
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const garbage = () => Array.from({ length: Math.floor(random() * 60) }, () => String.fromCharCode(33 + Math.floor(random() * 94))).join('');
    const badHeaders = (): Record<string, string> => {
      switch (Math.floor(random() * 7)) {
        case 0:
          return {};
        case 1:
          return { 'x-api-key': WRONG };
        case 2:
          return { 'x-api-key': `psk_live_${garbage()}` };
        case 3:
          return { authorization: `Bearer ${garbage() || 'x'}` };
        case 4:
          return { authorization: garbage() };
        case 5:
          return { 'x-api-key': team.key, authorization: `Bearer ${WRONG}` };
        default:
          return { 'x-api-key': team.key.slice(0, -1) + (team.key.endsWith('A') ? 'B' : 'A') };
      }
    };
    const counts = { valid: 0, valid429: 0, bad401: 0, bad429: 0, other: new Map<number, number>() };
    const start = h.clock.now;
    for (let i = 0; i < 5000; i++) {
      // About seventeen minutes of traffic, so that failure windows open and close.
      h.clock.now = start + i * 200;
      const useValid = random() < 0.3;
      const headers = useValid ? (random() < 0.5 ? { 'x-api-key': team.key } : { authorization: `Bearer ${team.key}` }) : badHeaders();
      const url = urlOf(endpoint, random() < 0.8 ? { cache_max_age: '30d' } : {});
      const response = await h.get(url, headers, { remoteAddress: address });
      assert.ok(response.statusCode < 500, `request ${i}: ${response.statusCode} ${response.body}`);
      if (useValid) {
        counts.valid++;
        if (response.statusCode === 429) counts.valid429++;
        assert.equal(response.statusCode, 200, `request ${i} with the valid key: ${response.body}`);
      } else if (response.statusCode === 401) counts.bad401++;
      else if (response.statusCode === 429) {
        counts.bad429++;
        assert.ok(Number(response.headers['retry-after']) >= 1);
      } else counts.other.set(response.statusCode, (counts.other.get(response.statusCode) ?? 0) + 1);
    }
    assert.equal(counts.valid429, 0);
    assert.ok(counts.valid > 500, `valid requests: ${counts.valid}`);
    assert.ok(counts.bad429 > 0, 'the failure limit did engage');
    // Every failing request was a 401 or a 429: at most 30 401s per rolling minute.
    assert.deepEqual([...counts.other], []);
    assert.ok(counts.bad401 <= 30 * 18, `401s: ${counts.bad401}`);
  });

  test('a valid key costs one key lookup and no failure-limiter work (one gate call on a cluster); a failing one costs one limiter write', async () => {
    const calls: string[] = [];
    // The round trips of one request: those sent in its async context, not those of a timer
    // (a flush, a poll) that fires while it runs.
    const request = new AsyncLocalStorage<{ roundTrips: number }>();
    const count = () => {
      const counting = request.getStore();
      if (counting) counting.roundTrips++;
    };
    roundTripChannel.subscribe(count);
    const counting = await startHarness({
      credits: 100,
      wrapStores: (stores) => ({
        ...stores,
        accounts: new Proxy(stores.accounts, {
          get: (target, property) => {
            const value: unknown = Reflect.get(target, property, target);
            return typeof value === 'function' ? (...args: unknown[]) => (calls.push(`accounts.${String(property)}`), (value as (...a: unknown[]) => unknown).apply(target, args)) : value;
          },
        }),
        limiter: {
          hit: (key, ...rest) => (calls.push(`limiter.hit ${key.split(':')[0]}`), stores.limiter.hit(key, ...rest)),
          peek: (key, ...rest) => (calls.push(`limiter.peek ${key.split(':')[0]}`), stores.limiter.peek(key, ...rest)),
        },
      }),
    });
    try {
      const endpoint = byId('snapmsg.profile');
      success(await counting.get(urlOf(endpoint)));
      calls.length = 0;
      // A round trip of another context (as a timer's flush or poll would make) in flight
      // while the request runs: not the request's.
      const background = counting.stores.ledger.balance(counting.team.id);
      const hit = { roundTrips: 0 };
      // Awaited inside the context: an injected request starts only once its answer is awaited.
      success(await request.run(hit, async () => await counting.get(urlOf(endpoint, { cache_max_age: '1d' }))));
      await background;
      if (counting.stores.gate) {
        // The key was seen by the first request: one Redis call admits it, and the cache hit is a second.
        assert.deepEqual(calls.filter((call) => call.startsWith('accounts.find') || call.startsWith('limiter')), []);
        assert.equal(hit.roundTrips, 2);
      } else {
        assert.deepEqual(calls.filter((call) => call.startsWith('accounts.find') || call.startsWith('limiter')), ['accounts.findActiveKey', 'limiter.hit team']);
      }
      calls.length = 0;
      expectError(await counting.get(urlOf(endpoint), { 'x-api-key': WRONG }), 401, 'UNAUTHORIZED', { authed: false });
      // The cluster's gate looks keys up through the stores it was built on, unseen here.
      const lookup = counting.stores.gate ? [] : ['accounts.findActiveKey'];
      assert.deepEqual(calls.filter((call) => !call.startsWith('accounts.recordKeyUse')), [...lookup, 'limiter.hit authfail']);
      calls.length = 0;
      expectError(await counting.get(urlOf(endpoint), {}), 401, 'UNAUTHORIZED', { authed: false });
      assert.deepEqual(calls, ['limiter.hit authfail'], 'no key, no lookup');
    } finally {
      roundTripChannel.unsubscribe(count);
      await counting.close();
    }
  });
});

describe('TRUST_PROXY: the client address behind a load balancer', () => {
  const WRONG = `psk_live_${'Q'.repeat(32)}`;
  const endpoint = byId('linkpage-a.profile');
  /** 30 failures as `forwardedFor` through `peer`; returns the status of the 31st. */
  const exhaust = async (h: Harness, peer: string, forwardedFor: (i: number) => string | undefined) => {
    for (let i = 0; i < 30; i++) {
      const forwarded = forwardedFor(i);
      const headers: Record<string, string> = { 'x-api-key': WRONG, ...(forwarded ? { 'x-forwarded-for': forwarded } : {}) };
      expectError(await h.get(urlOf(endpoint), headers, { remoteAddress: peer }), 401, 'UNAUTHORIZED', { authed: false });
    }
  };

  test('behind a trusted balancer, failures count per forwarded client: another client behind it is not limited', async () => {
    const h = await startHarness({ credits: 10, app: { trustProxy: ['10.0.0.0/8', '192.0.2.1'] } });
    try {
      await exhaust(h, '10.1.2.3', () => '203.0.113.5');
      const bad = { 'x-api-key': WRONG };
      expectError(await h.get(urlOf(endpoint), { ...bad, 'x-forwarded-for': '203.0.113.5' }, { remoteAddress: '10.9.9.9' }), 429, 'RATE_LIMITED', { authed: false });
      expectError(await h.get(urlOf(endpoint), { ...bad, 'x-forwarded-for': '203.0.113.6' }, { remoteAddress: '10.1.2.3' }), 401, 'UNAUTHORIZED', { authed: false });
      // Through a chain of trusted balancers, the first untrusted address counts.
      expectError(await h.get(urlOf(endpoint), { ...bad, 'x-forwarded-for': '203.0.113.5, 10.4.4.4' }, { remoteAddress: '192.0.2.1' }), 429, 'RATE_LIMITED', { authed: false });
      // A spoofed header from an untrusted peer is ignored: the peer itself counts.
      await exhaust(h, '198.51.100.9', (i) => `203.0.113.${100 + i}`);
      expectError(await h.get(urlOf(endpoint), { ...bad, 'x-forwarded-for': '203.0.113.250' }, { remoteAddress: '198.51.100.9' }), 429, 'RATE_LIMITED', { authed: false });
      success(await h.get(urlOf(endpoint), { 'x-api-key': h.key, 'x-forwarded-for': '203.0.113.5' }, { remoteAddress: '10.1.2.3' }));
    } finally {
      await h.close();
    }
  });

  test('without TRUST_PROXY, X-Forwarded-For is ignored, so it cannot spread failures over made-up addresses', async () => {
    const h = await startHarness({ credits: 10 });
    try {
      await exhaust(h, '10.1.2.3', (i) => `203.0.113.${i + 1}`);
      const response = await h.get(urlOf(endpoint), { 'x-api-key': WRONG, 'x-forwarded-for': '203.0.113.200' }, { remoteAddress: '10.1.2.3' });
      expectError(response, 429, 'RATE_LIMITED', { authed: false });
    } finally {
      await h.close();
    }
  });
});
