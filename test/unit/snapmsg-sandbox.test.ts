// The snapmsg sandbox upstream read by the snapmsg extractors: the handler is called directly
// through a fake upstream client that behaves like the service's (browser-like headers,
// redirects followed within the platform, retries of transient failures, 429 as a block).
// Every extraction must validate against the endpoint's data schema and reflect the generated
// data; following cursors through a large Spotlight yields every comment exactly once.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { EndpointDeclaration, ExtractContext, ExtractResult, UpstreamPosition } from '../../src/endpoints/types.ts';
import { declared, extractorOf } from '../support/endpoints.ts';

const snapmsgProfile = declared('snapmsg.profile');
const snapmsgSpotlightComments = declared('snapmsg.spotlight.comments');
import { UpstreamOutcome, type OutcomeKind } from '../../src/upstream/outcomes.ts';
import type { UpstreamRequest, UpstreamResponse } from '../../src/upstream/types.ts';
import { snapmsgSandbox, snapmsgSandboxData } from '../../sandbox/platforms/snapmsg.ts';
import type { SandboxRequest, SandboxResponse } from '../../sandbox/common.ts';

const addFormats = addFormatsModule.default;
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
const validators = new Map<EndpointDeclaration, ReturnType<typeof ajv.compile>>();

const SEED = 'snapmsg-test-seed';
const WWW = 'https://www.snapmsg.example';
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';

// ------------------------------------------------------------------ a client like the service's

interface Client {
  upstream: (request: UpstreamRequest) => Promise<UpstreamResponse>;
  requests: UpstreamRequest[];
}

const pageHeaders = {
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
  'sec-fetch-mode': 'navigate',
  'sec-fetch-dest': 'document',
  'sec-fetch-site': 'none',
};
const apiHeaders = { accept: 'application/json', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty', 'sec-fetch-site': 'same-origin' };

/** Sends one request to the sandbox handler, as the service's client would put it on the wire. */
async function send(request: UpstreamRequest, path: string, attempts: Map<string, number>, userAgent = UA): Promise<SandboxResponse> {
  const url = new URL(path, WWW);
  const method = request.method ?? 'GET';
  const body = request.body ?? '';
  const key = `${method} ${url.pathname}${url.search} ${body}`;
  const attempt = (attempts.get(key) ?? 0) + 1;
  attempts.set(key, attempt);
  const headers: Record<string, string> = {
    'user-agent': userAgent,
    'accept-language': 'en-US,en;q=0.9',
    ...(request.kind === 'page' ? pageHeaders : apiHeaders),
    ...Object.fromEntries(Object.entries(request.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value])),
  };
  const sandboxRequest: SandboxRequest = { method, path: url.pathname, query: url.searchParams, headers, body };
  return snapmsgSandbox.handle(sandboxRequest, { seed: SEED, attempt, slowMs: 5 });
}

const ON_PLATFORM = new Set(['www.snapmsg.example', 'snapmsg.example']);

function client(userAgent = UA): Client {
  const attempts = new Map<string, number>();
  const requests: UpstreamRequest[] = [];
  const upstream = async (request: UpstreamRequest): Promise<UpstreamResponse> => {
    requests.push(request);
    let path = request.path;
    for (let redirects = 0; ; ) {
      let response: SandboxResponse | undefined;
      for (let tries = 1; tries <= 4; tries += 1) {
        const answer = await send(request, path, attempts, userAgent);
        if ('reset' in answer || answer.status >= 500) continue;
        response = answer;
        break;
      }
      if (!response || 'reset' in response) throw new UpstreamOutcome('transient', 'snapmsg', 'snapmsg: retries exhausted');
      if (response.status === 429) throw new UpstreamOutcome('blocked', 'snapmsg', 'snapmsg: HTTP 429');
      const headers = response.headers ?? {};
      const location = headers.location;
      if (response.status >= 300 && response.status < 400 && location) {
        const target = new URL(location, `${WWW}${path}`);
        if (!ON_PLATFORM.has(target.hostname)) {
          return { status: response.status, headers, body: '', path, offPlatformLocation: location };
        }
        redirects += 1;
        assert.ok(redirects <= 5, 'too many redirects');
        path = `${target.pathname}${target.search}`;
        continue;
      }
      const body = typeof response.body === 'string' ? response.body : response.body.toString('utf8');
      return { status: response.status, headers, body, path };
    }
  };
  return { upstream, requests };
}

const silent = () => undefined;

async function extract(id: 'snapmsg.profile' | 'snapmsg.spotlight.comments', params: Record<string, string>, position: UpstreamPosition | null = null, c = client()) {
  const context: ExtractContext = {
    signal: new AbortController().signal,
    deadline: Date.now() + 10_000,
    log: { debug: silent, info: silent, warn: silent, error: silent },
    upstream: c.upstream,
  };
  return extractorOf(id)({ params, position }, context);
}

/** Validates `result` as the endpoint's `data`, with `fetchedAt` and (for comments) `paging` added as the core would. */
function assertValid(endpoint: EndpointDeclaration, result: ExtractResult): void {
  let validate = validators.get(endpoint);
  if (!validate) {
    validate = ajv.compile(endpoint.data);
    validators.set(endpoint, validate);
  }
  const data: Record<string, unknown> = { ...result.data, fetchedAt: '2024-12-01T00:00:00.000Z' };
  if (endpoint.paging) data.paging = { cursor: result.next ? 'sealed-cursor' : '', hasMore: Boolean(result.next) };
  assert.ok(validate(data), `${endpoint.id}: ${ajv.errorsText(validate.errors)}`);
}

async function assertOutcome(promise: Promise<unknown>, kind: OutcomeKind, label: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof UpstreamOutcome, `${label}: expected an UpstreamOutcome, got ${String(error)}`);
    assert.equal(error.kind, kind, `${label}: ${error.message}`);
    return true;
  });
}

// ------------------------------------------------------------------ profiles

type Profile = {
  profileType: string;
  username: string;
  displayName: string;
  subscriberCount: number;
  createdAt: string | null;
  sameAsLinks: string[];
  story: { snapCount: number } | null;
  lenses: { id: string }[];
  curatedHighlights: { id: string; snapCount: number }[];
  spotlightHighlights: { id: string }[];
  relatedAccounts: { username: string }[];
  counts: { lenses: number; curatedHighlights: number; spotlightHighlights: number };
};

type Obj = Record<string, unknown>;
const arr = (value: unknown): Obj[] => (Array.isArray(value) ? (value as Obj[]) : []);

/** Checks the extracted profile against the model the sandbox generated it from. */
function assertReflects(profile: Profile, username: string): void {
  const { pageProps, profilePage } = snapmsgSandboxData.profileModel(SEED, username);
  const userProfile = pageProps.userProfile as Obj;
  const info = userProfile[userProfile.$case as string] as Obj;
  assert.equal(profile.profileType, userProfile.$case);
  assert.equal(profile.username, username);
  assert.equal(profile.displayName, (info.title ?? info.displayName ?? '') as string);
  if (profile.profileType === 'userInfo') {
    assert.equal(profile.createdAt, null);
    assert.deepEqual(profile.counts, { lenses: 0, curatedHighlights: 0, spotlightHighlights: 0 });
    return;
  }
  assert.equal(profile.subscriberCount, Number(info.subscriberCount ?? 0));
  assert.deepEqual(profile.lenses.map((l) => l.id), arr(pageProps.lenses).map((l) => l.lensId));
  assert.deepEqual(profile.curatedHighlights.map((h) => h.id), arr(pageProps.curatedHighlights).map((h) => (h.highlightId as Obj).value));
  assert.deepEqual(profile.curatedHighlights.map((h) => h.snapCount), arr(pageProps.curatedHighlights).map((h) => arr(h.snapList).length));
  assert.deepEqual(profile.spotlightHighlights.map((h) => h.id), arr(pageProps.spotlightHighlights).map((h) => (h.storyId as Obj).value));
  assert.deepEqual(profile.relatedAccounts.map((r) => r.username), arr(info.relatedAccountsInfo).map((r) => (r.publicProfileInfo as Obj).username));
  assert.deepEqual(profile.counts, {
    lenses: arr(pageProps.lenses).length,
    curatedHighlights: arr(pageProps.curatedHighlights).length,
    spotlightHighlights: arr(pageProps.spotlightHighlights).length,
  });
  const storySnaps = arr((pageProps.story as Obj | undefined)?.snapList).length;
  assert.equal(profile.story?.snapCount ?? 0, storySnaps);
  const sameAs = (profilePage?.mainEntity as Obj | undefined)?.sameAs;
  assert.deepEqual(profile.sameAsLinks, sameAs === undefined ? [] : typeof sameAs === 'string' ? [sameAs] : sameAs);
}

const NAMED_PROFILES = ['lunavoss', 'bigcreator', 'emoji.star', 'noor.rtl', 'sakura.cjk', 'mixedbag', 'sparse.pub', 'zeros.out', 'ldgraph', 'pretty.keys', 'kitewise', 'quietkit'];

describe('snapmsg sandbox: profiles read by the extractor', () => {
  for (const username of NAMED_PROFILES) {
    test(`${username}: valid data reflecting the generated profile`, async () => {
      const result = await extract('snapmsg.profile', { username });
      assertValid(snapmsgProfile, result);
      assertReflects(result.data.profile as Profile, username);
    });
  }

  test('40 generated usernames: every seed-chosen flavour and serialisation is read', async () => {
    for (let i = 0; i < 40; i += 1) {
      const username = `gen${i}user`;
      const result = await extract('snapmsg.profile', { username });
      assertValid(snapmsgProfile, result);
      assertReflects(result.data.profile as Profile, username);
    }
  });

  test('large profile: lists of the sizes the catalogue promises', async () => {
    const profile = (await extract('snapmsg.profile', { username: 'bigcreator' })).data.profile as Profile;
    assert.equal(profile.counts.lenses, 40);
    assert.equal(profile.counts.curatedHighlights, 30);
    assert.equal(profile.counts.spotlightHighlights, 25);
    assert.equal(profile.relatedAccounts.length, 20);
    assert.equal(profile.story?.snapCount, 30);
  });

  test('sparse and written-out defaults: nulls, empty strings and zeros as the mapping says', async () => {
    const sparse = (await extract('snapmsg.profile', { username: 'sparse.pub' })).data.profile as Profile & Obj;
    assert.equal(sparse.websiteUrl, null);
    assert.equal(sparse.bio, '');
    assert.equal(sparse.createdAt, null);
    assert.equal(sparse.bitmoji3dUrl, null);
    assert.equal(sparse.previewImageUrl, '');
    assert.equal(sparse.snapcodeImageUrl, `https://app.snapmsg.example/web/deeplink/snapcode?username=sparse.pub&type=SVG&avatar=enable`);
    assert.deepEqual(sparse.sameAsLinks, []);
    assert.equal(sparse.story, null);
    const zeros = (await extract('snapmsg.profile', { username: 'zeros.out' })).data.profile as Profile & Obj;
    assert.equal(zeros.hasStory, true);
    assert.equal(zeros.story, null, 'a story with an empty snap list is null');
  });

  test('a capitalised path is redirected to lower case', async () => {
    const answer = await send({ path: '/add/LunaVoss', kind: 'page' }, '/add/LunaVoss', new Map());
    assert.ok(!('reset' in answer));
    assert.ok([301, 308].includes(answer.status));
    assert.equal(answer.headers?.location, '/add/lunavoss');
  });

  test('outcomes: not found, blocks, unrecognised, faults', async () => {
    const cases: [string, OutcomeKind][] = [
      ['nosuchuser1', 'not_found'],
      ['nosuchperson', 'not_found'],
      ['ratelimited', 'blocked'],
      ['edgeblocked', 'blocked'],
      ['loginwall', 'blocked'],
      ['challenged', 'blocked'],
      ['brokenpage', 'unrecognised'],
      ['oddcase', 'unrecognised'],
      ['down-luna', 'transient'],
    ];
    for (const [username, kind] of cases) await assertOutcome(extract('snapmsg.profile', { username }), kind, username);
  });

  test('slow and flaky accounts answer in the end', async () => {
    for (const username of ['slow-luna', 'flaky-luna']) {
      const result = await extract('snapmsg.profile', { username });
      assertValid(snapmsgProfile, result);
      assertReflects(result.data.profile as Profile, username);
    }
  });

  test('a User-Agent without Mozilla/5.0 is answered 403, a block', async () => {
    await assertOutcome(extract('snapmsg.profile', { username: 'lunavoss' }, null, client('curl/8.5.0')), 'blocked', 'bot UA');
  });

  test('deterministic for a seed', async () => {
    const a = await send({ path: '/add/pretty.keys', kind: 'page' }, '/add/pretty.keys', new Map());
    const b = await send({ path: '/add/pretty.keys', kind: 'page' }, '/add/pretty.keys', new Map());
    assert.deepEqual(a, b);
    const other = await snapmsgSandbox.handle(
      { method: 'GET', path: '/add/pretty.keys', query: new URLSearchParams(), headers: { 'user-agent': UA }, body: '' },
      { seed: 'another-seed', attempt: 1, slowMs: 0 },
    );
    assert.notDeepEqual(a, other);
  });
});

// ------------------------------------------------------------------ Spotlight comments

type Comment = { id: string; text: string; timestamp: string; updatedAt: string; rankingScore: number };

/** Follows `next` to the end, validating each page; returns every comment and the number of calls. */
async function allComments(spotlightId: string, c = client()): Promise<{ comments: Comment[]; calls: number; sizes: number[] }> {
  const url = `${WWW}/spotlight/${spotlightId}`;
  const comments: Comment[] = [];
  const sizes: number[] = [];
  let position: UpstreamPosition | null = null;
  let calls = 0;
  do {
    const result: ExtractResult = await extract('snapmsg.spotlight.comments', { url }, position, c);
    assertValid(snapmsgSpotlightComments, result);
    const page = result.data.comments as Comment[];
    assert.equal(result.data.count, page.length);
    comments.push(...page);
    sizes.push(page.length);
    position = result.next ?? null;
    calls += 1;
    assert.ok(calls < 500, 'the listing ends');
  } while (position !== null);
  return { comments, calls, sizes };
}

/** The comment ids the sandbox generated, in ranking order. */
const generatedIds = (id: string) =>
  Array.from({ length: snapmsgSandboxData.totalComments(SEED, id) }, (_, i) => snapmsgSandboxData.commentModel(SEED, id, i).commentId);

describe('snapmsg sandbox: Spotlight comments read by the extractor', () => {
  test('large Spotlight: following next yields all 460 comments exactly once, in order, through empty pages', async () => {
    const c = client();
    const { comments, calls, sizes } = await allComments('bigThread_hundreds_0001', c);
    const ids = comments.map((comment) => comment.id);
    assert.equal(ids.length, 460);
    assert.equal(new Set(ids).size, 460);
    assert.deepEqual(ids, generatedIds('bigThread_hundreds_0001'));
    assert.ok(sizes.includes(0), 'some pages are empty while more remain');
    assert.ok(calls > 23);
    // one Spotlight page, then only comments requests carrying the context id and the previous cursor
    assert.equal(c.requests.filter((r) => r.kind === 'page').length, 1);
    assert.equal(c.requests.filter((r) => r.method === 'POST').length, calls);
  });

  test('ordinary Spotlight: 45 comments in pages of 20, 20, 5', async () => {
    const { comments, sizes } = await allComments('starTrails_Sintra_0001');
    assert.deepEqual(sizes, [20, 20, 5]);
    assert.deepEqual(comments.map((comment) => comment.id), generatedIds('starTrails_Sintra_0001'));
  });

  test('the long URL form reads the same Spotlight', async () => {
    const result = await extract('snapmsg.spotlight.comments', { url: `${WWW}/spotlight/starTrails_Sintra_0001` });
    const long = await extract('snapmsg.spotlight.comments', { url: `${WWW}/@lunavoss/spotlight/starTrails_Sintra_0001` });
    assert.deepEqual(long, result);
  });

  test('Unicode, sparse and written-out-default comments reflect the generated data', async () => {
    for (const id of ['unicodeTalk_emoji_rtl_01', 'sparseComments_000001', 'zeroDefaults_comments1']) {
      const { comments } = await allComments(id);
      const models = Array.from({ length: snapmsgSandboxData.totalComments(SEED, id) }, (_, i) => snapmsgSandboxData.commentModel(SEED, id, i));
      assert.deepEqual(comments.map((comment) => comment.id), models.map((model) => model.commentId), id);
      assert.deepEqual(comments.map((comment) => comment.text), models.map((model) => model.text), id);
      assert.deepEqual(
        comments.map((comment) => comment.timestamp),
        models.map((model) => new Date(Number(model.createTimestampMs)).toISOString()),
        id,
      );
    }
    const { comments } = await allComments('unicodeTalk_emoji_rtl_01');
    assert.ok(comments.some((comment) => /[\u0590-\u06ff]/.test(comment.text)), 'right-to-left text survives');
    assert.ok(comments.some((comment) => /\p{Extended_Pictographic}/u.test(comment.text)), 'emoji survive');
  });

  test('30 generated Spotlights: every seed-chosen page size and serialisation is read', async () => {
    for (let i = 0; i < 30; i += 1) {
      const id = `GeneratedSpot_${String(i).padStart(4, '0')}`;
      const { comments } = await allComments(id);
      assert.deepEqual(comments.map((comment) => comment.id), generatedIds(id), id);
    }
  });

  test('no comments, comments off, comments disabled: an empty first page and no more', async () => {
    for (const id of ['noComments_0000000001', 'commentsOff_000000001', 'commentsDisabled_0001']) {
      const c = client();
      const result = await extract('snapmsg.spotlight.comments', { url: `${WWW}/spotlight/${id}` }, null, c);
      assertValid(snapmsgSpotlightComments, result);
      assert.deepEqual(result, { data: { comments: [], count: 0 }, next: null }, id);
      assert.equal(c.requests.length, id === 'noComments_0000000001' ? 2 : 1, `${id}: a comments request only when enabled`);
    }
  });

  test('outcomes: not found, blocks, unrecognised, faults', async () => {
    const cases: [string, OutcomeKind][] = [
      ['missing_spotlight_001', 'not_found'],
      ['missingAnotherOne_0001', 'not_found'],
      ['recommendedOnly_00001', 'not_found'],
      ['contextGone_000000001', 'not_found'],
      ['rateLimited_comments1', 'blocked'],
      ['edgeBlocked_spot_0001', 'blocked'],
      ['challenge_spot_000001', 'blocked'],
      ['brokenFeed_0000000001', 'unrecognised'],
      ['brokenComments_000001', 'unrecognised'],
      ['down-spotlight-00001', 'transient'],
    ];
    for (const [id, kind] of cases) await assertOutcome(extract('snapmsg.spotlight.comments', { url: `${WWW}/spotlight/${id}` }), kind, id);
  });

  test('slow and flaky Spotlights answer in the end', async () => {
    for (const id of ['slow-spotlight-00001', 'flaky-spotlight-0001']) {
      const { comments } = await allComments(id);
      assert.deepEqual(comments.map((comment) => comment.id), generatedIds(id), id);
    }
  });

  test('a cursor the sandbox did not issue is rejected: rejected cursor', async () => {
    const contextId = snapmsgSandboxData.contextIdOf('starTrails_Sintra_0001');
    const url = `${WWW}/spotlight/starTrails_Sintra_0001`;
    await assertOutcome(extract('snapmsg.spotlight.comments', { url }, { contextId, cursor: 'Zm9yZ2Vk' }), 'rejected_cursor', 'forged');
    const first = await extract('snapmsg.spotlight.comments', { url });
    const foreign = snapmsgSandboxData.contextIdOf('bigThread_hundreds_0001');
    await assertOutcome(extract('snapmsg.spotlight.comments', { url }, { contextId: foreign, cursor: first.next?.cursor as string }), 'rejected_cursor', 'foreign');
    await assertOutcome(extract('snapmsg.spotlight.comments', { url }, { contextId: 'bm9uZQ', cursor: first.next?.cursor as string }), 'not_found', 'unknown context');
  });

  test('comments API errors: 415 without JSON Content-Type, 400 INVALID_ARGUMENT for a bad body', async () => {
    const contextId = snapmsgSandboxData.contextIdOf('starTrails_Sintra_0001');
    const post = (body: string, contentType = 'application/json') =>
      send({ method: 'POST', path: '/api/spotlight/comments', kind: 'api', headers: { 'content-type': contentType }, body }, '/api/spotlight/comments', new Map());
    const errorOf = (answer: SandboxResponse) => {
      assert.ok(!('reset' in answer));
      return { status: answer.status, code: (JSON.parse(String(answer.body)) as { error: { code: string } }).error.code };
    };
    assert.deepEqual(errorOf(await post(JSON.stringify({ contextId }), 'text/plain')), { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
    assert.deepEqual(errorOf(await post('{not json')), { status: 400, code: 'INVALID_ARGUMENT' });
    assert.deepEqual(errorOf(await post(JSON.stringify({ cursor: '' }))), { status: 400, code: 'INVALID_ARGUMENT' });
    assert.deepEqual(errorOf(await post(JSON.stringify({ contextId, count: 51 }))), { status: 400, code: 'INVALID_ARGUMENT' });
    assert.deepEqual(errorOf(await post(JSON.stringify({ contextId, cursor: 'bad!' }))), { status: 400, code: 'INVALID_CURSOR' });
    const ok = await post(JSON.stringify({ contextId, count: 7 }));
    assert.ok(!('reset' in ok) && ok.status === 200);
    assert.equal((JSON.parse(String(ok.body)) as { comments: unknown[] }).comments.length, 7, 'count is honoured');
  });
});

// ------------------------------------------------------------------ catalogue

describe('snapmsg sandbox: catalogue', () => {
  test('every entry names a snapmsg endpoint and a query its normaliser accepts', () => {
    const endpoints = new Map([snapmsgProfile, snapmsgSpotlightComments].map((endpoint) => [endpoint.path, endpoint]));
    assert.ok(snapmsgSandbox.catalogue.length >= 30);
    for (const entry of snapmsgSandbox.catalogue) {
      const endpoint = endpoints.get(entry.endpoint);
      assert.ok(endpoint, entry.endpoint);
      assert.ok(entry.description.length > 5);
      const query = Object.fromEntries(new URLSearchParams(entry.query));
      const normalised = endpoint.normalise(query);
      assert.ok(normalised.ok, `${entry.query}: ${JSON.stringify(normalised)}`);
    }
  });
});

// ------------------------------------------------------------------ people

describe('snapmsg sandbox: one username, one person', () => {
  test('a username shown on another page (related account, lens creator, comment author) carries the name of its own profile', () => {
    type Info = { username: string; title: string };
    const nameOf = (username: string) => ((snapmsgSandboxData.profileModel(SEED, username).pageProps.userProfile as { publicProfileInfo: Info }).publicProfileInfo).title;
    const { pageProps } = snapmsgSandboxData.profileModel(SEED, 'bigcreator');
    const related = ((pageProps.userProfile as { publicProfileInfo: { relatedAccountsInfo: { publicProfileInfo: Info }[] } }).publicProfileInfo.relatedAccountsInfo).map((account) => account.publicProfileInfo);
    assert.equal(related.length, 20);
    for (const account of related) assert.equal(account.title, nameOf(account.username), account.username);
    const lenses = (pageProps.lenses as { lensCreatorUsername?: string; lensCreatorDisplayName: string }[]).filter((lens) => lens.lensCreatorUsername !== undefined);
    assert.ok(lenses.length > 10);
    for (const lens of lenses) assert.equal(lens.lensCreatorDisplayName, nameOf(lens.lensCreatorUsername as string), lens.lensCreatorUsername);
    let authors = 0;
    for (let index = 0; index < 40; index++) {
      const { author } = snapmsgSandboxData.commentModel(SEED, 'bigThread_hundreds_0001', index) as { author: { username?: string; displayName?: { value: string } } };
      if (author.username === undefined || author.displayName === undefined) continue;
      authors++;
      assert.equal(author.displayName.value, nameOf(author.username), author.username);
    }
    assert.ok(authors > 20);
  });
});
