// The linkpage-a extractor against the contract's examples (src/platforms/linkpage-a/README.md),
// every outcome the platform's README lists, and every variations the platform allows, written by transforming
// the example page: its payload is read into a tree, changed, and written back with the
// sandbox's devalue writer; its HTML is rewritten with string edits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { declared, extractorOf } from '../support/endpoints.ts';
import type { ExtractResult } from '../../src/endpoints/types.ts';

const linkpageAProfile = declared('linkpage-a.profile');
import { UpstreamOutcome, type OutcomeKind } from '../../src/upstream/outcomes.ts';
import type { UpstreamRequest, UpstreamResponse } from '../../src/upstream/types.ts';
import { Rng, scriptJson } from '../../sandbox/common.ts';
import { dv, dvKind, flattenNuxtPayload, isDvSpecial, type DvNode, type DvSpecial, type DvWrapper, type FlattenOptions } from '../../sandbox/platforms/linkpage-a.ts';

const FIXTURES = new URL('../fixtures/upstream/', import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, FIXTURES), 'utf8');

const PROFILE_HTML = fixture('linkpage-a-profile.html');
const PRIVATE_HTML = fixture('linkpage-a-private.html');
const NOT_FOUND_HTML = fixture('linkpage-a-not-found.html');
const CHALLENGE_HTML = fixture('linkpage-a-challenge.html');
const EXPECTED = JSON.parse(fixture('linkpage-a-expected-profile.json')) as { profile: Record<string, unknown> };

const extract = extractorOf('linkpage-a.profile');
if (extract === undefined) throw new Error('no linkpage-a.profile extractor');

// ------------------------------------------------------------------------------ fake upstream

type Answer = Partial<UpstreamResponse> & { status?: number };

/**
 * Serves `answers` in turn (the last one repeats) and asserts that every request is the one the
 * README fixes: `GET /{lower-cased username}`, a page navigation, no query, no extra headers
 * (no cookie), no body.
 */
function fakeUpstream(answers: Answer | Answer[], expectedPath = '/theo.marsh') {
  const list = Array.isArray(answers) ? answers : [answers];
  const requests: UpstreamRequest[] = [];
  const upstream = async (request: UpstreamRequest): Promise<UpstreamResponse> => {
    // What goes on the wire; the extractor's classify hook is checked to be there.
    const { classify, ...sent } = request;
    assert.equal(typeof classify, 'function', 'the answer is judged inside the retry loop');
    requests.push(sent);
    assert.equal(request.method ?? 'GET', 'GET');
    assert.equal(request.kind, 'page');
    assert.equal(request.path, expectedPath);
    assert.equal(request.body, undefined);
    assert.deepEqual(request.headers ?? {}, {});
    const answer = list[Math.min(requests.length - 1, list.length - 1)] ?? {};
    return { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body: '', path: request.path, ...answer };
  };
  return { upstream, requests };
}

async function run(answers: Answer | Answer[], url = 'https://linkpage-a.example/theo.marsh', expectedPath?: string): Promise<ExtractResult> {
  const normalised = linkpageAProfile.normalise({ url });
  if (!normalised.ok) throw new Error(`not a linkpage-a URL: ${url}`);
  const { upstream } = fakeUpstream(answers, expectedPath);
  return extract!(
    { params: normalised.params, position: null },
    { signal: new AbortController().signal, deadline: Date.now() + 10_000, log: console as never, upstream },
  );
}

/** Runs the extractor on one page (status 200 unless given) and returns the profile. */
const profileOf = async (body: string, status = 200) => (await run({ status, body })).data.profile as Record<string, unknown>;

async function outcome(answers: Answer | Answer[]): Promise<UpstreamOutcome> {
  try {
    await run(answers);
  } catch (error) {
    if (error instanceof UpstreamOutcome) return error;
    throw error;
  }
  return assert.fail('expected an outcome, got data');
}

async function assertOutcome(answers: Answer | Answer[], kind: OutcomeKind, message?: RegExp): Promise<void> {
  const error = await outcome(answers);
  assert.equal(error.kind, kind, error.message);
  assert.equal(error.platform, 'linkpage-a');
  if (message) assert.match(error.message, message);
}

/** The expected profile with some fields changed. */
const expectedWith = (changes: Record<string, unknown>) => ({ ...structuredClone(EXPECTED.profile), ...changes });

// ------------------------------------------------------------------ payload tree and rewriting

const PAYLOAD_RE = /(<script[^>]*id="__NUXT_DATA__"[^>]*>)([\s\S]*?)(<\/script>)/;
const rawPayload = (html: string): unknown[] => JSON.parse(PAYLOAD_RE.exec(html)?.[2] ?? 'null') as unknown[];
const withPayloadText = (html: string, text: string) => html.replace(PAYLOAD_RE, (_, open: string, _old: string, close: string) => `${open}${text}${close}`);

/** Reads a flattened payload into a tree of `DvNode`s, keeping shared values shared. */
function toTree(values: unknown[]): DvNode {
  const memo = new Map<number, DvNode>();
  const node = (index: unknown): DvNode => {
    if (index === -1) return dv.undef;
    if (typeof index !== 'number' || index < 0) throw new Error(`unexpected index ${String(index)}`);
    const known = memo.get(index);
    if (known !== undefined) return known;
    const raw = values[index];
    let out: DvNode;
    if (raw === null || typeof raw !== 'object') out = raw as DvNode;
    else if (Array.isArray(raw) && typeof raw[0] === 'string') {
      const [marker, ...args] = raw as [string, ...unknown[]];
      switch (marker) {
        case 'Date':
          out = dv.date(args[0] as string);
          break;
        case 'Set':
          out = dv.set(args.map(node));
          break;
        case 'Map': {
          const entries: Array<[DvNode, DvNode]> = [];
          for (let i = 0; i < args.length; i += 2) entries.push([node(args[i]), node(args[i + 1])]);
          out = dv.map(entries);
          break;
        }
        case 'null': {
          const members: Record<string, DvNode> = {};
          for (let i = 0; i < args.length; i += 2) members[args[i] as string] = node(args[i + 1]);
          out = dv.nullObject(members);
          break;
        }
        case 'EmptyRef':
        case 'EmptyShallowRef':
          out = dv.emptyRef(values[args[0] as number] as string, marker);
          break;
        case 'NuxtError':
          out = dv.error(node(args[0]));
          break;
        default:
          out = dv.wrap(marker as DvWrapper, node(args[0]));
      }
    } else if (Array.isArray(raw)) out = raw.map(node);
    else out = Object.fromEntries(Object.entries(raw).map(([key, value]) => [key, node(value)]));
    memo.set(index, out);
    return out;
  };
  return node(0);
}

type Members = Record<string, DvNode>;

/** The members of an object node, through wrappers and `["null", …]` objects (mutable: trees are fresh copies). */
function membersOf(node: DvNode | undefined): Members {
  let current = node ?? null;
  while (dvKind(current) === 'wrap') current = (current as unknown as { value: DvNode }).value;
  if (dvKind(current) === 'null') return (current as unknown as { members: Members }).members;
  if (current !== null && typeof current === 'object' && !Array.isArray(current) && !isDvSpecial(current)) return current as Members;
  throw new Error('not an object node');
}

/** A fresh tree of the example payload, with handles on its root, `data` and PROFILE. */
function exampleTree(html = PROFILE_HTML) {
  const tree = toTree(rawPayload(html));
  const root = membersOf(tree);
  const data = membersOf(root.data);
  const profile = membersOf(data['profile:theo.marsh']);
  return { tree, root, data, profile };
}

/** The example page with its payload rewritten from `tree`. */
function pageOf(tree: DvNode, options: FlattenOptions & { slashes?: boolean; asciiOnly?: boolean } = { sharePrimitives: true }, html = PROFILE_HTML): string {
  const { slashes, asciiOnly, ...flatten } = options;
  return withPayloadText(html, scriptJson(flattenNuxtPayload(tree, flatten), { slashes: slashes ?? false, asciiOnly: asciiOnly ?? false }));
}

/** Rebuilds every node of a tree bottom-up through `fn` (identity kept: a shared node is rebuilt once). */
function rebuild(tree: DvNode, fn: (node: DvNode, depth: number) => DvNode): DvNode {
  const memo = new Map<object, DvNode>();
  const visit = (node: DvNode, depth: number): DvNode => {
    if (node === null || typeof node !== 'object') return fn(node, depth);
    const known = memo.get(node);
    if (known !== undefined) return known;
    let copy: DvNode;
    if (Array.isArray(node)) copy = (node as DvNode[]).map((child) => visit(child, depth + 1));
    else if (!isDvSpecial(node as DvNode)) copy = Object.fromEntries(Object.entries(node).map(([key, child]) => [key, visit(child as DvNode, depth + 1)]));
    else {
      const special = node as DvSpecial & Record<string, unknown>;
      const out: Record<string | symbol, unknown> = { ...special };
      for (const symbol of Object.getOwnPropertySymbols(special)) out[symbol] = (special as Record<symbol, unknown>)[symbol];
      if ('value' in special) out.value = visit(special.value as DvNode, depth + 1);
      if ('items' in special) out.items = (special.items as DvNode[]).map((child) => visit(child, depth + 1));
      if ('entries' in special) out.entries = (special.entries as Array<[DvNode, DvNode]>).map(([k, v]) => [visit(k, depth + 1), visit(v, depth + 1)]);
      if ('members' in special) out.members = Object.fromEntries(Object.entries(special.members as Members).map(([key, child]) => [key, visit(child, depth + 1)]));
      copy = out as unknown as DvNode;
    }
    const result = fn(copy, depth);
    memo.set(node, result);
    return result;
  };
  return visit(tree, 0);
}

const kindOf = dvKind;

// ============================================================================ the contract example

test('contract example: GET /theo.marsh as a page navigation gives the expected data and no next page', async () => {
  const normalised = linkpageAProfile.normalise({ url: 'https://www.linkpage-a.example/@Theo.Marsh' });
  assert.ok(normalised.ok);
  const { upstream, requests } = fakeUpstream({ status: 200, body: PROFILE_HTML });
  const result = await extract(
    { params: normalised.params, position: null },
    { signal: new AbortController().signal, deadline: Date.now() + 10_000, log: console as never, upstream },
  );
  assert.equal(requests.length, 1);
  assert.deepEqual(requests[0], { method: 'GET', path: '/theo.marsh', kind: 'page' });
  assert.deepEqual(result.data, EXPECTED);
  assert.equal(result.next, null);
});

test('the example re-written by the sandbox writer reads the same (round trip of the test tooling)', async () => {
  assert.deepEqual(await profileOf(pageOf(exampleTree().tree)), EXPECTED.profile);
});

// ============================================================================ outcomes

test('not found: the Nuxt error page with HTTP 404, the same page with HTTP 200, and a bare 404 or 410', async () => {
  await assertOutcome({ status: 404, body: NOT_FOUND_HTML }, 'not_found');
  await assertOutcome({ status: 200, body: NOT_FOUND_HTML }, 'not_found');
  await assertOutcome({ status: 404, body: 'Not Found' }, 'not_found');
  await assertOutcome({ status: 410, body: '' }, 'not_found');
});

test('private: a 200 page whose PROFILE says is_private is 404, before the reduced PROFILE is judged', async () => {
  await assertOutcome({ status: 200, body: PRIVATE_HTML }, 'not_found', /private/);
  // Even wrapped in a Ref, and with an otherwise complete PROFILE.
  const { tree, profile } = exampleTree();
  profile.is_private = dv.wrap('Ref', true);
  await assertOutcome({ status: 200, body: pageOf(tree) }, 'not_found', /private/);
});

// 429 and 5xx are the upstream client's to classify (test/upstream/client.test.ts).
test('blocks: 403 with any body, the challenge page at any status, /login and /__challenge redirects, off-platform redirects', async () => {
  await assertOutcome({ status: 403, body: 'Forbidden' }, 'blocked');
  await assertOutcome({ status: 403, body: PROFILE_HTML }, 'blocked');
  await assertOutcome({ status: 401, body: '' }, 'blocked');
  await assertOutcome({ status: 200, body: CHALLENGE_HTML }, 'blocked', /challenge/);
  await assertOutcome({ status: 403, body: CHALLENGE_HTML }, 'blocked');
  // Step 1 comes before step 2: a challenge served with 404 is still a block.
  await assertOutcome({ status: 404, body: CHALLENGE_HTML }, 'blocked');
  await assertOutcome({ status: 200, body: '<html><body><form>Log in</form></body></html>', path: '/login?next=%2Ftheo.marsh' }, 'blocked', /login/);
  await assertOutcome({ status: 200, body: CHALLENGE_HTML, path: '/__challenge/v1?return=%2Ftheo.marsh' }, 'blocked');
  await assertOutcome({ status: 302, body: '', offPlatformLocation: 'https://verify.elsewhere.example/check' }, 'blocked', /off the platform/);
});

test('unrecognised: an unexpected status, or a 200 page without what the mapping needs, named in the message', async () => {
  await assertOutcome({ status: 418, body: PROFILE_HTML }, 'unrecognised', /linkpage-a.*HTTP 418/);
  const cases: Array<[string, string, RegExp]> = [
    ['no payload', PROFILE_HTML.replace(PAYLOAD_RE, ''), /__NUXT_DATA__/],
    ['payload id renamed', PROFILE_HTML.replace('id="__NUXT_DATA__"', 'id="__NUXT_DATA_OLD__"'), /__NUXT_DATA__/],
    ['payload not JSON', withPayloadText(PROFILE_HTML, '[["ShallowReactive",1],{'), /not valid JSON/],
    ['payload not an array', withPayloadText(PROFILE_HTML, '{"data":{}}'), /not a non-empty array/],
    ['payload empty array', withPayloadText(PROFILE_HTML, '[]'), /not a non-empty array/],
  ];
  for (const [label, body, message] of cases) await assertOutcome({ status: 200, body }, 'unrecognised', message).catch((error: unknown) => assert.fail(`${label}: ${String(error)}`));

  const mutate = async (label: string, change: (t: ReturnType<typeof exampleTree>) => void, message: RegExp) => {
    const t = exampleTree();
    change(t);
    const error = await outcome({ status: 200, body: pageOf(t.tree) });
    assert.equal(error.kind, 'unrecognised', `${label}: ${error.message}`);
    assert.match(error.message, /linkpage-a/, label);
    assert.match(error.message, message, label);
  };
  await mutate('no data', ({ root }) => delete root.data, /no "data"/);
  await mutate('no profile entry', ({ data }) => delete data['profile:theo.marsh'], /no "profile:" entry/);
  await mutate('null profile entry', ({ data }) => (data['profile:theo.marsh'] = null), /empty/);
  await mutate('PROFILE not an object', ({ data }) => (data['profile:theo.marsh'] = 'theo.marsh'), /PROFILE: expected an object, found a string/);
  await mutate('no username', ({ profile }) => delete profile.username, /PROFILE\.username/);
  await mutate('username -1', ({ profile }) => (profile.username = dv.undef), /PROFILE\.username/);
  await mutate('no avatar', ({ profile }) => delete profile.avatar, /PROFILE\.avatar/);
  await mutate('no created_at', ({ profile }) => delete profile.created_at, /PROFILE\.created_at/);
  await mutate('created_at not a date', ({ profile }) => (profile.created_at = 'yesterday'), /PROFILE\.created_at/);
  await mutate('no share_url', ({ profile }) => delete profile.share_url, /PROFILE\.share_url/);
  await mutate('user_id not an integer', ({ profile }) => (profile.user_id = 'x'), /PROFILE\.user_id/);
  await mutate('no total_links', ({ profile }) => delete profile.total_links, /PROFILE\.total_links/);
  await mutate('featured link without title', ({ profile }) => {
    const links = profile.featured_links as DvNode[];
    delete membersOf(links[1]).title;
  }, /PROFILE\.featured_links\[1\]\.title/);
  await mutate('social link without icon', ({ profile }) => delete membersOf((profile.social_links as DvNode[])[0]).icon, /social_links\[0\]\.icon/);
  await mutate('gallery item without created_at', ({ profile }) => delete membersOf((profile.gallery as DvNode[])[0]).created_at, /gallery\[0\]\.created_at/);
  await mutate('contact value not a string', ({ profile }) => (profile.contact_info = dv.map([['email', 5]])), /contact_info/);
  await mutate('colour neither string nor palette', ({ profile }) => (membersOf((profile.featured_links as DvNode[])[0]).color = 7), /color/);
});

test('unrecognised: an unknown marker on the decoded path fails; markers elsewhere do not matter', async () => {
  const values = rawPayload(PROFILE_HTML);
  const profileIndex = (values[3] as Record<string, number>)['profile:theo.marsh'] as number;
  const profileRaw = values[profileIndex] as Record<string, number>;

  // In PROFILE: an unknown marker, and a devalue type the contract does not list.
  for (const marker of [['Proxy', profileRaw.bio], ['URL', 'https://x.example/']]) {
    const changed = structuredClone(values);
    changed.push(marker);
    (changed[profileIndex] as Record<string, number>).bio = changed.length - 1;
    const error = await outcome({ status: 200, body: withPayloadText(PROFILE_HTML, JSON.stringify(changed)) });
    assert.equal(error.kind, 'unrecognised');
    assert.match(error.message, new RegExp(`unknown marker "?${marker[0]}`));
  }
  // A negative index outside -1..-6 inside PROFILE.
  const negative = structuredClone(values);
  (negative[profileIndex] as Record<string, number>).featured_links = negative.push([-7, 1]) - 1;
  assert.equal((await outcome({ status: 200, body: withPayloadText(PROFILE_HTML, JSON.stringify(negative)) })).kind, 'unrecognised');

  // In `state`, `once` and another `data` key: ignored.
  const elsewhere = structuredClone(values);
  const root = elsewhere[1] as Record<string, number>;
  root.state = elsewhere.push(['Proxy', 1]) - 1;
  root.once = elsewhere.push(['Temporal.Instant', '2024-01-01T00:00:00Z']) - 1;
  (elsewhere[3] as Record<string, number>)['app:weird'] = elsewhere.push(['Mystery', 0]) - 1;
  assert.deepEqual(await profileOf(withPayloadText(PROFILE_HTML, JSON.stringify(elsewhere))), EXPECTED.profile);
});

// ============================================================================ variations

test('variation: any index layout (sharing or not, any order) and an object used from several places', async () => {
  for (let i = 0; i < 6; i += 1) {
    const options: FlattenOptions = { sharePrimitives: i % 2 === 0, ...(i >= 2 ? { shuffle: new Rng('layout', String(i)) } : {}) };
    assert.deepEqual(await profileOf(pageOf(exampleTree().tree, options)), EXPECTED.profile, `layout ${i}`);
  }
  // One palette object referenced by two links.
  const { tree, profile } = exampleTree();
  const links = profile.featured_links as DvNode[];
  const palette = membersOf(links[0]).color as DvNode;
  membersOf(links[1]).color = palette;
  const text = JSON.stringify(flattenNuxtPayload(tree, { sharePrimitives: true }));
  assert.equal(text.match(/"dark":/g)?.length, 1, 'the palette is written once');
  const got = await profileOf(withPayloadText(PROFILE_HTML, text.replace(/</g, '\\u003C')));
  const featured = (got.featuredLinks as Array<{ id: number; color: unknown }>).find((f) => f.id === 55010);
  assert.deepEqual(featured?.color, { p: { d: '#1F2937', l: '#F9FAFB' } });
});

test('variation: Reactive, ShallowReactive, Ref and ShallowRef wrappers around any value at any depth', async () => {
  const wrappers: DvWrapper[] = ['Ref', 'ShallowRef', 'Reactive', 'ShallowReactive'];
  let n = 0;
  const wrapped = rebuild(exampleTree().tree, (node, depth) => (depth === 0 || kindOf(node) === 'undefined' ? node : dv.wrap(wrappers[n++ % 4] as DvWrapper, node)));
  assert.deepEqual(await profileOf(pageOf(wrapped, { sharePrimitives: false, shuffle: new Rng('wrap', '1') })), EXPECTED.profile);
  // Double wrapping too.
  const twice = rebuild(exampleTree().tree, (node, depth) => (depth < 2 || kindOf(node) === 'undefined' ? node : dv.wrap('Ref', dv.wrap('ShallowReactive', node))));
  assert.deepEqual(await profileOf(pageOf(twice)), EXPECTED.profile);
});

test('variation: every object written as a ["null", …] object, and every one as a plain object', async () => {
  const asNull = rebuild(exampleTree().tree, (node) =>
    node !== null && typeof node === 'object' && !Array.isArray(node) && !isDvSpecial(node as DvNode) ? dv.nullObject(node as Members) : node,
  );
  assert.deepEqual(await profileOf(pageOf(asNull)), EXPECTED.profile);
  const asPlain = rebuild(exampleTree().tree, (node) => (kindOf(node) === 'null' ? { ...(node as unknown as { members: Members }).members } : node));
  assert.deepEqual(await profileOf(pageOf(asPlain)), EXPECTED.profile);
});

test('variation: dates as ISO strings, features as an array of strings', async () => {
  const asStrings = rebuild(exampleTree().tree, (node) => (kindOf(node) === 'Date' ? (node as unknown as { iso: string }).iso : node));
  assert.deepEqual(await profileOf(pageOf(asStrings)), EXPECTED.profile);
  const { tree, profile } = exampleTree();
  profile.features = ['analytics', 'tips', 'shop'];
  assert.deepEqual(await profileOf(pageOf(tree)), expectedWith({ shopEnabled: true }));
  // An offset ISO string is converted to UTC with milliseconds.
  const offset = exampleTree();
  offset.profile.updated_at = '2024-11-10T17:45:03+01:00';
  assert.equal((await profileOf(pageOf(offset.tree))).updatedAt, '2024-11-10T16:45:03.000Z');
});

test('variation: a member set to undefined (-1) or left out means absent', async () => {
  const { tree, profile } = exampleTree();
  delete profile.video_profile; // -1 in the example: now left out
  profile.last_name = dv.undef;
  profile.first_name = dv.undef;
  delete profile.bio;
  delete profile.logo_url;
  profile.followers_count = dv.undef;
  delete profile.referral_link;
  profile.verified_badge_color = dv.undef;
  profile.is_verified = dv.undef;
  delete profile.features;
  profile.custom_theme = dv.undef;
  delete profile.contact_info;
  const p = await profileOf(pageOf(tree));
  assert.deepEqual(
    p,
    expectedWith({
      lastName: null,
      firstName: '',
      bio: '',
      logoUrl: null,
      followers: null,
      referralLink: '',
      verifiedColor: '',
      verified: false,
      tipsEnabled: false,
      shopEnabled: false,
      customTheme: Object.fromEntries(Object.keys(EXPECTED.profile.customTheme as object).map((key) => [key, null])),
      contactInfo: [],
    }),
  );
});

test('variation: EmptyRef values, null and "" optional strings, video profile, custom theme forms', async () => {
  const { tree, profile } = exampleTree();
  profile.bio = dv.emptyRef('""');
  profile.logo_url = dv.emptyRef('null', 'EmptyShallowRef');
  profile.followers_count = dv.emptyRef('0');
  profile.cover_image_url = '';
  profile.last_name = null;
  profile.is_ambassador = dv.emptyRef('false');
  profile.video_profile = { url: 'https://cdn.linkpage-a.example/videos/4821937/intro.mp4', thumbnail_url: dv.emptyRef('_') };
  profile.custom_theme = { background_color: '#000000', custom_font: dv.undef, level1_text_color: null };
  const p = await profileOf(pageOf(tree));
  assert.deepEqual(
    p,
    expectedWith({
      bio: '',
      logoUrl: null,
      followers: 0,
      coverUrl: null,
      lastName: null,
      isAmbassador: false,
      videoProfileUrl: 'https://cdn.linkpage-a.example/videos/4821937/intro.mp4',
      videoProfileThumbnailUrl: null,
      customTheme: {
        backgroundColor: '#000000',
        backgroundImageUrl: null,
        bioBackground: null,
        mainTextColor: null,
        level1TextColor: null,
        level2TextColor: null,
        customFont: null,
        customFontUrl: null,
      },
    }),
  );
  const nulled = exampleTree();
  nulled.profile.custom_theme = null;
  nulled.profile.video_profile = null;
  const q = await profileOf(pageOf(nulled.tree));
  assert.ok(Object.values(q.customTheme as object).every((value) => value === null));
  assert.equal(q.videoProfileUrl, null);
});

test('variation: unknown members in the root, data, PROFILE and its elements; any state, once and _errors', async () => {
  const { tree, root, data, profile } = exampleTree();
  root.prerenderedAt = 1_700_000_000_000;
  root.state = dv.wrap('Reactive', { $sbig: dv.emptyRef('0n'), $sre: dv.regexp('a+', 'g'), $sn: dv.bigint('123456789012345678901234567890') });
  root.once = dv.set([]);
  root._errors = dv.wrap('ShallowReactive', { 'profile:theo.marsh': dv.error({ message: 'x', statusCode: 500 }) });
  data['app:flags'] = dv.map([['beta', true]]);
  data['app:banner'] = dv.emptyRef('_');
  profile.tracking = dv.nullObject({ pixel: 'px', when: dv.date('2024-01-01T00:00:00.000Z') });
  profile.links_version = dv.bigint('9007199254740993');
  profile.badges = dv.set(['early']);
  for (const link of profile.featured_links as DvNode[]) membersOf(link).clicks_label = '1.2K';
  for (const item of profile.gallery as DvNode[]) membersOf(item).width = 1080;
  membersOf(profile.avatar).blurhash = 'LEHV6nWB2yk8';
  assert.deepEqual(await profileOf(pageOf(tree)), EXPECTED.profile);
});

test('variation: featured links, gallery and sections in any order are sorted; social links keep upstream order', async () => {
  const { tree, profile } = exampleTree();
  (profile.featured_links as DvNode[]).reverse();
  (profile.gallery as DvNode[]).reverse();
  (profile.sections as DvNode[]).reverse();
  (profile.social_links as DvNode[]).reverse();
  const p = await profileOf(pageOf(tree));
  assert.deepEqual(p, expectedWith({ socialLinks: [...(EXPECTED.profile.socialLinks as unknown[])].reverse() }));
  // Equal sort orders: ties by id.
  const ties = exampleTree();
  for (const link of ties.profile.featured_links as DvNode[]) membersOf(link).sort_order = 4;
  const sorted = (await profileOf(pageOf(ties.tree))).featuredLinks as Array<{ id: number; order: number }>;
  assert.deepEqual(sorted.map((f) => [f.id, f.order]), [[55010, 4], [55011, 4], [55012, 4]]);
});

test('sorting: full ties keep upstream order; negative and very large orders and ids sort like numbers', async () => {
  const { tree, profile } = exampleTree();
  const template = (profile.featured_links as DvNode[])[0] as DvNode;
  // [order, id, title]: two full ties (kept in upstream order), negative orders, ids beyond 2^40.
  const rows: Array<[number, number, string]> = [
    [3, 7, 'd'], [-2, 9, 'a'], [3, 7, 'e'], [3, 2 ** 40, 'f'], [0, -5, 'b'], [3, 7, 'g'], [-2, 10, 'c'], [Number.MAX_SAFE_INTEGER, 1, 'h'],
  ];
  profile.featured_links = rows.map(([order, id, title]) => ({ ...membersOf(template), sort_order: order, id, title }));
  const links = (await profileOf(pageOf(tree))).featuredLinks as Array<{ title: string }>;
  assert.equal(links.map((f) => f.title).join(''), 'acbdegfh'); // by order, then id; d, e and g in upstream order
  // Many small keys (sorted through one number per item) and full ties among them.
  const many = exampleTree();
  const item = (many.profile.gallery as DvNode[])[0] as DvNode;
  many.profile.gallery = Array.from({ length: 300 }, (_, i) => ({ ...membersOf(item), id: 7000 + (i % 7), sort_order: (i * 37) % 11, image_url: `https://cdn.linkpage-a.example/g/${i}.jpg` }));
  const gallery = (await profileOf(pageOf(many.tree))).gallery as Array<{ id: number; order: number; url: string }>;
  const expected = Array.from({ length: 300 }, (_, i) => ({ i, id: 7000 + (i % 7), order: (i * 37) % 11 })).sort((a, b) => a.order - b.order || a.id - b.id);
  assert.deepEqual(gallery.map((g) => g.url), expected.map(({ i }) => `https://cdn.linkpage-a.example/g/${i}.jpg`));
});

test('dates: the serializer\'s own form and any other form Date reads, as ISO 8601 UTC with milliseconds', async () => {
  const forms = [
    '2024-01-02T03:04:05.678Z',
    '0999-12-31T23:59:59.999Z',
    '2024-02-29T00:00:00.000Z',
    '2023-02-30T10:00:00.000Z', // Date rolls the day over
    '2024-01-02T24:00:00.000Z',
    '2024-01-02T03:04:05Z',
    '2024-01-02T03:04:05.678+02:00',
  ];
  for (const form of forms) {
    const { tree, profile } = exampleTree();
    profile.created_at = dv.date(form);
    membersOf((profile.gallery as DvNode[])[0]).created_at = form; // a plain ISO 8601 string
    const p = await profileOf(pageOf(tree));
    assert.equal(p.createdAt, new Date(form).toISOString(), form);
    const first = (p.gallery as Array<{ id: number; createdAt: string }>).find((g) => g.createdAt === new Date(form).toISOString());
    assert.ok(first, `gallery: ${form}`);
  }
});

test('variation: any number of links, gallery items and sections (0 included), an empty contact Map', async () => {
  const { tree, profile } = exampleTree();
  profile.social_links = [];
  profile.featured_links = [];
  profile.gallery = [];
  profile.sections = [];
  profile.contact_info = dv.map([]);
  const p = await profileOf(pageOf(tree));
  assert.deepEqual(p, expectedWith({ socialLinks: [], featuredLinks: [], gallery: [], sections: [], contactInfo: [], totalLinks: 6 }));
  // Many.
  const many = exampleTree();
  const template = (many.profile.gallery as DvNode[])[0] as DvNode;
  many.profile.gallery = Array.from({ length: 150 }, (_, i) => ({ ...membersOf(template), id: 1000 + i, sort_order: 149 - i }));
  const gallery = (await profileOf(pageOf(many.tree))).gallery as Array<{ id: number; order: number }>;
  assert.equal(gallery.length, 150);
  assert.deepEqual(gallery.slice(0, 2).map((g) => g.id), [1149, 1148]);
});

test('variation: social icons already absolute are copied; null handles become ""', async () => {
  const { tree, profile } = exampleTree();
  const first = membersOf((profile.social_links as DvNode[])[0]);
  first.icon = 'https://cdn.linkpage-a.example/icons/social/v2/socialnet.svg';
  first.handle = null;
  first.is_adult = true;
  const socials = (await profileOf(pageOf(tree))).socialLinks as Array<Record<string, unknown>>;
  assert.deepEqual(socials[0], {
    platform: 'socialnet',
    url: 'https://www.socialnet.example/theomarsh',
    handle: '',
    iconUrl: 'https://cdn.linkpage-a.example/icons/social/v2/socialnet.svg',
    isAdult: true,
  });
});

test('variation: payload escaping (\\/ and \\uXXXX, U+2028) is undone by JSON parsing, never by entity decoding', async () => {
  const { tree } = exampleTree();
  assert.deepEqual(await profileOf(pageOf(tree, { sharePrimitives: true, slashes: true })), EXPECTED.profile);
  assert.deepEqual(await profileOf(pageOf(tree, { sharePrimitives: false, asciiOnly: true })), EXPECTED.profile);
  const special = exampleTree();
  special.profile.bio = 'line\u2028sep &amp; </script-ish> \u{1F447}';
  const p = await profileOf(pageOf(special.tree, { sharePrimitives: true, asciiOnly: true }));
  assert.equal(p.bio, 'line\u2028sep &amp; </script-ish> \u{1F447}');
});

test('variation: payload <script> attribute order, quoting, missing data-* attributes and whitespace', async () => {
  const open = '<script type="application/json" data-nuxt-data="nuxt-app" data-ssr="true" id="__NUXT_DATA__">';
  assert.ok(PROFILE_HTML.includes(open));
  for (const replacement of [
    '<script id="__NUXT_DATA__" type="application/json">',
    "<script id='__NUXT_DATA__' data-ssr='true' type='application/json'>",
    '<script id=__NUXT_DATA__ type=application/json>',
    '<SCRIPT\n  data-nuxt-data="nuxt-app"\n  ID="__NUXT_DATA__"\n  type="application/json"\n>',
  ]) {
    assert.deepEqual(await profileOf(PROFILE_HTML.replace(open, replacement)), EXPECTED.profile, replacement);
  }
  // No whitespace between tags, or a lot of it; an extra script before the payload.
  const compact = PROFILE_HTML.replace(/>\s*\n\s*</g, '><');
  assert.deepEqual(await profileOf(compact), EXPECTED.profile);
  const airy = PROFILE_HTML.replace(/>\n</g, '>\n\n\t  <');
  assert.deepEqual(await profileOf(airy), EXPECTED.profile);
  const extra = PROFILE_HTML.replace('<div id="teleports"></div>', '<div id="teleports"></div><script type="application/json" id="__NUXT_OTHER__">[1]</script>');
  assert.deepEqual(await profileOf(extra), EXPECTED.profile);
});

test('variation: <head> tags in any attribute order and quoting, with entities; extra, missing and repeated tags', async () => {
  const head = PROFILE_HTML
    .replace(
      '<meta name="description" content="Street &amp; travel photographer based in Lisbon. Prints, presets and workshops below 👇">',
      "<meta content='Street &#38; travel photographer based in Lisbon. Prints, presets and workshops below &#x1F447;' NAME='Description'>",
    )
    .replace('<meta name="keywords" content="Theo Marsh, theo.marsh, photographer, Lisbon, prints, presets">', '<META Content="Theo Marsh, theo.marsh, photographer, Lisbon, prints, presets" name="KEYWORDS">')
    .replace(
      '<meta property="og:image" content="https://cdn.linkpage-a.example/avatars/4821937/a1b2c3.png">',
      '<meta property="og:site_name" content="linkpage-a">\n<meta content="https:&#x2F;&#x2F;cdn.linkpage-a.example/avatars/4821937/a1b2c3.png" property="OG:IMAGE">',
    )
    .replace('<link rel="canonical" href="https://linkpage-a.example/theo.marsh">', "<link href='https://linkpage-a.example/theo.marsh' REL='Canonical'>")
    .replace('<title>Theo Marsh (@theo.marsh) • linkpage-a</title>', '<title>\n   Theo Marsh (@theo.marsh) &bull; linkpage-a  \n</title>');
  assert.deepEqual(await profileOf(head), EXPECTED.profile);

  // Repeated tags: the first counts.
  const repeated = PROFILE_HTML.replace(
    '</head>',
    '<title>Other</title><meta name="description" content="Other"><meta property="og:image" content="https://x.example/a.png"><meta name="keywords" content="other"><link rel="canonical" href="https://linkpage-a.example/">\n</head>',
  );
  assert.deepEqual(await profileOf(repeated), EXPECTED.profile);

  // Missing tags give "".
  const bare = PROFILE_HTML.replace(/<title>.*<\/title>\n/, '').replace(/<meta name="(description|keywords)"[^>]*>\n/g, '').replace(/<meta property="og:image"[^>]*>\n/, '').replace(/<link rel="canonical"[^>]*>\n/, '');
  assert.deepEqual((await profileOf(bare)).metadata, { title: '', description: '', image: '', keywords: '', canonical: '' });

  // Entities: named (HTML5 ones included), decimal and hexadecimal.
  const entities = PROFILE_HTML.replace(
    /<meta name="description" content="[^"]*">/,
    '<meta name="description" content="caf&eacute; &lt;b&gt; &quot;q&quot; &apos;a&apos; &#233; &#xE9; &hearts;">',
  );
  assert.equal(((await profileOf(entities)).metadata as Record<string, string>).description, 'café <b> "q" \'a\' é é ♥');
});

test('variation: JSON-LD as an array, with @graph, a single sameAs string, extra blocks; no ProfilePage gives []', async () => {
  const ldRe = /<script type="application\/ld\+json">[\s\S]*?<\/script>\n/g;
  const blocks = PROFILE_HTML.match(ldRe) ?? [];
  assert.equal(blocks.length, 2);
  const json = (block: string) => JSON.parse(block.replace(/^<script[^>]*>/, '').replace(/<\/script>\n$/, '')) as Record<string, unknown>;
  const website = json(blocks[0] as string);
  const profilePage = json(blocks[1] as string);
  const withBlocks = (...values: unknown[]) =>
    PROFILE_HTML.replace(ldRe, '').replace('</head>', `${values.map((v) => `<script type="application/ld+json">${typeof v === 'string' ? v : scriptJson(v, { slashes: true })}</script>`).join('\n')}\n</head>`);
  const sameAs = EXPECTED.profile.sameAs;
  const { '@context': _c, ...profileNode } = profilePage;

  assert.deepEqual((await profileOf(withBlocks([website, profilePage]))).sameAs, sameAs);
  assert.deepEqual((await profileOf(withBlocks({ '@context': 'https://schema.org', '@graph': [website, profileNode] }))).sameAs, sameAs);
  assert.deepEqual((await profileOf(withBlocks('{not json', { '@type': 'BreadcrumbList', itemListElement: [] }, profilePage))).sameAs, sameAs);
  assert.deepEqual((await profileOf(withBlocks({ ...profilePage, '@type': ['ProfilePage', 'WebPage'] }))).sameAs, sameAs);
  const single = { ...profilePage, mainEntity: { ...(profilePage.mainEntity as object), sameAs: 'https://theomarsh.example' } };
  assert.deepEqual((await profileOf(withBlocks(single))).sameAs, ['https://theomarsh.example']);
  const noSameAs = { ...profilePage, mainEntity: { '@type': 'Person', name: 'Theo Marsh' } };
  assert.deepEqual((await profileOf(withBlocks(noSameAs, profilePage))).sameAs, [], 'the first ProfilePage counts');
  assert.deepEqual((await profileOf(withBlocks(website))).sameAs, []);
  assert.deepEqual((await profileOf(withBlocks())).sameAs, []);
  // `type` attribute in another case and quoting.
  const quoted = PROFILE_HTML.replace(/<script type="application\/ld\+json">/g, "<script type='Application/LD+JSON'>");
  assert.deepEqual((await profileOf(quoted)).sameAs, sameAs);
});

test('the profile entry: the one for the requested username, else the single one (after an in-platform redirect)', async () => {
  const { tree, data } = exampleTree();
  data['profile:someone.else'] = null;
  assert.deepEqual(await profileOf(pageOf(tree)), EXPECTED.profile);
  const renamed = exampleTree();
  renamed.data['profile:theo.m'] = renamed.data['profile:theo.marsh'] as DvNode;
  delete renamed.data['profile:theo.marsh'];
  assert.deepEqual(await profileOf(pageOf(renamed.tree)), EXPECTED.profile);
  const several = exampleTree();
  several.data['profile:a.b'] = several.data['profile:theo.marsh'] as DvNode;
  several.data['profile:c.d'] = several.data['profile:theo.marsh'] as DvNode;
  delete several.data['profile:theo.marsh'];
  assert.equal((await outcome({ status: 200, body: pageOf(several.tree) })).kind, 'unrecognised');
});

test('user_id as a big integer is still a decimal string', async () => {
  const { tree, profile } = exampleTree();
  profile.user_id = dv.bigint('12345678901234567890');
  assert.equal((await profileOf(pageOf(tree))).userId, '12345678901234567890');
});

test('the endpoint is declared with its extractor, and a position is not needed', () => {
  assert.equal(typeof linkpageAProfile.extractor, 'function');
  assert.equal(linkpageAProfile.paging, undefined);
});
