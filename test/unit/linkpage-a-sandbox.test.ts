// The linkpage-a sandbox against the linkpage-a extractor: the handler is called directly through
// a fake upstream client (page headers, in-platform redirects, retries of 5xx and resets, 429 as a
// block), and the extractor's output must validate against the endpoint's data schema and equal
// what the generated profile says, whatever layout variations the account got.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { declared, extractorOf } from '../support/endpoints.ts';
import type { ExtractResult } from '../../src/endpoints/types.ts';

const linkpageAProfile = declared('linkpage-a.profile');
import { UpstreamOutcome, type OutcomeKind } from '../../src/upstream/outcomes.ts';
import type { Upstream, UpstreamResponse } from '../../src/upstream/types.ts';
import type { SandboxRequest } from '../../sandbox/common.ts';
import { linkpageAModel, linkpageASandbox, viewsLabel, type LinkpageAModel } from '../../sandbox/platforms/linkpage-a.ts';

const SEED = 'unit-seed';
const extract = extractorOf('linkpage-a.profile');
if (extract === undefined) throw new Error('no linkpage-a.profile extractor');

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
const validate = ajv.compile(linkpageAProfile.data);

const PAGE_HEADERS = {
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36',
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
  'accept-language': 'en-US,en;q=0.9',
  'sec-fetch-mode': 'navigate',
  'sec-fetch-dest': 'document',
  'sec-fetch-site': 'none',
};
const HOSTS = ['linkpage-a.example', 'www.linkpage-a.example'];

/** What the real client does, in miniature, against the sandbox handler. */
function sandboxUpstream(options: { headers?: Record<string, string>; log?: string[] } = {}): Upstream {
  const attempts = new Map<string, number>();
  return async (request) => {
    let path = request.path;
    for (let hop = 0; hop <= 5; hop += 1) {
      let answer;
      for (let retry = 0; ; retry += 1) {
        const key = `GET ${path}`;
        const attempt = (attempts.get(key) ?? 0) + 1;
        attempts.set(key, attempt);
        options.log?.push(path);
        const [pathname = '/', search = ''] = path.split('?');
        const sandboxRequest: SandboxRequest = {
          method: request.method ?? 'GET',
          path: pathname,
          query: new URLSearchParams(search),
          headers: options.headers ?? PAGE_HEADERS,
          body: '',
        };
        answer = await linkpageASandbox.handle(sandboxRequest, { seed: SEED, attempt, slowMs: 1 });
        if ('reset' in answer || answer.status >= 500) {
          if (retry < 3) continue;
          throw new UpstreamOutcome('transient', 'linkpage-a', 'upstream unavailable');
        }
        break;
      }
      if (answer.status === 429) throw new UpstreamOutcome('blocked', 'linkpage-a', 'HTTP 429');
      const headers = answer.headers ?? {};
      const body = typeof answer.body === 'string' ? answer.body : answer.body.toString('utf8');
      if (answer.status >= 300 && answer.status < 400 && headers.location) {
        const next = new URL(headers.location, `https://linkpage-a.example${path}`);
        if (!HOSTS.includes(next.hostname)) {
          return { status: answer.status, headers, body: '', path, offPlatformLocation: headers.location } satisfies UpstreamResponse;
        }
        path = `${next.pathname}${next.search}`;
        continue;
      }
      return { status: answer.status, headers, body, path } satisfies UpstreamResponse;
    }
    throw new UpstreamOutcome('blocked', 'linkpage-a', 'too many redirects');
  };
}

const run = (url: string, upstream: Upstream = sandboxUpstream()): Promise<ExtractResult> => {
  const normalised = linkpageAProfile.normalise({ url });
  if (!normalised.ok) throw new Error(`not a linkpage-a URL: ${url}`);
  return extract(
    { params: normalised.params, position: null },
    { signal: new AbortController().signal, deadline: Date.now() + 10_000, log: console as never, upstream },
  );
};

const outcomeOf = async (url: string, upstream?: Upstream): Promise<OutcomeKind> => {
  try {
    await run(url, upstream);
  } catch (error) {
    if (error instanceof UpstreamOutcome) return error.kind;
    throw error;
  }
  return assert.fail(`${url} should not give data`);
};

/** The API profile that the generated model should map to (src/platforms/linkpage-a/README.md). */
function expectedProfile(m: LinkpageAModel): Record<string, unknown> {
  const theme = m.custom_theme ?? null;
  const media = (icon: string) => (/^https?:/.test(icon) ? icon : `https://cdn.linkpage-a.example${icon}`);
  return {
    id: m.id,
    userId: String(m.user_id),
    username: m.username,
    displayName: m.display_name,
    firstName: m.first_name ?? '',
    lastName: m.last_name || null,
    bio: m.bio ?? '',
    url: m.share_url,
    verified: m.is_verified,
    isAmbassador: m.is_ambassador,
    isPrivate: false,
    isAdult: m.is_adult,
    isDefaultProfilePicture: m.avatar.is_default,
    tipsEnabled: m.features.includes('tips'),
    shopEnabled: m.features.includes('shop'),
    verifiedColor: m.verified_badge_color ?? '',
    avatarUrl: m.avatar.url,
    avatarUrlPng: m.avatar.png_url,
    coverUrl: m.cover_image_url,
    logoUrl: m.logo_url ?? null,
    videoProfileUrl: m.video_profile?.url ?? null,
    videoProfileThumbnailUrl: m.video_profile?.thumbnail_url ?? null,
    views: m.views_label,
    followers: m.followers_count,
    totalLinks: m.total_links,
    theme: m.theme,
    customTheme: {
      backgroundColor: theme?.background_color ?? null,
      backgroundImageUrl: theme?.background_image_url ?? null,
      bioBackground: theme?.bio_background ?? null,
      mainTextColor: theme?.main_text_color ?? null,
      level1TextColor: theme?.level1_text_color ?? null,
      level2TextColor: theme?.level2_text_color ?? null,
      customFont: theme?.custom_font ?? null,
      customFontUrl: theme?.custom_font_url ?? null,
    },
    qrCode: m.qr_code_path,
    referralLink: m.referral_link ?? '',
    deeplink: m.deeplink ?? '',
    createdAt: m.created_at,
    updatedAt: m.updated_at,
    socialLinks: m.social_links.map((s) => ({ platform: s.platform, url: s.url, handle: s.handle ?? '', iconUrl: media(s.icon), isAdult: s.is_adult })),
    featuredLinks: [...m.featured_links]
      .sort((a, b) => a.sort_order - b.sort_order || a.id - b.id)
      .map((f) => ({
        id: f.id,
        title: f.title,
        description: f.description,
        url: f.url,
        platform: f.platform,
        imageUrl: f.image_url,
        iconUrl: f.icon_url,
        thumbnail: f.thumbnail_size,
        color: typeof f.color === 'string' ? { c: f.color } : { p: { d: f.color.dark, l: f.color.light } },
        order: f.sort_order,
        isAdult: f.is_adult,
        kind: f.kind,
      })),
    contactInfo: (m.contact_info ?? []).map(([type, value]) => ({ type, value })),
    gallery: [...m.gallery]
      .sort((a, b) => a.sort_order - b.sort_order || a.id - b.id)
      .map((g) => ({ id: g.id, url: g.image_url, order: g.sort_order, createdAt: g.created_at })),
    sections: [...m.sections].sort((a, b) => a.position - b.position).map((s) => ({ section: s.key, order: s.position, enabled: s.enabled })),
    sameAs: m.same_as ?? [],
    metadata: {
      title: m.title,
      description: m.meta_description ?? '',
      image: m.og_image ?? '',
      keywords: m.meta_keywords ?? '',
      canonical: m.share_url,
    },
  };
}

const assertProfile = async (url: string, username: string) => {
  const result = await run(url);
  assert.equal(result.next, null, 'linkpage-a has no pagination');
  const data = { ...result.data, fetchedAt: '2024-01-01T00:00:00.000Z' };
  assert.ok(validate(data), `${username}: ${JSON.stringify(validate.errors)}`);
  assert.deepEqual(result.data, { profile: expectedProfile(linkpageAModel(SEED, username)) }, username);
  return result;
};

test('catalogue profiles map to exactly the generated data and validate against the schema', async () => {
  const profiles = ['luna.voss', 'rui.silva', 'emoji-party', 'rtl-noor', 'cjk-sakura', 'mixed-zoe', 'bare-profile', 'adult-creator'];
  for (const username of profiles) await assertProfile(`https://linkpage-a.example/${username}`, username);
  // `www` host and `@` form: requested lower-cased, without `@`.
  const log: string[] = [];
  await run('https://www.linkpage-a.example/@Mika.Orbit', sandboxUpstream({ log }));
  assert.deepEqual(log, ['/mika.orbit']);
  await assertProfile('https://www.linkpage-a.example/@Mika.Orbit', 'mika.orbit');
});

test('Unicode, emoji and right-to-left text survive the page intact', async () => {
  const rtl = (await run('https://linkpage-a.example/rtl-noor')).data.profile as { displayName: string; bio: string };
  assert.match(rtl.displayName, /[\u0590-\u06FF]/);
  const emoji = (await run('https://linkpage-a.example/emoji-party')).data.profile as { displayName: string; metadata: { title: string } };
  assert.match(emoji.displayName, /\p{Extended_Pictographic}/u);
  assert.ok(emoji.metadata.title.startsWith(emoji.displayName));
});

test('absent optional fields come out as the README says', async () => {
  const { data } = await run('https://linkpage-a.example/bare-profile');
  const p = data.profile as Record<string, unknown>;
  assert.equal(p.bio, '');
  assert.equal(p.firstName, '');
  assert.equal(p.lastName, null);
  assert.equal(p.logoUrl, null);
  assert.equal(p.videoProfileUrl, null);
  assert.equal(p.referralLink, '');
  assert.deepEqual(p.contactInfo, []);
  assert.deepEqual(p.sameAs, []);
  assert.deepEqual(p.gallery, []);
  assert.equal((p.metadata as Record<string, string>).description, '');
  assert.ok(Object.values(p.customTheme as Record<string, unknown>).every((value) => value === null));
});

test('every layout variation the sandbox applies is read the same (60 generated accounts)', async () => {
  const flavours = ['', 'emoji-', 'rtl-', 'cjk-', 'mixed-', 'bare-', 'adult-'];
  for (let i = 0; i < 60; i += 1) {
    const username = `${flavours[i % flavours.length]}user${i}.test`;
    await assertProfile(`https://linkpage-a.example/${username}`, username);
  }
});

test('the large profile yields every link, social link, gallery item and section exactly once', async () => {
  const { data, next } = await assertProfile('https://linkpage-a.example/big-catalogue', 'big-catalogue');
  assert.equal(next, null);
  const model = linkpageAModel(SEED, 'big-catalogue');
  const p = data.profile as { featuredLinks: Array<{ id: number }>; socialLinks: unknown[]; gallery: Array<{ id: number }>; sections: unknown[]; totalLinks: number; views: string };
  assert.equal(p.featuredLinks.length, 300);
  assert.equal(new Set(p.featuredLinks.map((f) => f.id)).size, 300);
  assert.deepEqual(new Set(p.featuredLinks.map((f) => f.id)), new Set(model.featured_links.map((f) => f.id)));
  assert.equal(p.socialLinks.length, 40);
  assert.equal(p.gallery.length, 250);
  assert.equal(new Set(p.gallery.map((g) => g.id)).size, 250);
  assert.equal(p.sections.length, 12);
  assert.equal(p.totalLinks, 340);
  assert.match(p.views, /^\d+(\.\d)?B$/);
});

test('views labels follow the platform’s abbreviation rule', () => {
  assert.equal(viewsLabel(987), '987');
  assert.equal(viewsLabel(12_345), '12.3K');
  assert.equal(viewsLabel(2_000), '2K');
  assert.equal(viewsLabel(999_999), '999.9K');
  assert.equal(viewsLabel(1_250_000), '1.2M');
  assert.equal(viewsLabel(3_000_000_000), '3B');
});

test('private, not-found, blocked and broken accounts give their outcomes', async () => {
  const cases: Array<[string, OutcomeKind]> = [
    ['quiet.fern', 'not_found'],
    ['private-anyone', 'not_found'],
    ['nobody.here', 'not_found'],
    ['softmissing-page', 'not_found'],
    ['ratelimited-user', 'blocked'],
    ['forbidden-user', 'blocked'],
    ['challenge-user', 'blocked'],
    ['captcha-user', 'blocked'],
    ['loginwall-user', 'blocked'],
    ['checkpoint-user', 'blocked'],
    ['offsite-user', 'blocked'],
    ['broken-page', 'unrecognised'],
    ['corrupt-profile', 'unrecognised'],
    ['down-luna', 'transient'],
  ];
  for (const [username, kind] of cases) assert.equal(await outcomeOf(`https://linkpage-a.example/${username}`), kind, username);
});

test('slow and flaky accounts end with the profile', async () => {
  await assertProfile('https://linkpage-a.example/slow-luna', 'slow-luna');
  await assertProfile('https://linkpage-a.example/flaky-luna', 'flaky-luna');
});

test('a request without a browser User-Agent gets the challenge, which the extractor reports as a block', async () => {
  const headers = { ...PAGE_HEADERS, 'user-agent': 'curl/8.5.0' };
  const answer = await linkpageASandbox.handle({ method: 'GET', path: '/luna.voss', query: new URLSearchParams(), headers, body: '' }, { seed: SEED, attempt: 1, slowMs: 0 });
  assert.ok(!('reset' in answer));
  assert.match(String(answer.body), /id="challenge-root"/);
  assert.equal(await outcomeOf('https://linkpage-a.example/luna.voss', sandboxUpstream({ headers })), 'blocked');
});

test('the sandbox redirects @ and upper-case paths, ignores query strings, and is deterministic', async () => {
  const ask = (path: string, search = '', seed = SEED) =>
    linkpageASandbox.handle({ method: 'GET', path, query: new URLSearchParams(search), headers: PAGE_HEADERS, body: '' }, { seed, attempt: 1, slowMs: 0 });
  for (const path of ['/@luna.voss', '/Luna.Voss']) {
    const answer = await ask(path);
    assert.ok(!('reset' in answer) && [301, 308].includes(answer.status) && answer.headers?.location === '/luna.voss', path);
  }
  const plain = await ask('/luna.voss');
  const withQuery = await ask('/luna.voss', 'utm_source=x&ref=y');
  assert.ok(!('reset' in plain) && !('reset' in withQuery));
  assert.equal(plain.status, 200);
  assert.equal(String(plain.body), String(withQuery.body));
  const other = await ask('/luna.voss', '', 'another-seed');
  assert.ok(!('reset' in other) && String(other.body) !== String(plain.body));
  for (const reserved of ['/join', '/api', '/_nuxt']) {
    const answer = await ask(reserved);
    assert.ok(!('reset' in answer) && answer.status === 404, reserved);
  }
});

test('every catalogue entry names the endpoint and a URL the endpoint accepts', () => {
  assert.equal(linkpageASandbox.name, 'linkpage-a');
  assert.ok(linkpageASandbox.catalogue.length >= 20);
  for (const entry of linkpageASandbox.catalogue) {
    assert.equal(entry.endpoint, '/v1/linkpage-a/profile');
    const url = new URLSearchParams(entry.query).get('url') ?? '';
    assert.ok(linkpageAProfile.normalise({ url }).ok, entry.query);
  }
});
