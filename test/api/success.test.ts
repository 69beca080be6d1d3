import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { endpoints } from '../../src/endpoints/index.ts';
import { exampleQuery, FIXTURE_OF, readFixture, startHarness, type Harness } from './harness.ts';

describe('a live scrape on every endpoint', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ credits: 50 });
  });
  after(() => h.close());

  for (const endpoint of endpoints) {
    test(`${endpoint.path} answers 200 with the contract's data, charges 1 credit and records it`, async () => {
      const before = await h.balance();
      const response = await h.get(`${endpoint.path}?${exampleQuery(endpoint)}`);
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
      assert.match(String(response.headers['x-request-id']), /^req_[A-Za-z0-9_-]{24,}$/);
      assert.equal(response.headers['x-ratelimit-limit'], '1000');
      assert.equal(response.headers['x-ratelimit-reset'], '0');
      const body = response.json() as { data: Record<string, unknown>; meta: Record<string, unknown> };
      assert.deepEqual(Object.keys(body), ['data', 'meta']);
      assert.deepEqual(body.meta, {
        requestId: response.headers['x-request-id'],
        creditsCharged: 1,
        creditsRemaining: before - 1,
        cached: false,
      });
      assert.equal(body.data.fetchedAt, new Date(h.clock.now).toISOString());
      // Data equals the contract's expected output, tokens aside (followed in the cursor tests).
      const expected = readFixture(FIXTURE_OF[endpoint.id] ?? '');
      const { fetchedAt: _f, paging, ...rest } = body.data;
      const { paging: expectedPaging, ...expectedRest } = expected;
      assert.deepEqual(rest, expectedRest);
      if (endpoint.paging) {
        const page = paging as Record<string, unknown>;
        const expectedPage = expectedPaging as Record<string, unknown>;
        assert.equal(page[endpoint.paging.flag], expectedPage[endpoint.paging.flag]);
        if (expectedPage[endpoint.paging.flag]) assert.equal(typeof page[endpoint.paging.field], 'string');
      }
      assert.equal(await h.balance(), before - 1);
      assert.equal(await h.ledgerSum(), await h.balance());
      const entries = await h.stores.ledger.entries(h.team.id, 1);
      assert.equal(entries[0]?.requestId, body.meta.requestId);
      assert.equal(entries[0]?.amount, -1);
    });
  }
});
