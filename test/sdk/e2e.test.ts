// The SDK as built for its users (sdk/dist), end to end against the running service and the
// sandbox upstream: a typed call of every endpoint, every listing followed to its end by
// paginate(), the error classes of real answers, and a test-mode key.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  ENDPOINTS,
  InsufficientCreditsError,
  NotFoundError,
  PageScrape,
  PageScrapeError,
  UnauthorizedError,
  UpstreamBlockedError,
  ValidationError,
  type Endpoints,
  type PagedPath,
} from '../../sdk/dist/index.js';
import { catalogued as catalogueQuery, startService, type Service } from '../support/service.ts';

/** The typed query of the sandbox catalogue's entry for `path` whose description matches `pattern`. */
const catalogued = <P extends keyof Endpoints>(path: P, pattern: RegExp): Endpoints[P]['query'] => catalogueQuery(path, pattern) as Endpoints[P]['query'];

describe('SDK against the service and the sandbox', () => {
  let service: Service;
  let client: PageScrape;
  before(async () => {
    service = await startService();
    client = new PageScrape({ baseUrl: service.base, apiKey: service.keys.live });
  });
  after(() => service.stop());

  test('a typed call of each of the nine scraping endpoints', async () => {
    const before = (await client.account()).data.balance;
    const posts = await client.socialnetProfilePosts({ url: 'https://www.socialnet.example/tidewaterkitchen' });
    assert.ok(posts.data.posts.length > 0);
    const post = posts.data.posts[0];
    assert.ok(post);
    const verified: boolean | null = post.author.verified;
    assert.equal(typeof verified === 'boolean' || verified === null, true);
    assert.equal(posts.meta.creditsCharged, 1);

    const comment = posts.data.posts.flatMap((candidate) => candidate.topComments).find((candidate) => candidate.replyCount > 0);
    assert.ok(comment, 'a top comment with replies');
    const replies = await client.socialnetPostCommentReplies({ feedbackId: comment.feedbackId, expansionToken: comment.expansionToken as string });
    assert.ok(replies.data.replies.length > 0);
    assert.equal(replies.data.feedbackId, comment.feedbackId);

    const reels = await client.socialnetProfileReels({ url: 'https://www.socialnet.example/tidewaterkitchen' });
    assert.ok(reels.data.reels.length > 0);
    const profile = await client.socialnetProfile({ url: 'https://www.socialnet.example/tidewaterkitchen' });
    assert.equal(typeof profile.data.profile.name, 'string');

    const snap = await client.snapmsgProfile({ username: 'lunavoss' });
    assert.equal(snap.data.profile.username, 'lunavoss');
    const comments = await client.snapmsgSpotlightComments(catalogued('/v1/snapmsg/spotlight/comments', /^ordinary Spotlight: 45 comments/));
    assert.equal(comments.data.comments.length, 20);
    assert.equal(comments.data.paging.hasMore, true);

    const linkA = await client.linkpageAProfile({ url: 'https://linkpage-a.example/theo.marsh' });
    assert.equal(linkA.data.profile.username, 'theo.marsh');
    const linkB = await client.linkpageBPage({ url: 'https://linkpage-b.example/maraquill' });
    assert.equal(linkB.data.page.username, 'maraquill');
    const shop = await client.shopfrontShop({ url: 'https://www.shopfront.example/shop/marisolcooks', cache_max_age: '1d' });
    assert.ok(shop.data.posts.length > 0);
    assert.equal(shop.data.paging.hasMore, true);

    const after = (await client.account()).data.balance;
    assert.equal(before - after, 9, 'nine live scrapes, one credit each');
    // A second ask with cache_max_age is a free cache hit.
    const hit = await client.shopfrontShop({ url: 'https://www.shopfront.example/shop/marisolcooks', cache_max_age: '1d' });
    assert.deepEqual([hit.meta.cached, hit.meta.creditsCharged], [true, 0]);
  });

  test('the account endpoints', async () => {
    const account = await client.account();
    assert.equal(account.data.team.id, service.team.id);
    const usage = await client.accountUsage();
    assert.ok(Array.isArray(usage.data.days));
    const requests = await client.accountRequests({ status: '200' });
    assert.ok(Array.isArray(requests.data.requests));
  });

  // The large listings of the sandbox catalogue, with the field that identifies their items.
  const listings: { path: PagedPath; pattern: RegExp; total: number; id: string }[] = [
    { path: '/v1/socialnet/profile/posts', pattern: /^Large page: 320 posts/, total: 320, id: 'postId' },
    { path: '/v1/socialnet/profile/reels', pattern: /^Large page: 215 reels/, total: 215, id: 'videoId' },
    { path: '/v1/socialnet/post/comment/replies', pattern: /260 replies/, total: 260, id: 'id' },
    { path: '/v1/snapmsg/spotlight/comments', pattern: /^large: 460 comments/, total: 460, id: 'id' },
    { path: '/v1/shopfront/shop', pattern: /480 posts/, total: 480, id: 'id' },
    { path: '/v1/shopfront/shop', pattern: /empty batches while more remain/, total: 300, id: 'id' },
  ];
  for (const { path, pattern, total, id } of listings) {
    test(`paginate() follows ${path} to its end (${pattern.source})`, async () => {
      const paging = ENDPOINTS[path].paging;
      const balance = (await client.account()).data.balance;
      const listing = client.paginate(path, catalogued(path, pattern));
      const ids = new Set<string>();
      let count = 0;
      for await (const item of listing) {
        const identity = (item as Record<string, unknown>)[id];
        assert.equal(typeof identity, 'string');
        ids.add(identity as string);
        count++;
      }
      assert.equal(listing.done, true);
      assert.equal(count, total, `every ${paging.items.replace(/s$/, '')} of the listing`);
      assert.equal(ids.size, count, 'none twice');
      assert.equal(listing.items, count);
      assert.ok(listing.pages > 1, 'more than one page');
      assert.equal(listing.creditsSpent, listing.pages, 'one credit per live page');
      assert.equal(listing.creditsRemaining, balance - listing.creditsSpent);
      assert.equal((await client.account()).data.balance, balance - listing.creditsSpent);
    });
  }

  test('paginate() with maxPages stops there, and the account requests page to their end', async () => {
    const listing = client.paginate('/v1/shopfront/shop', catalogued('/v1/shopfront/shop', /480 posts/), { maxPages: 3 });
    const items = await listing.toArray();
    assert.deepEqual([listing.pages, items.length, listing.creditsSpent], [3, 72, 3]);
    // Request records are written within seconds; by now there are hundreds, 50 per page.
    const records = client.paginate('/v1/account/requests', {});
    const ids = new Set<string>();
    for await (const record of records) ids.add(record.requestId);
    assert.equal(ids.size, records.items);
    assert.ok(records.pages > 2 && records.items > 100, `${records.items} records in ${records.pages} pages`);
    assert.equal(records.creditsSpent, 0);
  });

  test('error answers become their code\'s class, with code, status, requestId and details', async () => {
    const notFound = await client.socialnetProfilePosts(catalogued('/v1/socialnet/profile/posts', /^Private profile/)).catch((error: unknown) => error);
    assert.ok(notFound instanceof NotFoundError && notFound instanceof PageScrapeError);
    assert.deepEqual([notFound.code, notFound.status, notFound.name], ['NOT_FOUND', 404, 'NotFoundError']);
    assert.match(notFound.requestId ?? '', /^req_/);

    const invalid = await client.snapmsgProfile({ username: 'no spaces allowed' }).catch((error: unknown) => error);
    assert.ok(invalid instanceof ValidationError);
    assert.equal(invalid.status, 422);
    assert.equal(invalid.details[0]?.path, 'username');

    const blocked = await client.socialnetProfilePosts(catalogued('/v1/socialnet/profile/posts', /^Login wall/), { maxRetries: 0 }).catch((error: unknown) => error);
    assert.ok(blocked instanceof UpstreamBlockedError);
    assert.equal(blocked.status, 502);

    const stranger = new PageScrape({ baseUrl: service.base, apiKey: 'psk_live_not-a-key-of-this-service-000000' });
    const refused = await stranger.account().catch((error: unknown) => error);
    assert.ok(refused instanceof UnauthorizedError);

    const broke = new PageScrape({ baseUrl: service.base, apiKey: service.keys.broke });
    const poor = await broke.snapmsgProfile({ username: 'lunavoss' }).catch((error: unknown) => error);
    assert.ok(poor instanceof InsufficientCreditsError);
    assert.equal(poor.status, 402);
  });

  test('a test-mode key: free, from the built-in sandbox, marked test', async () => {
    const tester = new PageScrape({ baseUrl: service.base, apiKey: service.keys.test });
    const balance = (await client.account()).data.balance;
    const answer = await tester.snapmsgProfile({ username: 'lunavoss' });
    assert.deepEqual([answer.meta.test, answer.meta.creditsCharged], [true, 0]);
    const listing = tester.paginate('/v1/shopfront/shop', catalogued('/v1/shopfront/shop', /480 posts/));
    assert.equal((await listing.toArray()).length, 480);
    assert.equal(listing.creditsSpent, 0);
    assert.equal((await client.account()).data.balance, balance);
  });
});
