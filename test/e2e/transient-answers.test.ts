// Transient answers through the whole service: an upstream answer that a platform's contract
// calls transient (an empty 200 body on every platform; socialnet's GraphQL body that is
// empty after `for (;;);`, and its timeline cut off or without its page_info line) is asked
// again inside the request, and the API answers 200 for exactly 1 credit. What the sandbox
// served is checked too, so that the transient answer is known to have come first.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ServedAnswer } from '../../sandbox/server.ts';
import { accountNamed } from '../../sandbox/platforms/socialnet/accounts.ts';
import { profileIdOf } from '../../sandbox/platforms/socialnet/ids.ts';
import { startE2e, type E2e } from './harness.ts';
import { expectError, expectLive } from './support.ts';

describe('transient answers are retried: 200, 1 credit', () => {
  let e2e: E2e;
  const served: ServedAnswer[] = [];
  before(async () => {
    e2e = await startE2e({ sandbox: { observe: (answer) => served.push(answer) } });
  });
  after(() => e2e.close());

  /** The answers the sandbox gave while `run` ran, for one platform and path. */
  async function answersDuring(run: () => Promise<unknown>, platform: ServedAnswer['platform'], path: string): Promise<ServedAnswer[]> {
    const from = served.length;
    await run();
    return served.slice(from).filter((answer) => answer.platform === platform && answer.path === path);
  }

  /** The first answer an empty 200, the retry a 200 with a body. */
  const assertEmptyThenFull = (answers: ServedAnswer[], what: string) => {
    assert.deepEqual(answers.map((answer) => answer.status), [200, 200], `${what}: two answers`);
    assert.equal(answers[0]?.bytes, 0, `${what}: the first answer was empty`);
    assert.ok((answers[1]?.bytes ?? 0) > 0, `${what}: the retry had the page`);
  };

  for (const [platform, path, query, upstreamPath] of [
    ['linkpage-a', '/v1/linkpage-a/profile', { url: 'https://linkpage-a.example/hiccup-luna' }, '/hiccup-luna'],
    ['linkpage-a', '/v1/linkpage-a/profile', { url: 'https://linkpage-a.example/blank-once' }, '/blank-once'],
    ['linkpage-b', '/v1/linkpage-b/page', { url: 'https://linkpage-b.example/hiccup_luna' }, '/hiccup_luna'],
    ['snapmsg', '/v1/snapmsg/profile', { username: 'hiccup-luna' }, '/add/hiccup-luna'],
  ] as const) {
    test(`${platform} ${upstreamPath}: an empty 200 body, then the page`, async () => {
      const answers = await answersDuring(() => expectLive(e2e, path, query), platform, upstreamPath);
      assertEmptyThenFull(answers, upstreamPath);
    });
  }

  test('snapmsg Spotlight comments: the page and the comments request each first answered empty', async () => {
    const from = served.length;
    await expectLive(e2e, '/v1/snapmsg/spotlight/comments', { url: 'https://www.snapmsg.example/spotlight/hiccup-spotlight-001' });
    const mine = served.slice(from).filter((answer) => answer.platform === 'snapmsg');
    assertEmptyThenFull(mine.filter((answer) => answer.path === '/spotlight/hiccup-spotlight-001'), 'Spotlight page');
    assertEmptyThenFull(mine.filter((answer) => answer.path === '/api/spotlight/comments'), 'comments request');
  });

  test('shopfront: the storefront page and the feed each first answered empty, on every page', async () => {
    const from = served.length;
    const shop = { url: 'https://www.shopfront.example/shop/hiccup-cooks' };
    const first = await expectLive(e2e, '/v1/shopfront/shop', shop);
    assertEmptyThenFull(served.slice(from).filter((answer) => answer.path === '/shop/hiccup-cooks'), 'first storefront page');
    const paging = first.data.paging as { pageToken: string | null; hasMore: boolean };
    assert.equal(paging.hasMore, true, 'a next page');
    const next = served.length;
    await expectLive(e2e, '/v1/shopfront/shop', { ...shop, pageToken: paging.pageToken ?? '' });
    const mine = served.slice(next).filter((answer) => answer.platform === 'shopfront');
    assertEmptyThenFull(mine.filter((answer) => answer.path === '/shop/hiccup-cooks'), 'storefront page again');
    assertEmptyThenFull(mine.filter((answer) => answer.path.startsWith('/shop/api/feed?')), 'feed request');
  });

  for (const [vanity, what] of [
    ['blankanswers', 'a body empty after `for (;;);`'],
    ['lostpageinfo', 'a timeline without its page_info line'],
    ['cutofffeed', 'a timeline whose last line is cut off'],
  ] as const) {
    test(`socialnet timeline query: ${what}, then the complete timeline`, async () => {
      const pageId = profileIdOf(accountNamed(vanity).no);
      const answers = await answersDuring(() => expectLive(e2e, '/v1/socialnet/profile/posts', { pageId }), 'socialnet', '/api/graphql/');
      assert.deepEqual(answers.map((answer) => answer.status), [200, 200], 'the query was asked twice');
      assert.ok((answers[0]?.bytes ?? 0) < (answers[1]?.bytes ?? 0), 'the first answer was the shorter, transient one');
    });
  }

  test('a block that comes with a 5xx is not retried: shopfront captcha page with HTTP 503, asked once, 502 not charged', async () => {
    const answers = await answersDuring(
      () => expectError(e2e, '/v1/shopfront/shop', { url: 'https://www.shopfront.example/shop/captcha-503' }, 502, 'UPSTREAM_BLOCKED'),
      'shopfront',
      '/shop/captcha-503',
    );
    assert.deepEqual(answers.map((answer) => answer.status), [503]);
  });
});
