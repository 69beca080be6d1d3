import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startE2e, type E2e } from './harness.ts';
import { assertDistinct, expectCached, expectError, expectLive, followListing } from './support.ts';

const PROFILE = '/v1/snapmsg/profile';
const COMMENTS = '/v1/snapmsg/spotlight/comments';
const spotlight = (id: string) => ({ url: `https://www.snapmsg.example/spotlight/${id}` });
const PAGING = { param: 'cursor', field: 'cursor', flag: 'hasMore' };

describe('snapmsg end to end against the sandbox', () => {
  let e2e: E2e;
  before(async () => {
    e2e = await startE2e({ sandbox: { slowMs: 300 } });
  });
  after(() => e2e.close());

  test('an ordinary profile, then from the cache under another spelling of the username', async () => {
    const live = await expectLive(e2e, PROFILE, { username: 'lunavoss' });
    assert.equal((live.data.profile as Record<string, unknown>).username, 'lunavoss');
    const cached = await expectCached(e2e, PROFILE, { username: '@LunaVoss' });
    assert.deepEqual(cached.data, live.data);
  });

  for (const username of ['bigcreator', 'emoji.star', 'noor.rtl', 'sakura.cjk', 'mixedbag', 'sparse.pub', 'zeros.out', 'ldgraph', 'pretty.keys', 'kitewise', 'quietkit', 'anyname42', 'slow-luna', 'flaky-luna']) {
    test(`profile ${username} answers 200 with schema-valid data`, async () => {
      const live = await expectLive(e2e, PROFILE, { username });
      assert.ok(live.data.profile);
    });
  }

  test('profile not found: 404, not charged', () => expectError(e2e, PROFILE, { username: 'nosuchuser1' }, 404, 'NOT_FOUND').then(() => undefined));

  // The message tells a block from an outage: the user can tell the platform refused the request.
  const BLOCKED = /^snapmsg blocked the request \(its rate limit, a login wall, a challenge or a block page\); retry later\.$/;
  const DOWN = /^snapmsg is temporarily unavailable; retry shortly\.$/;
  for (const [username, message] of [['ratelimited', BLOCKED], ['edgeblocked', BLOCKED], ['loginwall', BLOCKED], ['challenged', BLOCKED], ['down-luna', DOWN]] as const) {
    test(`profile ${username}: 502 UPSTREAM_BLOCKED saying ${message === BLOCKED ? 'the platform blocked it' : 'the platform is unavailable'}, not charged`, async () => {
      const body = await expectError(e2e, PROFILE, { username }, 502, 'UPSTREAM_BLOCKED');
      assert.match(body.error.message, message);
    });
  }
  for (const username of ['brokenpage', 'oddcase']) {
    test(`profile ${username}: 502 UPSTREAM_UNRECOGNISED, not charged`, () => expectError(e2e, PROFILE, { username }, 502, 'UPSTREAM_UNRECOGNISED').then(() => undefined));
  }

  for (const [id, count] of [
    ['starTrails_Sintra_0001', 45],
    ['bigThread_hundreds_0001', 460],
  ] as const) {
    test(`spotlight ${id}: every one of ${count} comments exactly once, then the end ("" cursor)`, async () => {
      const pages = await followListing(e2e, COMMENTS, spotlight(id), PAGING, 300);
      const comments = pages.flatMap((page) => page.comments as Record<string, unknown>[]);
      assert.equal(comments.length, count);
      assertDistinct(comments, 'id');
      for (const page of pages) assert.equal(page.count, (page.comments as unknown[]).length);
      assert.deepEqual(pages.at(-1)?.paging, { cursor: '', hasMore: false });
    });
  }

  test('a cached next page is served for a cursor with cache_max_age', async () => {
    const first = await expectLive(e2e, COMMENTS, spotlight('starTrails_Sintra_0001'));
    const cursor = (first.data.paging as { cursor: string }).cursor;
    const second = await expectLive(e2e, COMMENTS, { ...spotlight('starTrails_Sintra_0001'), cursor });
    const again = await expectCached(e2e, COMMENTS, { ...spotlight('starTrails_Sintra_0001'), cursor });
    assert.deepEqual(again.data.comments, second.data.comments);
  });

  for (const id of ['unicodeTalk_emoji_rtl_01', 'sparseComments_000001', 'zeroDefaults_comments1', 'noComments_0000000001', 'commentsOff_000000001', 'commentsDisabled_0001', 'AnySpotlightId_1234', 'slow-spotlight-00001', 'flaky-spotlight-0001']) {
    test(`spotlight ${id} answers 200`, async () => {
      const live = await expectLive(e2e, COMMENTS, spotlight(id));
      assert.ok(Array.isArray(live.data.comments));
    });
  }

  for (const id of ['missing_spotlight_001', 'recommendedOnly_00001', 'contextGone_000000001']) {
    test(`spotlight ${id}: 404, not charged`, () => expectError(e2e, COMMENTS, spotlight(id), 404, 'NOT_FOUND').then(() => undefined));
  }
  for (const [id, message] of [['rateLimited_comments1', BLOCKED], ['edgeBlocked_spot_0001', BLOCKED], ['challenge_spot_000001', BLOCKED], ['down-spotlight-00001', DOWN]] as const) {
    test(`spotlight ${id}: 502 UPSTREAM_BLOCKED saying ${message === BLOCKED ? 'the platform blocked it' : 'the platform is unavailable'}, not charged`, async () => {
      const body = await expectError(e2e, COMMENTS, spotlight(id), 502, 'UPSTREAM_BLOCKED');
      assert.match(body.error.message, message);
    });
  }
  for (const id of ['brokenFeed_0000000001', 'brokenComments_000001']) {
    test(`spotlight ${id}: 502 UPSTREAM_UNRECOGNISED, not charged`, () => expectError(e2e, COMMENTS, spotlight(id), 502, 'UPSTREAM_UNRECOGNISED').then(() => undefined));
  }

  test('a forged cursor is 400 and is never sent upstream', async () => {
    await expectError(e2e, COMMENTS, { ...spotlight('starTrails_Sintra_0001'), cursor: 'not-a-real-cursor' }, 400, 'BAD_REQUEST');
  });
});
