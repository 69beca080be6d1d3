// The shopfront extractor against the contract's examples (src/platforms/shopfront/README.md),
// every outcome the platform's README lists and every variations the platform allows, through a fake upstream that
// serves the fixture files and checks each request against the platform's README.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ExtractContext, UpstreamPosition } from '../../src/endpoints/types.ts';
import type { UpstreamRequest, UpstreamResponse } from '../../src/upstream/types.ts';
import { UpstreamOutcome, type OutcomeKind } from '../../src/upstream/outcomes.ts';
import { extractorOf } from '../support/endpoints.ts';
import { parseShopfrontUrl } from '../../src/platforms/shopfront/urls.ts';
import { formatPrice } from '../../src/platforms/shopfront/mapping.ts';
import { scanPage } from '../../src/platforms/shopfront/page.ts';
import { Parser } from 'htmlparser2';

const FIXTURES = join(fileURLToPath(new URL('.', import.meta.url)), '../fixtures/upstream');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');

const SHOP_HTML = fixture('shopfront-shop.html');
const FEED_JSON = fixture('shopfront-feed-page.json');
const NOT_FOUND_HTML = fixture('shopfront-not-found.html');
const INACTIVE_HTML = fixture('shopfront-inactive.html');
const CAPTCHA_HTML = fixture('shopfront-captcha.html');
const EXPECTED_SHOP = JSON.parse(fixture('shopfront-expected-shop.json'));
const EXPECTED_FEED = JSON.parse(fixture('shopfront-expected-feed-page.json'));

const PAGE_PATH = '/shop/marisolcooks';
const TOKEN = 'eyJvIjozLCJzIjoiQUxMIiwidiI6MX0=';
const FEED_PATH = '/shop/api/feed?storefrontId=sf1.storefront.A2K9QX7M3LZP1&scope=ALL&pageToken=eyJvIjozLCJzIjoiQUxMIiwidiI6MX0%3D';
const INPUT_URL = 'https://shopfront.example/shop/MarisolCooks/list/3VG86HFNQ71G1?ref_=sf_share';

const extract = extractorOf('shopfront.shop');

// ------------------------------------------------------------------ fake upstream

type Answer = Partial<UpstreamResponse> & { body: string };
type Route = (request: UpstreamRequest) => Answer;

const htmlAnswer = (body: string, status = 200): Answer => ({
  status,
  body,
  headers: { 'content-type': 'text/html; charset=utf-8' },
});
const jsonAnswer = (body: string | object, status = 200): Answer => ({
  status,
  body: typeof body === 'string' ? body : JSON.stringify(body),
  headers: { 'content-type': 'application/json; charset=utf-8' },
});

/** Checks every request against the platform's README. */
function assertContractRequest(request: UpstreamRequest): void {
  assert.equal(request.method ?? 'GET', 'GET');
  assert.equal(request.body, undefined);
  if (request.path.startsWith('/shop/api/feed')) {
    assert.equal(request.kind, 'api');
    assert.equal(request.headers?.['x-requested-with'], 'XMLHttpRequest');
    const url = new URL(request.path, 'https://origin.invalid');
    assert.deepEqual([...url.searchParams.keys()].sort(), ['pageToken', 'scope', 'storefrontId']);
    assert.equal(url.searchParams.get('scope'), 'ALL');
  } else {
    assert.equal(request.kind, 'page');
    assert.match(request.path, /^\/shop\/[a-z0-9][a-z0-9._-]{1,63}$/);
  }
}

/** Serves `page` for the storefront page and `feed` for the feed endpoint, recording requests. */
function fakeUpstream(routes: { page?: Route | Answer; feed?: Route | Answer }) {
  const requests: UpstreamRequest[] = [];
  const upstream = async (request: UpstreamRequest): Promise<UpstreamResponse> => {
    requests.push(request);
    assertContractRequest(request);
    const route = request.path.startsWith('/shop/api/feed') ? routes.feed : routes.page;
    if (route === undefined) throw new Error(`unexpected request ${request.path}`);
    const answer = typeof route === 'function' ? route(request) : route;
    const response: UpstreamResponse = { status: 200, headers: {}, path: request.path, ...answer };
    // As the client does, the request's own block check judges every answer first.
    const block = request.block?.(response) ?? null;
    if (block !== null) throw new UpstreamOutcome('blocked', 'shopfront', block);
    return response;
  };
  return { upstream, requests };
}

const silent = () => undefined;

function context(upstream: ExtractContext['upstream'], deadlineMs = 10_000): ExtractContext {
  return {
    signal: new AbortController().signal,
    deadline: Date.now() + deadlineMs,
    log: { debug: silent, info: silent, warn: silent, error: silent },
    upstream,
  };
}

const params = { url: (parseShopfrontUrl(INPUT_URL) as { url: string }).url };

async function run(
  routes: { page?: Route | Answer; feed?: Route | Answer },
  position: UpstreamPosition | null = null,
  deadlineMs?: number,
) {
  const fake = fakeUpstream(routes);
  const result = await extract({ params, position }, context(fake.upstream, deadlineMs));
  return { ...result, requests: fake.requests };
}

async function expectOutcome(
  kind: OutcomeKind,
  routes: { page?: Route | Answer; feed?: Route | Answer },
  position: UpstreamPosition | null = null,
  message?: RegExp,
): Promise<UpstreamOutcome> {
  const fake = fakeUpstream(routes);
  let caught: unknown;
  try {
    await extract({ params, position }, context(fake.upstream));
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof UpstreamOutcome, `expected UpstreamOutcome ${kind}, got ${String(caught)}`);
  assert.equal(caught.kind, kind, caught.message);
  assert.equal(caught.platform, 'shopfront');
  if (message) assert.match(caught.message, message);
  if (kind === 'unrecognised') assert.match(caught.message, /shopfront/);
  return caught;
}

/** The expected file less `paging`, and the position its token carries (null at the end). */
function expected(file: { paging: { pageToken: unknown } } & Record<string, unknown>) {
  const { paging, ...data } = file;
  const token = paging.pageToken;
  const next = typeof token === 'object' && token !== null ? (token as { $position: UpstreamPosition }).$position : null;
  return { data, next };
}

const first = { page: htmlAnswer(SHOP_HTML) };
const second = { page: htmlAnswer(SHOP_HTML), feed: jsonAnswer(FEED_JSON) };

// ------------------------------------------------------------------ fixture transformations

/** The fixture's a-state blocks: `[whole element, attribute text, JSON text]` by key. */
function blockOf(html: string, key: string): { element: string; json: string } {
  const pattern = new RegExp(`<script[^>]*${key}[^>]*>([\\s\\S]*?)</script>`);
  const match = pattern.exec(html);
  assert.ok(match, `fixture has no ${key} block`);
  return { element: match[0], json: match[1]! };
}

const HEADER = blockOf(SHOP_HTML, 'sf-storefront-header');
const FEED = blockOf(SHOP_HTML, 'sf-storefront-feed');
const HEADER_JSON = JSON.parse(HEADER.json);
const FEED_BATCH = JSON.parse(FEED.json);

/** The shop page with the header and feed JSON replaced (same elements otherwise). */
function withJson(header: unknown, feed: unknown, html = SHOP_HTML): string {
  return html
    .replace(HEADER.element, () => HEADER.element.replace(HEADER.json, () => serialise(header)))
    .replace(FEED.element, () => FEED.element.replace(FEED.json, () => serialise(feed)));
}

const serialise = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value).replace(/</g, '\\u003c'));

const clone = <T>(value: T): T => structuredClone(value);

/** Calls `fn` on every object inside `value` (collected first, so `fn` may add members). */
function everyObject(value: unknown, fn: (object: Record<string, unknown>) => void): void {
  const found: Record<string, unknown>[] = [];
  const walk = (item: unknown): void => {
    if (Array.isArray(item)) item.forEach(walk);
    else if (typeof item === 'object' && item !== null) {
      found.push(item as Record<string, unknown>);
      Object.values(item).forEach(walk);
    }
  };
  walk(value);
  found.forEach(fn);
}

/** Reverses the member order of every object. */
function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).reverse().map(([k, v]) => [k, reversedKeys(v)]));
}

/** JSON with every non-ASCII character, `<`, `>`, `&` and `/` escaped as JSON allows. */
const escapedJson = (value: unknown, indent = 0) =>
  JSON.stringify(value, null, indent)
    .replace(/[\u007f-\uffff<>&]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replace(/\//g, '\\/');

// ------------------------------------------------------------------ contract examples

describe('shopfront.shop: contract examples', () => {
  test('first call: storefront page → shopfront-expected-shop.json and the position of the next batch', async () => {
    const result = await run(first);
    const want = expected(EXPECTED_SHOP);
    assert.deepEqual(result.data, want.data);
    assert.deepEqual(result.next, want.next);
    assert.deepEqual(result.next, { pageToken: TOKEN });
    assert.equal(result.requests.length, 1);
    assert.deepEqual(
      { method: result.requests[0]!.method, path: result.requests[0]!.path, kind: result.requests[0]!.kind },
      { method: 'GET', path: PAGE_PATH, kind: 'page' },
    );
  });

  test('passing the position back: storefront page again, then exactly the feed request', async () => {
    const firstCall = await run(first);
    const result = await run(second, firstCall.next ?? null);
    const want = expected(EXPECTED_FEED);
    assert.deepEqual(result.data, want.data);
    assert.equal(result.next, null);
    assert.deepEqual(
      result.requests.map((r) => ({ method: r.method, path: r.path, kind: r.kind, headers: r.headers })),
      [
        { method: 'GET', path: PAGE_PATH, kind: 'page', headers: undefined },
        { method: 'GET', path: FEED_PATH, kind: 'api', headers: { 'x-requested-with': 'XMLHttpRequest' } },
      ],
    );
  });

  test('tokens with +, / and = are percent-encoded as encodeURIComponent does, never altered', async () => {
    const token = 'a+b/c==?&x';
    const result = await run(second, { pageToken: token });
    const url = new URL(result.requests[1]!.path, 'https://origin.invalid');
    assert.equal(url.searchParams.get('pageToken'), token);
    assert.ok(result.requests[1]!.path.endsWith(`pageToken=${encodeURIComponent(token)}`));
  });

  test('a storefrontId or page token that cannot be percent-encoded (a lone surrogate) is an outcome, never a thrown URIError', async () => {
    const header = clone(HEADER_JSON);
    header.storefront.storefrontId = 'sf1.storefront.\ud800';
    const page = htmlAnswer(withJson(header, FEED_BATCH));
    await assert.rejects(run({ page, feed: jsonAnswer(FEED_JSON) }, { pageToken: TOKEN }), { name: 'UpstreamOutcome', kind: 'unrecognised' });
    await assert.rejects(run(second, { pageToken: 'tok\udc00en' }), { name: 'UpstreamOutcome', kind: 'rejected_cursor' });
    const batch = clone(FEED_BATCH);
    batch.pageToken = 'tok\ud800';
    await assert.rejects(run({ page: htmlAnswer(withJson(HEADER_JSON, batch)) }), { name: 'UpstreamOutcome', kind: 'unrecognised' });
  });

  test('the storefrontId of a later call comes from the page requested again, not from the first call', async () => {
    const header = clone(HEADER_JSON);
    header.storefront.storefrontId = 'sf1.storefront.NEWID00000001';
    const result = await run({ page: htmlAnswer(withJson(header, FEED_BATCH)), feed: jsonAnswer(FEED_JSON) }, { pageToken: TOKEN });
    assert.match(result.requests[1]!.path, /storefrontId=sf1\.storefront\.NEWID00000001&/);
    assert.equal((result.data.shop as { storefrontId: string }).storefrontId, 'sf1.storefront.NEWID00000001');
  });
});

// ------------------------------------------------------------------ outcomes

describe('shopfront.shop: missing and inactive storefronts', () => {
  test('HTTP 404 page → not_found', async () => {
    await expectOutcome('not_found', { page: htmlAnswer(NOT_FOUND_HTML, 404) });
  });
  test('HTTP 200 whose title contains Page Not Found → not_found', async () => {
    await expectOutcome('not_found', { page: htmlAnswer(NOT_FOUND_HTML, 200) });
  });
  test('inactive storefront (status INACTIVE_STOREFRONT, no feed block) → not_found, no feed request', async () => {
    const fake = fakeUpstream({ page: htmlAnswer(INACTIVE_HTML) });
    await assert.rejects(extract({ params, position: null }, context(fake.upstream)), { kind: 'not_found' });
    await assert.rejects(extract({ params, position: { pageToken: TOKEN } }, context(fake.upstream)), { kind: 'not_found' });
    assert.ok(fake.requests.every((r) => r.kind === 'page'));
  });
  test('any status other than ACTIVE → not_found', async () => {
    const header = clone(HEADER_JSON);
    header.storefront.status = 'SUSPENDED';
    await expectOutcome('not_found', { page: htmlAnswer(withJson(header, FEED_BATCH)) });
  });
  test('feed endpoint 404 STOREFRONT_NOT_FOUND → not_found', async () => {
    await expectOutcome(
      'not_found',
      { page: htmlAnswer(SHOP_HTML), feed: jsonAnswer({ error: 'STOREFRONT_NOT_FOUND', message: 'gone' }, 404) },
      { pageToken: TOKEN },
    );
  });
});

describe('shopfront.shop: blocks', () => {
  test('captcha page on the storefront (HTTP 200) → blocked', async () => {
    await expectOutcome('blocked', { page: htmlAnswer(CAPTCHA_HTML) }, null, /captcha/);
  });
  test('captcha page with HTTP 503 or 404 → blocked (the captcha form is checked before the status)', async () => {
    await expectOutcome('blocked', { page: htmlAnswer(CAPTCHA_HTML, 503) });
    await expectOutcome('blocked', { page: htmlAnswer(CAPTCHA_HTML, 404) });
  });
  test('captcha form with single-quoted, entity-encoded action → blocked', async () => {
    const variant = CAPTCHA_HTML.replace('action="/errors/validateCaptcha"', "action='&#47;errors&#x2F;validateCaptcha?x=1'");
    await expectOutcome('blocked', { page: htmlAnswer(variant) });
  });
  test('captcha page on the feed endpoint (HTML with 200 or 503) → blocked', async () => {
    await expectOutcome('blocked', { page: htmlAnswer(SHOP_HTML), feed: htmlAnswer(CAPTCHA_HTML) }, { pageToken: TOKEN });
    await expectOutcome('blocked', { page: htmlAnswer(SHOP_HTML), feed: htmlAnswer(CAPTCHA_HTML, 503) }, { pageToken: TOKEN });
  });
  test('redirect followed to /ap/signin or /errors/validateCaptcha → blocked', async () => {
    const signin = '<html><head><title>shopfront Sign-In</title></head><body><form action="/ap/signin"></form></body></html>';
    await expectOutcome('blocked', { page: { ...htmlAnswer(signin), path: '/ap/signin?openid.return_to=%2Fshop%2Fmarisolcooks' } });
    await expectOutcome('blocked', { page: { ...htmlAnswer(''), status: 302, headers: { location: '/errors/validateCaptcha?r=1' } } });
    await expectOutcome(
      'blocked',
      { page: htmlAnswer(SHOP_HTML), feed: { ...htmlAnswer(signin), path: '/ap/signin' } },
      { pageToken: TOKEN },
    );
  });
  test('redirect off the platform → blocked', async () => {
    await expectOutcome('blocked', {
      page: { ...htmlAnswer(''), status: 302, offPlatformLocation: 'https://login.elsewhere.example/' },
    });
  });
});

describe('shopfront.shop: rejected tokens and wrong requests', () => {
  test('feed 400 INVALID_PAGE_TOKEN → rejected_cursor', async () => {
    await expectOutcome(
      'rejected_cursor',
      { page: htmlAnswer(SHOP_HTML), feed: jsonAnswer({ error: 'INVALID_PAGE_TOKEN', message: 'expired' }, 400) },
      { pageToken: TOKEN },
    );
  });
  test('feed 400 MISSING_PARAMETER → unrecognised (the service built a wrong request)', async () => {
    await expectOutcome(
      'unrecognised',
      { page: htmlAnswer(SHOP_HTML), feed: jsonAnswer({ error: 'MISSING_PARAMETER', message: 'pageToken' }, 400) },
      { pageToken: TOKEN },
      /MISSING_PARAMETER/,
    );
  });
  test('a position without a token → rejected_cursor, before any feed request', async () => {
    const fake = fakeUpstream({ page: htmlAnswer(SHOP_HTML) });
    await assert.rejects(extract({ params, position: { pageToken: '' } }, context(fake.upstream)), { kind: 'rejected_cursor' });
    await assert.rejects(extract({ params, position: {} }, context(fake.upstream)), { kind: 'rejected_cursor' });
    assert.ok(fake.requests.every((r) => r.kind === 'page'));
  });
});

describe('shopfront.shop: unrecognised pages', () => {
  const page = (html: string) => ({ page: htmlAnswer(html) });

  test('no sf-storefront-header block → unrecognised naming it', async () => {
    await expectOutcome('unrecognised', page(SHOP_HTML.replace(HEADER.element, '')), null, /sf-storefront-header/);
  });
  test('no sf-storefront-feed block on a first call → unrecognised naming it', async () => {
    await expectOutcome('unrecognised', page(SHOP_HTML.replace(FEED.element, '')), null, /sf-storefront-feed/);
  });
  test('a later call ignores the page batch: none, or one that is not JSON, is fine', async () => {
    for (const html of [SHOP_HTML.replace(FEED.element, ''), withJson(HEADER_JSON, '{"posts":[')]) {
      const result = await run({ page: htmlAnswer(html), feed: jsonAnswer(FEED_JSON) }, { pageToken: TOKEN });
      assert.deepEqual(result.data, expected(EXPECTED_FEED).data);
    }
  });
  test('header block that is not JSON → unrecognised', async () => {
    await expectOutcome('unrecognised', page(withJson('{"storefront":{', FEED_BATCH)), null, /sf-storefront-header.*not JSON/);
  });
  test('feed block that is not JSON → unrecognised', async () => {
    await expectOutcome('unrecognised', page(withJson(HEADER_JSON, 'posts: []')), null, /sf-storefront-feed.*not JSON/);
  });
  test('two header blocks → unrecognised', async () => {
    await expectOutcome('unrecognised', page(SHOP_HTML.replace(HEADER.element, HEADER.element + HEADER.element)), null, /2 sf-storefront-header/);
  });
  test('header without storefront or without status → unrecognised', async () => {
    await expectOutcome('unrecognised', page(withJson({ store: HEADER_JSON.storefront }, FEED_BATCH)), null, /HEADER\.storefront/);
    const header = clone(HEADER_JSON);
    delete header.storefront.status;
    await expectOutcome('unrecognised', page(withJson(header, FEED_BATCH)), null, /HEADER\.storefront\.status/);
  });

  const required: [where: 'header' | 'feed', path: string, message: RegExp][] = [
    ['header', 'storefront.handle', /HEADER\.storefront\.handle: expected a string, found nothing/],
    ['header', 'storefront.displayName', /HEADER\.storefront\.displayName: expected a string, found nothing/],
    ['header', 'storefront.storefrontId', /HEADER\.storefront\.storefrontId: expected a string, found nothing/],
    ['header', 'storefront.socialLinks.1.url', /HEADER\.storefront\.socialLinks\[1\]\.url: expected a string, found nothing/],
    ['header', 'storefront.curations.0.curationId', /HEADER\.storefront\.curations\[0\]\.curationId/],
    ['header', 'storefront.curations.1.title', /HEADER\.storefront\.curations\[1\]\.title/],
    ['header', 'storefront.curations.0.postCount', /HEADER\.storefront\.curations\[0\]\.postCount: expected an integer, found nothing/],
    ['header', 'storefront.curations.0.coverImage', /HEADER\.storefront\.curations\[0\]\.coverImage\.url/],
    ['header', 'storefront.curations.0.path', /HEADER\.storefront\.curations\[0\]\.path/],
    ['header', 'storefront.trending.2.asin', /HEADER\.storefront\.trending\[2\]\.asin/],
    ['header', 'storefront.trending.0.image', /HEADER\.storefront\.trending\[0\]\.image\.url/],
    ['header', 'storefront.trending.0.detailPageUrl', /HEADER\.storefront\.trending\[0\]\.detailPageUrl/],
    ['header', 'storefront.trending.0.price.currencyCode', /HEADER\.storefront\.trending\[0\]\.price\.currencyCode/],
    ['header', 'storefront.trending.0.price.amount', /HEADER\.storefront\.trending\[0\]\.price\.amount: expected a price amount, found nothing/],
    ['feed', 'posts', /FEED BATCH\.posts: expected an array, found nothing/],
    ['feed', 'posts.0.postId', /FEED BATCH\.posts\[0\]\.postId/],
    ['feed', 'posts.1.postType', /FEED BATCH\.posts\[1\]\.postType/],
    ['feed', 'posts.2.path', /FEED BATCH\.posts\[2\]\.path/],
    ['feed', 'posts.0.image', /FEED BATCH\.posts\[0\]\.image\.url/],
    ['feed', 'posts.0.products.1.asin', /FEED BATCH\.posts\[0\]\.products\[1\]\.asin/],
    ['feed', 'posts.0.products.0.image.url', /FEED BATCH\.posts\[0\]\.products\[0\]\.image\.url/],
    ['feed', 'posts.0.products.0.detailPageUrl', /FEED BATCH\.posts\[0\]\.products\[0\]\.detailPageUrl/],
  ];
  for (const [where, path, message] of required) {
    test(`removing ${where} ${path} → unrecognised naming it`, async () => {
      const header = clone(HEADER_JSON);
      const feed = clone(FEED_BATCH);
      const names = path.split('.');
      const last = names.pop()!;
      let target = where === 'header' ? header : feed;
      for (const name of names) target = target[name];
      delete target[last];
      await expectOutcome('unrecognised', page(withJson(header, feed)), null, message);
    });
  }

  test('wrong types are unrecognised too (heartCount as a label, productCount as a string, badges as a string)', async () => {
    const feed = clone(FEED_BATCH);
    feed.posts[0].engagement.heartCount = '2.0K';
    await expectOutcome('unrecognised', page(withJson(HEADER_JSON, feed)), null, /engagement\.heartCount: expected an integer/);
    const feed2 = clone(FEED_BATCH);
    feed2.posts[1].productCount = '2';
    await expectOutcome('unrecognised', page(withJson(HEADER_JSON, feed2)), null, /posts\[1\]\.productCount/);
    const header = clone(HEADER_JSON);
    header.storefront.badges = 'TOP_CREATOR';
    await expectOutcome('unrecognised', page(withJson(header, FEED_BATCH)), null, /badges: expected an array, found a string/);
  });

  test('feed endpoint: not JSON and not the captcha → unrecognised; JSON without posts → unrecognised', async () => {
    const later = { pageToken: TOKEN };
    await expectOutcome('unrecognised', { page: htmlAnswer(SHOP_HTML), feed: htmlAnswer('<html>hello</html>') }, later, /neither JSON/);
    await expectOutcome('unrecognised', { page: htmlAnswer(SHOP_HTML), feed: jsonAnswer({ items: [] }) }, later, /FEED BATCH\.posts/);
    await expectOutcome('unrecognised', { page: htmlAnswer(SHOP_HTML), feed: jsonAnswer('[]') }, later, /not a FEED BATCH/);
  });

  test('unexpected statuses → unrecognised naming the status', async () => {
    await expectOutcome('unrecognised', { page: htmlAnswer(SHOP_HTML, 403) }, null, /HTTP 403/);
    await expectOutcome('unrecognised', { page: htmlAnswer(SHOP_HTML), feed: jsonAnswer('{}', 500) }, { pageToken: TOKEN }, /HTTP 500/);
  });
});

describe('shopfront.shop: transient answers', () => {
  test('outcomes thrown by the upstream client pass through', async () => {
    const upstream = async () => {
      throw new UpstreamOutcome('transient', 'shopfront', 'retries exhausted');
    };
    await assert.rejects(extract({ params, position: null }, context(upstream)), { kind: 'transient' });
  });
});

// ------------------------------------------------------------------ variations

describe('shopfront.shop: variations the extractor tolerates', () => {
  const want = expected(EXPECTED_SHOP);

  async function same(html: string) {
    const result = await run({ page: htmlAnswer(html) });
    assert.deepEqual(result.data, want.data);
    assert.deepEqual(result.next, want.next);
  }

  const headerAttr = '<script type="a-state" data-a-state="{&quot;key&quot;:&quot;sf-storefront-header&quot;}">';
  const feedAttr = `<script type='a-state' data-a-state='{"key":"sf-storefront-feed"}'>`;

  test('data-a-state quoting: &#34; entities, single quotes with raw ", &quot; on the feed block', async () => {
    await same(SHOP_HTML.replace(headerAttr, '<script type="a-state" data-a-state="{&#34;key&#34;:&#34;sf-storefront-header&#34;}">'));
    await same(SHOP_HTML.replace(headerAttr, `<script type='a-state' data-a-state='{"key":"sf-storefront-header"}'>`));
    await same(SHOP_HTML.replace(feedAttr, '<script type="a-state" data-a-state="{&quot;key&quot;:&quot;sf-storefront-feed&quot;}">'));
    await same(SHOP_HTML.replace(headerAttr, '<script type=a-state data-a-state="{&#x22;key&#x22;:&#x22;sf-storefront-header&#x22;}">'));
  });

  test('attribute order, extra attributes and members, whitespace inside the tag', async () => {
    await same(
      SHOP_HTML.replace(headerAttr, '<script  data-a-state = "{&quot;name&quot;:&quot;a&amp;b&quot;, &quot;key&quot;: &quot;sf-storefront-header&quot;}"\n nonce="abc" id="h"  type="a-state" >').replace(
        feedAttr,
        `<SCRIPT data-a-state='{"key":"sf-storefront-feed","v":2}' class="x" TYPE='a-state'>`,
      ),
    );
  });

  test('extra a-state blocks before and after, and the blocks in the other order', async () => {
    const extra = (key: string) => `<script type="a-state" data-a-state='{"key":"${key}"}'>{"storefront":{"handle":"decoy"},"posts":"x"}</script>`;
    const broken = `<script type="a-state" data-a-state="not json">{</script><script type="a-state">{"x":1}</script>`;
    const reordered = SHOP_HTML.replace(HEADER.element, '§H§')
      .replace(FEED.element, () => HEADER.element)
      .replace('§H§', () => FEED.element);
    assert.ok(reordered.indexOf(FEED.element) < reordered.indexOf(HEADER.element));
    await same(reordered);
    await same(SHOP_HTML.replace('<body class="sf-storefront">', `<body class="sf-storefront">${extra('sf-analytics')}${broken}`).replace('</body>', `${extra('sf-footer')}</body>`));
    await same(SHOP_HTML.replace('</head>', () => `${FEED.element}${extra('sf-head')}</head>`).replace(FEED.element + '</div></body>', '</div></body>'));
  });

  test('any key order, JSON whitespace, unknown members everywhere', async () => {
    const header = reversedKeys(clone(HEADER_JSON));
    const feed = reversedKeys(clone(FEED_BATCH));
    for (const value of [header, feed]) {
      everyObject(value, (object) => {
        object.__unknown = { nested: [1, 'two', null] };
        object.zExtra = true;
      });
    }
    await same(withJson(JSON.stringify(header, null, 2), JSON.stringify(feed, null, '\t')));
  });

  test('\\u003c, \\/ and other JSON escapes in strings; raw entities stay undecoded inside the script', async () => {
    await same(withJson(escapedJson(HEADER_JSON, 1), escapedJson(FEED_BATCH)));
    const header = clone(HEADER_JSON);
    header.storefront.displayName = '<b>Marisol</b> &amp; “Cooks” 👩🏽‍🍳 مرحبا';
    const result = await run({ page: htmlAnswer(withJson(escapedJson(header), FEED_BATCH)) });
    assert.equal((result.data.shop as { name: string }).name, '<b>Marisol</b> &amp; “Cooks” 👩🏽‍🍳 مرحبا');
  });

  test('absent optional members take the values of the mapping table', async () => {
    const header = clone(HEADER_JSON);
    const S = header.storefront;
    S.bio = null;
    delete S.avatar;
    delete S.partnerTag;
    delete S.badges;
    delete S.commissionEligible;
    delete S.postCount;
    delete S.socialLinks;
    delete S.curations;
    delete S.trending;
    const feed = clone(FEED_BATCH);
    delete feed.posts[0].title;
    delete feed.posts[0].engagement;
    delete feed.posts[0].productCount;
    delete feed.posts[1].products;
    delete feed.posts[1].productCount;
    const result = await run({ page: htmlAnswer(withJson(header, feed)) });
    const shop = result.data.shop as Record<string, unknown>;
    assert.deepEqual(
      { ...shop },
      {
        ...want.data.shop as object,
        avatarUrl: '',
        bio: '',
        affiliateTag: '',
        isTopCreator: false,
        earnsCommissions: false,
        totalPosts: 0,
        socialLinks: [],
        curations: [],
        trending: [],
      },
    );
    const posts = result.data.posts as Record<string, unknown>[];
    assert.equal(posts[0]!.title, null);
    assert.equal(posts[0]!.heartCount, 0);
    assert.equal(posts[0]!.productCount, 3, 'absent productCount → number of products');
    assert.deepEqual(posts[1]!.products, []);
    assert.equal(posts[1]!.productCount, 0);
  });

  test('badge and price null or absent → ""; badges [] or without TOP_CREATOR; commissionEligible not exactly true', async () => {
    const header = clone(HEADER_JSON);
    delete header.storefront.trending[0].badge;
    delete header.storefront.trending[0].price;
    header.storefront.trending[1].badge = null;
    header.storefront.badges = ['RISING_STAR'];
    header.storefront.commissionEligible = 'true';
    const result = await run({ page: htmlAnswer(withJson(header, FEED_BATCH)) });
    const shop = result.data.shop as { trending: { price: string; badge: string }[]; isTopCreator: boolean; earnsCommissions: boolean };
    assert.deepEqual(shop.trending.map((t) => [t.price, t.badge]), [['', ''], ['$1,249.50', ''], ['', 'Limited time deal']]);
    assert.equal(shop.isTopCreator, false);
    assert.equal(shop.earnsCommissions, false);
  });

  test('image extra members, video members, heartCountLabel not matching heartCount, absolute URLs copied', async () => {
    const feed = clone(FEED_BATCH);
    feed.posts[0].engagement.heartCountLabel = '2K';
    feed.posts[0].image.extra = { dpr: 2 };
    feed.posts[1].video = { url: 'x.mp4', durationMs: 1 };
    feed.posts[0].products[0].detailPageUrl = 'https://www.shopfront.example/dp/B0C7KQ1ZXT?tag=marisolcooks-20&linkCode=sfp&ref_=cm_sw_sf';
    const header = clone(HEADER_JSON);
    header.storefront.curations[0].path = 'https://www.shopfront.example/shop/marisolcooks/list/3VG86HFNQ71G1';
    await same(withJson(header, feed));
  });

  test('batches: hasMore true without a token ends; an empty batch may continue; the token absent at the end', async () => {
    const cases: [batch: Record<string, unknown>, next: UpstreamPosition | null, count: number][] = [
      [{ ...FEED_BATCH, pageToken: null, hasMore: true }, null, 3],
      [{ ...FEED_BATCH, pageToken: '', hasMore: true }, null, 3],
      [{ ...FEED_BATCH, pageToken: TOKEN, hasMore: false }, null, 3],
      [{ ...FEED_BATCH, pageToken: undefined, hasMore: false }, null, 3],
      [{ ...FEED_BATCH, posts: [], pageToken: 'next+/=', hasMore: true }, { pageToken: 'next+/=' }, 0],
      [{ ...FEED_BATCH, posts: [], pageToken: null, hasMore: false }, null, 0],
    ];
    for (const [batch, next, count] of cases) {
      const result = await run({ page: htmlAnswer(withJson(HEADER_JSON, batch)) });
      assert.deepEqual(result.next, next);
      assert.equal(result.data.postCount, count);
      assert.equal((result.data.posts as unknown[]).length, count);
    }
    const feed = JSON.parse(FEED_JSON);
    const later = await run({ page: htmlAnswer(SHOP_HTML), feed: jsonAnswer({ ...feed, posts: [], hasMore: true, pageToken: 'more' }) }, { pageToken: TOKEN });
    assert.deepEqual(later.next, { pageToken: 'more' });
    assert.equal(later.data.postCount, 0);
  });

  test('any number of curations, trending products and social links, 0 included; 24 posts in a batch', async () => {
    const header = clone(HEADER_JSON);
    header.storefront.socialLinks = [];
    header.storefront.curations = Array.from({ length: 30 }, (_, i) => ({ ...HEADER_JSON.storefront.curations[0], curationId: `C${i}` }));
    header.storefront.trending = [];
    const feed = clone(FEED_BATCH);
    feed.posts = Array.from({ length: 24 }, (_, i) => ({ ...FEED_BATCH.posts[i % 3], postId: `sf1.ideas.P${i}` }));
    const result = await run({ page: htmlAnswer(withJson(header, feed)) });
    const shop = result.data.shop as { curations: { id: string }[]; socialLinks: unknown[]; trending: unknown[] };
    assert.deepEqual(shop.curations.map((c) => c.id), header.storefront.curations.map((c: { curationId: string }) => c.curationId));
    assert.deepEqual([shop.socialLinks, shop.trending], [[], []]);
    assert.equal(result.data.postCount, 24);
  });

  test('the handle is lower-cased in the request whatever the input URL', async () => {
    for (const input of ['https://www.shopfront.example/shop/MARISOLCOOKS', 'http://shopfront.example/shop/marisolCooks/photo/x?ref_=1#top']) {
      const normalised = parseShopfrontUrl(input);
      assert.ok(normalised.ok);
      const fake = fakeUpstream(first);
      await extract({ params: { url: normalised.url }, position: null }, context(fake.upstream));
      assert.equal(fake.requests[0]!.path, PAGE_PATH);
    }
  });
});

describe('shopfront price formatting', () => {
  const examples: [amount: number, code: string, formatted: string][] = [
    [24.99, 'USD', '$24.99'],
    [1249.5, 'USD', '$1,249.50'],
    [7, 'USD', '$7.00'],
    [19.9, 'CAD', 'CA$19.90'],
    [5, 'AUD', 'A$5.00'],
    [1234.5, 'MXN', 'MX$1,234.50'],
    [0.5, 'GBP', '£0.50'],
    [19.9, 'EUR', '€19.90'],
    [1299, 'INR', '₹1,299.00'],
    [1234567, 'JPY', '¥1,234,567'],
    [199, 'SEK', 'SEK 199.00'],
    [-1249.5, 'USD', '-$1,249.50'],
    [-5, 'JPY', '-¥5'],
    [0, 'USD', '$0.00'],
    [1000000.01, 'CHF', 'CHF 1,000,000.01'],
    [999, 'USD', '$999.00'],
  ];
  for (const [amount, code, formatted] of examples) {
    test(`${code} ${amount} → ${formatted}`, () => assert.equal(formatPrice(amount, code), formatted));
  }
});

describe('shopfront page scan', () => {
  /** What htmlparser2 reads from a page: the reference the direct scan must agree with. */
  function reference(html: string) {
    const page = { title: '', captcha: false, blocks: [] as { key: string | null; text: string }[] };
    let block: { key: string | null; text: string } | null = null;
    let inTitle = false;
    let titleSeen = false;
    const keyOf = (attribute: string | undefined): string | null => {
      try {
        const value: unknown = attribute === undefined ? undefined : JSON.parse(attribute);
        return typeof value === 'object' && value !== null && typeof (value as { key?: unknown }).key === 'string' ? (value as { key: string }).key : null;
      } catch {
        return null;
      }
    };
    const parser = new Parser(
      {
        onopentag(name, attributes) {
          if (name === 'script' && (attributes.type ?? '').trim().toLowerCase() === 'a-state') block = { key: keyOf(attributes['data-a-state']), text: '' };
          else if (name === 'title' && !titleSeen) inTitle = true;
          else if (name === 'form' && (attributes.action ?? '').trim().startsWith('/errors/validateCaptcha')) page.captcha = true;
        },
        ontext(text) {
          if (block !== null) block.text += text;
          else if (inTitle) page.title += text;
        },
        onclosetag(name) {
          if (name === 'script' && block !== null) {
            page.blocks.push(block);
            block = null;
          } else if (name === 'title' && inTitle) {
            inTitle = false;
            titleSeen = true;
          }
        },
      },
      { decodeEntities: true },
    );
    parser.end(html);
    return page;
  }

  test('the direct scan agrees with htmlparser2 on the fixtures and their variants', () => {
    const variants = [
      SHOP_HTML, NOT_FOUND_HTML, INACTIVE_HTML, CAPTCHA_HTML,
      // quoting, entities, case, extra attributes, whitespace in tags
      SHOP_HTML.replace('<title>', '<TITLE lang=en>').replace('</title>', '</TITLE >').replace(/data-a-state="([^"]*)"/g, (_all, value: string) => `data-a-state="${value.replaceAll('&quot;', '&#x22;')}"`),
      `<title>A &amp; B &copy; &notin &#x27;C&#39; &quot</title><script TYPE=" A-State " data-a-state='{"key":"a&amp;b"}' data-a-state='{"key":"second"}'>{"x":"&amp;"}</SCRIPT	>`,
      `<script type=a-state data-a-state={&quot;key&quot;:&quot;k&quot;}>[1]</script/><script type="a-state" data-a-state="{&#34;key&#34;:&#34;q&#34;} &notanentity; &#128;">{}</script >`,
      // what is not a block: comments, CDATA, other raw-text elements, attributes holding tags
      `<!-- <script type="a-state" data-a-state='{"key":"c"}'>{}</script> --><!--><!---><![CDATA[<script type=a-state>]]>` +
        `<div title='<script type=a-state>'><textarea><script type=a-state></script></textarea><style>a>b{}</style>` +
        `<script type="a-state" data-a-state='{"key":"real"}'>{"a":"<\\/script>"}</script><xmp><title>no</title></xmp><title>later</title>`,
      // captcha forms however written; a tag the page ends inside counts for nothing
      `<form method=get ACTION = ' /errors/validateCaptcha?x=1'></form><script type="a-state">{}</script><form action="/errors/validateCaptcha"`,
      `<FORM action="&#x2F;errors&#47;validateCaptcha"><title>shopfront</title><script type=a-state data-a-state='{"key":"open"}'>{"unterminated":`,
    ];
    for (const html of variants) assert.deepEqual(scanPage(html), reference(html), html.slice(0, 120));
  });
});
