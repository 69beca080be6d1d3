// The linkpage-b sandbox upstream, read by the linkpage-b extractor: the sandbox handler is
// called directly through a fake upstream client (browser headers, redirects within the platform,
// retries of 5xx and resets, 429 as a block), and the extractor's output is checked against the
// endpoint's data schema and against the data the sandbox generated.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { declared, extractorOf } from '../support/endpoints.ts';
import type { ExtractContext } from '../../src/endpoints/types.ts';
import { isUpstreamOutcome, UpstreamOutcome, type OutcomeKind } from '../../src/upstream/outcomes.ts';
import type { Upstream, UpstreamResponse } from '../../src/upstream/types.ts';
import { mapPage, pageState } from '../../src/platforms/linkpage-b/mapping.ts';

const linkpageBPage = declared('linkpage-b.page');
import {
  LINKPAGE_B_CATALOGUE,
  linkpageBNextData,
  linkpageBSandbox,
  variantOf,
} from '../../sandbox/platforms/linkpage-b.ts';
import type { SandboxResponse } from '../../sandbox/common.ts';

type Json = Record<string, unknown>;

const addFormats = addFormatsModule.default;
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
const validate = ajv.compile(linkpageBPage.data);

const SEED = 'unit-seed';
const SLOW_MS = 7;
const BROWSER: Record<string, string> = {
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
  'accept-language': 'en-US,en;q=0.9',
  'sec-fetch-mode': 'navigate',
  'sec-fetch-dest': 'document',
  'sec-fetch-site': 'none',
};
const PLATFORM_HOSTS = new Set(['linkpage-b.example', 'www.linkpage-b.example']);

const extract = extractorOf('linkpage-b.page');

interface Served {
  path: string;
  response: SandboxResponse;
}

/** Calls the sandbox handler as the server would, counting attempts per request. */
function sandboxClient(seed = SEED) {
  const attempts = new Map<string, number>();
  return async (path: string, headers: Record<string, string> = BROWSER): Promise<SandboxResponse> => {
    const url = new URL(path, 'http://sandbox.invalid');
    const key = `GET ${url.pathname}${url.search}`;
    const attempt = (attempts.get(key) ?? 0) + 1;
    attempts.set(key, attempt);
    return linkpageBSandbox.handle(
      { method: 'GET', path: url.pathname, query: url.searchParams, headers, body: '' },
      { seed, attempt, slowMs: SLOW_MS },
    );
  };
}

/** A fake of the service's upstream client, routed to the sandbox handler. */
function fakeUpstream(seed = SEED, headers = BROWSER): { upstream: Upstream; served: Served[] } {
  const call = sandboxClient(seed);
  const served: Served[] = [];
  const upstream: Upstream = async (request) => {
    assert.equal(request.kind, 'page');
    let path = request.path;
    for (let hop = 0; hop <= 5; hop += 1) {
      let response: SandboxResponse | undefined;
      for (let tries = 1; ; tries += 1) {
        response = await call(path, headers);
        served.push({ path, response });
        if ('reset' in response || response.status >= 500) {
          if (tries >= 4) throw new UpstreamOutcome('transient', 'linkpage-b', `retries exhausted for ${path}`);
          continue;
        }
        break;
      }
      if ('reset' in response) throw new Error('unreachable');
      if (response.status === 429) throw new UpstreamOutcome('blocked', 'linkpage-b', 'HTTP 429');
      const out: UpstreamResponse = { status: response.status, headers: response.headers ?? {}, body: String(response.body), path };
      const location = out.headers.location;
      if (response.status >= 300 && response.status < 400 && location) {
        const target = new URL(location, `https://linkpage-b.example${path}`);
        if (!PLATFORM_HOSTS.has(target.host)) return { ...out, offPlatformLocation: location };
        path = `${target.pathname}${target.search}`;
        continue;
      }
      return out;
    }
    throw new UpstreamOutcome('transient', 'linkpage-b', 'too many redirects');
  };
  return { upstream, served };
}

async function extractFromSandbox(username: string, seed = SEED, headers = BROWSER) {
  const { upstream, served } = fakeUpstream(seed, headers);
  const context: ExtractContext = {
    signal: new AbortController().signal,
    deadline: Date.now() + 10_000,
    log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    upstream,
  };
  const normalised = linkpageBPage.normalise({ url: `https://linkpage-b.example/${username}` });
  assert.ok(normalised.ok, username);
  try {
    const result = await extract({ params: normalised.params, position: null }, context);
    return { result, served };
  } catch (error) {
    return { error, served };
  }
}

/** Extracts a page, validates it against the endpoint's schema (with fetchedAt) and returns it. */
async function pageOf(username: string, seed = SEED): Promise<Json> {
  const { result, error } = await extractFromSandbox(username, seed);
  if (error) throw error;
  assert.equal(result?.next, null, 'no pagination');
  const data = { ...(result?.data as Json), fetchedAt: '2024-01-01T00:00:00.000Z' };
  assert.ok(validate(data), `${username}: ${ajv.errorsText(validate.errors)}`);
  return (result?.data as Json).page as Json;
}

async function assertOutcome(username: string, kind: OutcomeKind, headers = BROWSER) {
  const { error } = await extractFromSandbox(username, SEED, headers);
  assert.ok(isUpstreamOutcome(error), `${username}: expected ${kind}, got ${String(error)}`);
  assert.equal(error.kind, kind, `${username}: ${error.message}`);
}

const canonical = (username: string, seed = SEED): { pp: Json; account: Json } => {
  const data = linkpageBNextData(seed, username);
  assert.ok(data, `${username} is a page`);
  const pp = (data.props as Json).pageProps as Json;
  return { pp, account: pp.account as Json };
};

const usernameOfEntry = (query: string): string => new URL(new URLSearchParams(query).get('url') ?? '').pathname.slice(1);

/** Every shown LINK: top-level, children and pinned. */
const shownLinks = (links: Json[]): Json[] => links.flatMap((link) => [link, ...(((link.children as Json[] | null) ?? []) as Json[])]);

// ---------------------------------------------------------------- catalogue

test('catalogue: every entry names the endpoint and a valid query', () => {
  const names = new Set<string>();
  for (const entry of linkpageBSandbox.catalogue) {
    assert.equal(entry.endpoint, '/v1/linkpage-b/page');
    assert.ok(entry.description.length > 0);
    const url = new URLSearchParams(entry.query).get('url');
    assert.ok(url, entry.query);
    const normalised = linkpageBPage.normalise({ url });
    assert.ok(normalised.ok, `${entry.query} is accepted by the endpoint`);
    assert.equal(normalised.params.url, url, 'catalogue URLs are canonical');
    names.add(usernameOfEntry(entry.query));
  }
  assert.equal(names.size, linkpageBSandbox.catalogue.length, 'one entry per account');
  assert.equal(linkpageBSandbox.name, 'linkpage-b');
  assert.equal(LINKPAGE_B_CATALOGUE, linkpageBSandbox.catalogue);
});

// ---------------------------------------------------------------- pages

const PAGE_ACCOUNTS = [
  'luna.voss',
  'rui.silva',
  'emoji.studio',
  'noor.haddad',
  'sakura.kato',
  'mixed.bag',
  'bare.page',
  'after.dark',
  'adults.only',
  'variant7x',
  'slow_luna',
  'flaky_luna',
];

test('page accounts: the extractor output validates and reflects the generated data', async () => {
  for (const username of PAGE_ACCOUNTS) {
    const page = await pageOf(username);
    const { pp, account } = canonical(username);
    // The served page carries the variations; the extracted data must equal the mapping of the
    // canonical payload, and the generated values.
    const state = pageState(linkpageBNextData(SEED, username));
    assert.equal(state.kind, 'page');
    if (state.kind === 'page') {
      const want = mapPage(state.PP);
      // Colours are copied as served: a variant may serve them in lower case.
      if (variantOf(SEED, username).colours === 'lower') {
        want.theme = Object.fromEntries(
          Object.entries(want.theme as Record<string, string>).map(([key, value]) => [key, /^#[0-9A-F]{6}$/.test(value) ? value.toLowerCase() : value]),
        ) as typeof want.theme;
      }
      assert.deepEqual(page, want, username);
    }
    assert.equal(page.username, username);
    assert.equal(page.uuid, account.uuid);
    assert.equal(page.accountId, account.id);
    assert.equal(page.description, account.description || null);
    assert.equal(page.name, account.name || username);
    assert.equal(page.title, account.pageTitle || `@${username}`);
    assert.equal(page.isVerified, pp.isProfileVerified);
    assert.equal(page.createdAt, new Date(account.createdAt as number).toISOString());
    assert.deepEqual(
      (page.links as Json[]).map((link) => [link.id, link.title, link.url]),
      (pp.links as Json[]).map((link) => [link.id, link.title, link.url ?? '']),
    );
    assert.deepEqual((page.pinnedLinks as Json[]).map((link) => link.id), (pp.pinnedLinks as Json[]).map((link) => link.id));
    assert.equal(page.linkCount, (pp.links as Json[]).length);
    assert.equal(page.totalLinkCount, (account.links as Json[]).length);
    assert.equal(page.socialCount, (pp.socialLinks as Json[]).length);
    const store = page.storefront as Json;
    assert.deepEqual((store.items as Json[]).map((item) => item.id), (pp.storeProducts as Json[]).map((item) => item.id));
    assert.deepEqual((store.posts as Json[]).map((post) => post.id), (pp.storeCollections as Json[]).map((post) => post.id));
    assert.equal(store.hasCommissionProducts, (pp.storeProducts as Json[]).some((item) => item.isAffiliate === true));
    assert.deepEqual(
      Object.values(page.theme as Json).filter((value) => typeof value === 'string' && value.startsWith('#')).every((value) => /^#[0-9a-fA-F]{6}$/.test(String(value))),
      true,
    );
  }
});

test('Unicode accounts carry their scripts through', async () => {
  const page = async (username: string) => JSON.stringify(await pageOf(username));
  assert.match(await page('emoji.studio'), /\p{Extended_Pictographic}/u);
  assert.match(await page('noor.haddad'), /[\u0590-\u06ff]/);
  assert.match(await page('sakura.kato'), /[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]/);
});

test('bare page: absent optional data maps to the empty forms', async () => {
  const page = await pageOf('bare.page');
  assert.equal(page.avatarUrl, '');
  assert.equal(page.avatarType, 'NONE');
  assert.equal(page.description, null);
  assert.equal(page.title, '@bare.page');
  assert.equal(page.name, 'bare.page');
  assert.deepEqual([page.links, page.pinnedLinks, page.socialLinks], [[], [], []]);
  assert.deepEqual(page.storefront, { hasCommissionProducts: false, itemCount: 0, postCount: 0, items: [], posts: [] });
  const served = (await linkpageBSandbox.handle(
    { method: 'GET', path: '/bare.page', query: new URLSearchParams(), headers: BROWSER, body: '' },
    { seed: SEED, attempt: 1, slowMs: SLOW_MS },
  )) as { body: string };
  assert.doesNotMatch(served.body, /"(pinnedLinks|storeProducts|storeCollections|theme)"/, 'absent members are left out');
});

test('special avatars and banners', async () => {
  const rui = await pageOf('rui.silva');
  assert.equal(rui.avatarType, 'VIDEO');
  assert.match(String(rui.avatarUrl), /^https:\/\/ugc\.linkpage-b-cdn\.example\/.+\.mp4$/);
  assert.equal(rui.bannerType, 'VIDEO');
  const emoji = await pageOf('emoji.studio');
  assert.equal(emoji.avatarType, 'ANIMATED');
  assert.equal(emoji.bannerType, 'COLOR');
  assert.equal(emoji.bannerImageUrl, null);
  const luna = await pageOf('luna.voss');
  assert.equal(luna.avatarType, 'IMAGE');
  assert.equal(luna.bannerType, 'NONE');
});

test('sensitive and age-restricted pages are served with 200 and full data', async () => {
  for (const [username, warning, gating] of [
    ['after.dark', 'SENSITIVE', 'sensitive'],
    ['adults.only', 'AGE_RESTRICTED', 'age'],
  ] as const) {
    const { pp, account } = canonical(username);
    assert.equal(account.contentWarning, warning);
    assert.equal(pp.contentGating, gating);
    assert.equal(pp.hasSensitiveContent, true);
    const page = await pageOf(username);
    assert.ok((page.links as Json[]).length > 0);
  }
});

test('large page: every link, child, pinned link and product exactly once', async () => {
  const page = await pageOf('big.catalogue');
  const { pp, account } = canonical('big.catalogue');
  const shown = [...shownLinks(page.links as Json[]), ...(page.pinnedLinks as Json[])].map((link) => link.id as string);
  assert.equal(new Set(shown).size, shown.length, 'no link twice');
  const generated = [...shownLinks(pp.links as Json[]), ...(pp.pinnedLinks as Json[])].map((link) => link.id as string);
  assert.deepEqual([...shown].sort(), [...generated].sort());
  assert.equal((page.links as Json[]).length, 320);
  assert.equal((page.links as Json[]).filter((link) => link.type === 'GROUP').length, 25);
  assert.equal((page.pinnedLinks as Json[]).length, 8);
  const records = (account.links as Json[]).map((record) => String(record.id));
  assert.equal(new Set(records).size, records.length);
  assert.equal(page.totalLinkCount, shown.length + 60, 'records: shown links plus 60 hidden');
  for (const id of shown) assert.ok(records.includes(id), `record for ${id}`);
  const items = ((page.storefront as Json).items as Json[]).map((item) => item.id);
  assert.equal(items.length, 150);
  assert.equal(new Set(items).size, 150);
  assert.equal((page.storefront as Json).postCount, 40);
  assert.equal(page.socialCount, 14);
  assert.deepEqual((page.links as Json[]).map((link) => link.position), Array.from({ length: 320 }, (_, i) => i));
});

test('generated pages keep the contract rules the extractor does not re-derive', () => {
  for (const username of [...PAGE_ACCOUNTS, 'big.catalogue', ...Array.from({ length: 20 }, (_, i) => `gen${i}`)]) {
    const { pp, account } = canonical(username);
    const records = new Map((account.links as Json[]).map((record) => [record.id, record]));
    const lists = [pp.links as Json[], pp.pinnedLinks as Json[], ...(pp.links as Json[]).map((link) => (link.children as Json[] | null) ?? [])];
    for (const list of lists) assert.deepEqual(list.map((link) => link.position), list.map((_, i) => i), `${username}: sorted by position`);
    for (const link of [...shownLinks(pp.links as Json[]), ...(pp.pinnedLinks as Json[])]) {
      const order = ((link.rules as Json).gate as Json).activeOrder as string[];
      const locks = order.some((gate) => gate === 'passcode' || gate === 'payment' || gate === 'nft');
      assert.equal(link.locked, locks, `${username}: locked exactly for passcode/payment/nft`);
      if (locks) assert.equal(link.url, null);
      else assert.equal(typeof link.url, 'string');
      assert.ok(records.has(Number(link.id)), `${username}: record for ${String(link.id)}`);
    }
  }
});

// ---------------------------------------------------------------- variations

test('variations are applied deterministically across accounts and all extract', async () => {
  const names = [...PAGE_ACCOUNTS, ...Array.from({ length: 40 }, (_, i) => `sweep${i}`)];
  const seen = new Map<string, number>();
  const count = (what: string, yes: boolean) => yes && seen.set(what, (seen.get(what) ?? 0) + 1);
  const call = sandboxClient();
  for (const username of names) {
    const response = (await call(`/${username}`)) as { status: number; body: string };
    if (response.status !== 200) continue;
    const body = response.body;
    const variant = variantOf(SEED, username);
    count('slashes', body.includes('\\/'));
    count('ascii-only', /\\u00[89a-f][0-9a-f]|\\ud83/.test(body));
    count('next escapes', /\\u0026|\\u003e/.test(body));
    count('indented', /\{\n +"/.test(body));
    count('single-quoted id', body.includes(`id='__NEXT_DATA__'`));
    count('unquoted id', body.includes('id=__NEXT_DATA__>'));
    count('type first', body.includes('<script type="application/json" id="__NEXT_DATA__">'));
    count('upper-case tag', body.includes('<SCRIPT'));
    count('extra blocks', body.includes('application/ld+json'));
    count('extra members', body.includes('"experiments"'));
    count('locked null', body.includes('"locked":null') || body.includes('"locked": null'));
    count('no legacy theme', !variant.legacyTheme);
    count('no account socialLinks', !variant.accountSocialLinks);
    count('lower-case colours', variant.colours === 'lower');
    count('reordered keys', variant.keyOrder !== 'as-is');
    count('dropped nulls', variant.dropNulls);
    count('other link types', /"(MUSIC|VIDEO_EMBED|EXTENSION)"/.test(body));
    await pageOf(username);
  }
  for (const what of [
    'slashes',
    'ascii-only',
    'next escapes',
    'indented',
    'single-quoted id',
    'unquoted id',
    'type first',
    'upper-case tag',
    'extra blocks',
    'extra members',
    'locked null',
    'no legacy theme',
    'no account socialLinks',
    'lower-case colours',
    'reordered keys',
    'dropped nulls',
    'other link types',
  ]) {
    assert.ok((seen.get(what) ?? 0) > 0, `variation "${what}" is exercised`);
  }
});

test('deterministic for a seed, different for another', async () => {
  const body = async (seed: string, username: string) => ((await sandboxClient(seed)(`/${username}`)) as { body: string }).body;
  assert.equal(await body('a', 'luna.voss'), await body('a', 'luna.voss'));
  assert.equal(await body('a', 'big.catalogue'), await body('a', 'big.catalogue'));
  assert.notEqual(await body('a', 'luna.voss'), await body('b', 'luna.voss'));
  assert.deepEqual(linkpageBNextData('a', 'variant7x'), linkpageBNextData('a', 'variant7x'));
  assert.notDeepEqual(await pageOf('luna.voss', 'a'), await pageOf('luna.voss', 'b'));
});

// ---------------------------------------------------------------- outcomes

test('missing and inactive accounts are not found', async () => {
  await assertOutcome('ghost.page', 'not_found');
  await assertOutcome('ghostwriter', 'not_found');
  await assertOutcome('suspended.acct', 'not_found');
  const response = (await sandboxClient()('/ghost.page')) as { status: number; body: string };
  assert.equal(response.status, 404);
  assert.match(response.body, /<title>Page not found \| linkpage-b<\/title>/);
  assert.match(response.body, /"statusCode":404/);
});

test('blocks: 429, 403, login wall, challenge, bot user agent', async () => {
  await assertOutcome('rate.limited', 'blocked');
  await assertOutcome('edge.denied', 'blocked');
  await assertOutcome('login.wall', 'blocked');
  await assertOutcome('checkpoint.hit', 'blocked');
  await assertOutcome('luna.voss', 'blocked', { ...BROWSER, 'user-agent': 'curl/8.5.0' });
  const call = sandboxClient();
  const limited = (await call('/rate.limited')) as { status: number; headers: Record<string, string> };
  assert.equal(limited.status, 429);
  assert.ok(limited.headers['retry-after']);
  const bot = (await call('/luna.voss', { 'user-agent': 'python-requests/2.32' })) as { status: number };
  assert.equal(bot.status, 403);
  const login = (await call('/login.wall')) as { status: number; headers: Record<string, string> };
  assert.equal(login.status, 302);
  assert.equal(login.headers.location, '/login?next=%2Flogin.wall');
  const challenge = (await call('/checkpoint.hit')) as { status: number; headers: Record<string, string> };
  assert.match(challenge.headers.location ?? '', /^\/challenge/);
});

test('transient and unrecognised pages', async () => {
  await assertOutcome('down_luna', 'transient');
  // empty.body is the client's to retry: covered end to end (test/e2e/linkpage-b.test.ts).
  await assertOutcome('layout.changed', 'unrecognised');
});

test('shared faults: flaky recovers, slow is delayed', async () => {
  const { result, served } = await extractFromSandbox('flaky_luna');
  assert.ok(result);
  assert.deepEqual(
    served.map(({ response }) => ('reset' in response ? 'reset' : response.status)),
    [503, 'reset', 200],
  );
  const slow = (await sandboxClient()('/slow_luna')) as { status: number; delayMs?: number };
  assert.equal(slow.status, 200);
  assert.equal(slow.delayMs, SLOW_MS);
});

test('requests: lower-case redirect, unknown query ignored, reserved and other paths', async () => {
  const call = sandboxClient();
  const upper = (await call('/Luna.Voss?utm_source=bio')) as { status: number; headers: Record<string, string> };
  assert.ok(upper.status === 301 || upper.status === 308);
  assert.equal(upper.headers.location, '/luna.voss?utm_source=bio');
  const plain = (await call('/luna.voss')) as { body: string };
  const withQuery = (await call('/luna.voss?utm_source=bio&x=1')) as { body: string };
  assert.equal(withQuery.body, plain.body);
  assert.equal(((await call('/luna.voss/')) as { body: string }).body, plain.body);
  for (const path of ['/admin', '/_next', '/luna.voss/shop', '/a', '/bad-name']) {
    assert.equal(((await call(path)) as { status: number }).status, 404, path);
  }
  assert.equal(((await call('/login')) as { status: number }).status, 200);
  assert.equal(((await call('/challenge/js')) as { status: number }).status, 200);
  // A username that starts with "challenge" is a user page, not a challenge.
  assert.equal(((await call('/challenger')) as { status: number }).status, 200);
  assert.equal((await pageOf('challenger')).username, 'challenger');
  // Through the fake client, a mixed-case username is followed to the same page.
  const { upstream } = fakeUpstream();
  const followed = await upstream({ path: '/Luna.Voss', kind: 'page' });
  assert.equal(followed.status, 200);
  assert.equal(followed.path, '/luna.voss');
  assert.equal(followed.body, plain.body);
});
