// The snapmsg extractors against the contract's examples (src/platforms/snapmsg/README.md), every
// outcome the platform's README lists, and every variations the platform allows, through a fake
// upstream that serves the fixture files and checks each request the README fixes.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExtractContext, ExtractResult, UpstreamPosition } from '../../src/endpoints/types.ts';
import { extractorOf } from '../support/endpoints.ts';
import { UpstreamOutcome, type OutcomeKind } from '../../src/upstream/outcomes.ts';
import type { UpstreamRequest, UpstreamResponse } from '../../src/upstream/types.ts';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'upstream');
const fixture = (name: string): string => readFileSync(join(FIXTURES, name), 'utf8');
const fixtureJson = <T = Record<string, unknown>>(name: string): T => JSON.parse(fixture(name)) as T;

const profileExtractor = extractorOf('snapmsg.profile');
const commentsExtractor = extractorOf('snapmsg.spotlight.comments');

const SPOTLIGHT_ID = 'Qk3_vT8mZp2LwN5aYc1RdH7sJx0EuGf4KbViOq6yXn9MtW2zAeB8lC3oPr5UgA';
const SPOTLIGHT_URL = `https://www.snapmsg.example/spotlight/${SPOTLIGHT_ID}`;
const CONTEXT_ID = 'c3BvdGxpZ2h0LWNvbW1lbnRzOlFrM192VDhtWnAyTHdONWFZYzFSZEg3c0p4MEV1R2Y0';
const NEXT_CURSOR = 'Y21udDoyOjE3MzEwMDYwMDAwMDA';

// ------------------------------------------------------------------ fake upstream

/** One expected request and the answer it gets. */
interface Exchange {
  expect: { method: 'GET' | 'POST'; path: string; kind: 'page' | 'api'; body?: unknown };
  respond: Partial<UpstreamResponse> & { status: number };
}

const profilePage = (username = 'lunavoss') => ({ method: 'GET', path: `/add/${username}`, kind: 'page' }) as const;
const spotlightPage = (id = SPOTLIGHT_ID) => ({ method: 'GET', path: `/spotlight/${id}`, kind: 'page' }) as const;
const commentsPost = (cursor = '', contextId = CONTEXT_ID) =>
  ({ method: 'POST', path: '/api/spotlight/comments', kind: 'api', body: { contextId, cursor, count: 20 } }) as const;

const htmlAnswer = (body: string, status = 200) => ({
  status,
  body,
  headers: { 'content-type': 'text/html; charset=utf-8' },
});
const jsonAnswer = (value: unknown, status = 200) => ({
  status,
  body: typeof value === 'string' ? value : JSON.stringify(value),
  headers: { 'content-type': 'application/json; charset=utf-8' },
});

/** Serves `exchanges` in order, asserting each request as the README fixes it. */
function fakeUpstream(exchanges: Exchange[]) {
  const calls: UpstreamRequest[] = [];
  const upstream = async (request: UpstreamRequest): Promise<UpstreamResponse> => {
    calls.push(request);
    const exchange = exchanges[calls.length - 1];
    assert.ok(exchange, `unexpected upstream request #${calls.length}: ${request.method} ${request.path}`);
    const { expect } = exchange;
    assert.equal(request.method ?? 'GET', expect.method, 'method');
    assert.equal(request.path, expect.path, 'path');
    assert.equal(request.kind, expect.kind, 'kind');
    if (expect.method === 'POST') {
      assert.equal(request.headers?.['content-type'], 'application/json', 'Content-Type: application/json is required');
      assert.deepEqual(JSON.parse(request.body ?? ''), expect.body, 'request body');
    } else {
      assert.equal(request.body, undefined, 'a page request has no body');
    }
    return { headers: {}, body: '', path: expect.path, ...exchange.respond };
  };
  return { upstream, calls };
}

const silent = () => undefined;

async function run(
  extractor: typeof profileExtractor,
  params: Record<string, string>,
  position: UpstreamPosition | null,
  exchanges: Exchange[],
): Promise<ExtractResult> {
  const fake = fakeUpstream(exchanges);
  const context: ExtractContext = {
    signal: new AbortController().signal,
    deadline: Date.now() + 10_000,
    log: { debug: silent, info: silent, warn: silent, error: silent },
    upstream: fake.upstream,
  };
  const result = await extractor({ params, position }, context);
  assert.equal(fake.calls.length, exchanges.length, 'every expected upstream request was made, and no other');
  return result;
}

const runProfile = (exchanges: Exchange[], username = 'lunavoss') => run(profileExtractor, { username }, null, exchanges);
const runComments = (exchanges: Exchange[], position: UpstreamPosition | null = null, url = SPOTLIGHT_URL) =>
  run(commentsExtractor, { url }, position, exchanges);

/** Asserts that `promise` ends in an `UpstreamOutcome` of `kind` whose message matches every pattern. */
async function assertOutcome(promise: Promise<unknown>, kind: OutcomeKind, ...patterns: RegExp[]): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof UpstreamOutcome, `expected an UpstreamOutcome, got ${String(error)}`);
    assert.equal(error.kind, kind, `outcome kind (message: ${error.message})`);
    assert.equal(error.platform, 'snapmsg');
    assert.match(error.message, /snapmsg/);
    for (const pattern of patterns) assert.match(error.message, pattern);
    return true;
  });
}

// ------------------------------------------------------------------ fixture transforms

const NEXT_DATA = /(<script id="__NEXT_DATA__" type="application\/json">)([\s\S]*?)(<\/script>)/;

/** The `__NEXT_DATA__` object of a fixture page. */
function nextDataOf(html: string): Record<string, unknown> {
  const match = NEXT_DATA.exec(html);
  assert.ok(match?.[2]);
  return JSON.parse(match[2]) as Record<string, unknown>;
}

interface JsonStyle {
  pretty?: boolean;
  slashes?: boolean;
  asciiOnly?: boolean;
}

/** JSON as Next.js writes it into a script (`<`, `>`, `&`, U+2028/9 escaped), plus optional variations. */
function scriptJson(value: unknown, style: JsonStyle = {}): string {
  let out = JSON.stringify(value, null, style.pretty ? 2 : undefined)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
  if (style.slashes) out = out.replace(/\//g, '\\/');
  if (style.asciiOnly) out = out.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return out;
}

/** Rewrites a fixture page's `__NEXT_DATA__` (as an object) and its serialisation. */
function withNextData(
  html: string,
  change: (data: Record<string, unknown>) => void,
  style: JsonStyle = {},
  openTag = '<script id="__NEXT_DATA__" type="application/json">',
): string {
  const data = nextDataOf(html);
  change(data);
  return html.replace(NEXT_DATA, () => `${openTag}${scriptJson(data, style)}</script>`);
}

/** Follows a dotted path (array indexes allowed) to an object inside `root`. */
function at(root: unknown, path: string): Record<string, unknown> {
  let node = root;
  for (const key of path.split('.')) node = (node as Record<string, unknown>)[key];
  assert.ok(node && typeof node === 'object', `no object at ${path}`);
  return node as Record<string, unknown>;
}

const pageProps = (data: Record<string, unknown>) => at(data, 'props.pageProps');
const publicInfo = (data: Record<string, unknown>) => at(data, 'props.pageProps.userProfile.publicProfileInfo');

/** Every object in `value` with its keys in reverse order. */
function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).reverse().map(([key, inner]) => [key, reverseKeys(inner)]));
  }
  return value;
}

/** Every object in `value` with unknown members added. */
function addUnknownMembers(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(addUnknownMembers);
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).map(([key, inner]) => [key, addUnknownMembers(inner)]);
    return Object.fromEntries([['zzUnknownFlag', true], ...entries, ['experimentIds', ['x1', 'x2']], ['extra', { nested: 1 }]]);
  }
  return value;
}

/** Replaces every object's members by the result of `change`, in place, recursively. */
function everyObject(value: unknown, change: (node: Record<string, unknown>) => void): void {
  if (Array.isArray(value)) value.forEach((item) => everyObject(item, change));
  else if (value !== null && typeof value === 'object') {
    change(value as Record<string, unknown>);
    Object.values(value).forEach((inner) => everyObject(inner, change));
  }
}

/** Replaces the JSON-LD block(s) of the profile fixture. */
function withJsonLd(html: string, blocks: string[]): string {
  return html.replace(/<script type="application\/ld\+json">[\s\S]*?<\/script>/, blocks.join(''));
}

const ldScript = (value: unknown, attributes = 'type="application/ld+json"') =>
  `<script ${attributes}>${JSON.stringify(value).replace(/</g, '\\u003c')}</script>`;

// ------------------------------------------------------------------ expected outputs

const PROFILE_HTML = fixture('snapmsg-profile.html');
const USERINFO_HTML = fixture('snapmsg-userinfo.html');
const NOT_FOUND_HTML = fixture('snapmsg-not-found.html');
const SPOTLIGHT_HTML = fixture('snapmsg-spotlight.html');
const COMMENTS_PAGE = fixtureJson('snapmsg-comments-page.json');
const COMMENTS_LAST_PAGE = fixtureJson('snapmsg-comments-last-page.json');

/** Splits an expected-data fixture into what the extractor returns: `data` less paging, and `next`. */
function expectedResult(name: string): { data: Record<string, unknown>; next: UpstreamPosition | null } {
  const { paging, ...data } = fixtureJson(name);
  const cursor = (paging as { cursor?: unknown } | undefined)?.cursor;
  const next = cursor && typeof cursor === 'object' ? (cursor as { $position: UpstreamPosition }).$position : null;
  return { data, next };
}

const EXPECTED_PROFILE = fixtureJson<{ profile: Record<string, unknown> }>('snapmsg-expected-profile.json');
const expectedProfile = (change: (profile: Record<string, unknown>) => void = () => undefined) => {
  const copy = structuredClone(EXPECTED_PROFILE);
  change(copy.profile);
  return { data: copy, next: null };
};

async function profileOf(html: string, username = 'lunavoss'): Promise<ExtractResult> {
  return runProfile([{ expect: profilePage(username), respond: htmlAnswer(html) }], username);
}

// ================================================================== snapmsg.profile

describe('snapmsg.profile: contract examples', () => {
  test('public profile (snapmsg-profile.html) gives snapmsg-expected-profile.json', async () => {
    const result = await profileOf(PROFILE_HTML);
    assert.deepEqual(result, expectedResult('snapmsg-expected-profile.json'));
  });

  test('account without a public profile (userInfo) gives snapmsg-expected-userinfo.json', async () => {
    const result = await profileOf(USERINFO_HTML, 'kitewise');
    assert.deepEqual(result, expectedResult('snapmsg-expected-userinfo.json'));
  });

  test('the username is requested lower-cased', async () => {
    const result = await run(profileExtractor, { username: 'LunaVoss' }, null, [
      { expect: profilePage('lunavoss'), respond: htmlAnswer(PROFILE_HTML) },
    ]);
    assert.equal((result.data.profile as { username: string }).username, 'lunavoss');
  });
});

describe('snapmsg.profile: outcomes', () => {
  test('HTTP 404 Next.js error page is not found', async () => {
    await assertOutcome(runProfile([{ expect: profilePage('nosuchuser1'), respond: htmlAnswer(NOT_FOUND_HTML, 404) }], 'nosuchuser1'), 'not_found');
  });

  test('HTTP 404 decides, whatever the body', async () => {
    await assertOutcome(runProfile([{ expect: profilePage(), respond: htmlAnswer('', 404) }]), 'not_found');
    await assertOutcome(runProfile([{ expect: profilePage(), respond: htmlAnswer('<html>gone</html>', 404) }]), 'not_found');
  });

  test('a 200 page whose page is /_error, or whose statusCode is 404, is not found', async () => {
    await assertOutcome(profileOf(NOT_FOUND_HTML), 'not_found');
    const statusOnly = withNextData(PROFILE_HTML, (data) => {
      pageProps(data).statusCode = 404;
    });
    await assertOutcome(profileOf(statusOnly), 'not_found');
  });

  // 429 and 5xx are the upstream client's to classify (test/upstream/client.test.ts).
  test('blocks: 403, a redirect to /accounts/login or /challenge, an off-platform redirect', async () => {
    await assertOutcome(runProfile([{ expect: profilePage(), respond: htmlAnswer('<h1>Request blocked</h1>', 403) }]), 'blocked', /403/);
    await assertOutcome(
      runProfile([{ expect: profilePage(), respond: { ...htmlAnswer('<html>log in</html>'), path: '/accounts/login?next=%2Fadd%2Flunavoss' } }]),
      'blocked',
      /accounts\/login/,
    );
    await assertOutcome(runProfile([{ expect: profilePage(), respond: { ...htmlAnswer('<html>prove</html>'), path: '/challenge/?c=1' } }]), 'blocked', /challenge/);
    await assertOutcome(
      runProfile([{ expect: profilePage(), respond: { status: 302, offPlatformLocation: 'https://captcha.elsewhere.example/c' } }]),
      'blocked',
      /off the platform/,
    );
  });

  test('unrecognised pages name snapmsg and what is missing', async () => {
    const cases: [string, string, RegExp][] = [
      ['no __NEXT_DATA__', PROFILE_HTML.replace('id="__NEXT_DATA__"', 'id="__NEXT_STATE__"'), /no __NEXT_DATA__/],
      ['captcha-like page', '<!DOCTYPE html><html><body><form>Are you human?</form></body></html>', /no __NEXT_DATA__/],
      ['unparsable __NEXT_DATA__', PROFILE_HTML.replace('{"props":{"pageProps"', '{"props":{pageProps'), /__NEXT_DATA__: expected an object, found nothing/],
      ['userProfile missing', withNextData(PROFILE_HTML, (d) => delete pageProps(d).userProfile), /userProfile: expected an object, found nothing/],
      ['userProfile null', withNextData(PROFILE_HTML, (d) => (pageProps(d).userProfile = null)), /userProfile: expected an object, found null/],
      ['unknown $case', withNextData(PROFILE_HTML, (d) => (at(d, 'props.pageProps.userProfile').$case = 'businessInfo')), /\$case: "businessInfo" is not a known profile kind/],
      ['$case missing', withNextData(PROFILE_HTML, (d) => delete at(d, 'props.pageProps.userProfile').$case), /\$case: expected a string, found nothing/],
      ['publicProfileInfo missing', withNextData(PROFILE_HTML, (d) => delete at(d, 'props.pageProps.userProfile').publicProfileInfo), /publicProfileInfo: expected an object, found nothing/],
      ['username missing', withNextData(PROFILE_HTML, (d) => delete publicInfo(d).username), /publicProfileInfo\.username: expected a non-empty string, found nothing/],
      ['canonical URL missing', withNextData(PROFILE_HTML, (d) => delete at(d, 'props.pageProps.pageLinks').canonicalUrl), /pageLinks\.canonicalUrl: expected a non-empty string, found nothing/],
      ['pageProps missing', withNextData(PROFILE_HTML, (d) => delete at(d, 'props').pageProps), /props\.pageProps: expected an object, found nothing/],
      ['snap media URL missing', withNextData(PROFILE_HTML, (d) => delete at(d, 'props.pageProps.story.snapList.1.snapUrls').mediaUrl), /story\.snapList\[1\]\.snapUrls\.mediaUrl: expected a non-empty string, found nothing/],
      ['snap time missing', withNextData(PROFILE_HTML, (d) => delete at(d, 'props.pageProps.curatedHighlights.0.snapList.0').timestampInSec), /curatedHighlights\[0\]\.snapList\[0\]\.timestampInSec\.value: expected int64 epoch seconds, found nothing/],
      ['highlight id missing', withNextData(PROFILE_HTML, (d) => delete at(d, 'props.pageProps.curatedHighlights.1').highlightId), /curatedHighlights\[1\]\.storyId\.value: expected a non-empty string, found nothing/],
      ['lens id missing', withNextData(PROFILE_HTML, (d) => delete at(d, 'props.pageProps.lenses.1').lensId), /lenses\[1\]\.lensId: expected a non-empty string, found nothing/],
      ['related username missing', withNextData(PROFILE_HTML, (d) => delete at(publicInfo(d), 'relatedAccountsInfo.0.publicProfileInfo').username), /relatedAccountsInfo\[0\]\.publicProfileInfo\.username: expected a non-empty string, found nothing/],
      ['int64 not a number', withNextData(PROFILE_HTML, (d) => (publicInfo(d).subscriberCount = '2.7M')), /subscriberCount: expected an int64 decimal string, found a string/],
      ['list not a list', withNextData(PROFILE_HTML, (d) => (pageProps(d).lenses = { lensId: 'x' })), /lenses: expected an array, found an object/],
      ['userInfo without username', withNextData(USERINFO_HTML, (d) => delete at(d, 'props.pageProps.userProfile.userInfo').username), /userInfo\.username: expected a non-empty string, found nothing/],
    ];
    for (const [name, html, pattern] of cases) {
      await assertOutcome(profileOf(html), 'unrecognised', pattern).catch((error: unknown) => {
        throw new Error(`${name}: ${String(error)}`);
      });
    }
  });

  test('a status other than 200, 404, 403, 429 and 5xx is unrecognised', async () => {
    await assertOutcome(runProfile([{ expect: profilePage(), respond: htmlAnswer('gone', 410) }]), 'unrecognised', /HTTP 410/);
    await assertOutcome(runProfile([{ expect: profilePage(), respond: { status: 310 } }]), 'unrecognised', /HTTP 310/);
  });
});

describe('snapmsg.profile: variations the platform allows', () => {
  test('script attribute order, quoting, case and extra attributes; other scripts around it', async () => {
    const tags = [
      '<script type="application/json" nonce="r4nd0m" id="__NEXT_DATA__" crossorigin="anonymous">',
      "<script id='__NEXT_DATA__' type='application/json'>",
      '<SCRIPT ID=__NEXT_DATA__ TYPE=application/json data-note="a > b">',
      '<script\n  crossorigin\n  id = "__NEXT_DATA__"\n  type="application/json"\n>',
    ];
    for (const tag of tags) {
      const html = withNextData(PROFILE_HTML, () => undefined, {}, tag)
        .replace('<body>', '<body><script id="__NEXT_I18N__" type="application/json">{"locale":"en-US"}</script><!-- <script id="__NEXT_DATA__">{}</script> -->')
        .replace('</body>', '<script type="application/json" id="__NEXT_FLAGS__">{"props":0}</script></body>');
      assert.deepEqual(await profileOf(html), expectedProfile(), tag);
    }
  });

  test('pretty-printed, reversed key order, \\/ and \\uXXXX escapes everywhere', async () => {
    const styles: JsonStyle[] = [{ pretty: true }, { slashes: true }, { asciiOnly: true }, { pretty: true, slashes: true, asciiOnly: true }];
    for (const style of styles) {
      const html = withNextData(PROFILE_HTML, (data) => Object.assign(data, reverseKeys(structuredClone(data))), style);
      assert.deepEqual(await profileOf(html), expectedProfile(), JSON.stringify(style));
    }
  });

  test('unknown members anywhere in __NEXT_DATA__ and JSON-LD', async () => {
    const html = withJsonLd(
      withNextData(PROFILE_HTML, (data) => Object.assign(data, addUnknownMembers(structuredClone(data)))),
      [
        ldScript(
          addUnknownMembers({
            '@context': 'https://schema.org',
            '@type': 'ProfilePage',
            mainEntity: { '@type': 'Person', sameAs: ['https://lunavoss.example/studio', 'https://www.socialnet.example/lunavoss.art'] },
          }),
        ),
      ],
    );
    // unknown members inside wrappers and lists are tolerated; `experimentIds` etc. are ignored
    assert.deepEqual(await profileOf(html), expectedProfile());
  });

  test('defaults omitted: every proto3 default and optional wrapper left out', async () => {
    const html = withNextData(PROFILE_HTML, (data) => {
      everyObject(data, (node) => {
        for (const [key, value] of Object.entries(node)) {
          if (value === false || value === 0 || value === '0' || value === '' || (Array.isArray(value) && value.length === 0)) delete node[key];
        }
      });
      const P = publicInfo(data);
      for (const key of ['websiteUrl', 'squareHeroImageUrl', 'primaryColor', 'publisherType', 'avatar3d', 'categoryStringId', 'subcategoryStringId', 'bio', 'address', 'businessProfileId', 'hostUserId', 'creationTimestampMs', 'lastUpdateTimestampMs', 'relatedAccountsInfo', 'snapcodeImageUrl']) {
        delete P[key];
      }
      delete at(data, 'props.pageProps.linkPreview').ogImage;
      for (const key of ['curatedHighlights', 'spotlightHighlights', 'lenses', 'story']) delete pageProps(data)[key];
    });
    const result = await profileOf(withJsonLd(html, []));
    assert.deepEqual(
      result,
      expectedProfile((p) =>
        Object.assign(p, {
          bio: '',
          address: '',
          websiteUrl: null,
          snapcodeImageUrl: 'https://app.snapmsg.example/web/deeplink/snapcode?username=lunavoss&type=SVG&avatar=enable',
          squareHeroImageUrl: null,
          isOfficial: false,
          category: null,
          subcategory: null,
          publisherType: null,
          primaryColor: null,
          createdAt: null,
          updatedAt: null,
          businessProfileId: '',
          hostUserId: '',
          bitmoji3dUrl: null,
          previewImageUrl: '',
          relatedAccounts: [],
          sameAsLinks: [],
          story: null,
          lenses: [],
          curatedHighlights: [],
          spotlightHighlights: [],
          counts: { lenses: 0, curatedHighlights: 0, spotlightHighlights: 0 },
        }),
      ),
    );
  });

  test('defaults written out and empty lists given as [] / null', async () => {
    const html = withNextData(PROFILE_HTML, (data) => {
      everyObject(data, (node) => {
        if ('snapUrls' in node) {
          node.snapIndex ??= 0;
          node.snapMediaType ??= 0;
        }
        if ('lensId' in node) node.isOfficialLens ??= false;
      });
      const related = at(publicInfo(data), 'relatedAccountsInfo.1.publicProfileInfo');
      related.badge = 0;
      related.profilePictureUrl = '';
      publicInfo(data).isOfficial = false;
      at(data, 'props.pageProps.curatedHighlights.1').snapList = [{ ...at(data, 'props.pageProps.curatedHighlights.1.snapList.0'), snapLocation: null }];
    });
    assert.deepEqual(await profileOf(html), expectedProfile());

    const empty = withNextData(PROFILE_HTML, (data) => {
      Object.assign(pageProps(data), { curatedHighlights: [], spotlightHighlights: null, lenses: [], story: null });
      publicInfo(data).relatedAccountsInfo = [];
    });
    const emptied = (p: Record<string, unknown>) =>
      Object.assign(p, {
        relatedAccounts: [],
        story: null,
        lenses: [],
        curatedHighlights: [],
        spotlightHighlights: [],
        counts: { lenses: 0, curatedHighlights: 0, spotlightHighlights: 0 },
      });
    assert.deepEqual(await profileOf(empty), expectedProfile(emptied));

    const emptyStory = withNextData(PROFILE_HTML, (data) => (at(data, 'props.pageProps.story').snapList = []));
    assert.deepEqual(await profileOf(emptyStory), expectedProfile((p) => (p.story = null)));
  });

  test('int64 values written as JSON numbers', async () => {
    const html = withNextData(PROFILE_HTML, (data) => {
      everyObject(data, (node) => {
        for (const key of ['subscriberCount', 'creationTimestampMs', 'lastUpdateTimestampMs', 'lastUpdatedTimestampMs']) {
          if (typeof node[key] === 'string') node[key] = Number(node[key]);
        }
        const time = node.timestampInSec as { value?: unknown } | undefined;
        if (time && typeof time.value === 'string') time.value = Number(time.value);
      });
    });
    assert.deepEqual(await profileOf(html), expectedProfile());
  });

  test('any number of lenses, highlights, snaps and related accounts', async () => {
    const html = withNextData(PROFILE_HTML, (data) => {
      const PP = pageProps(data);
      const lenses = PP.lenses as Record<string, unknown>[];
      PP.lenses = Array.from({ length: 60 }, (_, i) => ({ ...lenses[i % 2], lensId: `lens${i}` }));
      const story = at(data, 'props.pageProps.story');
      const snaps = story.snapList as Record<string, unknown>[];
      story.snapList = Array.from({ length: 40 }, (_, i) => ({ ...snaps[1], snapIndex: i }));
      const related = publicInfo(data).relatedAccountsInfo as unknown[];
      publicInfo(data).relatedAccountsInfo = Array.from({ length: 25 }, (_, i) => related[i % 2]);
    });
    const { data } = await profileOf(html);
    const profile = data.profile as { lenses: { id: string }[]; story: { snapCount: number; snaps: { index: number }[] }; relatedAccounts: unknown[]; counts: { lenses: number } };
    assert.equal(profile.lenses.length, 60);
    assert.equal(profile.counts.lenses, 60);
    assert.equal(profile.lenses[59]?.id, 'lens59');
    assert.equal(profile.story.snapCount, 40);
    assert.deepEqual(profile.story.snaps.map((s) => s.index), Array.from({ length: 40 }, (_, i) => i));
    assert.equal(profile.relatedAccounts.length, 25);
  });

  test('JSON-LD: array, @graph, extra blocks of other types, a broken block, sameAs as one string, none at all', async () => {
    const links = ['https://lunavoss.example/studio', 'https://www.socialnet.example/lunavoss.art'];
    const page = { '@context': 'https://schema.org', '@type': 'ProfilePage', mainEntity: { '@type': 'Person', sameAs: links } };
    const other = { '@context': 'https://schema.org', '@type': 'BreadcrumbList', mainEntity: { sameAs: ['https://wrong.example/'] } };
    const variants: [string, string[], string[]][] = [
      ['array', [ldScript([other, page])], links],
      ['@graph', [ldScript({ '@context': 'https://schema.org', '@graph': [other, page] })], links],
      ['extra blocks first', [ldScript(other), '<script type="application/ld+json">{not json</script>', ldScript(page, 'data-x="1" type="application/ld+json; charset=utf-8"')], links],
      ['single string', [ldScript({ ...page, mainEntity: { sameAs: 'https://lunavoss.example/studio' } })], ['https://lunavoss.example/studio']],
      ['no sameAs', [ldScript({ ...page, mainEntity: { '@type': 'Person' } })], []],
      ['@type array', [ldScript({ ...page, '@type': ['WebPage', 'ProfilePage'] })], links],
      ['first ProfilePage wins', [ldScript(page), ldScript({ ...page, mainEntity: { sameAs: ['https://second.example/'] } })], links],
      ['none', [], []],
    ];
    for (const [name, blocks, expected] of variants) {
      const result = await profileOf(withJsonLd(PROFILE_HTML, blocks));
      assert.deepEqual(result, expectedProfile((p) => (p.sameAsLinks = expected)), name);
    }
  });

  test('JSON-LD and __NEXT_DATA__ are found as an HTML tokenizer finds them', async () => {
    const links = ['https://lunavoss.example/studio'];
    const page = { '@context': 'https://schema.org', '@type': 'ProfilePage', mainEntity: { '@type': 'Person', sameAs: links } };
    const wrong = { ...page, mainEntity: { sameAs: ['https://wrong.example/'] } };
    const hidden = [
      `<!-- ${ldScript(wrong)} -->`,
      `<div data-ld='${ldScript(wrong)}'></div>`,
      `<textarea>${ldScript(wrong)}</textarea>`,
      `<script>document.write('${ldScript(wrong).replace(/<\//g, '<\\/')}')</script>`,
      `<![CDATA[${ldScript(wrong)}]]>`,
    ].join('');
    const found = [
      ldScript(page, 'type="application&#47;ld+json"'), // entities in attribute values are decoded
      ldScript(page, 'TYPE=" Application/LD+JSON "'),
      `<noscript>${ldScript(page)}</noscript>`, // not a raw-text element
    ];
    for (const block of found) {
      const result = await profileOf(withJsonLd(PROFILE_HTML, [hidden, block]));
      assert.deepEqual(result, expectedProfile((p) => (p.sameAsLinks = links)), block.slice(0, 50));
    }
    // A __NEXT_DATA__ decoy in a comment, an attribute or a raw-text element before the real one.
    const decoys = '<!-- <script id="__NEXT_DATA__">{}</script> --><p title=\'<script id="__NEXT_DATA__">{}</script>\'></p><title><script id="__NEXT_DATA__">{}</script></title>';
    assert.deepEqual(await profileOf(PROFILE_HTML.replace('<body>', `<body>${decoys}`)), expectedProfile());
  });

  test('category ids without the versioned prefix are copied whole', async () => {
    const html = withNextData(PROFILE_HTML, (data) => {
      publicInfo(data).categoryStringId = 'music';
      publicInfo(data).subcategoryStringId = 'public-profile-subcategory-v12-dj';
    });
    assert.deepEqual(await profileOf(html), expectedProfile((p) => Object.assign(p, { category: 'music', subcategory: 'dj' })));
  });

  test('userInfo without avatar or display name; snapcode from pageLinks', async () => {
    const html = withNextData(USERINFO_HTML, (data) => {
      at(data, 'props.pageProps.userProfile').userInfo = { username: 'kitewise' };
    });
    const expected = expectedResult('snapmsg-expected-userinfo.json');
    Object.assign(expected.data.profile as object, { displayName: '', bitmoji3dUrl: null });
    assert.deepEqual(await profileOf(html, 'kitewise'), expected);
  });
});

// ================================================================== snapmsg.spotlight.comments

const firstCall = (page = SPOTLIGHT_HTML, comments: unknown = COMMENTS_PAGE): Exchange[] => [
  { expect: spotlightPage(), respond: htmlAnswer(page) },
  { expect: commentsPost(), respond: jsonAnswer(comments) },
];

const POSITION = { contextId: CONTEXT_ID, cursor: NEXT_CURSOR };

/** The expected comment of the first page, as data. */
const EXPECTED_FIRST = expectedResult('snapmsg-expected-comments-page.json');
const EXPECTED_LAST = expectedResult('snapmsg-expected-comments-last-page.json');

/** Runs one first-page call with a transformed comments response. */
const commentsOf = (comments: unknown) => runComments(firstCall(SPOTLIGHT_HTML, comments));

describe('snapmsg.spotlight.comments: contract examples', () => {
  test('first call: Spotlight page, then the first comments page (snapmsg-expected-comments-page.json)', async () => {
    const result = await runComments(firstCall());
    assert.deepEqual(result, EXPECTED_FIRST);
    assert.deepEqual(result.next, { contextId: CONTEXT_ID, cursor: NEXT_CURSOR });
  });

  test('the long URL form requests the short Spotlight path', async () => {
    const result = await runComments(firstCall(), null, `https://snapmsg.example/@lunavoss/spotlight/${SPOTLIGHT_ID}/?share_id=x`);
    assert.deepEqual(result, EXPECTED_FIRST);
  });

  test('second call: the position alone gives exactly the comments request of 5.5 (snapmsg-expected-comments-last-page.json)', async () => {
    const result = await runComments([{ expect: commentsPost(NEXT_CURSOR), respond: jsonAnswer(COMMENTS_LAST_PAGE) }], EXPECTED_FIRST.next);
    assert.deepEqual(result, EXPECTED_LAST);
    assert.equal(result.next, null);
  });
});

describe('snapmsg.spotlight.comments: outcomes', () => {
  test('Spotlight page 404, a 200 error page, a page without the requested story: not found', async () => {
    const missing = NOT_FOUND_HTML.replace('{"username":"nosuchuser1"}', `{"spotlightId":"${SPOTLIGHT_ID}"}`);
    await assertOutcome(runComments([{ expect: spotlightPage(), respond: htmlAnswer(missing, 404) }]), 'not_found');
    await assertOutcome(runComments([{ expect: spotlightPage(), respond: htmlAnswer(missing) }]), 'not_found');
    const otherId = 'Zr8_nB2xQw4KtY7mLp1VhC9sDf3GjE6aUo0IiXc5WbN2MeR7qTk4yAlS1dPQ';
    await assertOutcome(
      runComments([{ expect: spotlightPage(otherId), respond: htmlAnswer(SPOTLIGHT_HTML) }], null, `https://www.snapmsg.example/spotlight/${otherId}`),
      'not_found',
      /does not hold Spotlight/,
    );
    // ids are case-sensitive
    const lower = SPOTLIGHT_ID.toLowerCase();
    await assertOutcome(runComments([{ expect: spotlightPage(lower), respond: htmlAnswer(SPOTLIGHT_HTML) }], null, `https://www.snapmsg.example/spotlight/${lower}`), 'not_found');
  });

  test('comments context gone: 404 NOT_FOUND is not found', async () => {
    const gone = jsonAnswer({ error: { code: 'NOT_FOUND', message: 'unknown contextId' } }, 404);
    await assertOutcome(runComments([{ expect: spotlightPage(), respond: htmlAnswer(SPOTLIGHT_HTML) }, { expect: commentsPost(), respond: gone }]), 'not_found');
    await assertOutcome(runComments([{ expect: commentsPost(NEXT_CURSOR), respond: gone }], POSITION), 'not_found');
  });

  test('comments turned off: no comments request, an empty 200', async () => {
    const variants: [string, (info: Record<string, unknown>, story: Record<string, unknown>) => void][] = [
      ['no commentsInfo', (_info, story) => delete story.commentsInfo],
      ['commentsInfo null', (_info, story) => (story.commentsInfo = null)],
      ['isCommentingEnabled false', (info) => (info.isCommentingEnabled = false)],
      ['isCommentingEnabled omitted (proto3 default false)', (info) => delete info.isCommentingEnabled],
      ['contextId absent', (info) => delete info.contextId],
      ['contextId empty', (info) => (info.contextId = '')],
    ];
    for (const [name, change] of variants) {
      const page = withNextData(SPOTLIGHT_HTML, (data) => {
        const story = at(data, 'props.pageProps.spotlightFeed.spotlightStories.0');
        change(at(story, 'commentsInfo'), story);
      });
      const result = await runComments([{ expect: spotlightPage(), respond: htmlAnswer(page) }]);
      assert.deepEqual(result, { data: { comments: [], count: 0 }, next: null }, name);
    }
  });

  test('a cursor the upstream rejects (400 INVALID_CURSOR) is a rejected cursor', async () => {
    const rejected = jsonAnswer({ error: { code: 'INVALID_CURSOR', message: 'cursor expired' } }, 400);
    await assertOutcome(runComments([{ expect: commentsPost(NEXT_CURSOR), respond: rejected }], POSITION), 'rejected_cursor', /INVALID_CURSOR/);
  });

  test('a position that is not a comments position is a rejected cursor, with no request', async () => {
    await assertOutcome(runComments([], { contextId: CONTEXT_ID }), 'rejected_cursor');
    await assertOutcome(runComments([], { contextId: 7, cursor: NEXT_CURSOR }), 'rejected_cursor');
  });

  test('INVALID_ARGUMENT and 415 mean the service built a wrong request: unrecognised', async () => {
    const invalid = jsonAnswer({ error: { code: 'INVALID_ARGUMENT', message: 'count out of range' } }, 400);
    await assertOutcome(runComments([{ expect: commentsPost(NEXT_CURSOR), respond: invalid }], POSITION), 'unrecognised', /INVALID_ARGUMENT/);
    const media = jsonAnswer({ error: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'json only' } }, 415);
    await assertOutcome(runComments([{ expect: commentsPost(NEXT_CURSOR), respond: media }], POSITION), 'unrecognised', /415/);
    const onFirst = jsonAnswer({ error: { code: 'INVALID_CURSOR', message: '?' } }, 400);
    await assertOutcome(runComments([{ expect: spotlightPage(), respond: htmlAnswer(SPOTLIGHT_HTML) }, { expect: commentsPost(), respond: onFirst }]), 'unrecognised');
  });

  // 429 (RESOURCE_EXHAUSTED) is the upstream client's to classify (test/upstream/client.test.ts).
  test('blocks on either request: 403, /challenge redirect', async () => {
    await assertOutcome(runComments([{ expect: spotlightPage(), respond: htmlAnswer('blocked', 403) }]), 'blocked');
    await assertOutcome(runComments([{ expect: spotlightPage(), respond: { ...htmlAnswer('x'), path: '/challenge?next=/spotlight/x' } }]), 'blocked');
    await assertOutcome(runComments([{ expect: commentsPost(NEXT_CURSOR), respond: { status: 403, body: 'Forbidden' } }], POSITION), 'blocked');
  });

  test('unrecognised responses name snapmsg and what is missing', async () => {
    const withoutFeed = withNextData(SPOTLIGHT_HTML, (data) => delete pageProps(data).spotlightFeed);
    await assertOutcome(runComments([{ expect: spotlightPage(), respond: htmlAnswer(withoutFeed) }]), 'unrecognised', /spotlightFeed\.spotlightStories: expected an array, found nothing/);
    const withoutStories = withNextData(SPOTLIGHT_HTML, (data) => (at(data, 'props.pageProps.spotlightFeed').spotlightStories = null));
    await assertOutcome(runComments([{ expect: spotlightPage(), respond: htmlAnswer(withoutStories) }]), 'unrecognised', /spotlightStories: expected an array, found null/);
    const noScript = SPOTLIGHT_HTML.replace(NEXT_DATA, '');
    await assertOutcome(runComments([{ expect: spotlightPage(), respond: htmlAnswer(noScript) }]), 'unrecognised', /Spotlight page: no __NEXT_DATA__/);

    const cases: [string, unknown, RegExp][] = [
      ['not JSON', '<html><body>maintenance</body></html>', /comments response: expected an object, found nothing/],
      ['a JSON array', '[]', /comments response: expected an object, found an array/],
      ['comments not an array', { comments: { commentId: 'x' }, hasMore: false }, /comments: expected an array, found an object/],
      ['an error object', { error: { code: 'INTERNAL', message: 'x' } }, /error/],
      ['comment id missing', { comments: [{ text: 'hi', createTimestampMs: '1731002400000' }] }, /comments\[0\]\.commentId: expected a non-empty string, found nothing/],
      ['comment time missing', { comments: [{ commentId: 'c1', text: 'hi' }] }, /comments\[0\]\.createTimestampMs: expected int64 epoch milliseconds, found nothing/],
      ['likeCount not int64', { comments: [{ commentId: 'c1', createTimestampMs: '1', likeCount: 'many' }] }, /likeCount: expected an int64 decimal string, found a string/],
    ];
    for (const [name, body, pattern] of cases) {
      await assertOutcome(runComments([{ expect: commentsPost(NEXT_CURSOR), respond: jsonAnswer(body) }], POSITION), 'unrecognised', pattern).catch(
        (error: unknown) => {
          throw new Error(`${name}: ${String(error)}`);
        },
      );
    }
  });
});

describe('snapmsg.spotlight.comments: variations the platform allows', () => {
  test('the requested story among recommended ones, in any position; page JSON variations', async () => {
    const page = withNextData(
      SPOTLIGHT_HTML,
      (data) => {
        const feed = at(data, 'props.pageProps.spotlightFeed');
        const stories = feed.spotlightStories as unknown[];
        feed.spotlightStories = [stories[1], ...stories, stories[1]].map((s) => addUnknownMembers(reverseKeys(s)));
      },
      { pretty: true, slashes: true, asciiOnly: true },
      '<script nonce="n0nce" type="application/json" id="__NEXT_DATA__">',
    );
    assert.deepEqual(await runComments(firstCall(page)), EXPECTED_FIRST);
  });

  test('comments JSON: unknown members, reversed keys, pretty-printed, \\u escapes', async () => {
    const transformed = addUnknownMembers(reverseKeys(COMMENTS_PAGE));
    const body = JSON.stringify(transformed, null, 2).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).replace(/\//g, '\\/');
    assert.deepEqual(await commentsOf(body), EXPECTED_FIRST);
  });

  test('defaults written out, and int64 as JSON numbers', async () => {
    const written = structuredClone(COMMENTS_LAST_PAGE) as { comments: Record<string, unknown>[] };
    Object.assign(written.comments[0]!, { likeCount: '0', replyCount: 0, rankingScore: 0, text: 'مذهل! 🌌' });
    assert.deepEqual(await runComments([{ expect: commentsPost(NEXT_CURSOR), respond: jsonAnswer(written) }], POSITION), EXPECTED_LAST);

    const numbers = structuredClone(COMMENTS_PAGE) as { comments: Record<string, unknown>[] };
    for (const c of numbers.comments) {
      for (const key of ['likeCount', 'replyCount', 'createTimestampMs', 'updateTimestampMs']) if (typeof c[key] === 'string') c[key] = Number(c[key]);
    }
    assert.deepEqual(await commentsOf(numbers), EXPECTED_FIRST);
  });

  test('author fallbacks: display name, else username, else ""; empty text', async () => {
    const body = {
      comments: [
        { commentId: 'a', createTimestampMs: '0', author: { username: 'only.user', displayName: { value: '' } } },
        { commentId: 'b', createTimestampMs: '0', author: {} },
        { commentId: 'c', createTimestampMs: '0' },
        { commentId: 'd', createTimestampMs: '0', text: null, author: { displayName: { value: 'Named' }, avatarUrl: {} } },
      ],
    };
    const { data } = await runComments([{ expect: commentsPost(NEXT_CURSOR), respond: jsonAnswer(body) }], POSITION);
    const comments = data.comments as { authorDisplayName: string; authorAvatarUrl: string; text: string; timestamp: string; updatedAt: string }[];
    assert.deepEqual(comments.map((c) => c.authorDisplayName), ['only.user', '', '', 'Named']);
    assert.deepEqual(comments.map((c) => c.authorAvatarUrl), ['', '', '', '']);
    assert.equal(comments[3]?.text, '');
    assert.equal(comments[0]?.timestamp, '1970-01-01T00:00:00.000Z');
    assert.equal(comments[0]?.updatedAt, '1970-01-01T00:00:00.000Z');
  });

  test('pages of any size, whatever hasMore says; the end signals', async () => {
    const next = { value: 'b3BhcXVl' };
    const cases: [string, unknown, number, UpstreamPosition | null][] = [
      ['empty page while more remain', { nextCursor: next, hasMore: true }, 0, { contextId: CONTEXT_ID, cursor: 'b3BhcXVl' }],
      ['empty list written out', { comments: [], nextCursor: next, hasMore: true, totalCount: '9' }, 0, { contextId: CONTEXT_ID, cursor: 'b3BhcXVl' }],
      ['empty object (all defaults)', {}, 0, null],
      ['hasMore true without nextCursor is the end', { ...COMMENTS_PAGE, nextCursor: undefined }, 2, null],
      ['nextCursor without hasMore is the end', { ...COMMENTS_PAGE, hasMore: undefined }, 2, null],
      ['hasMore false with a nextCursor is the end', { ...COMMENTS_PAGE, hasMore: false }, 2, null],
      ['empty nextCursor value is the end', { ...COMMENTS_PAGE, nextCursor: { value: '' } }, 2, null],
      ['a full page of 20', { comments: Array.from({ length: 20 }, (_, i) => ({ commentId: `c${i}`, createTimestampMs: String(i) })), nextCursor: next, hasMore: true }, 20, { contextId: CONTEXT_ID, cursor: 'b3BhcXVl' }],
    ];
    for (const [name, body, count, expectedNext] of cases) {
      const result = await runComments([{ expect: commentsPost(NEXT_CURSOR), respond: jsonAnswer(body) }], POSITION);
      assert.equal(result.data.count, count, name);
      assert.equal((result.data.comments as unknown[]).length, count, name);
      assert.deepEqual(result.next, expectedNext, name);
    }
  });

  test('the upstream cursor is passed back unchanged, whatever it holds', async () => {
    const odd = 'a/b+c==&x=1 😀';
    const result = await runComments([{ expect: commentsPost(odd), respond: jsonAnswer(COMMENTS_LAST_PAGE) }], { contextId: CONTEXT_ID, cursor: odd });
    assert.deepEqual(result, EXPECTED_LAST);
  });
});
