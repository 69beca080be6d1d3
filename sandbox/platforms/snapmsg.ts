// The snapmsg sandbox upstream (src/platforms/snapmsg/README.md): public profile pages `GET /add/{u}`,
// Spotlight pages `GET /spotlight/{id}` and the comments API `POST /api/spotlight/comments`,
// generated from the seed. Named accounts show each outcome of the README; every other valid
// name or id is an ordinary generated profile or Spotlight. The variations the platform allows (key
// order, whitespace, escapes, script attributes, unknown members, omitted or written-out
// defaults, JSON-LD forms, extra recommended stories, page sizes) are applied deterministically
// per account and page, so an extractor meets all of them.
import { createHash } from 'node:crypto';
import {
  accountFault,
  escapeHtml,
  html,
  json,
  redirect,
  Rng,
  type CatalogueEntry,
  type SandboxContext,
  type SandboxPlatform,
  type SandboxRequest,
  type SandboxResponse,
  type TextFlavour,
} from '../common.ts';
import { personOf } from '../people.ts';

const WWW = 'https://www.snapmsg.example';
const CDN = 'https://cf-st.snapmsg-cdn.example';
const APP = 'https://app.snapmsg.example';
const BUILD_ID = 'k3PqL0wZ7vT2nR8sYb4Xe';
const USERNAME = /^[A-Za-z][A-Za-z0-9._-]{2,14}$/;
const SPOTLIGHT_ID = /^[A-Za-z0-9_-]{16,128}$/;
const URL_SAFE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
const HEX = '0123456789abcdef';
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const COMMENTS_PATH = '/api/spotlight/comments';

type Json = unknown;
type JsonObject = Record<string, Json>;

// ================================================================== accounts

/** How a page is serialised. */
interface Style {
  /** Pretty-printed JSON. */
  pretty: boolean;
  /** `/` written as `\/`. */
  slashes: boolean;
  /** Every non-ASCII character written as `\uXXXX`. */
  asciiOnly: boolean;
  /** Object keys in a shuffled order. */
  shuffle: boolean;
  /** Unknown members added to objects. */
  extra: boolean;
  /** Proto3 defaults written out (`"badge":0`, `[]`…) instead of omitted. */
  writeDefaults: boolean;
  /** Which form of the `__NEXT_DATA__` opening tag (attribute order, quoting, extra attributes). */
  scriptTag: number;
  /** JSON-LD block form. */
  ld: 'object' | 'array' | 'graph';
  /** Extra JSON-LD blocks of other types, and other scripts, around the two that matter. */
  extraBlocks: boolean;
  /** Recommended stories after the requested one on a Spotlight page. */
  recommended: number;
}

const PLAIN_STYLE: Style = {
  pretty: false,
  slashes: false,
  asciiOnly: false,
  shuffle: false,
  extra: false,
  writeDefaults: false,
  scriptTag: 0,
  ld: 'object',
  extraBlocks: false,
  recommended: 1,
};

/** A style chosen from the seed for `key`, with `overrides` applied. */
function styleFor(seed: string, key: string, overrides: Partial<Style> = {}): Style {
  const rng = new Rng(seed, `style:${key}`);
  return {
    pretty: rng.bool(0.3),
    slashes: rng.bool(0.3),
    asciiOnly: rng.bool(0.25),
    shuffle: rng.bool(0.5),
    extra: rng.bool(0.5),
    writeDefaults: rng.bool(0.35),
    scriptTag: rng.int(0, SCRIPT_TAGS.length - 1),
    ld: rng.pick(['object', 'object', 'array', 'graph'] as const),
    extraBlocks: rng.bool(0.5),
    recommended: rng.int(0, 3),
    ...overrides,
  };
}

type ProfileKind =
  | 'public'
  | 'userInfo'
  | 'notFound'
  | 'rateLimited'
  | 'edgeBlocked'
  | 'loginWall'
  | 'challenge'
  | 'noNextData'
  | 'unknownCase';

interface ProfileAccount {
  kind: ProfileKind;
  description: string;
  flavour?: TextFlavour;
  /** `large`: many lenses, highlights, snaps and related accounts; `sparse`: every optional field absent. */
  size?: 'normal' | 'large' | 'sparse';
  /** userInfo: with a 3D avatar and display name. */
  avatar?: boolean;
  style?: Partial<Style>;
  /** JSON-LD `sameAs` written as one string. */
  sameAsString?: boolean;
}

/** Named profiles. Any other valid username is an ordinary generated profile; `nosuch…` is not found. */
const PROFILES: Record<string, ProfileAccount> = {
  lunavoss: { kind: 'public', description: 'ordinary public profile: story, highlights, lenses, related accounts, JSON-LD (compact JSON as in the contract examples) → 200', style: PLAIN_STYLE },
  bigcreator: { kind: 'public', size: 'large', description: 'large public profile: 40 lenses, 30 curated and 25 Spotlight highlights, a 30-snap story, 20 related accounts (pretty-printed JSON) → 200', style: { pretty: true } },
  'emoji.star': { kind: 'public', flavour: 'emoji', description: 'public profile with emoji in names, bio, titles and lenses → 200' },
  'noor.rtl': { kind: 'public', flavour: 'rtl', description: 'public profile with right-to-left (Arabic, Hebrew) text → 200' },
  'sakura.cjk': { kind: 'public', flavour: 'cjk', description: 'public profile with CJK text → 200' },
  mixedbag: { kind: 'public', flavour: 'mixed', description: 'mixed scripts, quotes, `&` and `<b>` in text; every non-ASCII character and `/` JSON-escaped → 200', style: { asciiOnly: true, slashes: true } },
  'sparse.pub': { kind: 'public', size: 'sparse', description: 'public profile with every optional field absent and every default omitted: no story, lists, avatar, website, times or JSON-LD → 200', style: { writeDefaults: false } },
  'zeros.out': { kind: 'public', description: 'public profile with proto3 defaults written out (`"badge":0`, `"snapIndex":0`, `"likeCount":"0"`, `[]`), a story with an empty snap list → 200', style: { writeDefaults: true } },
  ldgraph: { kind: 'public', description: 'JSON-LD in `@graph` among extra JSON-LD blocks of other types; `sameAs` as a single string → 200', style: { ld: 'graph', extraBlocks: true }, sameAsString: true },
  'pretty.keys': { kind: 'public', description: 'pretty-printed `__NEXT_DATA__` with shuffled keys, unknown members and reordered script attributes (nonce, crossorigin) → 200', style: { pretty: true, shuffle: true, extra: true, scriptTag: 3, ld: 'array' } },
  kitewise: { kind: 'userInfo', avatar: true, description: 'existing account without a public profile (`userInfo`, 3D avatar) → 200' },
  quietkit: { kind: 'userInfo', avatar: false, description: '`userInfo` account without display name or 3D avatar → 200' },
  nosuchuser1: { kind: 'notFound', description: 'missing account: Next.js 404 error page (any name starting with `nosuch` too) → 404 NOT_FOUND' },
  ratelimited: { kind: 'rateLimited', description: 'blocked: HTTP 429 with Retry-After → 502 UPSTREAM_BLOCKED' },
  edgeblocked: { kind: 'edgeBlocked', description: 'blocked: HTTP 403 edge "request blocked" page → 502 UPSTREAM_BLOCKED' },
  loginwall: { kind: 'loginWall', description: 'blocked: redirect to `/accounts/login` → 502 UPSTREAM_BLOCKED' },
  challenged: { kind: 'challenge', description: 'blocked: redirect to a `/challenge` page → 502 UPSTREAM_BLOCKED' },
  brokenpage: { kind: 'noNextData', description: 'unrecognised: 200 page without `__NEXT_DATA__` → 502 UPSTREAM_UNRECOGNISED' },
  oddcase: { kind: 'unknownCase', description: 'unrecognised: `userProfile.$case` is an unknown kind → 502 UPSTREAM_UNRECOGNISED' },
};

type SpotlightKind =
  | 'comments'
  | 'commentsOff'
  | 'commentsDisabled'
  | 'notFound'
  | 'recommendedOnly'
  | 'contextGone'
  | 'rateLimited'
  | 'edgeBlocked'
  | 'challenge'
  | 'noFeed'
  | 'brokenComments';

interface SpotlightAccount {
  kind: SpotlightKind;
  description: string;
  /** Number of comments. */
  total?: number;
  flavour?: TextFlavour | 'all';
  /** Page sizes: `full` = `count` (last page shorter); `varied` = 1..count; `ragged` = 0..count, empty pages while more remain. */
  paging?: 'full' | 'varied' | 'ragged';
  /** Comments with most optional members absent. */
  sparse?: boolean;
  style?: Partial<Style>;
}

/** Named Spotlights. Any other valid id is an ordinary generated Spotlight; `missing…` is not found. */
const SPOTLIGHTS: Record<string, SpotlightAccount> = {
  starTrails_Sintra_0001: { kind: 'comments', total: 45, paging: 'full', description: 'ordinary Spotlight: 45 comments in pages of 20 → 200', style: PLAIN_STYLE },
  bigThread_hundreds_0001: { kind: 'comments', total: 460, paging: 'ragged', description: 'large: 460 comments in pages of 0 to 20 (empty pages while more remain) → 200' },
  unicodeTalk_emoji_rtl_01: { kind: 'comments', total: 36, flavour: 'all', paging: 'varied', description: 'comments with emoji, right-to-left, CJK and mixed text, multi-line; ASCII-escaped JSON → 200', style: { asciiOnly: true } },
  sparseComments_000001: { kind: 'comments', total: 24, sparse: true, paging: 'varied', description: 'comments with optional members absent (no display name, avatar, counts, edit time, score) → 200' },
  zeroDefaults_comments1: { kind: 'comments', total: 22, paging: 'full', description: 'comments with defaults written out (`"likeCount":"0"`, `"rankingScore":0`), pretty-printed with shuffled keys and unknown members → 200', style: { writeDefaults: true, pretty: true, shuffle: true, extra: true } },
  noComments_0000000001: { kind: 'comments', total: 0, description: 'comments enabled, none posted → 200' },
  commentsOff_000000001: { kind: 'commentsOff', description: 'comments turned off: no `commentsInfo` → 200' },
  commentsDisabled_0001: { kind: 'commentsDisabled', description: 'comments disabled: `isCommentingEnabled` false (omitted) → 200' },
  missing_spotlight_001: { kind: 'notFound', description: 'missing Spotlight: Next.js 404 page (any id starting with `missing` too) → 404 NOT_FOUND' },
  recommendedOnly_00001: { kind: 'recommendedOnly', description: 'Spotlight page without the requested story (only recommended ones) → 404 NOT_FOUND' },
  contextGone_000000001: { kind: 'contextGone', description: 'comments context no longer exists: the comments API answers 404 → 404 NOT_FOUND' },
  rateLimited_comments1: { kind: 'rateLimited', description: 'blocked: comments API answers 429 RESOURCE_EXHAUSTED → 502 UPSTREAM_BLOCKED' },
  edgeBlocked_spot_0001: { kind: 'edgeBlocked', description: 'blocked: Spotlight page answers 403 → 502 UPSTREAM_BLOCKED' },
  challenge_spot_000001: { kind: 'challenge', description: 'blocked: Spotlight page redirects to `/challenge` → 502 UPSTREAM_BLOCKED' },
  brokenFeed_0000000001: { kind: 'noFeed', description: 'unrecognised: Spotlight page without `spotlightFeed` → 502 UPSTREAM_UNRECOGNISED' },
  brokenComments_000001: { kind: 'brokenComments', description: 'unrecognised: comments API answers an HTML page → 502 UPSTREAM_UNRECOGNISED' },
};

const FAULT_PROFILES = ['slow-luna', 'flaky-luna', 'down-luna', 'hiccup-luna'];
const FAULT_SPOTLIGHTS = ['slow-spotlight-00001', 'flaky-spotlight-0001', 'down-spotlight-00001', 'hiccup-spotlight-001'];

function profileAccount(username: string): ProfileAccount {
  const named = PROFILES[username];
  if (named) return named;
  if (username.startsWith('nosuch')) return { kind: 'notFound', description: 'missing account' };
  return { kind: 'public', description: 'generated public profile' };
}

function spotlightAccount(id: string): SpotlightAccount {
  const named = SPOTLIGHTS[id];
  if (named) return named;
  if (id.startsWith('missing')) return { kind: 'notFound', description: 'missing Spotlight' };
  return { kind: 'comments', description: 'generated Spotlight' };
}

// ================================================================== generated data

const wrap = (value: Json) => ({ value });
const hexId = (rng: Rng, length: number) => rng.chars(length, HEX);
const uuid = (rng: Rng) => `${hexId(rng, 8)}-${hexId(rng, 4)}-4${hexId(rng, 3)}-${rng.pick(['8', '9', 'a', 'b'])}${hexId(rng, 3)}-${hexId(rng, 12)}`;
const snapcodeUrl = (username: string) => `${APP}/web/deeplink/snapcode?username=${username}&type=SVG&avatar=enable`;
const ADDRESSES = ['Lisbon, Portugal', 'Berlin, Germany', 'Osaka, Japan', 'Austin, TX', 'Beirut, Lebanon', 'São Paulo, Brazil', 'Tel Aviv, Israel'];
const CATEGORIES = ['creator', 'public-figure', 'brand', 'media', 'musician'];
const SUBCATEGORIES = ['visual-artist', 'photographer', 'travel', 'food', 'comedy', 'dj'];
const EMOJI = ['🌋', '🎨', '☕️', '🌊', '🎧', '✨', '📚', '🏔️'];

/** A generated username-like handle for authors and related accounts. */
function handleOf(rng: Rng): string {
  return `${rng.pick(['mika', 'rui', 'ana', 'theo', 'noor', 'iris', 'leo', 'zoe', 'sam', 'maya'])}${rng.pick(['', '.', '_'])}${rng.chars(rng.int(2, 6))}`;
}

function snap(rng: Rng, index: number, flavour: TextFlavour, fromIso: string, toIso: string): JsonObject {
  const id = rng.chars(10, URL_SAFE);
  const video = rng.bool(0.5);
  const media = `${CDN}/d/${id}.${video ? 27 : 256}.IRZXSOY?mo=${rng.chars(16, URL_SAFE)}%3D&uc=75`;
  return {
    snapIndex: index,
    snapId: wrap(`Sn4p${id}`),
    snapMediaType: video ? 1 : 0,
    snapUrls: {
      mediaUrl: media,
      mediaPreviewUrl: rng.bool(0.8) ? wrap(`${CDN}/d/${id}/preview.jpg`) : undefined,
      overlayUrl: rng.bool(0.3) ? wrap(`${CDN}/d/${id}/overlay.png`) : undefined,
    },
    timestampInSec: wrap(String(Math.floor(rng.time(fromIso, toIso) / 1000))),
    snapTitle: rng.bool(0.3) ? wrap(rng.sentence(rng.int(2, 4), flavour)) : undefined,
    snapLocation: rng.bool(0.3) ? { lat: round(rng.next() * 140 - 70 + 0.0001, 4), lng: round(rng.next() * 340 - 170 + 0.0001, 4) } : undefined,
  };
}

const round = (value: number, digits: number) => Number(value.toFixed(digits));

function snaps(rng: Rng, count: number, flavour: TextFlavour, fromIso = '2024-01-01', toIso = '2024-12-01'): JsonObject[] {
  return Array.from({ length: count }, (_, index) => snap(rng, index, flavour, fromIso, toIso));
}

function curatedHighlight(rng: Rng, flavour: TextFlavour, maxSnaps: number): JsonObject {
  const id = rng.chars(8, URL_SAFE);
  return {
    storyType: 2,
    highlightId: wrap(`hl_${id}`),
    storyId: rng.bool(0.7) ? wrap(rng.chars(22, URL_SAFE)) : undefined,
    storyTitle: rng.bool(0.9) ? wrap(rng.sentence(rng.int(1, 3), flavour)) : undefined,
    storySubtitle: rng.bool(0.4) ? wrap(rng.sentence(2, flavour)) : undefined,
    storyEmoji: rng.bool(0.4) ? wrap(rng.pick(EMOJI)) : undefined,
    canonicalUrlSuffix: rng.bool(0.6) ? wrap(`highlight/hl_${id}`) : undefined,
    thumbnailUrl: wrap(`${CDN}/d/hl/${id}-thumb.jpg`),
    snapList: snaps(rng, rng.int(1, maxSnaps), flavour, '2021-01-01', '2024-06-01'),
  };
}

/** A Spotlight id that the sandbox serves as a generated Spotlight. */
const generatedSpotlightId = (rng: Rng) => `${rng.pick(['Qk', 'Zr', 'Mv', 'Tx'])}${rng.chars(rng.int(30, 60), URL_SAFE)}`;

/** A Spotlight as a one-snap story: the shape profiles' highlights and Spotlight pages share. */
function spotlightStoryShape(id: string, title: string | undefined, uploadedMs: number): JsonObject {
  const stem = id.slice(0, 12);
  return {
    storyType: 3,
    storyId: wrap(id),
    storyTitle: title === undefined ? undefined : wrap(title),
    canonicalUrlSuffix: wrap(`spotlight/${id}`),
    thumbnailUrl: wrap(`${CDN}/d/spot/${stem}-thumb.jpg`),
    snapList: [
      {
        snapMediaType: 1,
        snapId: wrap(id),
        snapUrls: { mediaUrl: `${CDN}/d/spot/${stem}.mp4`, mediaPreviewUrl: wrap(`${CDN}/d/spot/${stem}-preview.jpg`) },
        timestampInSec: wrap(String(Math.floor(uploadedMs / 1000))),
      },
    ],
  };
}

function spotlightHighlight(rng: Rng, flavour: TextFlavour): JsonObject {
  const id = generatedSpotlightId(rng);
  const title = rng.bool(0.8) ? rng.sentence(rng.int(2, 5), flavour) : undefined;
  return spotlightStoryShape(id, title, rng.time('2023-01-01', '2024-11-01'));
}

function lens(seed: string, rng: Rng, flavour: TextFlavour, owner: { username: string; name: string }): JsonObject {
  const id = hexId(rng, 32);
  const byOwner = rng.bool(0.6);
  const creator = byOwner ? owner.username : rng.bool(0.5) ? handleOf(rng) : undefined;
  return {
    lensId: id,
    lensName: rng.sentence(rng.int(1, 3), flavour),
    lensCreatorDisplayName: byOwner ? owner.name : creator === undefined ? rng.name(flavour) : personOf(seed, creator).name,
    lensCreatorUsername: creator,
    lensPreviewImageUrl: `${CDN}/lens/${id.slice(0, 8)}/preview.jpg`,
    lensPreviewVideoUrl: rng.bool(0.5) ? `${CDN}/lens/${id.slice(0, 8)}/preview.mp4` : undefined,
    iconUrl: `${CDN}/lens/${id.slice(0, 8)}/icon.png`,
    unlockUrl: `${WWW}/unlock/?type=SNAPCODE&uuid=${id}`,
    scannableImageUrl: rng.bool(0.5) ? `${APP}/web/deeplink/snapcode?data=${id}&version=1&type=png` : undefined,
    isOfficialLens: rng.bool(0.2),
    lastUpdatedTimestampMs: rng.bool(0.9) ? String(rng.time('2022-01-01', '2024-11-01')) : undefined,
  };
}

function relatedAccount(seed: string, rng: Rng): JsonObject {
  const username = handleOf(rng);
  return {
    publicProfileInfo: {
      username,
      title: personOf(seed, username).name,
      badge: rng.bool(0.3) ? 1 : 0,
      subscriberCount: String(rng.int(0, 2_000_000)),
      profilePictureUrl: rng.bool(0.8) ? `${CDN}/aps/bolt/p/${username}/avatar-${hexId(rng, 6)}.jpg` : undefined,
      categoryStringId: `public-profile-category-v3-${rng.pick(CATEGORIES)}`,
    },
    subscribeLink: { deepLinkUrl: `snapmsg://add/${username}`, appStoreUrl: 'https://apps.store.example/app/snapmsg' },
  };
}

/** What a profile page serialises: its `pageProps` and, for public profiles, the JSON-LD `ProfilePage`. */
export interface ProfileModel {
  pageProps: JsonObject;
  profilePage: JsonObject | null;
}

/** The generated data of a public or `userInfo` profile (deterministic for seed and username). */
export function profileModel(seed: string, username: string): ProfileModel {
  const account = profileAccount(username);
  const rng = new Rng(seed, `profile:${username}`);
  const flavour: TextFlavour = account.flavour ?? (PROFILES[username] ? 'plain' : rng.pick(['plain', 'plain', 'emoji', 'rtl', 'cjk', 'mixed'] as const));
  // The person behind the username, as on every platform; a generated profile's seed-chosen flavour is its content's.
  const person = personOf(seed, username, account.flavour ?? 'plain');
  const name = person.name;
  const base = {
    viewerInfo: { country: 'US', locale: 'en-US' },
    pageLinks: {
      canonicalUrl: `${WWW}/add/${username}`,
      snapcodeImageUrl: snapcodeUrl(username),
      appDeepLinkUrl: `snapmsg://add/${username}`,
      oneLinkUrl: `${APP}/o/add/${username}`,
      downloadUrl: `${WWW}/download`,
    },
    pageMetadata: { pageType: 18, pageTitle: `${name} (@${username}) | snapmsg`, pageDescription: wrap(`Add ${name} on snapmsg.`), shareId: rng.chars(8, URL_SAFE) },
  };
  if (account.kind === 'userInfo' || account.kind === 'unknownCase') {
    const avatar = account.avatar ?? true;
    const info = {
      username,
      displayName: avatar ? name : undefined,
      snapcodeImageUrl: rng.bool(0.5) ? snapcodeUrl(username) : undefined,
      avatar3d: avatar ? { avatarImage: { url: `${CDN}/avatar3d/avatar/${username}-${hexId(rng, 6)}.webp` } } : undefined,
    };
    const $case = account.kind === 'unknownCase' ? 'businessInfo' : 'userInfo';
    return {
      pageProps: {
        ...base,
        userProfile: { $case, [$case]: info },
        linkPreview: { title: `${name} (@${username}) | snapmsg`, description: `Add ${name} on snapmsg.`, ogImage: { url: `${APP}/web/deeplink/snapcode?username=${username}&type=PNG&avatar=enable`, width: 320, height: 320 } },
      },
      profilePage: null,
    };
  }

  const size = account.size ?? 'normal';
  if (size === 'sparse') {
    return {
      pageProps: { ...base, userProfile: { $case: 'publicProfileInfo', publicProfileInfo: { username, title: name } }, linkPreview: { title: `${name} | snapmsg` } },
      profilePage: null,
    };
  }
  const large = size === 'large';
  const owner = { username, name };
  const hasStory = large || rng.bool(0.7);
  const storyId = rng.chars(34, URL_SAFE);
  const story = hasStory
    ? { storyType: 1, storyId: wrap(storyId), thumbnailUrl: wrap(`${CDN}/d/st/${username}-story-thumb.jpg`), snapList: username === 'zeros.out' ? [] : snaps(rng, large ? 30 : rng.int(1, 6), flavour) }
    : undefined;
  const curated = Array.from({ length: large ? 30 : rng.int(0, 4) }, () => curatedHighlight(rng, flavour, large ? 12 : 4));
  const spotlight = Array.from({ length: large ? 25 : rng.int(0, 3) }, () => spotlightHighlight(rng, flavour));
  const lenses = Array.from({ length: large ? 40 : rng.int(0, 4) }, () => lens(seed, rng, flavour, owner));
  const related = Array.from({ length: large ? 20 : rng.int(0, 3) }, () => relatedAccount(seed, rng));
  const website = rng.bool(0.7) ? `https://${username.replace(/[._]/g, '-')}.example/${rng.pick(['studio', 'shop', 'links'])}` : '';
  const category = rng.pick(CATEGORIES);
  const P: JsonObject = {
    username,
    title: name,
    mutableName: name,
    snapcodeImageUrl: snapcodeUrl(username),
    badge: rng.bool(0.4) ? 1 : 0,
    categoryStringId: rng.bool(0.85) ? `public-profile-category-v3-${category}` : category,
    subcategoryStringId: rng.bool(0.7) ? `public-profile-subcategory-v${rng.int(2, 4)}-${rng.pick(SUBCATEGORIES)}` : '',
    subscriberCount: String(large ? rng.int(1_000_000, 90_000_000) : rng.int(0, 900_000)),
    bio: person.bio,
    websiteUrl: website,
    profilePictureUrl: `${CDN}/aps/bolt/p/${username}/avatar-${hexId(rng, 6)}.jpg`,
    address: rng.bool(0.6) ? rng.pick(ADDRESSES) : '',
    hasCuratedHighlights: curated.length > 0,
    hasSpotlightHighlights: spotlight.length > 0,
    hasStory,
    publisherType: rng.pick(['CREATOR', 'PUBLISHER', 'BUSINESS', '']),
    squareHeroImageUrl: rng.bool(0.6) ? `${CDN}/aps/bolt/p/${username}/hero-sq-1080.jpg` : '',
    primaryColor: rng.bool(0.7) ? `#${rng.chars(6, '0123456789ABCDEF')}` : '',
    businessProfileId: uuid(rng),
    hostUserId: uuid(rng),
    creationTimestampMs: String(rng.time('2016-01-01', '2022-01-01')),
    lastUpdateTimestampMs: String(rng.time('2023-01-01', '2024-12-01')),
    isOfficial: rng.bool(0.1),
    avatar3d: rng.bool(0.7)
      ? { avatarImage: { url: `${CDN}/avatar3d/avatar/${username}-${hexId(rng, 6)}.webp` }, backgroundImage: { url: `${CDN}/avatar3d/background/stars-0${rng.int(1, 9)}.webp` }, sceneId: `scene-00${rng.int(10, 99)}` }
      : undefined,
    relatedAccountsInfo: related,
  };
  const sameAs = [website, `https://www.socialnet.example/${username}`].filter((link) => link !== '');
  const pageProps: JsonObject = {
    ...base,
    userProfile: { $case: 'publicProfileInfo', publicProfileInfo: P },
    story,
    curatedHighlights: curated,
    spotlightHighlights: spotlight,
    spotlightStoryMetadata: spotlight.map(() => ({ engagementStats: { viewCount: String(rng.int(100, 90_000)) } })),
    lenses,
    lensCursor: lenses.length > 0 ? 'bGVuczoy' : '',
    curatedHighlightsCursor: curated.length > 0 ? 'aGw6Mg' : '',
    spotlightHighlightsCursor: '',
    linkPreview: { title: `${name} (@${username}) | snapmsg`, description: P.bio, ogImage: { url: `${CDN}/aps/bolt/p/${username}/og-1200x630.jpg`, width: 1200, height: 630 } },
  };
  const profilePage = {
    '@context': 'https://schema.org',
    '@type': 'ProfilePage',
    dateModified: new Date(Number(P.lastUpdateTimestampMs)).toISOString(),
    mainEntity: {
      '@type': 'Person',
      name,
      alternateName: `@${username}`,
      identifier: username,
      url: `${WWW}/add/${username}`,
      image: P.profilePictureUrl,
      sameAs: account.sameAsString ? sameAs[0] : sameAs,
      interactionStatistic: { '@type': 'InteractionCounter', interactionType: 'https://schema.org/FollowAction', userInteractionCount: Number(P.subscriberCount) },
    },
  };
  return { pageProps, profilePage };
}

// ------------------------------------------------------------------ Spotlights and comments

const contextIdOf = (spotlightId: string) => Buffer.from(`spotlight-comments:${spotlightId}`).toString('base64url');

function spotlightOfContext(contextId: string): string | null {
  if (!/^[A-Za-z0-9_-]+$/.test(contextId)) return null;
  const decoded = Buffer.from(contextId, 'base64url').toString('utf8');
  const match = /^spotlight-comments:([A-Za-z0-9_-]{16,128})$/.exec(decoded);
  return match?.[1] ?? null;
}

/** Number of comments a Spotlight has. */
function totalComments(seed: string, id: string): number {
  const account = spotlightAccount(id);
  return account.total ?? new Rng(seed, `spotlight-total:${id}`).int(0, 70);
}

/** Comment `index` of a Spotlight, in ranking order (deterministic for seed, id and index). */
export function commentModel(seed: string, id: string, index: number): JsonObject {
  const account = spotlightAccount(id);
  const rng = new Rng(seed, `comment:${id}:${index}`);
  const total = totalComments(seed, id);
  const flavour: TextFlavour =
    account.flavour === 'all' ? (['emoji', 'rtl', 'cjk', 'mixed'] as const)[index % 4]! : (account.flavour ?? rng.pick(['plain', 'plain', 'plain', 'emoji'] as const));
  const sparse = account.sparse === true;
  const username = handleOf(rng);
  const created = rng.time('2024-11-07T18:00:00Z', '2024-12-31T00:00:00Z');
  const edited = rng.bool(0.25) ? created + rng.int(1, 86_400_000) : rng.bool(0.4) ? created : undefined;
  const text = rng.bool(0.2) ? `${rng.sentence(rng.int(2, 8), flavour)}\n${rng.sentence(rng.int(1, 5), flavour)}` : rng.sentence(rng.int(1, 10), flavour);
  return {
    commentId: `cmt_01${rng.chars(16, CROCKFORD)}${index.toString(32).toUpperCase().padStart(4, '0')}`,
    text: sparse && index % 5 === 0 ? '' : text,
    author: {
      userId: `u_${hexId(rng, 10)}`,
      username: sparse && index % 3 === 0 ? undefined : username,
      displayName: !sparse && rng.bool(0.8) ? wrap(personOf(seed, username).name) : undefined,
      avatarUrl: !sparse && rng.bool(0.7) ? wrap(`${CDN}/aps/bolt/p/${username}/avatar-${hexId(rng, 6)}.jpg`) : undefined,
    },
    likeCount: String(sparse ? 0 : rng.bool(0.3) ? 0 : rng.int(1, 5000)),
    replyCount: String(sparse ? 0 : rng.bool(0.6) ? 0 : rng.int(1, 40)),
    createTimestampMs: String(created),
    updateTimestampMs: sparse || edited === undefined ? undefined : String(edited),
    rankingScore: sparse ? 0 : round(1 - (index + 1) / (total + 1), 4),
    isCreatorLiked: rng.bool(0.1),
  };
}

/** The story element of a Spotlight page. */
function spotlightStory(seed: string, id: string, withComments: 'enabled' | 'off' | 'disabled'): JsonObject {
  const rng = new Rng(seed, `spotlight:${id}`);
  const stem = id.slice(0, 12);
  const creator = handleOf(rng);
  const name = rng.sentence(rng.int(2, 5));
  const uploaded = rng.time('2024-06-01', '2024-11-07');
  const total = totalComments(seed, id);
  const views = String(rng.int(100, 900_000));
  return {
    story: spotlightStoryShape(id, name, uploaded),
    metadata: {
      videoMetadata: {
        name,
        description: `${rng.sentence(6)} #${rng.pick(['startrails', 'travel', 'food', 'music'])}`,
        thumbnailUrl: `${CDN}/d/spot/${stem}-thumb.jpg`,
        uploadDateMs: String(uploaded),
        viewCount: views,
        contentUrl: `${CDN}/d/spot/${stem}.mp4`,
        durationMs: String(rng.int(5_000, 60_000)),
        width: 540,
        height: 960,
        creator: { $case: 'personCreator', personCreator: { username: creator, url: `${WWW}/add/${creator}`, name: personOf(seed, creator).name } },
      },
      engagementStats: { viewCount: views, commentCount: String(total) },
      hashtags: ['#sandbox'],
    },
    commentsInfo:
      withComments === 'off'
        ? undefined
        : { contextId: contextIdOf(id), isCommentingEnabled: withComments === 'enabled', commentCount: String(withComments === 'enabled' ? total : 0) },
  };
}

/** `pageProps` of a Spotlight page: the requested story first, then recommended ones. */
export function spotlightModel(seed: string, id: string, style: Style): JsonObject {
  const account = spotlightAccount(id);
  const rng = new Rng(seed, `recommended:${id}`);
  const recommended = Array.from({ length: Math.max(account.kind === 'recommendedOnly' ? 2 : 0, style.recommended) }, () =>
    spotlightStory(seed, generatedSpotlightId(rng), 'enabled'),
  );
  const comments = account.kind === 'commentsOff' ? 'off' : account.kind === 'commentsDisabled' ? 'disabled' : 'enabled';
  const stories = account.kind === 'recommendedOnly' ? recommended : [spotlightStory(seed, id, comments), ...recommended];
  const first = stories[0] as { metadata: { videoMetadata: { name: string; description: string } } } | undefined;
  const title = first?.metadata.videoMetadata.name ?? 'Spotlight';
  return {
    viewerInfo: { country: 'US', locale: 'en-US' },
    pageLinks: { canonicalUrl: `${WWW}/spotlight/${id}`, appDeepLinkUrl: `snapmsg://spotlight/${id}`, oneLinkUrl: `${APP}/o/spotlight/${id}`, downloadUrl: `${WWW}/download` },
    pageMetadata: { pageType: 12, pageTitle: `${title} | snapmsg Spotlight`, shareId: rng.chars(8, URL_SAFE) },
    spotlightFeed: account.kind === 'noFeed' ? undefined : { spotlightStories: stories, spotlightCursor: 'c3BmOjI' },
    linkPreview: { title: `${title} | snapmsg Spotlight`, description: first?.metadata.videoMetadata.description ?? '', ogImage: { url: `${CDN}/d/spot/${id.slice(0, 12)}-thumb.jpg`, width: 540, height: 960 } },
  };
}

// ------------------------------------------------------------------ comment pages and cursors

const signature = (seed: string, contextId: string, page: number, offset: number) =>
  createHash('sha256').update(`${seed}\u0000${contextId}\u0000${page}\u0000${offset}`).digest('base64url').slice(0, 12);

const issueCursor = (seed: string, contextId: string, page: number, offset: number) =>
  Buffer.from(`cmnt:${page}:${offset}:${signature(seed, contextId, page, offset)}`).toString('base64url');

/** The page number and offset a cursor issued for `contextId` carries, or null when it is not one of ours. */
function readCursor(seed: string, contextId: string, cursor: string): { page: number; offset: number } | null {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
  const match = /^cmnt:([0-9]{1,6}):([0-9]{1,6}):([A-Za-z0-9_-]{12})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) return null;
  const page = Number(match[1]);
  const offset = Number(match[2]);
  return match[3] === signature(seed, contextId, page, offset) ? { page, offset } : null;
}

/** How many comments page `page` (starting at `offset`) holds, at most `count`. */
function pageSize(seed: string, id: string, page: number, count: number): number {
  const paging = spotlightAccount(id).paging ?? (SPOTLIGHTS[id] ? 'full' : new Rng(seed, `paging:${id}`).pick(['full', 'varied', 'ragged'] as const));
  const rng = new Rng(seed, `page:${id}:${page}`);
  if (paging === 'full') return count;
  if (paging === 'ragged' && page % 7 === 3) return 0;
  return rng.int(1, count);
}

/** The comments response body for a page. */
function commentsPage(seed: string, id: string, contextId: string, page: number, offset: number, count: number): JsonObject {
  const total = totalComments(seed, id);
  const size = Math.min(pageSize(seed, id, page, count), Math.max(0, total - offset));
  const comments = Array.from({ length: size }, (_, i) => commentModel(seed, id, offset + i));
  const end = offset + size;
  const more = end < total;
  return {
    comments,
    nextCursor: more ? wrap(issueCursor(seed, contextId, page + 1, end)) : undefined,
    hasMore: more,
    totalCount: String(total),
  };
}

// ================================================================== serialisation

/** Keys whose proto3 default (`0`, `false`, `"0"`, `""`, `[]`) implementations may omit. */
const DEFAULT_OMITTED = new Set([
  'badge', 'isOfficial', 'hasStory', 'hasCuratedHighlights', 'hasSpotlightHighlights', 'snapIndex', 'snapMediaType',
  'isOfficialLens', 'likeCount', 'replyCount', 'rankingScore', 'subscriberCount', 'hasMore', 'isCreatorLiked', 'totalCount',
  'curatedHighlights', 'spotlightHighlights', 'lenses', 'relatedAccountsInfo', 'snapList', 'comments', 'isCommentingEnabled',
]);

const isDefault = (value: Json) => value === 0 || value === false || value === '0' || value === '' || (Array.isArray(value) && value.length === 0);

/**
 * The payload as an implementation writes it: `undefined` members dropped; defaults omitted
 * (or written out, `null` story included); keys shuffled; unknown members added.
 */
function shape(value: Json, style: Style, rng: Rng, key = ''): Json {
  if (Array.isArray(value)) return value.map((item) => shape(item, style, rng, key));
  if (value === null || typeof value !== 'object') return value;
  let entries = Object.entries(value as JsonObject).filter(([name, inner]) => {
    if (inner === undefined) return false;
    if (style.writeDefaults) return true;
    return !(isDefault(inner) && (DEFAULT_OMITTED.has(name) || inner === ''));
  });
  entries = entries.map(([name, inner]) => [name, shape(inner, style, rng, name)]);
  if (style.writeDefaults && key === 'pageProps' && !('story' in (value as JsonObject) && (value as JsonObject).story !== undefined)) {
    if ('userProfile' in (value as JsonObject) && ((value as JsonObject).userProfile as JsonObject).$case === 'publicProfileInfo') entries.push(['story', null]);
  }
  if (style.extra && rng.bool(0.35)) {
    entries.push([rng.pick(['trackingInfo', 'experimentIds', 'renderHints', '_debug']), rng.pick([{ id: rng.chars(6) }, [rng.int(1, 9), rng.int(10, 99)], 'x', true, null])]);
  }
  if (style.shuffle) {
    for (let i = entries.length - 1; i > 0; i -= 1) {
      const j = rng.int(0, i);
      [entries[i], entries[j]] = [entries[j]!, entries[i]!];
    }
  }
  return Object.fromEntries(entries);
}

/** JSON inside `<script>` as Next.js writes it (`<`, `>`, `&`, U+2028/9 escaped), with the style's escapes. */
function nextJson(value: Json, style: Style): string {
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

const SCRIPT_TAGS = [
  () => '<script id="__NEXT_DATA__" type="application/json">',
  (nonce: string) => `<script id="__NEXT_DATA__" type="application/json" nonce="${nonce}" crossorigin="anonymous">`,
  (nonce: string) => `<script type="application/json" nonce="${nonce}" id="__NEXT_DATA__">`,
  () => `<script crossorigin id='__NEXT_DATA__' type='application/json' data-build="${BUILD_ID}">`,
  () => '<script id=__NEXT_DATA__ type=application/json>',
];

interface PageParts {
  title: string;
  description: string;
  ogImage?: string;
  canonical?: string;
  /** JSON-LD objects that matter (ProfilePage, VideoObject). */
  jsonLd?: JsonObject | null;
  markup: string;
  nextData: JsonObject;
}

/** A server-rendered Next.js document. */
function renderPage(parts: PageParts, style: Style, rng: Rng): string {
  const nonce = rng.chars(16, URL_SAFE);
  const ld: Json[] = [];
  const other = { '@context': 'https://schema.org', '@type': 'BreadcrumbList', itemListElement: [{ '@type': 'ListItem', position: 1, name: 'snapmsg', item: WWW }] };
  const site = { '@type': 'WebSite', name: 'snapmsg', url: WWW, sameAs: ['https://wrong.example/not-this-one'] };
  if (parts.jsonLd) {
    const block = style.ld === 'array' ? [site, parts.jsonLd] : style.ld === 'graph' ? { '@context': 'https://schema.org', '@graph': [site, { ...parts.jsonLd, '@context': undefined }] } : parts.jsonLd;
    ld.push(block);
    if (style.extraBlocks) ld.splice(rng.int(0, 1), 0, other);
  }
  const ldTags = ld.map((block) => `<script type="application/ld+json"${style.extraBlocks ? ' data-rh="true"' : ''}>${nextJson(shape(block, { ...style, writeDefaults: true }, rng), { ...style, pretty: false })}</script>`);
  const nl = style.pretty ? '\n' : '';
  const head = [
    '<meta charSet="utf-8"/>',
    '<meta name="viewport" content="width=device-width, initial-scale=1"/>',
    `<title>${escapeHtml(parts.title)}</title>`,
    `<meta name="description" content="${escapeHtml(parts.description)}"/>`,
    `<meta property="og:title" content="${escapeHtml(parts.title)}"/>`,
    parts.ogImage ? `<meta property="og:image" content="${escapeHtml(parts.ogImage)}"/>` : '',
    parts.canonical ? `<link rel="canonical" href="${escapeHtml(parts.canonical)}"/>` : '',
    ...ldTags,
    '<link rel="preload" href="/_next/static/css/9a41c2e0b7f3d615.css" as="style"/>',
    '<script src="/_next/static/chunks/webpack-5c1f0e8a2b7d4e93.js" defer=""></script>',
    '<script src="/_next/static/chunks/main-0d7e3a9c51f2b846.js" defer=""></script>',
  ].filter((line) => line !== '');
  const extraScripts = style.extraBlocks
    ? `<script id="__NEXT_I18N__" type="application/json">{"locale":"en-US"}</script>${nl}<script type="application/json" id="__NEXT_FLAGS__">{"props":{}}</script>${nl}`
    : '';
  const open = SCRIPT_TAGS[style.scriptTag % SCRIPT_TAGS.length]!(nonce);
  const data = nextJson(shape(parts.nextData, style, rng), style);
  return (
    `<!DOCTYPE html><html lang="en"><head>${nl}${head.join(nl)}${nl}</head><body>${nl}` +
    `<div id="__next">${parts.markup}</div>${nl}${extraScripts}${open}${data}</script>${nl}</body></html>`
  );
}

const nextDocument = (pageProps: JsonObject, page: string, query: JsonObject, statusCode?: number): JsonObject => ({
  props: { pageProps, __N_SSP: statusCode === undefined ? true : undefined },
  page,
  query,
  buildId: BUILD_ID,
  isFallback: false,
  ...(statusCode === undefined ? { gssp: true } : { gip: true }),
  locale: 'en-US',
  locales: ['en-US', 'de-DE', 'fr-FR', 'pt-PT'],
  defaultLocale: 'en-US',
  scriptLoader: [],
});

/** The Next.js 404 error page, HTTP 404. */
function notFoundPage(query: JsonObject, style: Style = PLAIN_STYLE): SandboxResponse {
  const body = renderPage(
    {
      title: '404: This page could not be found',
      description: 'This page could not be found.',
      markup: '<div class="NotFound_container"><h1>404</h1><h2>This page could not be found.</h2></div>',
      nextData: nextDocument({ statusCode: 404 }, '/_error', query, 404),
    },
    { ...style, writeDefaults: true },
    new Rng('404', JSON.stringify(query)),
  );
  return html(body, 404);
}

const blockedPage = (): SandboxResponse =>
  html('<!DOCTYPE html><html><head><title>Request blocked</title></head><body><h1>Request blocked</h1><p>Automated requests are not allowed.</p></body></html>', 403);

const tooManyPage = (): SandboxResponse =>
  html('<!DOCTYPE html><html><head><title>Too Many Requests</title></head><body><h1>Too many requests</h1></body></html>', 429, { 'retry-after': '60' });

const apiError = (status: number, code: string, message: string, headers: Record<string, string> = {}) =>
  json({ error: { code, message } }, status, headers);

// ================================================================== handlers

function withDelay(response: SandboxResponse, fault: SandboxResponse | { delayMs: number } | null): SandboxResponse {
  if (fault && 'delayMs' in fault && !('status' in fault) && !('reset' in response)) return { ...response, delayMs: fault.delayMs };
  return response;
}

/** A fault that replaces the answer (503, reset), or null; `{delayMs}` faults are applied by `withDelay`. */
const blockingFault = (fault: SandboxResponse | { delayMs: number } | null): SandboxResponse | null =>
  fault && ('status' in fault || 'reset' in fault) ? fault : null;

function profileHandler(username: string, request: SandboxRequest, context: SandboxContext): SandboxResponse {
  if (!USERNAME.test(username)) return notFoundPage({ username });
  const lower = username.toLowerCase();
  if (lower !== username) {
    const search = request.query.toString();
    return redirect(`/add/${lower}${search ? `?${search}` : ''}`, lower.length % 2 === 0 ? 301 : 308);
  }
  const fault = accountFault(username, context);
  const stop = blockingFault(fault);
  if (stop) return stop;
  const account = profileAccount(username);
  const style = { ...styleFor(context.seed, username), ...account.style };
  const rng = new Rng(context.seed, `render:${username}`);
  switch (account.kind) {
    case 'notFound':
      return withDelay(notFoundPage({ username }, style), fault);
    case 'rateLimited':
      return tooManyPage();
    case 'edgeBlocked':
      return blockedPage();
    case 'loginWall':
      return redirect(`/accounts/login?next=${encodeURIComponent(`/add/${username}`)}`, 302);
    case 'challenge':
      return redirect(`/challenge/?next=${encodeURIComponent(`/add/${username}`)}&c=${rng.chars(12, URL_SAFE)}`, 302);
    case 'noNextData':
      return html('<!DOCTYPE html><html><head><title>snapmsg</title></head><body><div id="__next"><p>Something went wrong.</p></div><script src="/_next/static/chunks/main-0d7e3a9c51f2b846.js"></script></body></html>');
    default:
      break;
  }
  const model = profileModel(context.seed, username);
  const pp = model.pageProps;
  const info = ((pp.userProfile as JsonObject)[(pp.userProfile as JsonObject).$case as string] ?? {}) as JsonObject;
  const name = (info.title ?? info.displayName ?? username) as string;
  const bio = typeof info.bio === 'string' ? info.bio : '';
  const body = renderPage(
    {
      title: `${name} (@${username}) | snapmsg`,
      description: bio || `Add ${name} on snapmsg.`,
      ogImage: ((pp.linkPreview as JsonObject).ogImage as JsonObject | undefined)?.url as string | undefined,
      canonical: `${WWW}/add/${username}`,
      jsonLd: model.profilePage,
      markup: `<main class="PublicProfile_main"><h1>${escapeHtml(name)}</h1>${bio ? `<p>${escapeHtml(bio)}</p>` : ''}</main>`,
      nextData: nextDocument(pp, '/add/[username]', { username }),
    },
    style,
    rng,
  );
  return withDelay(html(body), fault);
}

function spotlightHandler(id: string, context: SandboxContext): SandboxResponse {
  if (!SPOTLIGHT_ID.test(id)) return notFoundPage({ spotlightId: id });
  const fault = accountFault(id, context);
  const stop = blockingFault(fault);
  if (stop) return stop;
  const account = spotlightAccount(id);
  const style = { ...styleFor(context.seed, `spotlight:${id}`), ...account.style };
  const rng = new Rng(context.seed, `render:spotlight:${id}`);
  switch (account.kind) {
    case 'notFound':
      return withDelay(notFoundPage({ spotlightId: id }, style), fault);
    case 'edgeBlocked':
      return blockedPage();
    case 'challenge':
      return redirect(`/challenge?next=${encodeURIComponent(`/spotlight/${id}`)}`, 302);
    default:
      break;
  }
  const pageProps = spotlightModel(context.seed, id, style);
  const meta = pageProps.linkPreview as { title: string; description: string };
  const body = renderPage(
    {
      title: meta.title,
      description: meta.description,
      ogImage: `${CDN}/d/spot/${id.slice(0, 12)}-thumb.jpg`,
      canonical: `${WWW}/spotlight/${id}`,
      jsonLd: { '@context': 'https://schema.org', '@type': 'VideoObject', name: meta.title, contentUrl: `${CDN}/d/spot/${id.slice(0, 12)}.mp4` },
      markup: '<main class="Spotlight_main"><video poster="" playsinline=""></video></main>',
      nextData: nextDocument(pageProps, '/spotlight/[spotlightId]', { spotlightId: id }),
    },
    style,
    rng,
  );
  return withDelay(html(body), fault);
}

/** Spotlights whose comments context exists (a `contextGone` one was deleted). */
const HAS_CONTEXT: ReadonlySet<SpotlightKind> = new Set(['comments', 'commentsDisabled', 'rateLimited', 'brokenComments']);

function commentsHandler(request: SandboxRequest, context: SandboxContext): SandboxResponse {
  if (request.method !== 'POST') return apiError(405, 'METHOD_NOT_ALLOWED', 'Use POST');
  const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') return apiError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json');
  let body: unknown;
  try {
    body = JSON.parse(request.body);
  } catch {
    return apiError(400, 'INVALID_ARGUMENT', 'Body is not JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return apiError(400, 'INVALID_ARGUMENT', 'Body must be a JSON object');
  const { contextId, cursor = '', count = 20 } = body as { contextId?: unknown; cursor?: unknown; count?: unknown };
  if (typeof contextId !== 'string' || contextId === '') return apiError(400, 'INVALID_ARGUMENT', 'contextId is required');
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > 50) return apiError(400, 'INVALID_ARGUMENT', 'count must be 1..50');
  if (typeof cursor !== 'string') return apiError(400, 'INVALID_ARGUMENT', 'cursor must be a string');
  const id = spotlightOfContext(contextId);
  const account = id === null ? null : spotlightAccount(id);
  if (id === null || account === null || !HAS_CONTEXT.has(account.kind)) return apiError(404, 'NOT_FOUND', 'Unknown contextId');
  const fault = accountFault(id, context);
  const stop = blockingFault(fault);
  if (stop) return stop;
  if (account.kind === 'rateLimited') return apiError(429, 'RESOURCE_EXHAUSTED', 'Too many requests', { 'retry-after': '30' });
  if (account.kind === 'brokenComments') return html('<!DOCTYPE html><html><body><h1>Maintenance</h1></body></html>');
  let position = { page: 0, offset: 0 };
  if (cursor !== '') {
    const read = readCursor(context.seed, contextId, cursor);
    if (read === null || read.offset > totalComments(context.seed, id)) return apiError(400, 'INVALID_CURSOR', 'The cursor is malformed, expired or was issued for another context');
    position = read;
  }
  const style = { ...styleFor(context.seed, `comments:${id}:${position.page}`), ...account.style };
  const rng = new Rng(context.seed, `render:comments:${id}:${position.page}`);
  const page =
    account.kind === 'commentsDisabled'
      ? { comments: [], hasMore: false, totalCount: '0' }
      : commentsPage(context.seed, id, contextId, position.page, position.offset, count);
  const shaped = shape(page, style, rng);
  let text = JSON.stringify(shaped, null, style.pretty ? 2 : undefined);
  if (style.slashes) text = text.replace(/\//g, '\\/');
  if (style.asciiOnly) text = text.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return withDelay(json(text), fault);
}

/** Where the block redirects land: a login wall or a challenge, served as a plain page. */
const loginPage = () =>
  html('<!DOCTYPE html><html><head><title>Log in | snapmsg</title></head><body><form action="/accounts/login" method="post"><input name="username"/><input type="password" name="password"/></form></body></html>');
const challengePage = () =>
  html('<!DOCTYPE html><html><head><title>Security check | snapmsg</title></head><body><h1>Confirm you are not a robot</h1><div class="captcha"></div></body></html>');

async function handle(request: SandboxRequest, context: SandboxContext): Promise<SandboxResponse> {
  // A User-Agent without `Mozilla/5.0` is a bot, answered 403 whatever else it carries (README.md, "Requests").
  if (!/Mozilla\/5\.0/.test(request.headers['user-agent'] ?? '')) return blockedPage();
  const path = request.path;
  if (path === COMMENTS_PATH || path === `${COMMENTS_PATH}/`) return commentsHandler(request, context);
  if (path.startsWith('/accounts/login')) return loginPage();
  if (path.startsWith('/challenge')) return challengePage();
  if (request.method !== 'GET' && request.method !== 'HEAD') return html('<!DOCTYPE html><html><body>Method Not Allowed</body></html>', 405);
  let segments: string[];
  try {
    segments = path.split('/').slice(1).map(decodeURIComponent);
  } catch {
    return notFoundPage({});
  }
  if (segments.at(-1) === '' && segments.length > 1) segments.pop();
  if (segments.length === 2 && segments[0] === 'add') return profileHandler(segments[1]!, request, context);
  if (segments.length === 2 && segments[0] === 'spotlight') return spotlightHandler(segments[1]!, context);
  if (segments.length === 3 && segments[0]?.startsWith('@') && segments[1] === 'spotlight') return spotlightHandler(segments[2]!, context);
  return notFoundPage({});
}

// ================================================================== catalogue

const PROFILE_ENDPOINT = '/v1/snapmsg/profile';
const COMMENTS_ENDPOINT = '/v1/snapmsg/spotlight/comments';
/** The fault accounts, in the order of FAULT_PROFILES and FAULT_SPOTLIGHTS, and the API's answer. */
const FAULTS: { fault: string; answer: string }[] = [
  { fault: 'slow: every answer after the configured latency', answer: ' → 200' },
  { fault: 'flaky: each request answered 503, then a reset connection, then normally', answer: '; retried → 200' },
  { fault: 'down: always 503', answer: '; retried → 502 UPSTREAM_BLOCKED' },
  { fault: 'hiccup: each request first answered with an empty 200 body (transient), then normally', answer: '; retried → 200' },
];
const spotlightUrl = (id: string) => `url=${WWW}/spotlight/${id}`;

const catalogue: CatalogueEntry[] = [
  ...Object.entries(PROFILES).map(([username, account]) => ({ description: account.description, endpoint: PROFILE_ENDPOINT, query: `username=${username}` })),
  { description: 'username with `@` and capitals (the sandbox redirects `/add/LunaVoss` to lower case; the service requests lower case) → 200', endpoint: PROFILE_ENDPOINT, query: 'username=@LunaVoss' },
  { description: 'any other valid username: a generated public profile with a seed-chosen text flavour and serialisation → 200', endpoint: PROFILE_ENDPOINT, query: 'username=anyname42' },
  ...FAULTS.map(({ fault, answer }, i) => ({ description: `${fault} (ordinary profile otherwise)${answer}`, endpoint: PROFILE_ENDPOINT, query: `username=${FAULT_PROFILES[i] ?? ''}` })),
  ...Object.entries(SPOTLIGHTS).map(([id, account]) => ({ description: account.description, endpoint: COMMENTS_ENDPOINT, query: spotlightUrl(id) })),
  { description: 'long URL form `/@{username}/spotlight/{id}` → 200', endpoint: COMMENTS_ENDPOINT, query: `url=${WWW}/@lunavoss/spotlight/starTrails_Sintra_0001` },
  { description: 'any other valid Spotlight id: generated comments (0 to 70) with seed-chosen page sizes and serialisation → 200', endpoint: COMMENTS_ENDPOINT, query: spotlightUrl('AnySpotlightId_1234') },
  ...FAULTS.map(({ fault, answer }, i) => ({ description: `${fault}, on the Spotlight page and every comments request${answer}`, endpoint: COMMENTS_ENDPOINT, query: spotlightUrl(FAULT_SPOTLIGHTS[i] ?? '') })),
];

export const snapmsgSandbox: SandboxPlatform = { name: 'snapmsg', handle, catalogue };

/** Generated data behind the pages, for tests that compare an extraction with its source. */
export const snapmsgSandboxData = {
  profileModel,
  commentModel,
  totalComments,
  contextIdOf,
  /** Named accounts by kind. */
  profiles: PROFILES,
  spotlights: SPOTLIGHTS,
};
