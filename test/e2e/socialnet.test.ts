// Every entry of the socialnet sandbox catalogue through the whole service: the answer its
// description states ("→ 404 NOT_FOUND", otherwise 200), credits and envelope checked; every
// listing marked "follow paging.cursor to the end" followed to its end, each item once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SOCIALNET_CATALOGUE } from '../../sandbox/platforms/socialnet/catalogue.ts';
import { startE2e, type E2e } from './harness.ts';
import { assertDistinct, expectError, expectLive, followListing } from './support.ts';

const ITEMS: Record<string, { list: string; id: string; count: string }> = {
  '/v1/socialnet/profile/posts': { list: 'posts', id: 'postId', count: 'postCount' },
  '/v1/socialnet/profile/reels': { list: 'reels', id: 'videoId', count: 'reelCount' },
  '/v1/socialnet/post/comment/replies': { list: 'replies', id: 'id', count: 'replyCount' },
};
const PAGING = { param: 'cursor', field: 'cursor', flag: 'hasNextPage' };

const queryOf = (entry: { query: string }) => Object.fromEntries(new URLSearchParams(entry.query));

describe('socialnet end to end against the sandbox: the whole catalogue', () => {
  let e2e: E2e;
  before(async () => {
    e2e = await startE2e({ sandbox: { slowMs: 300 } });
  });
  after(() => e2e.close());

  for (const entry of SOCIALNET_CATALOGUE) {
    const expected = /→ (\d{3}) ([A-Z_]+)/.exec(entry.description);
    const query = queryOf(entry);
    const items = ITEMS[entry.endpoint];
    if (/next page → (\d{3}) ([A-Z_]+)|the cursor page → (\d{3})/.test(entry.description)) {
      const [, status, code] = /→ (\d{3}) ([A-Z_]+)/.exec(entry.description) ?? [];
      test(`${entry.endpoint} ${entry.query}: first page 200, next page ${status} ${code}`, async () => {
        const first = await expectLive(e2e, entry.endpoint, query);
        const cursor = (first.data.paging as { cursor: string | null }).cursor;
        assert.equal(typeof cursor, 'string');
        await expectError(e2e, entry.endpoint, { ...query, cursor: cursor as string }, Number(status), code ?? '');
      });
    } else if (expected) {
      test(`${entry.endpoint} ${entry.query}: ${expected[1]} ${expected[2]} (${entry.description})`, async () => {
        await expectError(e2e, entry.endpoint, query, Number(expected[1]), expected[2] ?? '');
      });
    } else if (items && /follow paging\.cursor to the end|Rotating sessions/.test(entry.description)) {
      test(`${entry.endpoint} ${entry.query}: every page to the end, each item once (${entry.description})`, async () => {
        const pages = await followListing(e2e, entry.endpoint, query, PAGING, 400);
        const all = pages.flatMap((page) => page[items.list] as Record<string, unknown>[]);
        assertDistinct(all, items.id);
        const total = /(\d+) (posts|reels|replies)/.exec(entry.description);
        if (total) assert.equal(all.length, Number(total[1]));
        assert.deepEqual(pages.at(-1)?.paging, { cursor: null, hasNextPage: false });
        if (items.count !== 'replyCount') for (const page of pages) assert.equal(page[items.count], (page[items.list] as unknown[]).length);
      });
    } else {
      test(`${entry.endpoint} ${entry.query}: 200 (${entry.description})`, async () => {
        const live = await expectLive(e2e, entry.endpoint, query);
        if (entry.endpoint === '/v1/socialnet/profile') {
          assert.equal(live.data.gated, /gated true/.test(entry.description));
          if (query.businessHours === 'false') assert.equal((live.data.profile as { businessHours: unknown }).businessHours, null);
        }
      });
    }
  }

  test('the first page of posts by url and by pageId name the same posts', async () => {
    const byUrl = await expectLive(e2e, '/v1/socialnet/profile/posts', { url: 'https://www.socialnet.example/tidewaterkitchen' });
    const posts = byUrl.data.posts as { postId: string }[];
    assert.ok(posts.length > 0);
  });

  test('a cursor from one profile presented with another is 400, not sent upstream', async () => {
    const first = await expectLive(e2e, '/v1/socialnet/profile/posts', { url: 'https://www.socialnet.example/metrodailynews' });
    const cursor = (first.data.paging as { cursor: string }).cursor;
    await expectError(e2e, '/v1/socialnet/profile/posts', { url: 'https://www.socialnet.example/tidewaterkitchen', cursor }, 400, 'BAD_REQUEST');
  });
});
