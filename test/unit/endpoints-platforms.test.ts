// The data schemas of the snapmsg, linkpage-a, linkpage-b and shopfront endpoints against the
// contract's expected outputs, and each platform's input rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
// ajv and ajv-formats are CommonJS: under `nodenext` the class is the named export `Ajv`, and
// the format plugin is `module.exports.default` (the same import style as src/server).
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { EndpointDeclaration } from '../../src/endpoints/types.ts';
import { declared, endpointsOf } from '../support/endpoints.ts';
import { normaliseSnapmsgUsername, parseSpotlightUrl } from '../../src/platforms/snapmsg/urls.ts';
import { parseLinkpageAUrl } from '../../src/platforms/linkpage-a/urls.ts';
import { parseLinkpageBUrl } from '../../src/platforms/linkpage-b/urls.ts';
import { parseShopfrontUrl } from '../../src/platforms/shopfront/urls.ts';

const linkpageAProfile = declared('linkpage-a.profile');
const linkpageBPage = declared('linkpage-b.page');
const shopfrontShop = declared('shopfront.shop');
const snapmsgProfile = declared('snapmsg.profile');
const snapmsgSpotlightComments = declared('snapmsg.spotlight.comments');
const platformEndpoints = ['snapmsg', 'linkpage-a', 'linkpage-b', 'shopfront'].flatMap(endpointsOf);

const addFormats = addFormatsModule.default;
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);

const FIXTURES = join(fileURLToPath(new URL('.', import.meta.url)), '../fixtures/upstream');
const FETCHED_AT = '2024-01-01T00:00:00.000Z';

/** Which endpoint's data each expected fixture is, by file-name prefix. */
const FIXTURE_ENDPOINTS: [prefix: string, endpoint: EndpointDeclaration][] = [
  ['snapmsg-expected-profile', snapmsgProfile],
  ['snapmsg-expected-userinfo', snapmsgProfile],
  ['snapmsg-expected-comments-', snapmsgSpotlightComments],
  ['linkpage-a-expected-', linkpageAProfile],
  ['linkpage-b-expected-', linkpageBPage],
  ['shopfront-expected-', shopfrontShop],
];

/** Replaces every `{"$position": {...}}` by a dummy token string. */
function withDummyTokens(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withDummyTokens);
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 1 && entries[0]?.[0] === '$position') return 'dummy-sealed-token';
    return Object.fromEntries(entries.map(([key, inner]) => [key, withDummyTokens(inner)]));
  }
  return value;
}

function loadExpected(file: string): Record<string, unknown> {
  const data = withDummyTokens(JSON.parse(readFileSync(join(FIXTURES, file), 'utf8'))) as Record<string, unknown>;
  return { ...data, fetchedAt: FETCHED_AT };
}

function errorsOf(endpoint: EndpointDeclaration, data: unknown): string | null {
  const validate = ajv.compile(endpoint.data);
  if (validate(data)) return null;
  return JSON.stringify(validate.errors, null, 2);
}

const expectedFiles = readdirSync(FIXTURES).filter(
  (file) => /^(snapmsg|linkpage-a|linkpage-b|shopfront)-expected-.*\.json$/.test(file),
);

test('every expected fixture of these platforms is covered', () => {
  assert.ok(expectedFiles.length >= 9, `found only ${expectedFiles.join(', ')}`);
  for (const file of expectedFiles) {
    assert.ok(
      FIXTURE_ENDPOINTS.some(([prefix]) => file.startsWith(prefix)),
      `${file} has no endpoint in FIXTURE_ENDPOINTS`,
    );
  }
});

for (const file of expectedFiles) {
  const endpoint = FIXTURE_ENDPOINTS.find(([prefix]) => file.startsWith(prefix))?.[1];
  test(`${file} validates against ${endpoint?.id ?? '?'} data`, () => {
    assert.ok(endpoint);
    const errors = errorsOf(endpoint, loadExpected(file));
    assert.equal(errors, null, `${file}: ${errors}`);
  });
}

test('data schemas keep the properties in the order of the expected files', () => {
  const keys = (file: string) => Object.keys(loadExpected(file));
  const schemaKeys = (endpoint: EndpointDeclaration) => Object.keys(endpoint.data.properties);
  assert.deepEqual(schemaKeys(snapmsgProfile), keys('snapmsg-expected-profile.json'));
  assert.deepEqual(schemaKeys(snapmsgSpotlightComments), keys('snapmsg-expected-comments-page.json'));
  assert.deepEqual(schemaKeys(linkpageAProfile), keys('linkpage-a-expected-profile.json'));
  assert.deepEqual(schemaKeys(linkpageBPage), keys('linkpage-b-expected-page.json'));
  assert.deepEqual(schemaKeys(shopfrontShop), keys('shopfront-expected-shop.json'));
  const inner = (endpoint: EndpointDeclaration, field: string) =>
    Object.keys((endpoint.data.properties[field] as unknown as { properties: Record<string, unknown> }).properties);
  const innerExpected = (file: string, field: string) => Object.keys(loadExpected(file)[field] as object);
  assert.deepEqual(inner(snapmsgProfile, 'profile'), innerExpected('snapmsg-expected-profile.json', 'profile'));
  assert.deepEqual(inner(linkpageAProfile, 'profile'), innerExpected('linkpage-a-expected-profile.json', 'profile'));
  assert.deepEqual(inner(linkpageBPage, 'page'), innerExpected('linkpage-b-expected-page.json', 'page'));
  assert.deepEqual(inner(shopfrontShop, 'shop'), innerExpected('shopfront-expected-shop.json', 'shop'));
});

// ---- spot checks: the schemas refuse what the contract rules out

type Mutation = (data: Record<string, any>) => void; // eslint-disable-line @typescript-eslint/no-explicit-any -- fixtures are free-form JSON

function assertRefused(endpoint: EndpointDeclaration, file: string, what: string, mutate: Mutation) {
  const data = loadExpected(file);
  mutate(data);
  assert.notEqual(errorsOf(endpoint, data), null, `${file}: ${what} should fail`);
}

test('a null in a non-nullable field fails', () => {
  assertRefused(snapmsgProfile, 'snapmsg-expected-profile.json', 'null bio', (d) => (d.profile.bio = null));
  assertRefused(snapmsgProfile, 'snapmsg-expected-profile.json', 'null snap timestamp', (d) => {
    d.profile.story.snaps[0].timestamp = null;
  });
  assertRefused(snapmsgSpotlightComments, 'snapmsg-expected-comments-last-page.json', 'null paging.cursor', (d) => {
    d.paging.cursor = null;
  });
  assertRefused(linkpageAProfile, 'linkpage-a-expected-profile.json', 'null createdAt', (d) => {
    d.profile.createdAt = null;
  });
  assertRefused(linkpageBPage, 'linkpage-b-expected-page.json', 'null link url', (d) => (d.page.links[0].url = null));
  assertRefused(shopfrontShop, 'shopfront-expected-shop.json', 'null trending price', (d) => {
    d.shop.trending[0].price = null;
  });
  assertRefused(shopfrontShop, 'shopfront-expected-feed-page.json', 'null paging.pageToken', (d) => {
    d.paging.pageToken = null;
  });
  assertRefused(shopfrontShop, 'shopfront-expected-shop.json', 'missing fetchedAt', (d) => delete d.fetchedAt);
});

test('nullable fields accept null', () => {
  const data = loadExpected('snapmsg-expected-profile.json') as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- free-form JSON
  data.profile.lenses[0].updatedAt = null;
  data.profile.story = null;
  assert.equal(errorsOf(snapmsgProfile, data), null);
  const page = loadExpected('linkpage-a-expected-profile.json') as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- free-form JSON
  page.profile.followers = 1200;
  assert.equal(errorsOf(linkpageAProfile, page), null);
});

test('an unknown field in a closed object fails', () => {
  assertRefused(snapmsgProfile, 'snapmsg-expected-profile.json', 'extra profile field', (d) => (d.profile.extra = 1));
  assertRefused(snapmsgProfile, 'snapmsg-expected-profile.json', 'extra story field', (d) => (d.profile.story.extra = 1));
  assertRefused(snapmsgProfile, 'snapmsg-expected-profile.json', 'extra related-account field', (d) => {
    d.profile.relatedAccounts[0].extra = 1;
  });
  assertRefused(snapmsgSpotlightComments, 'snapmsg-expected-comments-page.json', 'extra comment field', (d) => {
    d.comments[0].extra = 1;
  });
  assertRefused(linkpageAProfile, 'linkpage-a-expected-profile.json', 'extra color field', (d) => {
    d.profile.featuredLinks[0].color.extra = 1;
  });
  assertRefused(linkpageBPage, 'linkpage-b-expected-page.json', 'extra child field', (d) => {
    d.page.links[2].children[0].extra = 1;
  });
  assertRefused(linkpageBPage, 'linkpage-b-expected-page.json', 'extra storefront item field', (d) => {
    d.page.storefront.items[0].extra = 1;
  });
  assertRefused(shopfrontShop, 'shopfront-expected-shop.json', 'extra top-level field', (d) => (d.extra = 1));
  assertRefused(shopfrontShop, 'shopfront-expected-shop.json', 'extra paging field', (d) => (d.paging.extra = 1));
});

test('integers refuse fractions; gateTypes holds strings', () => {
  assertRefused(shopfrontShop, 'shopfront-expected-shop.json', 'fractional heartCount', (d) => {
    d.posts[0].heartCount = 1.5;
  });
  assertRefused(linkpageBPage, 'linkpage-b-expected-sensitive.json', 'non-string gate', (d) => {
    d.page.links[1].gateTypes = [1];
  });
});

// ---- declarations

/** A JSON-schema keyword that TypeBox's static types do not expose. */
const schemaOption = (schema: object, keyword: string): unknown => (schema as Record<string, unknown>)[keyword];

test('the five declarations, in order, with their paging styles', () => {
  assert.deepEqual(
    platformEndpoints.map((endpoint) => [endpoint.id, endpoint.path, endpoint.platform]),
    [
      ['snapmsg.profile', '/v1/snapmsg/profile', 'snapmsg'],
      ['snapmsg.spotlight.comments', '/v1/snapmsg/spotlight/comments', 'snapmsg'],
      ['linkpage-a.profile', '/v1/linkpage-a/profile', 'linkpage-a'],
      ['linkpage-b.page', '/v1/linkpage-b/page', 'linkpage-b'],
      ['shopfront.shop', '/v1/shopfront/shop', 'shopfront'],
    ],
  );
  assert.deepEqual(snapmsgSpotlightComments.paging, { param: 'cursor', field: 'cursor', flag: 'hasMore', end: '', items: 'comments' });
  assert.deepEqual(shopfrontShop.paging, { param: 'pageToken', field: 'pageToken', flag: 'hasMore', end: '', items: 'posts' });
  assert.equal(snapmsgProfile.paging, undefined);
  for (const endpoint of platformEndpoints) {
    assert.equal(typeof endpoint.extractor, 'function');
    assert.equal(schemaOption(endpoint.query, 'additionalProperties'), false, 'a parameter it does not declare is refused');
    assert.ok(!('cache_max_age' in endpoint.query.properties));
    assert.ok('fetchedAt' in endpoint.data.properties);
    assert.equal(schemaOption(endpoint.data, 'additionalProperties'), false);
    const validateQuery = ajv.compile(endpoint.query);
    assert.ok(validateQuery(endpoint.exampleQuery), `${endpoint.id} example query`);
    assert.equal(validateQuery({ ...endpoint.exampleQuery, unknown: 'x' }), false, `${endpoint.id} refuses an undeclared parameter`);
    assert.deepEqual(endpoint.normalise(endpoint.exampleQuery).ok, true, `${endpoint.id} example normalises`);
  }
});

test('query schemas: required parameter, lengths', () => {
  const validate = (endpoint: EndpointDeclaration, query: Record<string, string>) => ajv.compile(endpoint.query)(query);
  assert.equal(validate(snapmsgProfile, {}), false);
  assert.equal(validate(snapmsgSpotlightComments, { cursor: 'abc' }), false);
  const url = snapmsgSpotlightComments.exampleQuery.url ?? '';
  assert.equal(validate(snapmsgSpotlightComments, { url, cursor: 'c'.repeat(4096) }), true);
  assert.equal(validate(snapmsgSpotlightComments, { url, cursor: 'c'.repeat(4097) }), false);
  assert.equal(validate(shopfrontShop, { url: shopfrontShop.exampleQuery.url ?? '', pageToken: 't'.repeat(4097) }), false);
  assert.equal(validate(linkpageBPage, { url: `https://linkpage-b.example/${'a'.repeat(2021)}` }), true);
  assert.equal(validate(linkpageBPage, { url: `https://linkpage-b.example/${'a'.repeat(2100)}` }), false);
});

test('normalise returns canonical params and puts refusals on the parameter', () => {
  assert.deepEqual(snapmsgProfile.normalise({ username: '@LunaVoss' }), { ok: true, params: { username: 'lunavoss' } });
  const bad = snapmsgProfile.normalise({ username: '1abc' });
  assert.equal(bad.ok, false);
  assert.equal(!bad.ok && bad.details[0]?.path, 'username');
  assert.deepEqual(
    snapmsgSpotlightComments.normalise({
      url: 'https://snapmsg.example/@lunavoss/spotlight/Qk3_vT8mZp2LwN5aYc1RdH7sJx0EuGf4KbViOq6yXn9MtW2zAeB8lC3oPr5UgA?share_id=x',
      cursor: 'abc',
    }),
    {
      ok: true,
      params: { url: 'https://www.snapmsg.example/spotlight/Qk3_vT8mZp2LwN5aYc1RdH7sJx0EuGf4KbViOq6yXn9MtW2zAeB8lC3oPr5UgA' },
    },
  );
  for (const endpoint of [snapmsgSpotlightComments, linkpageAProfile, linkpageBPage, shopfrontShop]) {
    assert.deepEqual(endpoint.normalise({ url: 'https://evil.test/x' }).ok, false);
    const result = endpoint.normalise({ url: 'https://evil.test/x' });
    assert.deepEqual(!result.ok && result.details.map((detail) => detail.path), ['url'], endpoint.id);
    const missing = endpoint.normalise({});
    assert.deepEqual(!missing.ok && missing.details, [{ path: 'url', message: 'Required' }], endpoint.id);
  }
  assert.deepEqual(shopfrontShop.normalise({ url: 'https://shopfront.example/shop/MarisolCooks', pageToken: 't' }), {
    ok: true,
    params: { url: 'https://www.shopfront.example/shop/marisolcooks' },
  });
});

// ---- input rules, platform by platform

type Parse = (input: string) => { ok: true; url: string } | { ok: false; message: string };

function accepts(parse: Parse, input: string, canonical: string) {
  const result = parse(input);
  assert.deepEqual(result.ok ? result.url : result, canonical, input);
  const again = parse(canonical);
  assert.deepEqual(again.ok ? again.url : again, canonical, `${canonical} (idempotent)`);
}

function refuses(parse: Parse, input: string) {
  const result = parse(input);
  assert.equal(result.ok, false, `${input} should be refused`);
  assert.ok(!result.ok && result.message.length > 0);
}

/** Refusals every platform shares: other hosts, look-alikes, userinfo, IPs, schemes, length. */
function refusesForeign(parse: Parse, host: string, path: string) {
  for (const input of [
    `https://evil.test${path}`,
    `https://${host}.evil.test${path}`,
    `https://evil-${host}${path}`,
    `https://evil.test#@${host}${path}`,
    `https://evil.test?@${host}${path}`,
    `https://evil.test\\@${host}${path}`,
    `https://${host}@evil.test${path}`,
    `https://user:pass@${host}${path}`,
    `https://user@${host}${path}`,
    `https://${host}:8443${path}`,
    'https://127.0.0.1/x',
    'http://10.0.0.1/x',
    'https://[::1]/x',
    'https://2130706433/x',
    `ftp://${host}${path}`,
    `javascript://${host}${path}`,
    `file://${host}${path}`,
    `//${host}${path}`,
    `${host}${path}`,
    `https://${host}${path}?q=${'a'.repeat(2048)}`,
    '',
    'not a url',
  ]) {
    refuses(parse, input);
  }
}

test('snapmsg usernames', () => {
  const ok = (input: string, expected: string) =>
    assert.deepEqual(normaliseSnapmsgUsername(input), { ok: true, username: expected }, input);
  ok('lunavoss', 'lunavoss');
  ok('@LunaVoss', 'lunavoss');
  ok('Tidepool.TV', 'tidepool.tv');
  ok('a_b-c.d', 'a_b-c.d');
  ok('abc', 'abc');
  ok('@a12345678901234', 'a12345678901234');
  for (const input of ['', '@', 'ab', '@ab', 'a123456789012345', '1abc', '_abc', '.abc', '-abc', '@@abc', 'ab c', 'abc!', 'abc@', 'ünïcode', ' lunavoss', 'luna/voss']) {
    assert.equal(normaliseSnapmsgUsername(input).ok, false, `${JSON.stringify(input)} should be refused`);
  }
});

test('snapmsg Spotlight URLs', () => {
  const id = 'Qk3_vT8mZp2LwN5aYc1RdH7sJx0EuGf4KbViOq6yXn9MtW2zAeB8lC3oPr5UgA';
  const canonical = `https://www.snapmsg.example/spotlight/${id}`;
  accepts(parseSpotlightUrl, canonical, canonical);
  accepts(parseSpotlightUrl, `http://snapmsg.example/spotlight/${id}/`, canonical);
  accepts(parseSpotlightUrl, `https://snapmsg.example/@lunavoss/spotlight/${id}`, canonical);
  accepts(parseSpotlightUrl, `https://WWW.SnapMsg.Example/@LunaVoss/spotlight/${id}/?share_id=abc&locale=en-US#top`, canonical);
  accepts(parseSpotlightUrl, `https://www.snapmsg.example/spotlight/${'a'.repeat(16)}`, `https://www.snapmsg.example/spotlight/${'a'.repeat(16)}`);
  const result = parseSpotlightUrl(`https://snapmsg.example/spotlight/${id}`);
  assert.equal(result.ok && result.spotlightId, id);
  // the id keeps its case
  const lower = parseSpotlightUrl(`https://snapmsg.example/spotlight/${id.toLowerCase()}`);
  assert.equal(lower.ok && lower.url, `https://www.snapmsg.example/spotlight/${id.toLowerCase()}`);
  for (const input of [
    'https://www.snapmsg.example/',
    'https://www.snapmsg.example/spotlight',
    'https://www.snapmsg.example/spotlight/',
    `https://www.snapmsg.example/spotlight/${'a'.repeat(15)}`,
    `https://www.snapmsg.example/spotlight/${'a'.repeat(129)}`,
    `https://www.snapmsg.example/spotlight/${id}//`,
    `https://www.snapmsg.example/spotlight/${id}/extra`,
    `https://www.snapmsg.example/spotlight/abc.def.ghi.jkl.mno`,
    `https://www.snapmsg.example/lunavoss/spotlight/${id}`,
    `https://www.snapmsg.example/@1bad/spotlight/${id}`,
    `https://www.snapmsg.example/@ab/spotlight/${id}`,
    `https://www.snapmsg.example/add/lunavoss`,
    `https://www.snapmsg.example/Spotlight/${id}`,
    `https://www.snapmsg.example//spotlight/${id}`,
    `https://www.snapmsg.example/spotlight/${id}%2Fx`,
    `https://www.snapmsg.example/spotlight/%E0%A4%A`,
  ]) {
    refuses(parseSpotlightUrl, input);
  }
  refusesForeign(parseSpotlightUrl, 'www.snapmsg.example', `/spotlight/${id}`);
  refusesForeign(parseSpotlightUrl, 'snapmsg.example', `/spotlight/${id}`);
});

test('linkpage-a profile URLs', () => {
  const canonical = 'https://linkpage-a.example/theo.marsh';
  accepts(parseLinkpageAUrl, canonical, canonical);
  accepts(parseLinkpageAUrl, 'https://www.linkpage-a.example/@Theo.Marsh', canonical);
  accepts(parseLinkpageAUrl, 'http://linkpage-a.example/theo.marsh/?utm_source=x&ref=y#links', canonical);
  accepts(parseLinkpageAUrl, 'https://LINKPAGE-A.example/THEO.MARSH', canonical);
  accepts(parseLinkpageAUrl, 'https://linkpage-a.example/9-lives_x', 'https://linkpage-a.example/9-lives_x');
  accepts(parseLinkpageAUrl, `https://linkpage-a.example/${'a'.repeat(32)}`, `https://linkpage-a.example/${'a'.repeat(32)}`);
  for (const input of [
    'https://linkpage-a.example/',
    'https://linkpage-a.example',
    'https://linkpage-a.example/a',
    `https://linkpage-a.example/${'a'.repeat(33)}`,
    'https://linkpage-a.example/.theo',
    'https://linkpage-a.example/theo marsh',
    'https://linkpage-a.example/theo.marsh//',
    'https://linkpage-a.example/theo.marsh/links',
    'https://linkpage-a.example/@@theo',
    'https://linkpage-a.example/join',
    'https://linkpage-a.example/Join',
    'https://linkpage-a.example/@join',
    'https://linkpage-a.example/qr',
    'https://linkpage-a.example/login',
    'https://linkpage-a.example/signup',
    'https://linkpage-a.example/api',
    'https://linkpage-a.example/about',
    'https://linkpage-a.example/help',
    'https://linkpage-a.example/terms',
    'https://linkpage-a.example/privacy',
    'https://linkpage-a.example/_nuxt',
    'https://linkpage-a.example/__challenge',
    'https://linkpage-a.example/%ZZ',
  ]) {
    refuses(parseLinkpageAUrl, input);
  }
  refusesForeign(parseLinkpageAUrl, 'linkpage-a.example', '/theo.marsh');
  refusesForeign(parseLinkpageAUrl, 'www.linkpage-a.example', '/theo.marsh');
});

test('linkpage-b page URLs', () => {
  const canonical = 'https://linkpage-b.example/maraquill';
  accepts(parseLinkpageBUrl, canonical, canonical);
  accepts(parseLinkpageBUrl, 'https://www.linkpage-b.example/MaraQuill/?utm_source=bio', canonical);
  accepts(parseLinkpageBUrl, 'http://linkpage-b.example/maraquill#links', canonical);
  accepts(parseLinkpageBUrl, 'https://linkpage-b.example/nightowl.ink', 'https://linkpage-b.example/nightowl.ink');
  accepts(parseLinkpageBUrl, 'https://linkpage-b.example/_a', 'https://linkpage-b.example/_a');
  for (const input of [
    'https://linkpage-b.example/',
    'https://linkpage-b.example/a',
    `https://linkpage-b.example/${'a'.repeat(31)}`,
    'https://linkpage-b.example/mara-quill',
    'https://linkpage-b.example/@maraquill',
    'https://linkpage-b.example/maraquill//',
    'https://linkpage-b.example/maraquill/shop',
    'https://linkpage-b.example/s/abc',
    'https://linkpage-b.example/admin',
    'https://linkpage-b.example/Login',
    'https://linkpage-b.example/register',
    'https://linkpage-b.example/api',
    'https://linkpage-b.example/help',
    'https://linkpage-b.example/privacy',
    'https://linkpage-b.example/terms',
    'https://linkpage-b.example/discover',
    'https://linkpage-b.example/marketplace',
    'https://linkpage-b.example/_next',
    'https://linkpage-b.example/static',
  ]) {
    refuses(parseLinkpageBUrl, input);
  }
  refusesForeign(parseLinkpageBUrl, 'linkpage-b.example', '/maraquill');
  refusesForeign(parseLinkpageBUrl, 'www.linkpage-b.example', '/maraquill');
  // the brief's look-alikes, spelled out
  refuses(parseLinkpageBUrl, 'https://linkpage-b.example.evil.test/maraquill');
  refuses(parseLinkpageBUrl, 'https://evil.test#@linkpage-b.example/maraquill');
  refuses(parseLinkpageBUrl, 'https://linkpage-b.example/' + 'a'.repeat(2100));
});

test('shopfront storefront URLs', () => {
  const canonical = 'https://www.shopfront.example/shop/marisolcooks';
  accepts(parseShopfrontUrl, canonical, canonical);
  accepts(parseShopfrontUrl, 'https://shopfront.example/shop/MarisolCooks/list/3VG86HFNQ71G1?ref_=sf_share', canonical);
  accepts(parseShopfrontUrl, 'http://www.shopfront.example/shop/marisolcooks/', canonical);
  accepts(parseShopfrontUrl, 'https://www.shopfront.example/shop/marisolcooks/photo/sf1.ideas.2X0R4QH8NZK7J#x', canonical);
  accepts(parseShopfrontUrl, 'https://www.shopfront.example/shop/creator-03f5875c', 'https://www.shopfront.example/shop/creator-03f5875c');
  const result = parseShopfrontUrl('https://shopfront.example/shop/MarisolCooks');
  assert.equal(result.ok && result.handle, 'marisolcooks');
  for (const input of [
    'https://www.shopfront.example/',
    'https://www.shopfront.example/shop',
    'https://www.shopfront.example/shop/',
    'https://www.shopfront.example/shop//marisolcooks',
    'https://www.shopfront.example/marisolcooks',
    'https://www.shopfront.example/dp/B0C7KQ1ZXT',
    'https://www.shopfront.example/shop/m',
    `https://www.shopfront.example/shop/${'a'.repeat(65)}`,
    'https://www.shopfront.example/shop/-marisol',
    'https://www.shopfront.example/shop/marisol%20cooks',
  ]) {
    refuses(parseShopfrontUrl, input);
  }
  refusesForeign(parseShopfrontUrl, 'www.shopfront.example', '/shop/marisolcooks');
  refusesForeign(parseShopfrontUrl, 'shopfront.example', '/shop/marisolcooks');
});
