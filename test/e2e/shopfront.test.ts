import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startE2e, type E2e } from './harness.ts';
import { assertDistinct, expectCached, expectError, expectLive, followListing } from './support.ts';

const PATH = '/v1/shopfront/shop';
const shop = (handle: string) => ({ url: `https://www.shopfront.example/shop/${handle}` });
const PAGING = { param: 'pageToken', field: 'pageToken', flag: 'hasMore' };

describe('shopfront end to end against the sandbox', () => {
  let e2e: E2e;
  before(async () => {
    e2e = await startE2e({ sandbox: { slowMs: 300 } });
  });
  after(() => e2e.close());

  test('an ordinary storefront, every page to the end, each post once; then served from the cache', async () => {
    const pages = await followListing(e2e, PATH, shop('lunacooks'), PAGING);
    const posts = pages.flatMap((page) => page.posts as Record<string, unknown>[]);
    assert.equal(posts.length, 60);
    assertDistinct(posts, 'id');
    for (const page of pages) assert.equal(page.postCount, (page.posts as unknown[]).length);
    const last = pages.at(-1)?.paging as Record<string, unknown>;
    assert.deepEqual(last, { pageToken: '', hasMore: false });
    const first = pages[0]?.shop as Record<string, unknown>;
    assert.equal(first.handle, 'lunacooks');
    const cached = await expectCached(e2e, PATH, shop('lunacooks'));
    assert.deepEqual(cached.data.shop, first);
  });

  for (const [handle, count] of [
    ['bighaul', 480],
    ['batchmix', 300],
  ] as const) {
    test(`large storefront ${handle}: ${count} posts, each exactly once`, async () => {
      const pages = await followListing(e2e, PATH, shop(handle), PAGING);
      const posts = pages.flatMap((page) => page.posts as Record<string, unknown>[]);
      assert.equal(posts.length, count);
      assertDistinct(posts, 'id');
    });
  }

  for (const handle of ['emoji-kitchen', 'souq-noor', 'tokyo-zakka', 'mixed-bag', 'bare-shop', 'empty-shop', 'slow-cooks', 'flaky-cooks', 'creator-03f5875c']) {
    test(`${handle} answers 200 with schema-valid data`, async () => {
      const body = await expectLive(e2e, PATH, shop(handle));
      assert.equal((body.data.shop as Record<string, unknown>).handle, handle);
    });
  }

  for (const handle of ['oldkitchenfinds', 'nosuchcreator', 'gone-soft']) {
    test(`${handle} is 404 NOT_FOUND, not charged`, () => expectError(e2e, PATH, shop(handle), 404, 'NOT_FOUND').then(() => undefined));
  }

  for (const handle of ['captcha-wall', 'captcha-503', 'rate-limited', 'signin-wall', 'down-cooks']) {
    test(`${handle} is 502 UPSTREAM_BLOCKED, not charged`, () => expectError(e2e, PATH, shop(handle), 502, 'UPSTREAM_BLOCKED').then(() => undefined));
  }

  test('a feed that answers its captcha on the next page: 502, not charged', async () => {
    const first = await expectLive(e2e, PATH, shop('feed-captcha'));
    const token = (first.data.paging as { pageToken: string }).pageToken;
    await expectError(e2e, PATH, { ...shop('feed-captcha'), pageToken: token }, 502, 'UPSTREAM_BLOCKED');
  });

  test('a page token the upstream rejects: 400 BAD_REQUEST, not charged', async () => {
    const first = await expectLive(e2e, PATH, shop('feed-rejects'));
    const token = (first.data.paging as { pageToken: string }).pageToken;
    await expectError(e2e, PATH, { ...shop('feed-rejects'), pageToken: token }, 400, 'BAD_REQUEST');
  });

  test('a page token used with another storefront: 400', async () => {
    const first = await expectLive(e2e, PATH, shop('lunacooks'));
    const token = (first.data.paging as { pageToken: string }).pageToken;
    await expectError(e2e, PATH, { ...shop('bighaul'), pageToken: token }, 400, 'BAD_REQUEST');
  });

  test('URLs off the platform are refused before any upstream request', async () => {
    for (const url of ['https://www.shopfront.example.evil.test/shop/x', 'https://evil.test#@www.shopfront.example/shop/x', 'https://user@www.shopfront.example/shop/x', 'http://127.0.0.1/shop/x', 'ftp://www.shopfront.example/shop/x']) {
      const response = await expectError(e2e, PATH, { url }, 422, 'VALIDATION_ERROR');
      assert.equal(response.error.details?.[0]?.path, 'url');
    }
  });
});
