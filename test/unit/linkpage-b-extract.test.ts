// The linkpage-b extractor against the contract's examples (src/platforms/linkpage-b/README.md),
// every outcome the platform's README lists, and every variations the platform allows, through a fake upstream
// that serves the fixture files and checks the request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { declared, extractorOf } from '../support/endpoints.ts';
import type { ExtractContext, ExtractResult } from '../../src/endpoints/types.ts';
import { isUpstreamOutcome, type OutcomeKind } from '../../src/upstream/outcomes.ts';
import type { UpstreamRequest, UpstreamResponse } from '../../src/upstream/types.ts';
import { findNextDataText } from '../../src/platforms/linkpage-b/page.ts';

const linkpageBPage = declared('linkpage-b.page');

const FIXTURES = join(fileURLToPath(new URL('.', import.meta.url)), '../fixtures/upstream');
const fixture = (file: string): string => readFileSync(join(FIXTURES, file), 'utf8');
const expected = (file: string): { page: Record<string, unknown> } => JSON.parse(fixture(file));

const extract = extractorOf('linkpage-b.page');
assert.ok(extract, 'linkpage-b.page extractor is exported');

type Json = Record<string, unknown>;
type Answer = Partial<UpstreamResponse> & { body?: string };

/** The canonical params the endpoint's `normalise` gives for a user-supplied URL. */
function paramsOf(url: string): Record<string, string> {
  const result = linkpageBPage.normalise({ url });
  assert.ok(result.ok, `normalise accepts ${url}`);
  return result.params;
}

interface Run {
  requests: UpstreamRequest[];
  result?: ExtractResult;
  error?: unknown;
}

/**
 * Runs the extractor against a fake upstream answering each request with the next answer of
 * `answers` (the last one repeats), and checks every request is the README's page request.
 */
async function run(answers: Answer[], url = 'https://linkpage-b.example/maraquill', deadlineMs = 5_000): Promise<Run> {
  const requests: UpstreamRequest[] = [];
  const expectedPath = new URL(paramsOf(url).url ?? '').pathname;
  const context: ExtractContext = {
    signal: new AbortController().signal,
    deadline: Date.now() + deadlineMs,
    log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    upstream: async (request) => {
      // What goes on the wire; the extractor's classify hook is checked to be there.
      const { classify, ...sent } = request;
      assert.equal(typeof classify, 'function', 'the answer is judged inside the retry loop');
      requests.push(sent);
      assert.equal(request.method ?? 'GET', 'GET');
      assert.equal(request.kind, 'page', 'a browser navigation (page headers)');
      assert.equal(request.path, expectedPath, 'GET /{lower-cased username}, no query string');
      assert.equal(request.body, undefined, 'no body');
      for (const name of Object.keys(request.headers ?? {})) assert.notEqual(name.toLowerCase(), 'cookie', 'no cookie');
      const answer = answers[Math.min(requests.length - 1, answers.length - 1)] ?? {};
      return { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body: '', path: request.path, ...answer };
    },
  };
  try {
    return { requests, result: await extract!({ params: paramsOf(url), position: null }, context) };
  } catch (error) {
    return { requests, error };
  }
}

async function extractData(body: string, url?: string): Promise<Json> {
  const outcome = await run([{ body }], url);
  if (outcome.error) throw outcome.error;
  assert.equal(outcome.requests.length, 1);
  assert.equal(outcome.result?.next ?? null, null, 'no pagination: next is null');
  return outcome.result?.data as Json;
}

async function assertOutcome(answers: Answer[], kind: OutcomeKind, mentions?: RegExp, url?: string): Promise<Run> {
  const outcome = await run(answers, url);
  assert.ok(outcome.error, `expected outcome ${kind}, got data`);
  assert.ok(isUpstreamOutcome(outcome.error), `expected an UpstreamOutcome, got ${String(outcome.error)}`);
  assert.equal(outcome.error.kind, kind, outcome.error.message);
  assert.equal(outcome.error.platform, 'linkpage-b');
  if (mentions) assert.match(outcome.error.message, mentions);
  return outcome;
}

// ---------------------------------------------------------------- fixture transformations

const PAGE_HTML = fixture('linkpage-b-page.html');
const SENSITIVE_HTML = fixture('linkpage-b-sensitive.html');
const NOT_FOUND_HTML = fixture('linkpage-b-not-found.html');
const PAGE_EXPECTED = expected('linkpage-b-expected-page.json');
const SENSITIVE_EXPECTED = expected('linkpage-b-expected-sensitive.json');

const SCRIPT = /<script id="__NEXT_DATA__" type="application\/json">([\s\S]*?)<\/script>/;

const nextDataOf = (html: string): Json => JSON.parse(findNextDataText(html) ?? 'null') as Json;

/** JSON inside a script as Next.js writes it: `<`, `>`, `&`, U+2028/9 escaped. */
const nextJson = (value: unknown, indent?: number): string =>
  JSON.stringify(value, null, indent)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');

/** The page with its `__NEXT_DATA__` replaced by `json` (raw script text). */
const withScriptText = (html: string, json: string): string => {
  assert.match(html, SCRIPT);
  return html.replace(SCRIPT, () => `<script id="__NEXT_DATA__" type="application/json">${json}</script>`);
};

/** The page with its payload edited by `edit` (a deep copy is passed). */
function edited(html: string, edit: (data: Json) => void): string {
  const data = structuredClone(nextDataOf(html));
  edit(data);
  return withScriptText(html, nextJson(data));
}

const pp = (data: Json): Json => (data.props as Json).pageProps as Json;
const account = (data: Json): Json => pp(data).account as Json;

/** Every LINK of PP.links, PP.pinnedLinks and GROUP children. */
function everyLink(data: Json): Json[] {
  const top = [...((pp(data).links as Json[]) ?? []), ...((pp(data).pinnedLinks as Json[]) ?? [])];
  return top.flatMap((link) => [link, ...(((link.children as Json[] | null) ?? []) as Json[])]);
}

/** Recursively rebuilds objects with keys in reverse order. */
function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).reverse().map(([key, inner]) => [key, reverseKeys(inner)]));
  }
  return value;
}

/** Recursively adds unknown members to every object. */
function withUnknownMembers(value: unknown, depth = 0): unknown {
  if (Array.isArray(value)) return value.map((inner) => withUnknownMembers(inner, depth + 1));
  if (value !== null && typeof value === 'object') {
    const out: Json = { __experiment: { bucket: depth, flags: ['x', null] } };
    for (const [key, inner] of Object.entries(value)) out[key] = withUnknownMembers(inner, depth + 1);
    out.zz_unknown = depth % 2 === 0 ? null : 'extra';
    return out;
  }
  return value;
}

/** Escapes every character of every string as `\uXXXX` and `/` as `\/` (valid JSON escapes). */
function escapeEverything(value: unknown): string {
  return JSON.stringify(value).replace(/"((?:[^"\\]|\\.)*)"/g, (_whole, inner: string) => {
    const decoded = JSON.parse(`"${inner}"`) as string;
    let out = '';
    for (const unit of decoded.split('').map((c) => c.charCodeAt(0))) {
      out += unit === 0x2f ? '\\/' : `\\u${unit.toString(16).padStart(4, '0')}`;
    }
    return `"${out}"`;
  });
}

const clone = <T>(value: T): T => structuredClone(value);

// ---------------------------------------------------------------- the contract's examples

test('example page: request, data and end of listing', async () => {
  const outcome = await run([{ body: PAGE_HTML }], 'https://www.linkpage-b.example/MaraQuill/?utm_source=bio');
  assert.ifError(outcome.error);
  assert.deepEqual(outcome.requests, [{ path: '/maraquill', method: 'GET', kind: 'page' }]);
  assert.deepEqual(outcome.result?.data, PAGE_EXPECTED);
  assert.equal(outcome.result?.next, null);
});

test('example sensitive page (200): normal mapping, per-link gates only', async () => {
  const outcome = await run([{ body: SENSITIVE_HTML }], 'https://linkpage-b.example/nightowl.ink');
  assert.ifError(outcome.error);
  assert.deepEqual(outcome.requests, [{ path: '/nightowl.ink', method: 'GET', kind: 'page' }]);
  assert.deepEqual(outcome.result?.data, SENSITIVE_EXPECTED);
  assert.equal(outcome.result?.next, null);
});

test('an age-restricted page is answered with its data too', async () => {
  const html = edited(SENSITIVE_HTML, (data) => {
    account(data).contentWarning = 'AGE_RESTRICTED';
    pp(data).contentGating = 'age';
  });
  assert.deepEqual(await extractData(html, 'https://linkpage-b.example/nightowl.ink'), SENSITIVE_EXPECTED);
});

test('the worked count: linkCount 5, totalLinkCount 9 from A.links only', async () => {
  const data = (await extractData(PAGE_HTML)).page as Json;
  assert.equal(data.linkCount, 5);
  assert.equal(data.totalLinkCount, 9);
  // A.links is only counted: dropping the hidden record changes the total, nothing else.
  const fewer = edited(PAGE_HTML, (d) => {
    account(d).links = (account(d).links as Json[]).filter((record) => record.id !== 90693031);
  });
  const page = (await extractData(fewer)).page as Json;
  assert.equal(page.totalLinkCount, 8);
  assert.deepEqual({ ...page, totalLinkCount: 9 }, PAGE_EXPECTED.page);
});

// ---------------------------------------------------------------- missing and inactive (7)

test('missing page: HTTP 404 is not found', async () => {
  await assertOutcome([{ status: 404, body: NOT_FOUND_HTML }], 'not_found', /linkpage-b/, 'https://linkpage-b.example/ghost.page');
  await assertOutcome([{ status: 404, body: 'Not Found' }], 'not_found');
  await assertOutcome([{ status: 404, body: PAGE_HTML }], 'not_found', undefined);
  await assertOutcome([{ status: 410, body: '' }], 'not_found');
});

test('missing page served with 200 but pageProps.statusCode 404 is not found', async () => {
  await assertOutcome([{ body: NOT_FOUND_HTML }], 'not_found', /statusCode/, 'https://linkpage-b.example/ghost.page');
});

test('an account with isActive false is not found even with 200', async () => {
  const html = edited(PAGE_HTML, (data) => {
    account(data).isActive = false;
  });
  await assertOutcome([{ body: html }], 'not_found', /isActive/);
});

// ---------------------------------------------------------------- blocks and failures (8)

test('HTTP 403 is a block, whatever the body (429 and 5xx are the upstream client\'s: test/upstream/client.test.ts)', async () => {
  await assertOutcome([{ status: 403, body: '<html><h1>Access denied</h1></html>' }], 'blocked', /403/);
  await assertOutcome([{ status: 403, body: PAGE_HTML }], 'blocked');
});

test('a redirect to /login or /challenge… is a block', async () => {
  for (const path of ['/login', '/login?next=%2Fmaraquill', '/challenge', '/challenge/js?return=%2Fmaraquill', '/challenges/x']) {
    await assertOutcome([{ status: 200, path, body: '<html><form>Log in</form></html>' }], 'blocked', /redirected/);
  }
  // A redirect the client did not follow (e.g. it ran out of hops) still names where it went.
  await assertOutcome([{ status: 302, headers: { location: '/challenge/captcha' }, body: '' }], 'blocked');
  await assertOutcome([{ status: 302, headers: { location: 'https://linkpage-b.example/login' }, body: '' }], 'blocked');
});

test('a username starting with "challenge" is a page, not a block', async () => {
  const html = edited(PAGE_HTML, (d) => {
    account(d).username = 'challenger';
  });
  const page = (await extractData(html, 'https://linkpage-b.example/challenger')).page as Json;
  assert.equal(page.username, 'challenger');
  await assertOutcome([{ path: '/challenge/js?return=%2Fchallenger', body: '<html></html>' }], 'blocked', /redirected/, 'https://linkpage-b.example/challenger');
});

test('a redirect off the platform is a block', async () => {
  await assertOutcome(
    [{ status: 302, headers: { location: 'https://sso.example/login' }, body: '', offPlatformLocation: 'https://sso.example/login' }],
    'blocked',
    /off the platform/,
  );
});

test('a redirect the client left unresolved elsewhere on the platform is unrecognised', async () => {
  await assertOutcome([{ status: 301, headers: { location: '/elsewhere' }, body: '' }], 'unrecognised', /linkpage-b.*301/);
});

test('any other status is unrecognised', async () => {
  await assertOutcome([{ status: 204, body: '' }], 'unrecognised', /HTTP 204/);
  await assertOutcome([{ status: 400, body: 'Bad Request' }], 'unrecognised', /HTTP 400/);
});

// ---------------------------------------------------------------- unrecognised pages (8)

test('a page without __NEXT_DATA__ is unrecognised, naming it', async () => {
  await assertOutcome([{ body: PAGE_HTML.replace(SCRIPT, '') }], 'unrecognised', /linkpage-b.*__NEXT_DATA__/);
  await assertOutcome([{ body: '<html><body><div id="__next">Please wait…</div></body></html>' }], 'unrecognised', /__NEXT_DATA__/);
  // Only in a comment: still missing.
  const commented = PAGE_HTML.replace(SCRIPT, (whole) => `<!-- ${whole.replace('-->', '')} -->`);
  await assertOutcome([{ body: commented }], 'unrecognised', /__NEXT_DATA__/);
  // Another id.
  await assertOutcome([{ body: PAGE_HTML.replace('id="__NEXT_DATA__"', 'id="__NEXT_DATA_X"') }], 'unrecognised', /__NEXT_DATA__/);
});

test('an unparsable __NEXT_DATA__ is unrecognised', async () => {
  await assertOutcome([{ body: withScriptText(PAGE_HTML, '{"props":{"pageProps":') }], 'unrecognised', /not valid JSON/);
  await assertOutcome([{ body: withScriptText(PAGE_HTML, '') }], 'unrecognised', /not valid JSON/);
  // HTML entities are not decoded inside the script.
  const entity = withScriptText(PAGE_HTML, nextJson(nextDataOf(PAGE_HTML)).replace(/"/g, '&quot;'));
  await assertOutcome([{ body: entity }], 'unrecognised', /not valid JSON/);
});

test('a payload lacking what the mapping needs is unrecognised, naming the missing part', async () => {
  const cases: [string, (data: Json) => void, RegExp][] = [
    ['no pageProps', (d) => delete (d.props as Json).pageProps, /props\.pageProps: expected [a-z -]+, found (nothing|null)/],
    ['no props', (d) => delete d.props, /props\.pageProps: expected [a-z -]+, found (nothing|null)/],
    ['no account', (d) => delete pp(d).account, /pageProps\.account: expected [a-z -]+, found (nothing|null)/],
    ['null account', (d) => (pp(d).account = null), /pageProps\.account: expected [a-z -]+, found (nothing|null)/],
    ['no themeV2', (d) => delete account(d).themeV2, /account\.themeV2: expected [a-z -]+, found (nothing|null)/],
    ['no PP.links', (d) => delete pp(d).links, /pageProps\.links: expected [a-z -]+, found (nothing|null)/],
    ['PP.links not an array', (d) => (pp(d).links = {}), /pageProps\.links: expected an array, found an object/],
    ['no A.links', (d) => delete account(d).links, /account\.links: expected [a-z -]+, found (nothing|null)/],
    ['no username', (d) => delete account(d).username, /account\.username: expected [a-z -]+, found (nothing|null)/],
    ['no uuid', (d) => delete account(d).uuid, /account\.uuid: expected [a-z -]+, found (nothing|null)/],
    ['string account id', (d) => (account(d).id = '17111939'), /account\.id: expected an integer, found a string/],
    ['no createdAt', (d) => delete account(d).createdAt, /account\.createdAt: expected [a-z -]+, found (nothing|null)/],
    ['no isActive', (d) => delete account(d).isActive, /account\.isActive: expected [a-z -]+, found (nothing|null)/],
    ['no socialLinksPosition', (d) => delete account(d).socialLinksPosition, /socialLinksPosition: expected [a-z -]+, found (nothing|null)/],
    ['no theme colour', (d) => delete ((account(d).themeV2 as Json).buttonStyle as Json).textStyle, /buttonStyle\.textStyle\.color: expected [a-z -]+, found (nothing|null)/],
    ['no typeface', (d) => delete (account(d).themeV2 as Json).typeface, /themeV2\.typeface\.family: expected [a-z -]+, found (nothing|null)/],
    ['link without id', (d) => delete (pp(d).links as Json[])[1]!.id, /pageProps\.links\[1\]\.id: expected [a-z -]+, found (nothing|null)/],
    ['link without type', (d) => delete (pp(d).links as Json[])[0]!.type, /pageProps\.links\[0\]\.type: expected [a-z -]+, found (nothing|null)/],
    ['link without position', (d) => delete (pp(d).links as Json[])[4]!.position, /links\[4\]\.position: expected [a-z -]+, found (nothing|null)/],
    [
      'child without id',
      (d) => delete (((pp(d).links as Json[])[2]!.children as Json[])[1] as Json).id,
      /links\[2\]\.children\[1\]\.id: expected [a-z -]+, found (nothing|null)/,
    ],
    ['pinned link without type', (d) => delete (pp(d).pinnedLinks as Json[])[0]!.type, /pinnedLinks\[0\]\.type: expected [a-z -]+, found (nothing|null)/],
    ['social link without url', (d) => delete (pp(d).socialLinks as Json[])[2]!.url, /socialLinks\[2\]\.url: expected [a-z -]+, found (nothing|null)/],
    ['product without title', (d) => delete (pp(d).storeProducts as Json[])[0]!.title, /storeProducts\[0\]\.title: expected [a-z -]+, found (nothing|null)/],
    ['collection without url', (d) => delete (pp(d).storeCollections as Json[])[0]!.url, /storeCollections\[0\]\.url: expected [a-z -]+, found (nothing|null)/],
    ['custom avatar without type', (d) => (account(d).customAvatar = { url: 'https://ugc.linkpage-b-cdn.example/a.mp4' }), /customAvatar\.type: expected [a-z -]+, found (nothing|null)/],
    ['banner without type', (d) => (account(d).profileBanner = { url: null }), /profileBanner\.type: expected [a-z -]+, found (nothing|null)/],
    ['gate key not a string', (d) => (((pp(d).links as Json[])[0]!.rules as Json).gate = { activeOrder: [1] }), /activeOrder\[0\]: expected a string, found a number/],
    [
      'grandchildren',
      (d) => ((((pp(d).links as Json[])[2]!.children as Json[])[0] as Json).children = [(pp(d).links as Json[])[0]]),
      /children\[0\]\.children: nests links/,
    ],
  ];
  for (const [what, edit, mentions] of cases) {
    const outcome = await run([{ body: edited(PAGE_HTML, edit) }]);
    assert.ok(isUpstreamOutcome(outcome.error), `${what}: expected an outcome`);
    assert.equal(outcome.error.kind, 'unrecognised', `${what}: ${outcome.error.message}`);
    assert.match(outcome.error.message, /linkpage-b/, what);
    assert.match(outcome.error.message, mentions, `${what}: ${outcome.error.message}`);
  }
});

// ---------------------------------------------------------------- variations (9)

test('variation: any key order, any JSON whitespace', async () => {
  const data = nextDataOf(PAGE_HTML);
  assert.deepEqual(await extractData(withScriptText(PAGE_HTML, nextJson(reverseKeys(data), 2))), PAGE_EXPECTED);
  // Tabs for indentation, CRLF line ends, a space before each key's colon (lines start outside strings).
  const spaced = nextJson(data, 1)
    .replace(/^( +)("(?:[^"\\]|\\.)*"):/gm, (_m, indent: string, key: string) => `${'\t'.repeat(indent.length)}${key} :  `)
    .replace(/\n/g, '\r\n');
  assert.deepEqual(await extractData(withScriptText(PAGE_HTML, `\n  ${spaced}\n`)), PAGE_EXPECTED);
});

test('variation: unknown members anywhere', async () => {
  const data = withUnknownMembers(nextDataOf(PAGE_HTML));
  assert.deepEqual(await extractData(withScriptText(PAGE_HTML, nextJson(data))), PAGE_EXPECTED);
  const sensitive = withUnknownMembers(nextDataOf(SENSITIVE_HTML));
  assert.deepEqual(
    await extractData(withScriptText(SENSITIVE_HTML, nextJson(sensitive, 2)), 'https://linkpage-b.example/nightowl.ink'),
    SENSITIVE_EXPECTED,
  );
});

test('variation: Next.js escapes and any other valid JSON escape in any string', async () => {
  const data = nextDataOf(PAGE_HTML);
  assert.deepEqual(await extractData(withScriptText(PAGE_HTML, escapeEverything(data))), PAGE_EXPECTED);
  // Raw (unescaped) `&`, `>` and non-ASCII are valid too; `<` never appears raw.
  assert.deepEqual(await extractData(withScriptText(PAGE_HTML, JSON.stringify(data).replace(/</g, '\\u003c'))), PAGE_EXPECTED);
  // U+2028 / U+2029 and `</script>` inside strings, escaped as Next.js does.
  const tricky = edited(PAGE_HTML, (d) => {
    account(d).description = 'line\u2028sep\u2029 </script><script>alert(1)</script> & <b>';
  });
  const page = (await extractData(tricky)).page as Json;
  assert.equal(page.description, 'line\u2028sep\u2029 </script><script>alert(1)</script> & <b>');
});

test('variation: attribute order, quoting, case and extra attributes on the script; other blocks around it', async () => {
  const json = findNextDataText(PAGE_HTML) ?? '';
  const scripts = [
    `<script type="application/json" id="__NEXT_DATA__">${json}</script>`,
    `<script id='__NEXT_DATA__' type='application/json' crossorigin="anonymous" nonce="r4nd0m">${json}</script>`,
    `<SCRIPT\n  data-nscript="beforeInteractive"\n  ID=__NEXT_DATA__\n  TYPE=application/json\n>${json}</SCRIPT>`,
    `<script nonce="a&amp;b" id = "__NEXT_DATA__" >${json}</script >`,
  ];
  const decoys =
    '<script type="application/ld+json">{"@context":"https://schema.org","@type":"Person","name":"Decoy"}</script>' +
    '<!-- <script id="__NEXT_DATA__" type="application/json">{"props":{}}</script> -->' +
    '<script>window.__NEXT_DATA__ = {"props":{}};</script>' +
    '<script id="__NEXT_DATA__X" type="application/json">{"props":{}}</script>';
  for (const script of scripts) {
    const moved = PAGE_HTML.replace(SCRIPT, '').replace('<div id="__next">', `${decoys}<div id="__next">`).replace('</body>', `${script}<script src="/_next/static/chunks/main.js" async></script></body>`);
    assert.deepEqual(await extractData(moved), PAGE_EXPECTED, script.slice(0, 60));
  }
  // In <head>, before everything else.
  const inHead = PAGE_HTML.replace(SCRIPT, '').replace('<head>', `<head>${scripts[1]}`);
  assert.deepEqual(await extractData(inHead), PAGE_EXPECTED);
});

test('variation: markup around the script is read as an HTML tokenizer reads it', async () => {
  const json = findNextDataText(PAGE_HTML) ?? '';
  const decoy = '<script id="__NEXT_DATA__" type="application/json">{"props":{}}</script>';
  const before = [
    `<div title='${decoy}' data-x="a>b">text</div>`, // inside attribute values, a `>` included
    `<textarea>${decoy}</textarea><title>${decoy}</TITLE >`, // raw text elements hold no tags
    `<style>p::before{content:"${decoy}"}</style><script>var s = '<script id="__NEXT_DATA__">{}';</script >`,
    `<![CDATA[ ${decoy} ]]><!--> <p>after an empty comment</p><!-- ${decoy} --!><?php ${decoy.slice(0, 20)} ?>`,
    `<p>1 < 2 and </p>< script id="__NEXT_DATA__">{"props":{}}`, // a `<` that starts no tag is text
  ];
  const scripts = [
    `<script id="&#95;_NEXT_DATA__" type="application/json">${json}</script>`, // entities in attribute values are decoded
    `<script/id="__NEXT_DATA__"/type=application/json>${json}</script\t>`,
    `<script id="__NEXT_DATA__" title='a > b'>${json}</SCRIPT/>`,
  ];
  for (const markup of before) {
    for (const script of scripts) {
      const html = PAGE_HTML.replace(SCRIPT, '').replace('<div id="__next">', `${markup}<div id="__next">`).replace('</body>', `${script}</body>`);
      assert.equal(findNextDataText(html), json, `${markup.slice(0, 40)} / ${script.slice(0, 40)}`);
      assert.deepEqual(await extractData(html), PAGE_EXPECTED);
    }
  }
  // The first __NEXT_DATA__ script counts; a script the page does not close runs to its end.
  assert.equal(findNextDataText(`<script id="__NEXT_DATA__">{"a":1}</script><script id="__NEXT_DATA__">{"a":2}</script>`), '{"a":1}');
  assert.equal(findNextDataText(`<p><script id="__NEXT_DATA__">{"a":1}`), '{"a":1}');
  assert.equal(findNextDataText(`<p><script id="__NEXT_DATA__" type="application/json"`), null);
});

test('variation: A.links in any order, A.theme and A.socialLinks absent', async () => {
  const html = edited(PAGE_HTML, (d) => {
    const records = account(d).links as Json[];
    account(d).links = [...records.slice(4), ...records.slice(0, 4)].reverse();
    delete account(d).theme;
    delete account(d).socialLinks;
  });
  assert.deepEqual(await extractData(html), PAGE_EXPECTED);
});

test('variation: optional link members absent or null, locked null or false', async () => {
  const nulls = edited(PAGE_HTML, (d) => {
    for (const link of everyLink(d)) {
      for (const key of ['children', 'metadata', 'thumbnail', 'layoutOption', 'marketplaceAffiliate']) {
        if (link[key] === null) delete link[key];
      }
      if (link.locked === null) link.locked = false;
      // No gate at all: `rules` absent reads as an empty activeOrder.
      const gate = (link.rules as Json).gate as Json;
      if ((gate.activeOrder as unknown[]).length === 0) delete link.rules;
    }
  });
  assert.deepEqual(await extractData(nulls), PAGE_EXPECTED);
  const explicitNulls = edited(SENSITIVE_HTML, (d) => {
    for (const link of everyLink(d)) {
      link.locked = null;
      link.children = null;
    }
  });
  assert.deepEqual(await extractData(explicitNulls, 'https://linkpage-b.example/nightowl.ink'), SENSITIVE_EXPECTED);
});

test('variation: pinnedLinks, storeProducts, storeCollections and socialLinks absent mean []', async () => {
  const html = edited(PAGE_HTML, (d) => {
    for (const key of ['pinnedLinks', 'storeProducts', 'storeCollections', 'socialLinks']) delete pp(d)[key];
  });
  const want = clone(PAGE_EXPECTED);
  Object.assign(want.page, {
    pinnedLinks: [],
    socialLinks: [],
    socialCount: 0,
    storefront: { hasCommissionProducts: true, itemCount: 0, postCount: 0, items: [], posts: [] },
  });
  assert.deepEqual(await extractData(html), want);
  const nulls = edited(PAGE_HTML, (d) => {
    for (const key of ['pinnedLinks', 'storeProducts', 'storeCollections', 'socialLinks']) pp(d)[key] = null;
  });
  assert.deepEqual(await extractData(nulls), want);
});

test('variation: other link types copied; numeric link ids become strings', async () => {
  const html = edited(PAGE_HTML, (d) => {
    const links = pp(d).links as Json[];
    links[0]!.type = 'MUSIC';
    links[4]!.type = 'VIDEO_EMBED';
    (links[2]!.children as Json[])[0]!.type = 'EXTENSION';
    links[1]!.id = 90693024;
    (pp(d).pinnedLinks as Json[])[0]!.id = 90693030;
  });
  const want = clone(PAGE_EXPECTED);
  const links = want.page.links as Json[];
  links[0]!.type = 'MUSIC';
  links[4]!.type = 'VIDEO_EMBED';
  (links[2]!.children as Json[])[0]!.type = 'EXTENSION';
  assert.deepEqual(await extractData(html), want);
});

test('variation: any number of links, social links and store entries (0 included)', async () => {
  const none = edited(PAGE_HTML, (d) => {
    pp(d).links = [];
    pp(d).pinnedLinks = [];
    pp(d).socialLinks = [];
    pp(d).storeProducts = [];
    pp(d).storeCollections = [];
    account(d).links = [];
  });
  const page = (await extractData(none)).page as Json;
  assert.deepEqual(page.links, []);
  assert.deepEqual(page.pinnedLinks, []);
  assert.deepEqual(page.socialLinks, []);
  assert.deepEqual([page.linkCount, page.totalLinkCount, page.socialCount], [0, 0, 0]);
  assert.deepEqual(page.storefront, { hasCommissionProducts: true, itemCount: 0, postCount: 0, items: [], posts: [] });

  const many = edited(PAGE_HTML, (d) => {
    const template = (pp(d).links as Json[])[0]!;
    pp(d).links = Array.from({ length: 250 }, (_, i) => ({ ...template, id: String(1000 + i), position: i, title: `Link ${i}` }));
    account(d).links = Array.from({ length: 260 }, (_, i) => ({ id: 1000 + i }));
    const product = (pp(d).storeProducts as Json[])[0]!;
    pp(d).storeProducts = Array.from({ length: 120 }, (_, i) => ({ ...product, id: `prd_${i}` }));
    const social = (pp(d).socialLinks as Json[])[0]!;
    pp(d).socialLinks = Array.from({ length: 15 }, (_, i) => ({ ...social, position: i }));
  });
  const big = (await extractData(many)).page as Json;
  assert.equal((big.links as Json[]).length, 250);
  assert.deepEqual((big.links as Json[]).map((link) => link.id), Array.from({ length: 250 }, (_, i) => String(1000 + i)));
  assert.deepEqual([big.linkCount, big.totalLinkCount, big.socialCount], [250, 260, 15]);
  assert.equal((big.storefront as Json).itemCount, 120);
});

test('variation: colour strings in either case are copied unchanged', async () => {
  const html = edited(PAGE_HTML, (d) => {
    const theme = account(d).themeV2 as Json;
    (theme.background as Json).color = '#1b1f3b';
    ((theme.buttonStyle as Json).backgroundStyle as Json).color = '#f5c842';
    (theme.typeface as Json).color = '#ffFFff';
  });
  const theme = ((await extractData(html)).page as Json).theme as Json;
  assert.equal(theme.backgroundColor, '#1b1f3b');
  assert.equal(theme.buttonColor, '#f5c842');
  assert.equal(theme.fontColor, '#ffFFff');
  assert.equal(theme.buttonTextColor, '#1B1F3B');
});

// ---------------------------------------------------------------- mapping details (5)

test('mapping: custom avatar, banner, avatar shape, title and name fallbacks', async () => {
  const html = edited(PAGE_HTML, (d) => {
    const a = account(d);
    a.customAvatar = { type: 'VIDEO', url: 'https://ugc.linkpage-b-cdn.example/maraquill/avatar/loop.mp4' };
    a.profileBanner = { type: 'COLOR', url: null };
    delete a.avatarMode;
    a.pageTitle = '';
    a.name = null;
    a.description = '';
    pp(d).isProfileVerified = 'true';
    pp(d).storeHasAffiliateProducts = 1;
    delete pp(d).metaTitle;
    pp(d).metaDescription = null;
  });
  const page = (await extractData(html)).page as Json;
  assert.equal(page.avatarUrl, 'https://ugc.linkpage-b-cdn.example/maraquill/avatar/loop.mp4');
  assert.equal(page.avatarType, 'VIDEO');
  assert.equal(page.avatarShape, 'CIRCLE_SMALL');
  assert.equal(page.bannerType, 'COLOR');
  assert.equal(page.bannerImageUrl, null);
  assert.equal(page.title, '@maraquill');
  assert.equal(page.name, 'maraquill');
  assert.equal(page.description, null);
  assert.equal(page.isVerified, false, 'true only for JSON true');
  assert.equal((page.storefront as Json).hasCommissionProducts, false, 'true only for JSON true');
  assert.equal(page.metaTitle, '');
  assert.equal(page.metaDescription, '');

  // A custom avatar without a URL falls back to the profile picture, keeping its type.
  const animated = edited(PAGE_HTML, (d) => {
    account(d).customAvatar = { type: 'ANIMATED', url: null };
  });
  const second = (await extractData(animated)).page as Json;
  assert.equal(second.avatarType, 'ANIMATED');
  assert.equal(second.avatarUrl, PAGE_EXPECTED.page.avatarUrl);

  // No picture at all.
  const bare = edited(PAGE_HTML, (d) => {
    account(d).profilePictureUrl = '';
  });
  const third = (await extractData(bare)).page as Json;
  assert.equal(third.avatarType, 'NONE');
  assert.equal(third.avatarUrl, '');
});

test('mapping: link layout, gates, affiliate, metadata and GROUP children', async () => {
  const html = edited(PAGE_HTML, (d) => {
    const links = pp(d).links as Json[];
    links[0]!.layoutOption = 'CAROUSEL';
    links[0]!.rules = { gate: { activeOrder: ['age', 'sensitiveContent'], age: { minimumAge: 18 } } };
    links[1]!.metadata = { title: '', description: 'd' };
    links[4]!.marketplaceAffiliate = {};
    links[2]!.children = [];
    links[3]!.thumbnail = '';
    links[3]!.title = null;
  });
  const links = ((await extractData(html)).page as Json).links as Json[];
  assert.equal(links[0]!.layout, 'CAROUSEL');
  assert.deepEqual(links[0]!.gateTypes, ['age', 'sensitiveContent']);
  assert.deepEqual(links[1]!.meta, { title: '', description: 'd', image: null });
  assert.equal(links[4]!.amazonAffiliate, true);
  assert.deepEqual(links[2]!.children, []);
  assert.equal(links[3]!.thumbnailUrl, null);
  assert.equal(links[3]!.title, '');
  assert.equal(links[3]!.url, '', 'withheld URL');
  assert.equal(links[3]!.locked, true);
});

test('the data validates against the endpoint schema', async () => {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormatsModule.default(ajv);
  const validate = ajv.compile(linkpageBPage.data);
  for (const [html, url] of [
    [PAGE_HTML, undefined],
    [SENSITIVE_HTML, 'https://linkpage-b.example/nightowl.ink'],
  ] as const) {
    const data = { ...(await extractData(html, url)), fetchedAt: '2024-01-01T00:00:00.000Z' };
    assert.ok(validate(data), JSON.stringify(validate.errors));
  }
});

test('the same position-less request every time (no pagination)', async () => {
  const first = await run([{ body: PAGE_HTML }]);
  const second = await run([{ body: PAGE_HTML }], 'http://linkpage-b.example/MARAQUILL#links');
  assert.deepEqual(first.requests, second.requests);
  assert.deepEqual(first.result, second.result);
});
