// Test-mode keys (psk_test_): their scrapes go to the built-in sandbox's binder, never to the
// configured origins; they cost nothing, never read or write the cache, count in a rate window
// of their own and carry meta.test; with test mode off they get 403.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateKey } from '../../src/server/keys.ts';
import type { UpstreamBinder } from '../../src/server/scrape.ts';
import { byId, defaultScript, startHarness, type Harness } from './harness.ts';
import { expectError, success, urlOf, variantQuery } from './support.ts';

describe('test-mode keys', () => {
  let h: Harness;
  const reached: string[] = [];
  const binder =
    (which: string): UpstreamBinder =>
    (platform) =>
    async (request) => {
      reached.push(`${which} ${platform}`);
      return { status: 200, path: request.path, headers: {}, body: 'ok' };
    };
  let testKey = '';
  before(async () => {
    h = await startHarness({ credits: 100, rateLimit: 4, app: { upstream: binder('real'), testUpstream: binder('sandbox') } });
    h.script = async (endpoint, request, signal, upstream) => {
      await upstream({ path: '/', kind: 'page' });
      return defaultScript(endpoint, request, signal, upstream);
    };
    const generated = generateKey('test');
    await h.stores.accounts.createKey({ teamId: h.team.id, name: 'test', hash: generated.hash, prefix: generated.prefix, last4: generated.last4 });
    testKey = generated.key;
    assert.match(testKey, /^psk_test_/);
  });
  after(() => h.close());

  test('a test key scrapes the sandbox only, free, marked test, never touching the cache; its own rate window', async () => {
    const endpoint = byId('snapmsg.profile');
    const query = variantQuery(endpoint, 'testmode');
    const body = success(await h.get(urlOf(endpoint, {}, query), { 'x-api-key': testKey }));
    assert.deepEqual(body.meta, { requestId: body.meta.requestId, creditsCharged: 0, creditsRemaining: 100, cached: false, test: true });
    assert.deepEqual(reached, ['sandbox snapmsg'], 'never a configured origin');
    assert.equal(await h.balance(), 100);
    const live = success(await h.get(urlOf(endpoint, { cache_max_age: '30d' }, query)));
    assert.equal(live.meta.cached, false, 'the test scrape was not cached');
    assert.deepEqual(reached, ['sandbox snapmsg', 'real snapmsg']);
    const again = success(await h.get(urlOf(endpoint, { cache_max_age: '30d' }, query), { 'x-api-key': testKey }));
    assert.equal(again.meta.cached, false, 'nor does a test key read the cache');
    assert.equal(again.meta.test, true);
    // The live key used 1 of its 4; three more, then 429; the test key has a window of its own.
    for (const name of ['l2', 'l3', 'l4']) success(await h.get(urlOf(endpoint, {}, variantQuery(endpoint, name))));
    expectError(await h.get(urlOf(endpoint, {}, variantQuery(endpoint, 'l5'))), 429, 'RATE_LIMITED', { authed: true });
    success(await h.get(urlOf(endpoint, {}, variantQuery(endpoint, 't3')), { 'x-api-key': testKey }));
    const account = success(await h.get('/v1/account', { 'x-api-key': testKey }));
    assert.equal(account.meta.test, true);
  });

  test("a test key's cursor (the sandbox's position) is refused to a live key, and a live key's to a test key", async () => {
    const modes = await startHarness({ credits: 100, app: { upstream: binder('real'), testUpstream: binder('sandbox') } });
    try {
      const generated = generateKey('test');
      await modes.stores.accounts.createKey({ teamId: modes.team.id, name: 'test', hash: generated.hash, prefix: generated.prefix, last4: generated.last4 });
      const endpoint = byId('shopfront.shop');
      const paging = endpoint.paging!;
      const query = variantQuery(endpoint, 'follow');
      const tokenOf = (body: ReturnType<typeof success>) => (body.data.paging as Record<string, string>)[paging.field] as string;
      const testToken = tokenOf(success(await modes.get(urlOf(endpoint, {}, query), { 'x-api-key': generated.key })));
      const liveToken = tokenOf(success(await modes.get(urlOf(endpoint, {}, query))));
      const refused = expectError(await modes.get(urlOf(endpoint, { [paging.param]: testToken }, query)), 400, 'BAD_REQUEST', { authed: true });
      assert.match(refused.message, /test or live/);
      expectError(await modes.get(urlOf(endpoint, { [paging.param]: liveToken }, query), { 'x-api-key': generated.key }), 400, 'BAD_REQUEST', { authed: true });
      // Each key goes on with its own.
      success(await modes.get(urlOf(endpoint, { [paging.param]: liveToken }, query)));
      success(await modes.get(urlOf(endpoint, { [paging.param]: testToken }, query), { 'x-api-key': generated.key }));
    } finally {
      await modes.close();
    }
  });

  test('with test mode off, a test key gets 403 saying so', async () => {
    const off = await startHarness({ credits: 10 });
    try {
      const generated = generateKey('test');
      await off.stores.accounts.createKey({ teamId: off.team.id, name: 'test', hash: generated.hash, prefix: generated.prefix, last4: generated.last4 });
      const refused = expectError(await off.get(urlOf(byId('snapmsg.profile')), { 'x-api-key': generated.key }), 403, 'FORBIDDEN', { authed: true });
      assert.match(refused.message, /Test mode is off on this service/);
      assert.equal(await off.balance(), 10);
    } finally {
      await off.close();
    }
  });
});
