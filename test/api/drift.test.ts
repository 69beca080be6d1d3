// Drift capture: a live scrape that ends UPSTREAM_UNRECOGNISED keeps the answer that broke the
// mapping (without cookies, cut at the size cap, a few per hour and endpoint), counted in
// /metrics and listed by the operator CLI.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { DRIFT_MAX_BYTES, DRIFT_PER_HOUR } from '../../src/server/scrape.ts';
import { UpstreamOutcome } from '../../src/upstream/outcomes.ts';
import type { UpstreamResponse } from '../../src/upstream/types.ts';
import { byId, defaultScript, startHarness, type Harness } from './harness.ts';
import { expectError, urlOf, variantQuery } from './support.ts';

describe('drift capture', () => {
  let h: Harness;
  let answer: UpstreamResponse;
  before(async () => {
    h = await startHarness({
      credits: 1000,
      rateLimit: 100_000,
      app: {
        // The platform answers with `answer`, through the mapping's classify as the real client does.
        upstream: () => async (request) => {
          request.classify?.(answer);
          return answer;
        },
      },
    });
  });
  after(() => h.close());
  afterEach(() => {
    h.script = defaultScript;
  });

  test('the page that broke the mapping is kept with the reason and request id, without cookies; listed newest first', async () => {
    const endpoint = byId('snapmsg.profile');
    answer = { status: 200, path: '/add/changed', headers: { 'content-type': 'text/html', 'set-cookie': 'sid=secret' }, body: '<html>a new layout</html>' };
    h.script = async (e, _request, _signal, upstream) => {
      await upstream({ path: '/add/changed', kind: 'page' });
      throw new UpstreamOutcome('unrecognised', e.platform, 'snapmsg page not recognised: the profile card is gone');
    };
    const response = await h.get(urlOf(endpoint, {}, variantQuery(endpoint, 'drift')));
    expectError(response, 502, 'UPSTREAM_UNRECOGNISED', { authed: true });
    const [summary] = await h.stores.drift.list({ platform: 'snapmsg' });
    assert.ok(summary);
    assert.deepEqual(
      { ...summary, id: '', at: '' },
      { id: '', at: '', platform: 'snapmsg', endpoint: 'snapmsg.profile', requestId: response.headers['x-request-id'], reason: 'snapmsg page not recognised: the profile card is gone', path: '/add/changed', status: 200, truncated: false },
    );
    const sample = await h.stores.drift.get(summary.id);
    assert.equal(sample?.body, '<html>a new layout</html>');
    assert.deepEqual(sample?.headers, { 'content-type': 'text/html' }, 'no cookies');
    const metrics = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /api_unrecognised_pages_total\{platform="snapmsg",endpoint="snapmsg.profile"\} 1/);
  });

  test('data that does not fit the schema is drift too; a body past the cap is cut; at most a few per hour and endpoint, the oldest going', async () => {
    const endpoint = byId('linkpage-a.profile');
    answer = { status: 200, path: '/big', headers: {}, body: 'x'.repeat(DRIFT_MAX_BYTES + 10) };
    h.script = async (_e, _request, _signal, upstream) => {
      await upstream({ path: '/big', kind: 'page' });
      return { data: { surprise: true } };
    };
    const ids: string[] = [];
    for (let i = 0; i < DRIFT_PER_HOUR + 3; i++) {
      const response = await h.get(urlOf(endpoint, {}, variantQuery(endpoint, `drift${i}`)));
      expectError(response, 502, 'UPSTREAM_UNRECOGNISED', { authed: true });
      ids.push(String(response.headers['x-request-id']));
      h.clock.now += 1;
    }
    const kept = await h.stores.drift.list({ platform: 'linkpage-a', limit: 100 });
    assert.deepEqual(kept.map((sample) => sample.requestId), ids.slice(-DRIFT_PER_HOUR).reverse(), 'the newest, newest first');
    const sample = await h.stores.drift.get(kept[0]?.id ?? '');
    assert.equal(sample?.truncated, true);
    assert.equal(sample?.body.length, DRIFT_MAX_BYTES);
    assert.match(sample?.reason ?? '', /does not match the endpoint schema/);
    h.clock.now += 60 * 60 * 1000 + 1;
    expectError(await h.get(urlOf(endpoint, {}, variantQuery(endpoint, 'drift-later'))), 502, 'UPSTREAM_UNRECOGNISED', { authed: true });
    assert.equal((await h.stores.drift.list({ platform: 'linkpage-a', limit: 100 })).length, DRIFT_PER_HOUR + 1, 'a new hour keeps its own');
  });
});
