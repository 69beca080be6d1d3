// The result cache through the API: cache_max_age boundaries, what a hit looks like, sharing
// across teams, and the normalised cache key (canonical URL, username, switches).
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { endpoints } from '../../src/endpoints/index.ts';
import { byId, defaultScript, startHarness, type Harness } from './harness.ts';
import { ledgerState, success, urlOf, variantQuery, type Success } from './support.ts';

const DAY = 24 * 60 * 60 * 1000;
const AGES = [1, 3, 7, 14, 30] as const;
const iso = (ms: number) => new Date(ms).toISOString();

describe('the result cache', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ credits: 10_000, rateLimit: 1_000_000 });
  });
  after(() => h.close());
  afterEach(() => {
    h.script = defaultScript;
  });

  /** GET; asserts a hit (no scrape, no ledger row, 0 credits) scraped at `scrapedAt`. */
  const expectHit = async (url: string, scrapedAt: number, key = h.key, teamId = h.team.id): Promise<Success> => {
    const calls = h.calls.length;
    const before = await ledgerState(h, teamId);
    const body = success(await h.get(url, { 'x-api-key': key }));
    assert.deepEqual(Object.keys(body.meta), ['requestId', 'creditsCharged', 'creditsRemaining', 'cached', 'cachedAt']);
    assert.equal(body.meta.cached, true, url);
    assert.equal(body.meta.cachedAt, iso(scrapedAt));
    assert.equal(body.data.fetchedAt, body.meta.cachedAt);
    assert.equal(body.meta.creditsCharged, 0);
    assert.equal(body.meta.creditsRemaining, before.balance);
    assert.equal(h.calls.length, calls, 'no scrape on a hit');
    assert.deepEqual(await ledgerState(h, teamId), before, 'no ledger row on a hit');
    return body;
  };

  /** GET; asserts a live scrape at the current clock, charged 1. */
  const expectLive = async (url: string, key = h.key, teamId = h.team.id): Promise<Success> => {
    const calls = h.calls.length;
    const before = await h.balance(teamId);
    const body = success(await h.get(url, { 'x-api-key': key }));
    assert.deepEqual(Object.keys(body.meta), ['requestId', 'creditsCharged', 'creditsRemaining', 'cached']);
    assert.equal(body.meta.cached, false, url);
    assert.equal(body.meta.creditsCharged, 1);
    assert.equal(body.meta.creditsRemaining, before - 1);
    assert.equal(body.data.fetchedAt, iso(h.clock.now));
    assert.equal(h.calls.length, calls + 1, 'one scrape');
    assert.equal(await h.balance(teamId), before - 1);
    return body;
  };

  test('cache_max_age boundaries: exactly N days old is a hit, N days and 1 ms is a miss that refreshes', async () => {
    const endpoint = byId('linkpage-a.profile');
    const t0 = h.clock.now;
    const targets = new Map(AGES.map((age) => [age, variantQuery(endpoint, `age${age}`)]));
    for (const query of targets.values()) await expectLive(urlOf(endpoint, {}, query));
    for (const age of AGES) {
      const query = targets.get(age) ?? {};
      h.clock.now = t0 + age * DAY;
      // Pruning keeps an entry exactly 30 days old.
      if (age === 30) await h.app.maintain();
      for (const maxAge of AGES.filter((candidate) => candidate >= age)) {
        await expectHit(urlOf(endpoint, { cache_max_age: `${maxAge}d` }, query), t0);
      }
      h.clock.now += 1;
      const refreshed = await expectLive(urlOf(endpoint, { cache_max_age: `${age}d` }, query));
      assert.deepEqual(refreshed.data.profile, (await expectHit(urlOf(endpoint, { cache_max_age: `${age}d` }, query), h.clock.now)).data.profile);
    }
  });

  test('a result older than the asked age is a miss for the smaller ages only', async () => {
    const endpoint = byId('snapmsg.profile');
    const query = variantQuery(endpoint, 'older');
    const t0 = h.clock.now;
    await expectLive(urlOf(endpoint, {}, query));
    h.clock.now = t0 + 5 * DAY;
    await expectHit(urlOf(endpoint, { cache_max_age: '7d' }, query), t0);
    await expectHit(urlOf(endpoint, { cache_max_age: '30d' }, query), t0);
    await expectLive(urlOf(endpoint, { cache_max_age: '3d' }, query));
  });

  test('without cache_max_age a live scrape always runs and refreshes the entry', async () => {
    const endpoint = byId('shopfront.shop');
    const query = variantQuery(endpoint, 'always');
    await expectLive(urlOf(endpoint, {}, query));
    h.clock.now += 60 * 60 * 1000;
    await expectLive(urlOf(endpoint, {}, query));
    const second = h.clock.now;
    h.clock.now += 1000;
    await expectHit(urlOf(endpoint, { cache_max_age: '1d' }, query), second);
  });

  for (const endpoint of endpoints) {
    test(`${endpoint.path}: a hit is served from the store whatever the upstream says now, and is shared across teams`, async () => {
      const query = variantQuery(endpoint, 'shared');
      const scrapedAt = h.clock.now;
      const live = await expectLive(urlOf(endpoint, {}, query));
      h.clock.now += 1000;
      h.script = async () => {
        throw new Error('the extractor must not run on a hit');
      };
      const hit = await expectHit(urlOf(endpoint, { cache_max_age: '1d' }, query), scrapedAt);
      assert.deepEqual(hit.data, live.data);
      const other = await h.newTeam(0, 100);
      const theirs = await expectHit(urlOf(endpoint, { cache_max_age: '1d' }, query), scrapedAt, other.key, other.team.id);
      assert.equal(theirs.meta.creditsRemaining, 0);
      assert.deepEqual(theirs.data, live.data);
      assert.notEqual(theirs.meta.requestId, hit.meta.requestId);
    });
  }

  test('the cache key uses the canonical URL: host, case, tracking parameters, fragment, trailing slash', async () => {
    const linkpageA = byId('linkpage-a.profile');
    const at = h.clock.now;
    await expectLive(urlOf(linkpageA, {}, { url: 'https://linkpage-a.example/name' }));
    assert.equal(h.calls.at(-1)?.request.params.url, 'https://linkpage-a.example/name');
    h.clock.now += 1;
    for (const url of [
      'https://WWW.linkpage-a.example/Name/?utm_source=x#f',
      'http://linkpage-a.example/NAME',
      'https://www.linkpage-a.example/@name/',
      'https://linkpage-a.example/name?fbclid=abc&utm_campaign=y',
    ]) {
      await expectHit(urlOf(linkpageA, { cache_max_age: '1d' }, { url }), at);
    }
    await expectLive(urlOf(linkpageA, { cache_max_age: '1d' }, { url: 'https://linkpage-a.example/name2' }));

    const socialnet = byId('socialnet.profile.reels');
    const snAt = h.clock.now;
    await expectLive(urlOf(socialnet, {}, { url: 'https://www.socialnet.example/cacheprobe' }));
    for (const url of ['https://m.socialnet.example/CacheProbe/reels?fbclid=1#x', 'https://socialnet.example/cacheprobe/']) {
      await expectHit(urlOf(socialnet, { cache_max_age: '1d' }, { url }), snAt);
    }

    const spotlight = byId('snapmsg.spotlight.comments');
    const id = 'CacheKeyProbe_0123456789';
    const spAt = h.clock.now;
    await expectLive(urlOf(spotlight, {}, { url: `https://www.snapmsg.example/spotlight/${id}` }));
    await expectHit(urlOf(spotlight, { cache_max_age: '1d' }, { url: `https://snapmsg.example/@someone/spotlight/${id}/?utm_source=s` }), spAt);
    // Spotlight ids keep their case: another id.
    await expectLive(urlOf(spotlight, { cache_max_age: '1d' }, { url: `https://www.snapmsg.example/spotlight/${id.toLowerCase()}` }));

    const shop = byId('shopfront.shop');
    const shAt = h.clock.now;
    await expectLive(urlOf(shop, {}, { url: 'https://www.shopfront.example/shop/cacheprobe' }));
    await expectHit(urlOf(shop, { cache_max_age: '1d' }, { url: 'https://shopfront.example/shop/CacheProbe/list/123?ref=x' }), shAt);

    const snapmsg = byId('snapmsg.profile');
    const smAt = h.clock.now;
    await expectLive(urlOf(snapmsg, {}, { username: 'cacheprobe' }));
    await expectHit(urlOf(snapmsg, { cache_max_age: '1d' }, { username: '@CacheProbe' }), smAt);
  });

  test('the switches are part of the cache key; their spellings and defaults are normalised', async () => {
    const endpoint = byId('socialnet.profile');
    const query = variantQuery(endpoint, 'switches');
    const offAt = h.clock.now;
    await expectLive(urlOf(endpoint, { businessHours: 'false' }, query));
    assert.equal(h.calls.at(-1)?.request.params.businessHours, 'false');
    h.clock.now += 1000;
    const onAt = h.clock.now;
    await expectLive(urlOf(endpoint, { businessHours: 'true', cache_max_age: '1d' }, query));
    h.clock.now += 1000;
    await expectHit(urlOf(endpoint, { businessHours: '0', cache_max_age: '1d' }, query), offAt);
    await expectHit(urlOf(endpoint, { businessHours: '1', cache_max_age: '1d' }, query), onAt);
    await expectHit(urlOf(endpoint, { cache_max_age: '1d' }, query), onAt);
    await expectHit(urlOf(endpoint, { allowGated: 'true', cache_max_age: '1d' }, query), onAt);
    await expectLive(urlOf(endpoint, { allowGated: 'false', cache_max_age: '1d' }, query));
  });

  test('the paging position is part of the cache key', async () => {
    const endpoint = byId('socialnet.profile.posts');
    const query = variantQuery(endpoint, 'position');
    const first = await expectLive(urlOf(endpoint, {}, query));
    const cursor = String((first.data.paging as { cursor: string }).cursor);
    h.clock.now += 1000;
    await expectLive(urlOf(endpoint, { cursor, cache_max_age: '1d' }, query));
  });
});
