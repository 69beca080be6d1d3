import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startE2e, type E2e } from './harness.ts';
import { expectCached, expectError, expectLive } from './support.ts';

const PATH = '/v1/linkpage-b/page';
const page = (username: string) => ({ url: `https://linkpage-b.example/${username}` });

describe('linkpage-b end to end against the sandbox', () => {
  let e2e: E2e;
  before(async () => {
    e2e = await startE2e({ sandbox: { slowMs: 300 } });
  });
  after(() => e2e.close());

  test('an ordinary page, then the same page from the cache for 0 credits', async () => {
    const live = await expectLive(e2e, PATH, page('luna.voss'));
    const data = live.data.page as Record<string, unknown>;
    assert.equal(data.username, 'luna.voss');
    const cached = await expectCached(e2e, PATH, page('luna.voss'));
    assert.deepEqual(cached.data, live.data);
  });

  test('the canonical URL feeds the cache key: host alias, case, trailing slash and tracking are one target', async () => {
    await expectLive(e2e, PATH, page('rui.silva'));
    await expectCached(e2e, PATH, { url: 'https://www.linkpage-b.example/Rui.Silva/?utm_source=x#top' });
  });

  test('a large page: 320 links', async () => {
    const live = await expectLive(e2e, PATH, page('big.catalogue'));
    const data = live.data.page as { links: unknown[]; totalLinkCount: number };
    assert.ok(data.links.length > 0);
    assert.ok(data.totalLinkCount >= 320);
  });

  for (const username of ['rui.silva', 'emoji.studio', 'noor.haddad', 'sakura.kato', 'mixed.bag', 'bare.page', 'after.dark', 'adults.only', 'slow_luna', 'flaky_luna', 'variant7x']) {
    test(`${username} answers 200 with schema-valid data`, async () => {
      const live = await expectLive(e2e, PATH, page(username));
      assert.ok(live.data.page);
    });
  }

  for (const username of ['ghost.page', 'suspended.acct']) {
    test(`${username} is 404 NOT_FOUND, not charged`, () => expectError(e2e, PATH, page(username), 404, 'NOT_FOUND').then(() => undefined));
  }

  for (const username of ['rate.limited', 'edge.denied', 'login.wall', 'checkpoint.hit', 'empty.body', 'down_luna']) {
    test(`${username} is 502 UPSTREAM_BLOCKED, not charged`, () => expectError(e2e, PATH, page(username), 502, 'UPSTREAM_BLOCKED').then(() => undefined));
  }

  test('a page without its payload is 502 UPSTREAM_UNRECOGNISED naming the platform, not charged', async () => {
    const body = await expectError(e2e, PATH, page('layout.changed'), 502, 'UPSTREAM_UNRECOGNISED');
    assert.match(body.error.message, /linkpage-b/);
  });
});
