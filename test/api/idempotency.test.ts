// Idempotency-Key on the scraping endpoints: a kept 2xx replayed byte for byte and charged
// nothing, nothing kept for another end, 409 while the first runs, 422 for another request,
// 24 hours, scoped to the team and the mode of its key; exact under concurrency.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, afterEach, before, describe, test } from 'node:test';
import { generateKey } from '../../src/server/keys.ts';
import { UpstreamOutcome } from '../../src/upstream/outcomes.ts';
import type { UpstreamBinder } from '../../src/server/scrape.ts';
import { byId, defaultScript, fixtureResult, startHarness, type Harness } from './harness.ts';
import { assertRateHeaders, expectError, gate, ledgerState, sleep, success, until, urlOf, variantQuery, type Response } from './support.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const freshKey = () => `key-${randomUUID()}`;

/** Asserts `again` is the replay of `first`: the same status and bytes, marked, with its own request id. */
function assertReplay(first: Response, again: Response): void {
  assert.equal(again.statusCode, first.statusCode, again.body);
  assert.ok(again.rawPayload.equals(first.rawPayload), 'the same body, byte for byte');
  assert.equal(again.headers['idempotent-replayed'], 'true');
  assert.equal(again.headers['content-type'], first.headers['content-type']);
  assert.notEqual(again.headers['x-request-id'], first.headers['x-request-id'], "x-request-id is the new request's own");
  assert.equal((again.json() as { meta: { requestId: string } }).meta.requestId, first.headers['x-request-id'], "the first request's id inside");
  assertRateHeaders(again);
}

describe('Idempotency-Key', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ credits: 1000 });
  });
  after(() => h.close());
  afterEach(() => {
    h.script = defaultScript;
  });

  test('the same request again gets the kept answer byte for byte, marked, counted by the rate limit and charged nothing', async () => {
    const endpoint = byId('linkpage-a.profile');
    const team = await h.newTeam(10, 1000);
    const key = freshKey();
    const url = urlOf(endpoint, {}, variantQuery(endpoint, 'replay'));
    const first = await h.get(url, { 'x-api-key': team.key, 'idempotency-key': key });
    assert.equal(success(first).meta.creditsCharged, 1);
    assert.equal(first.headers['idempotent-replayed'], undefined, 'the first answer is no replay');
    const calls = h.calls.length;
    const before = await ledgerState(h, team.team.id);
    const again = await h.get(url, { 'x-api-key': team.key, 'idempotency-key': key });
    assertReplay(first, again);
    assert.equal(Number(again.headers['x-ratelimit-remaining']), Number(first.headers['x-ratelimit-remaining']) - 1, 'counted by the rate limit');
    assert.equal(h.calls.length, calls, 'nothing scraped');
    assert.deepEqual(await ledgerState(h, team.team.id), before, 'nothing charged');
    assert.equal(before.balance, 9);
    // Without the key the same request is a request of its own.
    assert.equal(success(await h.get(url, { 'x-api-key': team.key })).meta.creditsCharged, 1);
  });

  test('a replay is served whatever the balance now, and the same parameters in another spelling are the same request', async () => {
    const endpoint = byId('linkpage-b.page');
    const team = await h.newTeam(1, 1000);
    const key = freshKey();
    const first = await h.get(`${endpoint.path}?url=${encodeURIComponent('https://linkpage-b.example/spelled')}`, { 'x-api-key': team.key, 'idempotency-key': key });
    assert.equal(success(first).meta.creditsRemaining, 0);
    expectError(await h.get(urlOf(endpoint, {}, variantQuery(endpoint, 'broke')), { 'x-api-key': team.key }), 402, 'INSUFFICIENT_CREDITS', { authed: true });
    const again = await h.get(`${endpoint.path}?url=${encodeURIComponent('https://LINKPAGE-B.example/spelled/')}`, { 'x-api-key': team.key, 'idempotency-key': key });
    assertReplay(first, again);
  });

  test('the key reused for another request is 422 IDEMPOTENCY_KEY_REUSED while kept: other path, parameters, cache_max_age, stale_if_error', async () => {
    const endpoint = byId('snapmsg.profile');
    const team = await h.newTeam(10, 1000);
    const key = freshKey();
    const query = variantQuery(endpoint, 'reuse');
    success(await h.get(urlOf(endpoint, {}, query), { 'x-api-key': team.key, 'idempotency-key': key }));
    const before = await ledgerState(h, team.team.id);
    const others = [
      urlOf(endpoint, {}, variantQuery(endpoint, 'reuse2')),
      urlOf(endpoint, { cache_max_age: '1d' }, query),
      urlOf(endpoint, { stale_if_error: '1d' }, query),
      urlOf(byId('linkpage-a.profile')),
    ];
    for (const url of others) {
      const error = expectError(await h.get(url, { 'x-api-key': team.key, 'idempotency-key': key }), 422, 'IDEMPOTENCY_KEY_REUSED', { authed: true });
      assert.match(error.message, /different request/);
    }
    assert.deepEqual(await ledgerState(h, team.team.id), before);
  });

  test('an answer other than 2xx is not kept: the same key runs afresh, and the retry that succeeds is charged once', async () => {
    const endpoint = byId('shopfront.shop');
    const team = await h.newTeam(10, 1000);
    const key = freshKey();
    const url = urlOf(endpoint, {}, variantQuery(endpoint, 'retry'));
    h.script = async (e) => {
      throw new UpstreamOutcome('transient', e.platform, 'timeout');
    };
    const failed = await h.get(url, { 'x-api-key': team.key, 'idempotency-key': key });
    expectError(failed, 502, 'UPSTREAM_BLOCKED', { authed: true });
    assert.equal(failed.headers['idempotent-replayed'], undefined);
    // The key is free: another request may even take it now; this one is the same request.
    h.script = defaultScript;
    const first = await h.get(url, { 'x-api-key': team.key, 'idempotency-key': key });
    assert.equal(success(first).meta.creditsCharged, 1);
    assertReplay(first, await h.get(url, { 'x-api-key': team.key, 'idempotency-key': key }));
    const state = await ledgerState(h, team.team.id);
    assert.deepEqual([state.balance, state.sum, state.pending], [9, 9, 0]);
    // A 404 and a bad cursor free the key too.
    h.script = async (e) => {
      throw new UpstreamOutcome('not_found', e.platform, 'gone');
    };
    const other = freshKey();
    expectError(await h.get(url, { 'x-api-key': team.key, 'idempotency-key': other }), 404, 'NOT_FOUND', { authed: true });
    h.script = defaultScript;
    expectError(await h.get(urlOf(endpoint, { pageToken: 'forged' }, variantQuery(endpoint, 'retry')), { 'x-api-key': team.key, 'idempotency-key': other }), 400, 'BAD_REQUEST', { authed: true });
    assert.equal(success(await h.get(urlOf(endpoint, {}, variantQuery(endpoint, 'other')), { 'x-api-key': team.key, 'idempotency-key': other })).meta.creditsCharged, 1);
  });

  test('while the first request runs, the same request is 409 IDEMPOTENCY_IN_PROGRESS with Retry-After: 1, another is 422', async () => {
    const endpoint = byId('socialnet.profile');
    const team = await h.newTeam(10, 1000);
    const key = freshKey();
    const url = urlOf(endpoint, {}, variantQuery(endpoint, 'running'));
    const { opened, release } = gate();
    h.script = async (e) => {
      await opened;
      return fixtureResult(e);
    };
    const calls = h.calls.length;
    const first = h.get(url, { 'x-api-key': team.key, 'idempotency-key': key });
    await until(() => h.calls.length === calls + 1);
    const busy = await h.get(url, { 'x-api-key': team.key, 'idempotency-key': key });
    expectError(busy, 409, 'IDEMPOTENCY_IN_PROGRESS', { authed: true });
    assert.equal(busy.headers['retry-after'], '1');
    expectError(await h.get(urlOf(endpoint, {}, variantQuery(endpoint, 'running2')), { 'x-api-key': team.key, 'idempotency-key': key }), 422, 'IDEMPOTENCY_KEY_REUSED', { authed: true });
    release();
    const answered = await first;
    assert.equal(success(answered).meta.creditsCharged, 1);
    assertReplay(answered, await h.get(url, { 'x-api-key': team.key, 'idempotency-key': key }));
    assert.equal(h.calls.length, calls + 1);
    assert.equal((await ledgerState(h, team.team.id)).balance, 9);
  });

  test('50 concurrent requests with one key: one runs and is charged, every other gets 409 or the replay', async () => {
    const endpoint = byId('linkpage-a.profile');
    const team = await h.newTeam(100, 1000);
    const key = freshKey();
    const url = urlOf(endpoint, {}, variantQuery(endpoint, 'fifty'));
    h.script = async (e) => {
      await sleep(30);
      return fixtureResult(e);
    };
    const calls = h.calls.length;
    const responses = await Promise.all(Array.from({ length: 50 }, () => h.get(url, { 'x-api-key': team.key, 'idempotency-key': key })));
    const ran = responses.filter((response) => response.statusCode === 200 && response.headers['idempotent-replayed'] === undefined);
    assert.equal(ran.length, 1);
    const original = ran[0] as Response;
    assert.equal(success(original).meta.creditsCharged, 1);
    for (const response of responses) {
      if (response === original) continue;
      if (response.statusCode === 409) expectError(response, 409, 'IDEMPOTENCY_IN_PROGRESS', { authed: true });
      else assertReplay(original, response);
    }
    assert.equal(h.calls.length, calls + 1, 'one scrape');
    const state = await ledgerState(h, team.team.id);
    assert.deepEqual([state.balance, state.sum, state.pending], [99, 99, 0]);
    assert.equal((await h.stores.ledger.entries(team.team.id, 100)).filter((entry) => entry.reason === 'charge').length, 1);
  });

  test('the key must be 1 to 255 visible ASCII characters: otherwise 422 naming the header, nothing run or charged', async () => {
    const endpoint = byId('snapmsg.profile');
    const team = await h.newTeam(10, 1000);
    const calls = h.calls.length;
    for (const bad of ['', 'x'.repeat(256), 'two words', 'caf\u00e9']) {
      const response = await h.get(urlOf(endpoint, {}, variantQuery(endpoint, 'bad')), { 'x-api-key': team.key, 'idempotency-key': bad });
      const error = expectError(response, 422, 'VALIDATION_ERROR', { authed: true });
      assert.deepEqual(error.details?.map((detail) => detail.path), ['Idempotency-Key'], JSON.stringify(bad));
    }
    // An invalid query is reported as such.
    const invalid = expectError(await h.get(`${endpoint.path}?username=`, { 'x-api-key': team.key, 'idempotency-key': freshKey() }), 422, 'VALIDATION_ERROR', { authed: true });
    assert.deepEqual(invalid.details?.map((detail) => detail.path), ['username']);
    assert.equal(h.calls.length, calls);
    assert.equal((await ledgerState(h, team.team.id)).balance, 10);
    success(await h.get(urlOf(endpoint, {}, variantQuery(endpoint, 'long')), { 'x-api-key': team.key, 'idempotency-key': `~${'!'.repeat(253)}~` }));
  });

  test('a key belongs to its team and to the mode of the key that sent it', async () => {
    const endpoint = byId('snapmsg.profile');
    const one = await h.newTeam(10, 1000);
    const two = await h.newTeam(10, 1000);
    const key = freshKey();
    const url = urlOf(endpoint, {}, variantQuery(endpoint, 'scoped'));
    const first = await h.get(url, { 'x-api-key': one.key, 'idempotency-key': key });
    const other = await h.get(url, { 'x-api-key': two.key, 'idempotency-key': key });
    assert.equal(success(first).meta.creditsCharged, 1);
    assert.equal(success(other).meta.creditsCharged, 1, 'another team: its own request');
    assert.equal(other.headers['idempotent-replayed'], undefined);
    // Another key of the same team and mode shares it.
    const generated = generateKey();
    await h.stores.accounts.createKey({ teamId: one.team.id, name: 'second', hash: generated.hash, prefix: generated.prefix, last4: generated.last4 });
    assertReplay(first, await h.get(url, { 'x-api-key': generated.key, 'idempotency-key': key }));
  });

  test('a cache hit is kept and replayed too; 24 hours later the key is free and the kept answer is pruned', async () => {
    const endpoint = byId('linkpage-b.page');
    const team = await h.newTeam(10, 1000);
    const key = freshKey();
    const query = variantQuery(endpoint, 'cached');
    success(await h.get(urlOf(endpoint, {}, query), { 'x-api-key': team.key }));
    const hit = await h.get(urlOf(endpoint, { cache_max_age: '1d' }, query), { 'x-api-key': team.key, 'idempotency-key': key });
    assert.equal(success(hit).meta.cached, true);
    assertReplay(hit, await h.get(urlOf(endpoint, { cache_max_age: '1d' }, query), { 'x-api-key': team.key, 'idempotency-key': key }));
    const start = h.clock.now;
    try {
      h.clock.now = start + DAY_MS - 60_000;
      assertReplay(hit, await h.get(urlOf(endpoint, { cache_max_age: '1d' }, query), { 'x-api-key': team.key, 'idempotency-key': key }));
      h.clock.now = start + DAY_MS + 60_000;
      await h.app.maintain();
      assert.equal((await h.stores.idempotency.claim({ teamId: team.team.id, test: false, key }, 'probe', 'req_probe', h.clock.now + 1, h.clock.now)).outcome, 'claimed', 'pruned');
      await h.stores.idempotency.release({ teamId: team.team.id, test: false, key }, 'req_probe');
      const fresh = await h.get(urlOf(endpoint, {}, variantQuery(endpoint, 'afteraday')), { 'x-api-key': team.key, 'idempotency-key': key });
      assert.equal(success(fresh).meta.creditsCharged, 1);
      assert.equal(fresh.headers['idempotent-replayed'], undefined);
    } finally {
      h.clock.now = start;
    }
  });
});

describe('Idempotency-Key with test-mode keys', () => {
  let h: Harness;
  const sandbox: UpstreamBinder = () => async (request) => ({ status: 200, path: request.path, headers: {}, body: 'ok' });
  before(async () => {
    h = await startHarness({ credits: 100, app: { upstream: sandbox, testUpstream: sandbox } });
  });
  after(() => h.close());

  test("a test key's key is apart from a live key's: the same key is a request of each mode", async () => {
    const generated = generateKey('test');
    await h.stores.accounts.createKey({ teamId: h.team.id, name: 'test', hash: generated.hash, prefix: generated.prefix, last4: generated.last4 });
    const endpoint = byId('snapmsg.profile');
    const key = freshKey();
    const url = urlOf(endpoint, {}, variantQuery(endpoint, 'modes'));
    const live = await h.get(url, { 'x-api-key': h.key, 'idempotency-key': key });
    assert.equal(success(live).meta.creditsCharged, 1);
    const sandboxed = await h.get(url, { 'x-api-key': generated.key, 'idempotency-key': key });
    assert.equal(success(sandboxed).meta.test, true);
    assert.equal(sandboxed.headers['idempotent-replayed'], undefined);
    assertReplay(sandboxed, await h.get(url, { 'x-api-key': generated.key, 'idempotency-key': key }));
    assertReplay(live, await h.get(url, { 'x-api-key': h.key, 'idempotency-key': key }));
  });
});
