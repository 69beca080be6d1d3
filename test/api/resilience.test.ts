// A platform that fails: its circuit breaker opens and answers at once, uncharged and without
// an upstream request, until a probe succeeds; GET /v1/status and /metrics show it; and
// `stale_if_error` returns a cached result of at most that age in place of a failed scrape.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { EndpointDeclaration, ExtractResult } from '../../src/endpoints/types.ts';
import { UpstreamOutcome, type OutcomeKind } from '../../src/upstream/outcomes.ts';
import { byId, defaultScript, startHarness, type Harness } from './harness.ts';
import { expectError, success, urlOf, variantQuery } from './support.ts';

const fail = (kind: OutcomeKind) => async (endpoint: EndpointDeclaration): Promise<ExtractResult> => {
  throw new UpstreamOutcome(kind, endpoint.platform, `scripted ${kind}`);
};
const DAY_MS = 24 * 60 * 60 * 1000;

describe('platform resilience', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ credits: 1000, rateLimit: 100_000 });
  });
  after(() => h.close());
  afterEach(() => {
    h.script = defaultScript;
  });

  const status = async () => (await h.app.inject({ method: 'GET', url: '/v1/status' })).json() as { data: { platforms: Record<string, { state: string; lastSuccessAt: string | null }> } };
  const metric = async (name: string, platform: string) => {
    const text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(`platform="${platform}"`));
    return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
  };

  test('the breaker opens at half of 10 scrapes failing: then 502 at once with Retry-After, no upstream request, no charge; a probe after the cool-down closes it', async () => {
    const endpoint = byId('linkpage-a.profile');
    const before = await h.balance();
    h.script = fail('blocked');
    for (let i = 0; i < 10; i++) expectError(await h.get(urlOf(endpoint, {}, variantQuery(endpoint, `brk${i}`))), 502, 'UPSTREAM_BLOCKED', { authed: true });
    const calls = h.calls.length;
    const paused = await h.get(urlOf(endpoint, {}, variantQuery(endpoint, 'brk-paused')));
    const error = expectError(paused, 502, 'UPSTREAM_BLOCKED', { authed: true });
    assert.match(error.message, /requests to it are paused\. Retry in 15 s/);
    assert.equal(paused.headers['retry-after'], '15');
    assert.equal(h.calls.length, calls, 'no upstream request');
    assert.equal(await h.balance(), before, 'nothing charged');
    assert.equal((await status()).data.platforms['linkpage-a']?.state, 'down');
    assert.equal(await metric('api_platform_breaker_state', 'linkpage-a'), 2);
    assert.equal(await metric('api_breaker_rejections_total', 'linkpage-a'), 1);
    h.script = defaultScript;
    success(await h.get(urlOf(byId('snapmsg.profile'), {}, variantQuery(byId('snapmsg.profile'), 'other-platform'))));
    assert.equal((await status()).data.platforms.snapmsg?.state, 'ok');

    h.clock.now += 15_000;
    const probe = success(await h.get(urlOf(endpoint, {}, variantQuery(endpoint, 'brk-probe'))));
    assert.equal(probe.meta.creditsCharged, 1);
    const after = (await status()).data.platforms['linkpage-a'];
    assert.deepEqual(after, { state: 'ok', lastSuccessAt: new Date(h.clock.now).toISOString() });
    success(await h.get(urlOf(endpoint, {}, variantQuery(endpoint, 'brk-closed'))));
  });

  test('GET /v1/status is public, free and not counted; every platform is listed', async () => {
    const response = await h.app.inject({ method: 'GET', url: '/v1/status' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['x-ratelimit-limit'], undefined);
    const body = response.json() as { data: { platforms: Record<string, unknown> }; meta: { requestId: string } };
    assert.deepEqual(Object.keys(body.data.platforms).sort(), ['linkpage-a', 'linkpage-b', 'shopfront', 'snapmsg', 'socialnet']);
    assert.equal(body.meta.requestId, response.headers['x-request-id']);
    // It takes no parameter, and says so, as every endpoint does.
    const typo = await h.app.inject({ method: 'GET', url: '/v1/status?platform=snapmsg' });
    assert.equal(typo.statusCode, 422);
    assert.deepEqual((typo.json() as { error: { code: string; details: unknown } }).error.details, [{ path: 'platform', message: 'Unknown parameter; this endpoint takes none' }]);
    assert.equal(typo.headers['x-ratelimit-limit'], undefined, 'still not counted');
  });

  test('stale_if_error: a failed live scrape returns the cached result of at most that age, free, marked stale; without one, or too old, the failure stands', async () => {
    const endpoint = byId('shopfront.shop');
    const query = variantQuery(endpoint, 'stale');
    const fresh = success(await h.get(urlOf(endpoint, {}, query)));
    const balance = await h.balance();
    h.script = fail('transient');
    expectError(await h.get(urlOf(endpoint, {}, query)), 502, 'UPSTREAM_BLOCKED', { authed: true });
    const stale = success(await h.get(urlOf(endpoint, { stale_if_error: '1d' }, query)));
    assert.deepEqual(stale.data, fresh.data);
    assert.equal(stale.meta.creditsCharged, 0);
    assert.equal(stale.meta.cached, true);
    assert.equal(stale.meta.stale, true);
    assert.equal(typeof stale.meta.cachedAt, 'string');
    assert.equal(await h.balance(), balance, 'free');
    h.script = fail('blocked');
    assert.equal(success(await h.get(urlOf(endpoint, { stale_if_error: '1d' }, query))).meta.stale, true, 'a block (502) too');
    expectError(await h.get(urlOf(endpoint, { stale_if_error: '1d' }, variantQuery(endpoint, 'stale-none'))), 502, 'UPSTREAM_BLOCKED', { authed: true });
    h.clock.now += 2 * DAY_MS;
    expectError(await h.get(urlOf(endpoint, { stale_if_error: '1d' }, query)), 502, 'UPSTREAM_BLOCKED', { authed: true });
    assert.equal(success(await h.get(urlOf(endpoint, { stale_if_error: '3d' }, query))).meta.stale, true);
    h.script = fail('not_found');
    expectError(await h.get(urlOf(endpoint, { stale_if_error: '30d' }, query)), 404, 'NOT_FOUND', { authed: true });
  });

  test('stale_if_error stands in while the breaker is open, without an upstream request', async () => {
    const endpoint = byId('linkpage-b.page');
    const query = variantQuery(endpoint, 'staleopen');
    success(await h.get(urlOf(endpoint, {}, query)));
    h.script = fail('transient');
    for (let i = 0; i < 10; i++) expectError(await h.get(urlOf(endpoint, {}, variantQuery(endpoint, `sopen${i}`))), 502, 'UPSTREAM_BLOCKED', { authed: true });
    const calls = h.calls.length;
    const stale = success(await h.get(urlOf(endpoint, { stale_if_error: '7d' }, query)));
    assert.equal(stale.meta.stale, true);
    assert.equal(h.calls.length, calls);
    expectError(await h.get(urlOf(endpoint, {}, query)), 502, 'UPSTREAM_BLOCKED', { authed: true });
  });

  test('stale_if_error is validated like cache_max_age and leaves the cache key alone', async () => {
    const endpoint = byId('snapmsg.profile');
    const problem = expectError(await h.get(urlOf(endpoint, { stale_if_error: '2d' })), 422, 'VALIDATION_ERROR', { authed: true });
    assert.deepEqual(problem.details, [{ path: 'stale_if_error', message: 'Must be one of: 1d, 3d, 7d, 14d, 30d' }]);
    const query = variantQuery(endpoint, 'stalekey');
    success(await h.get(urlOf(endpoint, {}, query)));
    assert.equal(success(await h.get(urlOf(endpoint, { cache_max_age: '1d', stale_if_error: '7d' }, query))).meta.cached, true);
  });
});
