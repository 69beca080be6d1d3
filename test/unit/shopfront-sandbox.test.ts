// The shopfront sandbox against the shopfront extractor: the handler is called directly through
// a fake upstream client that behaves like the service's (browser-like headers, redirects
// followed on the platform, 5xx and resets retried, 429 thrown), and the extractor's output is
// checked against the endpoint's data schema and the generated data.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { ExtractContext, UpstreamPosition } from '../../src/endpoints/types.ts';
import type { UpstreamRequest, UpstreamResponse } from '../../src/upstream/types.ts';
import { UpstreamOutcome, type OutcomeKind } from '../../src/upstream/outcomes.ts';
import { declared, extractorOf } from '../support/endpoints.ts';

const shopfrontShop = declared('shopfront.shop');
import { scanPage } from '../../src/platforms/shopfront/page.ts';
import type { SandboxRequest, SandboxResponse } from '../../sandbox/common.ts';
import { generatePost, generateStorefront, shopfrontSandbox } from '../../sandbox/platforms/shopfront.ts';

const addFormats = addFormatsModule.default;
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
const validate = ajv.compile(shopfrontShop.data);

const SEED = 'shopfront-test';
const extract = extractorOf('shopfront.shop');

const BROWSER = {
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
  'accept-language': 'en-US,en;q=0.9',
  'accept-encoding': 'gzip, br',
};
const PAGE_HEADERS = {
  ...BROWSER,
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
  'sec-fetch-mode': 'navigate',
  'sec-fetch-dest': 'document',
  'sec-fetch-site': 'none',
};
const API_HEADERS = {
  ...BROWSER,
  accept: 'application/json',
  'sec-fetch-mode': 'cors',
  'sec-fetch-dest': 'empty',
  'sec-fetch-site': 'same-origin',
};

// ------------------------------------------------------------------ a fake upstream client over the handler

async function call(path: string, headers: Record<string, string>, seed = SEED, attempt = 1): Promise<SandboxResponse> {
  const url = new URL(path, 'http://sandbox.invalid');
  const request: SandboxRequest = { method: 'GET', path: url.pathname, query: url.searchParams, headers, body: '' };
  return shopfrontSandbox.handle(request, { seed, attempt, slowMs: 1 });
}

const bodyOf = (response: SandboxResponse) => ('reset' in response ? '' : String(response.body));

/** Like the service's client: follows platform redirects, retries 5xx and resets, throws on 429. */
function sandboxUpstream(options: { seed?: string; headers?: (request: UpstreamRequest) => Record<string, string> } = {}) {
  const attempts = new Map<string, number>();
  const requests: string[] = [];
  const upstream = async (request: UpstreamRequest): Promise<UpstreamResponse> => {
    let path = request.path;
    const headers = options.headers?.(request) ?? { ...(request.kind === 'page' ? PAGE_HEADERS : API_HEADERS), ...request.headers };
    for (let hops = 0; hops <= 5; hops += 1) {
      let response: SandboxResponse | null = null;
      for (let retry = 0; retry < 4; retry += 1) {
        const attempt = (attempts.get(path) ?? 0) + 1;
        attempts.set(path, attempt);
        requests.push(path);
        response = await call(path, headers, options.seed ?? SEED, attempt);
        // As the client does: the request's block is looked for in answers of any status.
        const block = 'reset' in response ? null : (request.block?.({ status: response.status, headers: response.headers ?? {}, body: bodyOf(response), path }) ?? null);
        if (block !== null) throw new UpstreamOutcome('blocked', 'shopfront', block);
        if (!('reset' in response) && response.status < 500) break;
        response = null;
      }
      if (response === null || 'reset' in response) throw new UpstreamOutcome('transient', 'shopfront', `retries exhausted on ${path}`);
      if (response.status === 429) throw new UpstreamOutcome('blocked', 'shopfront', 'HTTP 429');
      const location = response.headers?.location;
      if (response.status >= 300 && response.status < 400 && location) {
        const target = new URL(location, 'https://www.shopfront.example');
        if (!['www.shopfront.example', 'shopfront.example'].includes(target.hostname)) {
          return { status: response.status, headers: response.headers ?? {}, body: '', path, offPlatformLocation: location };
        }
        path = target.pathname + target.search;
        continue;
      }
      return { status: response.status, headers: response.headers ?? {}, body: bodyOf(response), path };
    }
    throw new Error('too many redirects');
  };
  return { upstream, requests };
}

const silent = () => undefined;
const context = (upstream: ExtractContext['upstream']): ExtractContext => ({
  signal: new AbortController().signal,
  deadline: Date.now() + 30_000,
  log: { debug: silent, info: silent, warn: silent, error: silent },
  upstream,
});

const paramsOf = (handle: string) => ({ url: `https://www.shopfront.example/shop/${handle}` });

interface Post {
  id: string;
  type: string;
  title: string | null;
  heartCount: number;
  productCount: number;
  products: unknown[];
}
interface Shop {
  handle: string;
  name: string;
  storefrontId: string;
  totalPosts: number;
  bio: string;
  avatarUrl: string;
  isTopCreator: boolean;
  curations: { id: string }[];
  trending: { asin: string; price: string }[];
  socialLinks: unknown[];
}

/** Runs the extractor and checks its output against the endpoint's schema, as the core does. */
async function scrape(handle: string, position: UpstreamPosition | null = null, seed = SEED) {
  const fake = sandboxUpstream({ seed });
  const result = await extract({ params: paramsOf(handle), position }, context(fake.upstream));
  const next = result.next ?? null;
  const full = {
    ...result.data,
    paging: next ? { pageToken: 'sealed-token', hasMore: true } : { pageToken: '', hasMore: false },
    fetchedAt: new Date().toISOString(),
  };
  assert.ok(validate(full), `${handle}: ${ajv.errorsText(validate.errors)}`);
  return { shop: result.data.shop as Shop, posts: result.data.posts as Post[], postCount: result.data.postCount as number, next, requests: fake.requests };
}

async function expectOutcome(kind: OutcomeKind, handle: string, position: UpstreamPosition | null = null) {
  const fake = sandboxUpstream();
  await assert.rejects(extract({ params: paramsOf(handle), position }, context(fake.upstream)), (error: unknown) => {
    assert.ok(error instanceof UpstreamOutcome, String(error));
    assert.equal(error.kind, kind, `${handle}: ${error.message}`);
    return true;
  });
}

// ------------------------------------------------------------------ tests

describe('shopfront sandbox → extractor: first page', () => {
  const handles = ['lunacooks', 'emoji-kitchen', 'souq-noor', 'tokyo-zakka', 'mixed-bag', 'bare-shop', 'empty-shop', 'bighaul', 'batchmix', 'creator-03f5875c', 'slow-cooks'];
  for (const handle of handles) {
    test(`${handle}: valid data that reflects the generated storefront`, async () => {
      const generated = generateStorefront(SEED, handle);
      const S = generated.header;
      const { shop, posts, postCount, next } = await scrape(handle);
      assert.equal(shop.handle, handle);
      assert.equal(shop.name, S.displayName);
      assert.equal(shop.storefrontId, generated.storefrontId);
      assert.equal(shop.totalPosts, S.postCount ?? 0);
      assert.equal(shop.bio, S.bio ?? '');
      assert.deepEqual(shop.curations.map((c) => c.id), ((S.curations ?? []) as { curationId: string }[]).map((c) => c.curationId));
      assert.deepEqual(shop.trending.map((t) => t.asin), ((S.trending ?? []) as { asin: string }[]).map((t) => t.asin));
      assert.equal(postCount, posts.length);
      assert.deepEqual(
        posts.map((p) => p.id),
        posts.map((_, i) => generatePost(SEED, handle, i).postId),
      );
      assert.equal(next === null, posts.length >= generated.account.posts);
    });
  }

  test('lunacooks: a price over 1,000, a null price and a null badge, as the catalogue says', async () => {
    const { shop } = await scrape('lunacooks');
    assert.equal(shop.trending[0]!.price, '$1,249.50');
    assert.equal(shop.trending[1]!.price, '');
    assert.equal((shop.trending[2] as unknown as { badge: string }).badge, '');
  });

  test('bare-shop: absent optional fields map to the table’s empty values', async () => {
    const { shop, posts } = await scrape('bare-shop');
    assert.deepEqual(
      [shop.bio, shop.avatarUrl, shop.isTopCreator, shop.totalPosts, shop.socialLinks, shop.curations, shop.trending],
      ['', '', false, 0, [], [], []],
    );
    assert.ok(posts.length > 0);
    for (const post of posts) assert.deepEqual([post.title, post.heartCount, post.productCount, post.products], [null, 0, 0, []]);
  });

  test('Unicode survives every escaping: names equal the generated ones', async () => {
    for (const handle of ['emoji-kitchen', 'souq-noor', 'tokyo-zakka', 'mixed-bag']) {
      const { shop, posts } = await scrape(handle);
      assert.equal(shop.name, generateStorefront(SEED, handle).header.displayName);
      assert.deepEqual(
        posts.map((p) => p.title),
        posts.map((_, i) => (generatePost(SEED, handle, i).title as string | null | undefined) ?? null),
      );
    }
  });
});

describe('shopfront sandbox → extractor: pagination', () => {
  for (const handle of ['lunacooks', 'bighaul', 'batchmix', 'mixed-bag', 'bare-shop', 'souq-noor']) {
    test(`${handle}: following next yields every post exactly once, in order`, async () => {
      const total = generateStorefront(SEED, handle).account.posts;
      const seen: string[] = [];
      const sizes: number[] = [];
      let position: UpstreamPosition | null = null;
      for (let page = 0; page < 200; page += 1) {
        const result = await scrape(handle, position);
        if (page > 0) assert.deepEqual(result.requests.map((p) => p.split('?')[0]), [`/shop/${handle}`, '/shop/api/feed']);
        seen.push(...result.posts.map((p) => p.id));
        sizes.push(result.postCount);
        position = result.next;
        if (position === null) break;
      }
      assert.equal(position, null, 'the listing ends');
      assert.equal(seen.length, total);
      assert.equal(new Set(seen).size, total);
      assert.deepEqual(seen, Array.from({ length: total }, (_, i) => generatePost(SEED, handle, i).postId));
      assert.ok(sizes.every((size) => size <= 24));
      if (handle === 'bighaul') assert.equal(sizes.length, 20);
      if (handle === 'batchmix') {
        assert.ok(sizes.slice(0, -1).includes(0), 'an empty batch while more remain');
        assert.ok(new Set(sizes).size > 5, 'batch sizes vary');
      }
    });
  }
});

describe('shopfront sandbox → extractor: outcomes', () => {
  test('missing and inactive storefronts → not_found', async () => {
    for (const handle of ['nosuchcreator', 'gone-soft', 'oldkitchenfinds']) await expectOutcome('not_found', handle);
  });
  test('captcha, 429 and the sign-in redirect → blocked', async () => {
    for (const handle of ['captcha-wall', 'rate-limited', 'signin-wall']) await expectOutcome('blocked', handle);
  });
  test('captcha with 503 → blocked at the first answer, not retried', async () => {
    const fake = sandboxUpstream();
    await assert.rejects(extract({ params: paramsOf('captcha-503'), position: null }, context(fake.upstream)), (error: unknown) => {
      assert.ok(error instanceof UpstreamOutcome && error.kind === 'blocked', String(error));
      return true;
    });
    assert.equal(fake.requests.length, 1);
  });
  test('down- accounts → transient after the retries (502 UPSTREAM_BLOCKED)', async () => {
    await expectOutcome('transient', 'down-cooks');
  });
  test('flaky- accounts succeed after the retries; slow- accounts carry a delay', async () => {
    const { shop, next } = await scrape('flaky-cooks');
    assert.equal(shop.handle, 'flaky-cooks');
    assert.ok(next);
    const later = await scrape('flaky-cooks', next);
    assert.ok(later.posts.length > 0);
    const slow = await call('/shop/slow-cooks', PAGE_HEADERS);
    assert.ok(!('reset' in slow) && slow.status === 200 && slow.delayMs === 1);
  });
  test('feed-captcha: the first page works, the next one is blocked', async () => {
    const { next } = await scrape('feed-captcha');
    assert.ok(next);
    await expectOutcome('blocked', 'feed-captcha', next);
  });
  test('feed-rejects: the first page works, the next token is rejected', async () => {
    const { next } = await scrape('feed-rejects');
    assert.ok(next);
    await expectOutcome('rejected_cursor', 'feed-rejects', next);
  });
  test('a token of another storefront or a forged token → rejected_cursor', async () => {
    const { next } = await scrape('bighaul');
    assert.ok(next);
    await expectOutcome('rejected_cursor', 'lunacooks', next);
    await expectOutcome('rejected_cursor', 'lunacooks', { pageToken: 'eyJvIjozLCJzIjoiQUxMIiwidiI6MX0=' });
    const forged = Buffer.from(String(next.pageToken), 'base64');
    forged[0] = (forged[0] ?? 0) ^ 1;
    await expectOutcome('rejected_cursor', 'bighaul', { pageToken: forged.toString('base64') });
  });
  test('a token of another seed is rejected', async () => {
    const { next } = await scrape('bighaul', null, 'another-seed');
    assert.ok(next);
    await expectOutcome('rejected_cursor', 'bighaul', next);
  });
  test('requests without browser headers are answered with the captcha: the extractor reports a block', async () => {
    const bots: ((request: UpstreamRequest) => Record<string, string>)[] = [
      () => ({ ...PAGE_HEADERS, 'user-agent': 'curl/8.0' }),
      () => {
        const { 'accept-language': _dropped, ...rest } = PAGE_HEADERS;
        return rest;
      },
    ];
    for (const headers of bots) {
      const fake = sandboxUpstream({ headers });
      await assert.rejects(extract({ params: paramsOf('lunacooks'), position: null }, context(fake.upstream)), { kind: 'blocked' });
    }
  });
});

describe('shopfront sandbox: the upstream contract directly', () => {
  const feedPath = (id: string, token: string, scope = 'ALL') =>
    `/shop/api/feed?storefrontId=${encodeURIComponent(id)}&scope=${scope}&pageToken=${encodeURIComponent(token)}`;

  async function firstToken(handle: string): Promise<{ id: string; token: string }> {
    const { shop, next } = await scrape(handle);
    return { id: shop.storefrontId, token: String(next?.pageToken) };
  }

  test('feed endpoint errors: MISSING_PARAMETER, STOREFRONT_NOT_FOUND, INVALID_PAGE_TOKEN', async () => {
    const { id, token } = await firstToken('lunacooks');
    const errorOf = async (path: string) => {
      const response = await call(path, API_HEADERS);
      assert.ok(!('reset' in response));
      return [response.status, JSON.parse(String(response.body)).error];
    };
    assert.deepEqual(await errorOf(`/shop/api/feed?storefrontId=${id}&scope=ALL`), [400, 'MISSING_PARAMETER']);
    assert.deepEqual(await errorOf(`/shop/api/feed?scope=ALL&pageToken=${encodeURIComponent(token)}`), [400, 'MISSING_PARAMETER']);
    assert.deepEqual(await errorOf(feedPath('sf1.storefront.NOPENOPENOPE1', token)), [404, 'STOREFRONT_NOT_FOUND']);
    assert.deepEqual(await errorOf(feedPath(generateStorefront(SEED, 'oldkitchenfinds').storefrontId, token)), [404, 'STOREFRONT_NOT_FOUND']);
    assert.deepEqual(await errorOf(feedPath(id, 'not-a-token')), [400, 'INVALID_PAGE_TOKEN']);
    assert.deepEqual(await errorOf(feedPath(id, token, 'PHOTOS')), [400, 'INVALID_PAGE_TOKEN']);
  });

  test('query parameters in any order, unknown ones ignored, no Referer or cookies needed', async () => {
    const { id, token } = await firstToken('lunacooks');
    const a = await call(feedPath(id, token), API_HEADERS);
    const b = await call(`/shop/api/feed?x=1&pageToken=${encodeURIComponent(token)}&scope=ALL&storefrontId=${id}&ref_=y`, API_HEADERS);
    assert.ok(!('reset' in a) && !('reset' in b));
    assert.equal(a.status, 200);
    assert.equal(bodyOf(a), bodyOf(b));
  });

  test('tokens are opaque base64 with +, / or = somewhere across the large account', async () => {
    let position: UpstreamPosition | null = null;
    const tokens: string[] = [];
    do {
      const result = await scrape('bighaul', position);
      position = result.next;
      if (position) tokens.push(String(position.pageToken));
    } while (position);
    assert.ok(tokens.some((t) => /[+/]/.test(t)));
    assert.ok(tokens.every((t) => /^[A-Za-z0-9+/]+=*$/.test(t)));
  });

  test('a handle not in lower case is redirected with 301; unknown paths are 404', async () => {
    const moved = await call('/shop/LunaCooks', PAGE_HEADERS);
    assert.ok(!('reset' in moved));
    assert.equal(moved.status, 301);
    assert.equal(moved.headers?.location, '/shop/lunacooks');
    const unknown = await call('/nowhere', PAGE_HEADERS);
    assert.ok(!('reset' in unknown) && unknown.status === 404);
  });

  test('bots get the captcha on the page and on the feed endpoint', async () => {
    const { id, token } = await firstToken('lunacooks');
    for (const path of ['/shop/lunacooks', feedPath(id, token)]) {
      const response = await call(path, { ...API_HEADERS, 'user-agent': 'python-requests/2.32' });
      assert.ok(scanPage(bodyOf(response)).captcha, path);
    }
  });

  test('deterministic for a seed, different across seeds', async () => {
    const one = bodyOf(await call('/shop/mixed-bag', PAGE_HEADERS, 'a'));
    const two = bodyOf(await call('/shop/mixed-bag', PAGE_HEADERS, 'a'));
    const three = bodyOf(await call('/shop/mixed-bag', PAGE_HEADERS, 'b'));
    assert.equal(one, two);
    assert.notEqual(one, three);
  });

  test('the catalogue’s pages exercise every variations the platform allows', async () => {
    const pages = await Promise.all(
      shopfrontSandbox.catalogue.map(async (entry) => {
        const handle = new URLSearchParams(entry.query).get('url')!.split('/shop/')[1]!;
        return bodyOf(await call(`/shop/${handle}`, PAGE_HEADERS));
      }),
    );
    const features: [name: string, pattern: RegExp][] = [
      ['&quot; quoting', /data-a-state="\{&quot;key&quot;:&quot;sf-storefront-header/],
      ['&#34; quoting', /data-a-state="\{&#34;key&#34;:&#34;sf-storefront-(header|feed)/],
      ['single quotes', /data-a-state='\{"key":"sf-storefront-header/],
      ['data-a-state before type', /<script data-a-state=[^>]*sf-storefront-(header|feed)[^>]* type=/],
      ['feed block before the header block', /sf-storefront-feed[\s\S]*sf-storefront-header/],
      ['extra blocks', /sf-analytics/],
      ['\\/ escapes', /https:\\\/\\\//],
      ['ASCII-only escapes', /\\u(?!003c)[0-9a-f]{4}/],
      ['JSON whitespace', /\{\n\s+"/],
      ['unknown members', /"(__typename|refMarker|impressionId|weblab)"/],
      ['absolute URLs', /"detailPageUrl":\s*"https:(\\\/|\/)/],
      ['title null', /"title":\s*null/],
      ['badge null', /"badge":\s*null/],
      ['price null', /"price":\s*null/],
      ['video members', /"video":/],
      ['inactive', /INACTIVE_STOREFRONT/],
    ];
    for (const [name, pattern] of features) assert.ok(pages.some((page) => pattern.test(page)), name);
  });

  test('every catalogue entry names the endpoint and a query its normalise accepts', () => {
    assert.ok(shopfrontSandbox.catalogue.length >= 20);
    for (const entry of shopfrontSandbox.catalogue) {
      assert.equal(entry.endpoint, '/v1/shopfront/shop');
      assert.ok(entry.description.length > 0);
      const query = Object.fromEntries(new URLSearchParams(entry.query));
      assert.ok(shopfrontShop.normalise(query).ok, entry.query);
    }
  });
});
