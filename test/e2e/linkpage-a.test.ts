import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startE2e, type E2e } from './harness.ts';
import { expectCached, expectError, expectLive } from './support.ts';

const PATH = '/v1/linkpage-a/profile';
const profile = (username: string) => ({ url: `https://linkpage-a.example/${username}` });

describe('linkpage-a end to end against the sandbox', () => {
  let e2e: E2e;
  before(async () => {
    e2e = await startE2e({ sandbox: { slowMs: 300 } });
  });
  after(() => e2e.close());

  test('an ordinary profile, then from the cache for 0 credits under another URL form', async () => {
    const live = await expectLive(e2e, PATH, profile('luna.voss'));
    assert.equal((live.data.profile as Record<string, unknown>).username, 'luna.voss');
    const cached = await expectCached(e2e, PATH, { url: 'https://www.linkpage-a.example/@Luna.Voss/?utm_campaign=x' });
    assert.deepEqual(cached.data, live.data);
  });

  test('a large profile: 300 featured links, 250 gallery items', async () => {
    const live = await expectLive(e2e, PATH, profile('big-catalogue'));
    const data = live.data.profile as { featuredLinks: unknown[]; gallery: unknown[] };
    assert.equal(data.featuredLinks.length, 300);
    assert.equal(data.gallery.length, 250);
  });

  for (const username of ['rui.silva', 'emoji-party', 'rtl-noor', 'cjk-sakura', 'mixed-zoe', 'bare-profile', 'adult-creator', 'blank-once', 'slow-luna', 'flaky-luna', 'someone.new']) {
    test(`${username} answers 200 with schema-valid data`, async () => {
      const live = await expectLive(e2e, PATH, profile(username));
      assert.ok(live.data.profile);
    });
  }

  for (const username of ['quiet.fern', 'private-anyone', 'nobody.here', 'softmissing-page']) {
    test(`${username} is 404 NOT_FOUND, not charged`, () => expectError(e2e, PATH, profile(username), 404, 'NOT_FOUND').then(() => undefined));
  }

  for (const username of ['ratelimited-user', 'forbidden-user', 'challenge-user', 'captcha-user', 'loginwall-user', 'checkpoint-user', 'offsite-user', 'down-luna']) {
    test(`${username} is 502 UPSTREAM_BLOCKED, not charged`, () => expectError(e2e, PATH, profile(username), 502, 'UPSTREAM_BLOCKED').then(() => undefined));
  }

  for (const username of ['broken-page', 'corrupt-profile']) {
    test(`${username} is 502 UPSTREAM_UNRECOGNISED naming the platform, not charged`, async () => {
      const body = await expectError(e2e, PATH, profile(username), 502, 'UPSTREAM_UNRECOGNISED');
      assert.match(body.error.message, /linkpage-a/);
    });
  }

  test('a 404 target is never cached: with cache_max_age it is scraped again, and again 404', async () => {
    await expectError(e2e, PATH, { ...profile('nobody.here'), cache_max_age: '30d' }, 404, 'NOT_FOUND');
  });
});
