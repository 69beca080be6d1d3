// Every API request of a known caller leaves one request record, written off the request's
// path: what was answered, what it cost, whether it came from the cache.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { byId, startHarness, type Harness } from './harness.ts';
import { success, urlOf, variantQuery } from './support.ts';

describe('request records', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ credits: 100, rateLimit: 6 });
  });
  after(() => h.close());

  test('one record per answered request of a known caller, with its status, error code, credits, cache and duration', async () => {
    const endpoint = byId('shopfront.shop');
    const url = urlOf(endpoint, { cache_max_age: '1d' }, variantQuery(endpoint, 'records'));
    const live = await h.get(url);
    const hit = await h.get(url);
    const invalid = await h.get(`${endpoint.path}?url=nope`);
    const missing = await h.get('/v1/shopfront/nothing-here');
    const unknownKey = await h.get(url, { 'x-api-key': `psk_live_${'Q'.repeat(32)}` });
    const answered = [live, hit, invalid];
    for (let i = 0; i < 4; i++) answered.push(await h.get(url));
    success(live);
    assert.equal(answered.at(-1)?.statusCode, 429, 'the limit of 6 was reached');
    assert.equal(unknownKey.statusCode, 401);
    assert.equal(missing.statusCode, 404);

    await h.app.writeRecords();
    const { records, next } = await h.stores.requests.list({ teamId: h.team.id, limit: 100 });
    assert.equal(next, null);
    assert.deepEqual(
      records.map((r) => r.requestId).sort(),
      answered.map((r) => String(r.headers['x-request-id'])).sort(),
      'the 401 and the unknown path leave none',
    );
    for (let i = 1; i < records.length; i++) assert.ok((records[i - 1]?.at ?? 0) >= (records[i]?.at ?? 0), 'newest first');
    const byId_ = new Map(records.map((r) => [r.requestId, r]));
    const recordOf = (response: (typeof answered)[number]) => byId_.get(String(response.headers['x-request-id']));
    assert.deepEqual(
      { ...recordOf(live), at: undefined, durationMs: undefined },
      { requestId: live.headers['x-request-id'], at: undefined, teamId: h.team.id, keyId: h.keyId, endpoint: endpoint.path, status: 200, errorCode: null, credits: 1, cached: false, durationMs: undefined },
    );
    assert.deepEqual([recordOf(hit)?.status, recordOf(hit)?.credits, recordOf(hit)?.cached], [200, 0, true]);
    assert.deepEqual([recordOf(invalid)?.status, recordOf(invalid)?.errorCode, recordOf(invalid)?.credits], [422, 'VALIDATION_ERROR', 0]);
    assert.deepEqual([recordOf(answered.at(-1) as (typeof answered)[number])?.status, recordOf(answered.at(-1) as (typeof answered)[number])?.errorCode], [429, 'RATE_LIMITED']);
    for (const record of records) {
      assert.ok(record.durationMs >= 0 && record.durationMs < 10_000);
      assert.ok(Math.abs(record.at - Date.now()) < 60_000);
    }
    const totals = await h.stores.requests.totals(h.team.id, Date.now() - 60_000);
    assert.deepEqual(totals.endpoints, [{ endpoint: endpoint.path, requests: 7, credits: 1, cached: 4 }]);
  });
});
