// Per-key daily credit limits through the API: 402 KEY_CREDIT_LIMIT past the limit (exact under
// racing live scrapes, cache hits still served), the calling key's limit and spending in
// GET /v1/account, and PATCH /v1/account/keys/{id} with its validation and who may use it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, afterEach, before, describe, test } from 'node:test';
import type { Static } from 'typebox';
import type { KeyView as KeyViewSchema } from '../../src/account/changes.ts';
import { generateKey } from '../../src/server/keys.ts';
import { UpstreamOutcome } from '../../src/upstream/outcomes.ts';
import { byId, defaultScript, fixtureResult, startHarness, type Harness } from './harness.ts';
import { expectError, keyMadeBy, ledgerState, sleep, success, urlOf, variantQuery, type Response } from './support.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

type KeyView = Static<typeof KeyViewSchema>;

describe('daily credit limits of keys', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ credits: 1000 });
  });
  after(() => h.close());
  afterEach(() => {
    h.script = defaultScript;
  });

  const patch = (keyId: string, body: unknown, apiKey: string, headers: Record<string, string> = {}): Promise<Response> =>
    h.app.inject({
      method: 'PATCH',
      url: `/v1/account/keys/${keyId}`,
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', ...headers },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const account = async (apiKey: string) => success(await h.get('/v1/account', { 'x-api-key': apiKey })).data as { key: { id: string; dailyCreditLimit: number | null; spentToday: number } };
  const keyOf = (response: Response): KeyView => success(response).data as unknown as KeyView;

  test('GET /v1/account shows the calling key with its limit and what it spent today; PATCH sets the limit', async () => {
    const team = await h.newTeam(50, 1000);
    assert.deepEqual((await account(team.key)).key, { id: team.keyId, name: 'test', dailyCreditLimit: null, spentToday: 0 });
    const endpoint = byId('snapmsg.profile');
    const query = variantQuery(endpoint, 'spend');
    success(await h.get(urlOf(endpoint, {}, query), { 'x-api-key': team.key }));
    success(await h.get(urlOf(endpoint, { cache_max_age: '1d' }, query), { 'x-api-key': team.key }));
    assert.equal((await account(team.key)).key.spentToday, 1, 'a cache hit spends nothing');
    const set = await patch(team.keyId, { dailyCreditLimit: 5 }, team.key);
    const view = keyOf(set);
    assert.deepEqual(Object.keys(view), ['id', 'name', 'key', 'createdAt', 'lastUsedAt', 'revokedAt', 'dailyCreditLimit', 'spentToday']);
    assert.deepEqual({ id: view.id, limit: view.dailyCreditLimit, spent: view.spentToday, revokedAt: view.revokedAt }, { id: team.keyId, limit: 5, spent: 1, revokedAt: null });
    assert.match(view.key, /^psk_live_…[A-Za-z0-9_-]{4}$/);
    assert.equal((success(set).meta as { creditsCharged: number }).creditsCharged, 0);
    assert.deepEqual((await account(team.key)).key, { id: team.keyId, name: 'test', dailyCreditLimit: 5, spentToday: 1 });
    // The CLI's keys are the operator's: a key may lower its own limit.
    assert.equal(keyOf(await patch(team.keyId, { dailyCreditLimit: 3 }, team.key)).dailyCreditLimit, 3);
  });

  test('100 racing live scrapes with a limit of 5: exactly 5 charged, the rest 402 KEY_CREDIT_LIMIT; cache hits still 200; the next UTC day starts afresh', async () => {
    const endpoint = byId('linkpage-b.page');
    const team = await h.newTeam(1000, 1000);
    await h.stores.accounts.updateKey(team.keyId, { dailyCreditLimit: 5 });
    const other = generateKey();
    await h.stores.accounts.createKey({ teamId: team.team.id, name: 'other', hash: other.hash, prefix: other.prefix, last4: other.last4 });
    // A result in the cache, scraped with another key.
    success(await h.get(urlOf(endpoint, {}, variantQuery(endpoint, 'cachedone')), { 'x-api-key': other.key }));
    h.script = async (e) => {
      await sleep(10);
      return fixtureResult(e);
    };
    const responses = await Promise.all(Array.from({ length: 100 }, (_, i) => h.get(urlOf(endpoint, {}, variantQuery(endpoint, `limit${i}`)), { 'x-api-key': team.key })));
    assert.equal(responses.filter((response) => response.statusCode === 200).length, 5);
    const refused = responses.filter((response) => response.statusCode !== 200);
    assert.equal(refused.length, 95);
    for (const response of refused) {
      const error = expectError(response, 402, 'KEY_CREDIT_LIMIT', { authed: true });
      const tomorrow = new Date(Math.floor(h.clock.now / DAY_MS + 1) * DAY_MS).toISOString();
      assert.ok(error.message.includes(tomorrow), `${error.message} names ${tomorrow}`);
      assert.match(error.message, /limit of 5 credits/);
    }
    const state = await ledgerState(h, team.team.id);
    assert.deepEqual([state.balance, state.sum, state.pending], [994, 994, 0]);
    assert.equal((await account(team.key)).key.spentToday, 5);
    // Cache hits are free and still served; the team's other key is not held back.
    const hit = success(await h.get(urlOf(endpoint, { cache_max_age: '1d' }, variantQuery(endpoint, 'cachedone')), { 'x-api-key': team.key }));
    assert.equal(hit.meta.cached, true);
    assert.equal(success(await h.get(urlOf(endpoint, {}, variantQuery(endpoint, 'otherkey')), { 'x-api-key': other.key })).meta.creditsCharged, 1);
    const start = h.clock.now;
    try {
      h.clock.now = Math.floor(start / DAY_MS + 1) * DAY_MS + 1_000;
      assert.equal(success(await h.get(urlOf(endpoint, {}, variantQuery(endpoint, 'nextday')), { 'x-api-key': team.key })).meta.creditsCharged, 1);
      assert.equal((await account(team.key)).key.spentToday, 1);
    } finally {
      h.clock.now = start;
    }
  });

  test('a failed live scrape gives its credit back to the key too', async () => {
    const endpoint = byId('shopfront.shop');
    const team = await h.newTeam(100, 1000);
    await h.stores.accounts.updateKey(team.keyId, { dailyCreditLimit: 1 });
    h.script = async (e) => {
      throw new UpstreamOutcome('transient', e.platform, 'timeout');
    };
    expectError(await h.get(urlOf(endpoint, {}, variantQuery(endpoint, 'fails')), { 'x-api-key': team.key }), 502, 'UPSTREAM_BLOCKED', { authed: true });
    h.script = defaultScript;
    assert.equal((await account(team.key)).key.spentToday, 0);
    success(await h.get(urlOf(endpoint, {}, variantQuery(endpoint, 'works')), { 'x-api-key': team.key }));
    expectError(await h.get(urlOf(endpoint, {}, variantQuery(endpoint, 'over')), { 'x-api-key': team.key }), 402, 'KEY_CREDIT_LIMIT', { authed: true });
  });

  test('the body is validated whole: every problem with its path; not JSON is 400; other methods 405', async () => {
    const team = await h.newTeam(10, 1000);
    for (const [body, paths] of [
      [{ dailyCreditLimit: -1 }, ['dailyCreditLimit']],
      [{ dailyCreditLimit: 1.5 }, ['dailyCreditLimit']],
      [{ dailyCreditLimit: '5' }, ['dailyCreditLimit']],
      [{ dailyCreditLimit: 2_000_000_000 }, ['dailyCreditLimit']],
      [{}, ['dailyCreditLimit']],
      [{ dailyCreditLimit: 5, extra: true }, ['extra']],
      [[5], ['']],
      ['"five"', ['']],
    ] as const) {
      const error = expectError(await patch(team.keyId, body, team.key), 422, 'VALIDATION_ERROR', { authed: true });
      assert.deepEqual(error.details?.map((detail) => detail.path), paths, JSON.stringify(body));
    }
    const both = expectError(await patch(team.keyId, { dailyCreditLimit: 'x', other: 1 }, team.key), 422, 'VALIDATION_ERROR', { authed: true });
    assert.deepEqual(both.details?.map((detail) => detail.path).sort(), ['dailyCreditLimit', 'other']);
    assert.match(expectError(await patch(team.keyId, '{"dailyCreditLimit":', team.key), 400, 'BAD_REQUEST', { authed: true }).message, /not valid JSON/);
    assert.match(expectError(await patch(team.keyId, '', team.key), 400, 'BAD_REQUEST', { authed: true }).message, /not valid JSON/);
    const form = await patch(team.keyId, 'dailyCreditLimit=5', team.key, { 'content-type': 'application/x-www-form-urlencoded' });
    assert.match(expectError(form, 400, 'BAD_REQUEST', { authed: true }).message, /must be JSON/);
    const get = await h.get(`/v1/account/keys/${team.keyId}`, { 'x-api-key': team.key });
    expectError(get, 405, 'METHOD_NOT_ALLOWED', { authed: null });
    assert.equal(get.headers.allow, 'PATCH');
    const put = await h.app.inject({ method: 'PUT', url: `/v1/account/keys/${team.keyId}`, headers: { 'x-api-key': team.key }, payload: '{}' });
    expectError(put, 405, 'METHOD_NOT_ALLOWED', { authed: null });
    const patchScrape = await h.app.inject({ method: 'PATCH', url: '/v1/snapmsg/profile?username=lunavoss', headers: { 'x-api-key': team.key } });
    expectError(patchScrape, 405, 'METHOD_NOT_ALLOWED', { authed: null });
    assert.equal(patchScrape.headers.allow, 'GET');
    expectError(await patch(team.keyId, { dailyCreditLimit: 5 }, 'psk_live_wrong'), 401, 'UNAUTHORIZED', { authed: false });
    assert.equal((await h.stores.accounts.getKey(team.keyId))?.dailyCreditLimit, null, 'nothing changed');
  });

  test("who may change a limit: a key the operator or an owner made, within its team, never raising its own; not a test key nor a member's key", async () => {
    const team = await h.newTeam(10, 1000);
    const second = generateKey();
    const record = await h.stores.accounts.createKey({ teamId: team.team.id, name: 'second', hash: second.hash, prefix: second.prefix, last4: second.last4, dailyCreditLimit: 2 });
    // The operator's key raises and removes the other key's limit.
    assert.equal(keyOf(await patch(record.id, { dailyCreditLimit: 10 }, team.key)).dailyCreditLimit, 10);
    // The limited key lowers its own, but may not raise or remove it.
    assert.equal(keyOf(await patch(record.id, { dailyCreditLimit: 4 }, second.key)).dailyCreditLimit, 4);
    for (const body of [{ dailyCreditLimit: 5 }, { dailyCreditLimit: null }]) {
      const error = expectError(await patch(record.id, body, second.key), 403, 'FORBIDDEN', { authed: true });
      assert.match(error.message, /cannot raise or remove its own/);
    }
    assert.equal(keyOf(await patch(record.id, { dailyCreditLimit: null }, team.key)).dailyCreditLimit, null);
    // Another team's key, or none at all, is not found.
    const stranger = await h.newTeam(10, 1000);
    expectError(await patch(stranger.keyId, { dailyCreditLimit: 1 }, team.key), 404, 'NOT_FOUND', { authed: true });
    expectError(await patch(`key_${randomUUID()}`, { dailyCreditLimit: 1 }, team.key), 404, 'NOT_FOUND', { authed: true });
    assert.equal((await h.stores.accounts.getKey(stranger.keyId))?.dailyCreditLimit, null);
    // A key a member made in the dashboard; an owner's works.
    for (const [role, status] of [['member', 403], ['owner', 200]] as const) {
      const answer = await patch(record.id, { dailyCreditLimit: 7 }, await keyMadeBy(h, team.team.id, role));
      if (status === 403) assert.match(expectError(answer, 403, 'FORBIDDEN', { authed: true }).message, /member/);
      else assert.equal(keyOf(answer).dailyCreditLimit, 7);
    }
  });
});

describe('daily credit limits with test-mode keys', () => {
  let h: Harness;
  before(async () => {
    const sandbox = () => async (request: { path: string }) => ({ status: 200, path: request.path, headers: {}, body: 'ok' });
    h = await startHarness({ credits: 100, app: { upstream: sandbox, testUpstream: sandbox } });
  });
  after(() => h.close());

  test('a test key cannot change a limit; its free scrapes count against none', async () => {
    const generated = generateKey('test');
    const record = await h.stores.accounts.createKey({ teamId: h.team.id, name: 'test', hash: generated.hash, prefix: generated.prefix, last4: generated.last4, dailyCreditLimit: 0 });
    const answer = await h.app.inject({
      method: 'PATCH',
      url: `/v1/account/keys/${h.keyId}`,
      headers: { 'x-api-key': generated.key, 'content-type': 'application/json' },
      payload: JSON.stringify({ dailyCreditLimit: 1 }),
    });
    assert.match(expectError(answer, 403, 'FORBIDDEN', { authed: true }).message, /test key/);
    const endpoint = byId('snapmsg.profile');
    assert.equal(success(await h.get(urlOf(endpoint, {}, variantQuery(endpoint, 'free')), { 'x-api-key': generated.key })).meta.test, true);
    assert.equal((await h.stores.accounts.getKey(record.id))?.spent, null);
  });
});
