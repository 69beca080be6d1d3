// socialnet endpoint declarations: data schemas against the contract's test vectors, URL rules
// and the posts endpoint's url/pageId rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { EndpointDeclaration } from '../../src/endpoints/types.ts';
import { declared, endpointsOf } from '../support/endpoints.ts';
import { isSocialnetId, parseSocialnetUrl } from '../../src/platforms/socialnet/urls.ts';

const socialnetPostCommentReplies = declared('socialnet.post.comment.replies');
const socialnetProfile = declared('socialnet.profile');
const socialnetProfilePosts = declared('socialnet.profile.posts');
const socialnetProfileReels = declared('socialnet.profile.reels');
const socialnetEndpoints = endpointsOf('socialnet');

const ajv = new Ajv({ strict: false, allErrors: true });
// ajv-formats is CommonJS: under nodenext its callable plugin is the `default` property.
addFormats.default(ajv);

const validators = new Map<string, ValidateFunction>();
const validatorFor = (endpoint: EndpointDeclaration): ValidateFunction => {
  let validate = validators.get(endpoint.id);
  if (validate === undefined) {
    validate = ajv.compile(endpoint.data);
    validators.set(endpoint.id, validate);
  }
  return validate;
};

const FIXTURES = new URL('../fixtures/upstream/', import.meta.url);

/** Replaces every `{"$position": …}` token by a dummy cursor string. */
const replacePositions = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(replacePositions);
  if (value !== null && typeof value === 'object') {
    if ('$position' in value) return 'dummy-cursor';
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, replacePositions(inner)]));
  }
  return value;
};

const loadExpected = (name: string): Record<string, unknown> => {
  const raw: unknown = JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8'));
  return { ...(replacePositions(raw) as Record<string, unknown>), fetchedAt: '2024-01-01T00:00:00.000Z' };
};

const assertValid = (endpoint: EndpointDeclaration, data: unknown, label: string): void => {
  const validate = validatorFor(endpoint);
  const ok = validate(data);
  assert.ok(ok, `${label} should match ${endpoint.id}: ${JSON.stringify(validate.errors, null, 2)}`);
};

const assertInvalid = (endpoint: EndpointDeclaration, data: unknown, label: string): void => {
  assert.equal(validatorFor(endpoint)(data), false, `${label} should not match ${endpoint.id}`);
};

const VECTORS: ReadonlyArray<[string, EndpointDeclaration]> = [
  ['socialnet-expected-profile-posts.json', socialnetProfilePosts],
  ['socialnet-expected-timeline-page.json', socialnetProfilePosts],
  ['socialnet-expected-reels.json', socialnetProfileReels],
  ['socialnet-expected-reels-page.json', socialnetProfileReels],
  ['socialnet-expected-replies.json', socialnetPostCommentReplies],
  ['socialnet-expected-profile.json', socialnetProfile],
  ['socialnet-expected-profile-gated.json', socialnetProfile],
];

// Deep-clone helper for mutations.
const clone = <T>(value: T): T => structuredClone(value);
type Json = Record<string, unknown>;
const at = (value: unknown, ...path: (string | number)[]): Json => {
  let current: unknown = value;
  for (const key of path) current = (current as Record<string | number, unknown>)[key];
  return current as Json;
};

// ---------------------------------------------------------------- declarations

test('declarations: ids, paths, paging and key order', () => {
  assert.deepEqual(
    socialnetEndpoints.map((e) => e.id).sort(),
    ['socialnet.post.comment.replies', 'socialnet.profile', 'socialnet.profile.posts', 'socialnet.profile.reels'],
  );
  for (const endpoint of socialnetEndpoints) {
    assert.equal(endpoint.platform, 'socialnet');
    assert.equal(typeof endpoint.extractor, 'function');
    assert.equal((endpoint.query as { additionalProperties?: unknown }).additionalProperties, false);
    assert.equal('cache_max_age' in endpoint.query.properties, false);
    assert.ok(endpoint.summary.length > 0 && endpoint.description.length > 0);
    const normalised = endpoint.normalise(endpoint.exampleQuery);
    assert.equal(normalised.ok, true, `${endpoint.id} example query normalises`);
  }
  for (const [endpoint, items] of [[socialnetProfilePosts, 'posts'], [socialnetProfileReels, 'reels'], [socialnetPostCommentReplies, 'replies']] as const) {
    assert.deepEqual(endpoint.paging, { param: 'cursor', field: 'cursor', flag: 'hasNextPage', end: null, items });
  }
  assert.equal(socialnetProfile.paging, undefined);
  assert.equal(socialnetProfilePosts.path, '/v1/socialnet/profile/posts');
  assert.equal(socialnetProfileReels.path, '/v1/socialnet/profile/reels');
  assert.equal(socialnetPostCommentReplies.path, '/v1/socialnet/post/comment/replies');
  assert.equal(socialnetProfile.path, '/v1/socialnet/profile');
  assert.deepEqual(Object.keys(socialnetPostCommentReplies.data.properties), [
    'replies', 'replyCount', 'paging', 'feedbackId', 'fetchedAt',
  ]);
  assert.deepEqual(socialnetProfileReels.query.required, ['url']);
  assert.deepEqual(socialnetProfile.query.required, ['url']);
  assert.deepEqual(socialnetPostCommentReplies.query.required, ['feedbackId', 'expansionToken']);
  assert.equal(socialnetProfilePosts.query.required, undefined);
});

test('data schemas: property order follows the expected JSON files', () => {
  for (const [file, endpoint] of VECTORS) {
    const data = loadExpected(file);
    assert.deepEqual(Object.keys(endpoint.data.properties), Object.keys(data), file);
  }
  const post = at(loadExpected('socialnet-expected-profile-posts.json'), 'posts', 0);
  const postSchema = at(socialnetProfilePosts.data.properties, 'posts', 'items');
  assert.deepEqual(Object.keys(at(postSchema, 'properties')), Object.keys(post));
  const profile = at(loadExpected('socialnet-expected-profile.json'), 'profile');
  assert.deepEqual(Object.keys(at(socialnetProfile.data.properties, 'profile', 'properties')), Object.keys(profile));
});

// ---------------------------------------------------------------- test vectors

for (const [file, endpoint] of VECTORS) {
  test(`data schema accepts ${file}`, () => {
    assertValid(endpoint, loadExpected(file), file);
  });
}

test('data schema: paging at the end of a listing and empty lists', () => {
  const reels = loadExpected('socialnet-expected-reels-page.json');
  assertValid(socialnetProfileReels, { ...reels, reels: [], reelCount: 0 }, 'empty reels');
  const replies = loadExpected('socialnet-expected-replies.json');
  assertValid(
    socialnetPostCommentReplies,
    { ...replies, replies: [], replyCount: 0, paging: { cursor: null, hasNextPage: false } },
    'empty replies',
  );
});

test('data schema: nullable fields accept null', () => {
  const posts = loadExpected('socialnet-expected-timeline-page.json');
  const post = at(posts, 'posts', 1);
  at(post, 'author').verified = null;
  at(post, 'media').videoHdUrl = null;
  at(post, 'media').width = null;
  at(post, 'media').music = null;
  const link = at(posts, 'posts', 2, 'sharedPost', 'link');
  link.description = null;
  link.domain = null;
  link.imageUrl = null;
  link.title = null;
  assertValid(socialnetProfilePosts, posts, 'posts with nulls');

  const reels = loadExpected('socialnet-expected-reels.json');
  at(reels, 'reels', 0).audio = null;
  assertValid(socialnetProfileReels, reels, 'reel without audio');

  const profile = loadExpected('socialnet-expected-profile.json');
  const p = at(profile, 'profile');
  Object.assign(p, { coverPhotoUrl: null, followers: null, following: null, rating: null, businessHours: null, likes: null });
  at(p, 'contact').website = null;
  assertValid(socialnetProfile, profile, 'profile with nulls');
});

test('data schema: null in a non-nullable field fails', () => {
  const posts = loadExpected('socialnet-expected-profile-posts.json');
  for (const mutate of [
    (d: Json) => (at(d, 'posts', 0).text = null),
    (d: Json) => (at(d, 'posts', 0).createdTimestamp = null),
    (d: Json) => (at(d, 'posts', 0, 'media').thumbnailUrl = null),
    (d: Json) => (at(d, 'posts', 0, 'topComments', 0).feedbackId = null),
    (d: Json) => (at(d, 'posts', 0, 'topComments', 0, 'author').verified = null),
    (d: Json) => (at(d, 'posts', 0, 'stats').reactions = null),
    (d: Json) => (at(d, 'paging').hasNextPage = null),
    (d: Json) => (d.postCount = null),
  ]) {
    const copy = clone(posts);
    mutate(copy);
    assertInvalid(socialnetProfilePosts, copy, `posts mutated by ${mutate.toString()}`);
  }

  const reels = loadExpected('socialnet-expected-reels.json');
  for (const field of ['videoUrl', 'durationSeconds', 'feedbackId']) {
    const copy = clone(reels);
    at(copy, 'reels', 0)[field] = null;
    assertInvalid(socialnetProfileReels, copy, `reel.${field} = null`);
  }

  const replies = loadExpected('socialnet-expected-replies.json');
  for (const field of ['text', 'legacyId', 'replyCount', 'expansionToken']) {
    const copy = clone(replies);
    at(copy, 'replies', 0)[field] = null;
    assertInvalid(socialnetPostCommentReplies, copy, `reply.${field} = null`);
  }
  const noUrl = clone(replies);
  at(noUrl, 'replies', 1, 'attachments', 0).url = null;
  assertInvalid(socialnetPostCommentReplies, noUrl, 'attachment.url = null');

  const profile = loadExpected('socialnet-expected-profile.json');
  for (const field of ['name', 'url', 'categories', 'profilePictureUrl', 'links', 'otherDetails']) {
    const copy = clone(profile);
    at(copy, 'profile')[field] = null;
    assertInvalid(socialnetProfile, copy, `profile.${field} = null`);
  }
  const gated = clone(profile);
  gated.gated = null;
  assertInvalid(socialnetProfile, gated, 'gated = null');
});

test('data schema: unknown fields in closed objects fail', () => {
  const posts = loadExpected('socialnet-expected-timeline-page.json');
  for (const target of [
    (d: Json) => d,
    (d: Json) => at(d, 'posts', 0),
    (d: Json) => at(d, 'posts', 0, 'author'),
    (d: Json) => at(d, 'posts', 0, 'media'),
    (d: Json) => at(d, 'posts', 1, 'media', 'music'),
    (d: Json) => at(d, 'posts', 0, 'stats'),
    (d: Json) => at(d, 'posts', 0, 'topComments', 0),
    (d: Json) => at(d, 'posts', 2, 'sharedPost'),
    (d: Json) => at(d, 'posts', 2, 'sharedPost', 'link'),
    (d: Json) => at(d, 'paging'),
  ]) {
    const copy = clone(posts);
    target(copy).extra = 'x';
    assertInvalid(socialnetProfilePosts, copy, `extra field via ${target.toString()}`);
  }
  const replies = loadExpected('socialnet-expected-replies.json');
  const extraAttachment = clone(replies);
  at(extraAttachment, 'replies', 1, 'attachments', 0).extra = 1;
  assertInvalid(socialnetPostCommentReplies, extraAttachment, 'extra attachment field');

  const profile = loadExpected('socialnet-expected-profile.json');
  const extraDetail = clone(profile);
  at(extraDetail, 'profile', 'otherDetails', 0).extra = 1;
  assertInvalid(socialnetProfile, extraDetail, 'extra otherDetails field');
  const extraReel = loadExpected('socialnet-expected-reels.json');
  at(extraReel, 'reels', 0, 'audio').extra = 1;
  assertInvalid(socialnetProfileReels, extraReel, 'extra audio field');
});

test('data schema: a nested reshare and wrong types fail', () => {
  const posts = loadExpected('socialnet-expected-timeline-page.json');
  const nested = clone(posts);
  const shared = at(nested, 'posts', 2, 'sharedPost');
  shared.sharedPost = clone(shared);
  assertInvalid(socialnetProfilePosts, nested, 'sharedPost inside sharedPost');

  const badType = clone(posts);
  at(badType, 'posts', 0, 'media').type = 'gif';
  assertInvalid(socialnetProfilePosts, badType, 'media.type gif');

  const fractional = clone(posts);
  at(fractional, 'posts', 0, 'stats').reactions = 1.5;
  assertInvalid(socialnetProfilePosts, fractional, 'fractional reactions');

  const badDate = clone(posts);
  badDate.fetchedAt = 'yesterday';
  assertInvalid(socialnetProfilePosts, badDate, 'fetchedAt not a date-time');

  const missing = clone(posts);
  delete at(missing, 'posts', 0).sharedPost;
  assertInvalid(socialnetProfilePosts, missing, 'missing sharedPost');
});

// ---------------------------------------------------------------- URL rules

const CANONICAL_VANITY = 'https://www.socialnet.example/harborbistro';
const CANONICAL_ID = 'https://www.socialnet.example/profile.php?id=100064512345678';

test('parseSocialnetUrl: accepted forms canonicalise', () => {
  const cases: Array<[string, string]> = [
    ['https://www.socialnet.example/harborbistro', CANONICAL_VANITY],
    ['https://www.socialnet.example/harborbistro/', CANONICAL_VANITY],
    ['http://www.socialnet.example/harborbistro', CANONICAL_VANITY],
    ['https://socialnet.example/harborbistro', CANONICAL_VANITY],
    ['https://m.socialnet.example/harborbistro', CANONICAL_VANITY],
    ['https://web.socialnet.example/harborbistro', CANONICAL_VANITY],
    ['https://WWW.SocialNet.Example/harborbistro', CANONICAL_VANITY],
    ['https://www.socialnet.example/HarborBistro', CANONICAL_VANITY],
    ['https://www.socialnet.example/harborbistro#about', CANONICAL_VANITY],
    ['https://www.socialnet.example/harborbistro?utm_source=x&fbclid=abc', CANONICAL_VANITY],
    ['https://www.socialnet.example/harborbistro?locale=en_US', CANONICAL_VANITY],
    ['  https://www.socialnet.example/harborbistro  ', CANONICAL_VANITY],
    ['https://www.socialnet.example:443/harborbistro', CANONICAL_VANITY],
    ['https://www.socialnet.example/harborbistro/reels', CANONICAL_VANITY],
    ['https://www.socialnet.example/harborbistro/reels/', CANONICAL_VANITY],
    ['https://www.socialnet.example/harborbistro/about', CANONICAL_VANITY],
    ['https://www.socialnet.example/harborbistro/about_contact_and_basic_info', CANONICAL_VANITY],
    ['https://www.socialnet.example/harborbistro/photos', CANONICAL_VANITY],
    ['https://www.socialnet.example/harborbistro/videos', CANONICAL_VANITY],
    ['https://www.socialnet.example/harborbistro/followers/', CANONICAL_VANITY],
    ['https://www.socialnet.example/harborbistro/following', CANONICAL_VANITY],
    ['https://www.socialnet.example/harborbistro/reviews', CANONICAL_VANITY],
    ['https://www.socialnet.example/dana.whitfield', 'https://www.socialnet.example/dana.whitfield'],
    ['https://www.socialnet.example/tom.becker.77', 'https://www.socialnet.example/tom.becker.77'],
    ['https://www.socialnet.example/profile.php?id=100064512345678', CANONICAL_ID],
    ['https://m.socialnet.example/profile.php?id=100064512345678&sk=reels_tab', CANONICAL_ID],
    ['https://www.socialnet.example/profile.php?sk=about&id=100064512345678', CANONICAL_ID],
    ['https://www.socialnet.example/profile.php?id=100064512345678&sk=about_contact_and_basic_info', CANONICAL_ID],
    ['https://www.socialnet.example/profile.php?id=100064512345678&mibextid=abc#x', CANONICAL_ID],
    ['https://www.socialnet.example/profile.php/?id=100064512345678', CANONICAL_ID],
    ['https://www.socialnet.example/people/Harbor-Bistro/100064512345678', CANONICAL_ID],
    ['https://www.socialnet.example/people/Harbor-Bistro/100064512345678/', CANONICAL_ID],
    ['https://socialnet.example/people/Marco-Ruiz/100023456789012/', 'https://www.socialnet.example/profile.php?id=100023456789012'],
  ];
  for (const [input, expected] of cases) {
    const result = parseSocialnetUrl(input);
    assert.ok(result.ok, `${input} should be accepted: ${result.ok ? '' : result.message}`);
    assert.equal(result.url, expected, input);
    // The canonical form is a fixed point.
    const again = parseSocialnetUrl(result.url);
    assert.ok(again.ok && again.url === expected, `canonical ${expected} re-parses to itself`);
  }
  const vanity = parseSocialnetUrl('https://www.socialnet.example/HarborBistro/reels');
  assert.ok(vanity.ok);
  assert.deepEqual(vanity.reference, { kind: 'vanity', vanity: 'harborbistro' });
  const id = parseSocialnetUrl('https://www.socialnet.example/people/X/100064512345678');
  assert.ok(id.ok);
  assert.deepEqual(id.reference, { kind: 'id', id: '100064512345678' });
});

test('parseSocialnetUrl: refusals', () => {
  const refused = [
    '',
    'harborbistro',
    'www.socialnet.example/harborbistro',
    '//www.socialnet.example/harborbistro',
    'https://www.othernet.example/harborbistro',
    'https://scontent.socialnet-cdn.example/harborbistro',
    'https://www.socialnet.example.evil.test/harborbistro',
    'https://evil.test#@www.socialnet.example/harborbistro',
    'evil.test#@www.socialnet.example',
    'https://evil.test/?@www.socialnet.example/harborbistro',
    'https://user@www.socialnet.example/x',
    'https://user:pass@www.socialnet.example/harborbistro',
    'https://127.0.0.1/harborbistro',
    'https://[::1]/harborbistro',
    'https://0x7f000001/harborbistro',
    'javascript:alert(1)//www.socialnet.example/harborbistro',
    'ftp://www.socialnet.example/harborbistro',
    'file:///etc/passwd',
    'https://www.socialnet.example:8443/harborbistro',
    `https://www.socialnet.example/${'a'.repeat(2100)}`,
    'https://www.socialnet.example/',
    'https://www.socialnet.example',
    'https://www.socialnet.example/harborbistro/posts/1092345678901234',
    'https://www.socialnet.example/reel/1456789012345678',
    'https://www.socialnet.example/groups/seafoodlovers',
    'https://www.socialnet.example/harborbistro/events',
    'https://www.socialnet.example/harborbistro/reels_tab',
    'https://www.socialnet.example/harborbistro//',
    'https://www.socialnet.example//harborbistro',
    'https://www.socialnet.example/abc',
    'https://www.socialnet.example/12345678',
    'https://www.socialnet.example/.harborbistro',
    'https://www.socialnet.example/harborbistro.',
    'https://www.socialnet.example/harbor_bistro',
    `https://www.socialnet.example/${'a'.repeat(51)}`,
    'https://www.socialnet.example/photos',
    'https://www.socialnet.example/Marketplace',
    'https://www.socialnet.example/permalink.php?story_snid=1&id=100064512345678',
    'https://www.socialnet.example/profile.php',
    'https://www.socialnet.example/profile.php?sk=about',
    'https://www.socialnet.example/profile.php?id=abc',
    'https://www.socialnet.example/profile.php?id=012345678901234',
    'https://www.socialnet.example/profile.php?id=12345',
    'https://www.socialnet.example/profile.php?id=100064512345678&id=100023456789012',
    'https://www.socialnet.example/profile.php?id=100064512345678&sk=timeline_tab',
    'https://www.socialnet.example/people/100064512345678',
    'https://www.socialnet.example/people/Harbor-Bistro/1000645',
    'https://www.socialnet.example/people/Harbor-Bistro/100064512345678/followers',
    'https://www.socialnet.example/people/%E0%A4%A/100064512345678',
  ];
  for (const input of refused) {
    const result = parseSocialnetUrl(input);
    assert.equal(result.ok, false, `${input.slice(0, 120)} should be refused`);
    if (!result.ok) assert.ok(result.message.length > 0);
  }
});

test('pageId rule', () => {
  for (const id of ['100064512345678', '1000645123456789', '61552345678901234']) assert.ok(isSocialnetId(id), id);
  for (const id of ['', '12345678901234', '100064512345678901', '012345678901234', '10006451234567a', ' 100064512345678']) {
    assert.equal(isSocialnetId(id), false, id);
  }
});

// ---------------------------------------------------------------- normalise

test('posts normalise: url or pageId', () => {
  assert.deepEqual(socialnetProfilePosts.normalise({ url: 'https://m.socialnet.example/HarborBistro/?fbclid=1' }), {
    ok: true,
    params: { url: CANONICAL_VANITY },
  });
  assert.deepEqual(socialnetProfilePosts.normalise({ pageId: '100064512345678', cursor: 'abc' }), {
    ok: true,
    params: { pageId: '100064512345678' },
  });

  const neither = socialnetProfilePosts.normalise({ cursor: 'abc' });
  assert.equal(neither.ok, false);
  assert.ok(!neither.ok && neither.details.length === 1 && neither.details[0]?.path === 'url');
  assert.match(!neither.ok ? (neither.details[0]?.message ?? '') : '', /url.*pageId|pageId.*url/);

  const both = socialnetProfilePosts.normalise({ url: CANONICAL_VANITY, pageId: '100064512345678' });
  assert.equal(both.ok, false);

  const badHost = socialnetProfilePosts.normalise({ url: 'https://evil.test/harborbistro' });
  assert.ok(!badHost.ok && badHost.details.length === 1 && badHost.details[0]?.path === 'url');

  const badId = socialnetProfilePosts.normalise({ pageId: '123' });
  assert.ok(!badId.ok && badId.details.length === 1 && badId.details[0]?.path === 'pageId');

  // Every problem is listed.
  const all = socialnetProfilePosts.normalise({ url: 'ftp://x', pageId: 'abc' });
  assert.ok(!all.ok);
  const paths = !all.ok ? all.details.map((d) => d.path) : [];
  assert.ok(paths.includes('url') && paths.includes('pageId'));
  assert.ok(paths.filter((p) => p === 'url').length === 2, 'both the conflict and the bad url are reported');
});

test('reels, replies and profile normalise', () => {
  assert.deepEqual(socialnetProfileReels.normalise({ url: 'https://www.socialnet.example/harborbistro/reels/' }), {
    ok: true,
    params: { url: CANONICAL_VANITY },
  });
  const badReels = socialnetProfileReels.normalise({ url: 'https://www.socialnet.example/reel/1456789012345678' });
  assert.ok(!badReels.ok && badReels.details[0]?.path === 'url');

  assert.deepEqual(socialnetPostCommentReplies.normalise({ feedbackId: 'ZmVlZA==', expansionToken: 'tok', cursor: 'c' }), {
    ok: true,
    params: { feedbackId: 'ZmVlZA==', expansionToken: 'tok' },
  });
  const missing = socialnetPostCommentReplies.normalise({});
  assert.ok(!missing.ok);
  assert.deepEqual(!missing.ok ? missing.details.map((d) => d.path) : [], ['feedbackId', 'expansionToken']);

  assert.deepEqual(socialnetProfile.normalise({ url: 'https://socialnet.example/profile.php?id=100064512345678&sk=about' }), {
    ok: true,
    params: { url: CANONICAL_ID, businessHours: 'true', allowGated: 'true' },
  });
  assert.deepEqual(socialnetProfile.normalise({ url: CANONICAL_VANITY, businessHours: '0', allowGated: 'false' }), {
    ok: true,
    params: { url: CANONICAL_VANITY, businessHours: 'false', allowGated: 'false' },
  });
  assert.deepEqual(socialnetProfile.normalise({ url: CANONICAL_VANITY, businessHours: '1', allowGated: 'true' }), {
    ok: true,
    params: { url: CANONICAL_VANITY, businessHours: 'true', allowGated: 'true' },
  });
});

test('query schemas: lengths and switches', () => {
  const check = (endpoint: EndpointDeclaration, query: Record<string, string>): boolean =>
    ajv.validate(endpoint.query, query);
  assert.ok(check(socialnetProfilePosts, {}), 'posts: required-ness is a cross-field rule');
  assert.equal(check(socialnetProfilePosts, { url: CANONICAL_VANITY, unknown: 'x' }), false, 'a parameter it does not declare is refused');
  assert.equal(check(socialnetProfilePosts, { pageId: '1'.repeat(1025) }), false);
  assert.equal(check(socialnetProfilePosts, { url: `https://x/${'a'.repeat(2048)}` }), false);
  assert.equal(check(socialnetProfilePosts, { url: CANONICAL_VANITY, cursor: 'c'.repeat(4097) }), false);
  assert.equal(check(socialnetProfileReels, {}), false);
  assert.equal(check(socialnetPostCommentReplies, { feedbackId: 'a' }), false);
  assert.equal(check(socialnetPostCommentReplies, { feedbackId: 'a'.repeat(1025), expansionToken: 'b' }), false);
  assert.equal(check(socialnetPostCommentReplies, { feedbackId: 'a', expansionToken: 'b'.repeat(1025) }), false);
  assert.ok(check(socialnetProfile, { url: CANONICAL_VANITY, businessHours: '0', allowGated: '1' }));
  assert.equal(check(socialnetProfile, { url: CANONICAL_VANITY, allowGated: 'yes' }), false);
});
