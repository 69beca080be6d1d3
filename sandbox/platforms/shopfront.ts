// The shopfront sandbox (src/platforms/shopfront/README.md): creator storefront pages carrying `a-state`
// blocks, the JSON feed endpoint with opaque signed page tokens, and every missing, inactive,
// blocked and failing answer. All data comes from the seed; the variations the platform
// allows are applied per account, so that every one of them is served somewhere.
import { createHash } from 'node:crypto';
import {
  accountFault,
  escapeHtml,
  html,
  json,
  redirect,
  Rng,
  scriptJson,
  text,
  type CatalogueEntry,
  type SandboxContext,
  type SandboxPlatform,
  type SandboxRequest,
  type SandboxResponse,
  type TextFlavour,
} from '../common.ts';
import { personOf } from '../people.ts';

const SITE = 'https://www.shopfront.example';
const MEDIA = 'https://m.media-shopfront.example';
const ENDPOINT = '/v1/shopfront/shop';
const HANDLE = /^[A-Za-z0-9][A-Za-z0-9._-]{1,63}$/;
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const IMAGE_ID = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const MAX_BATCH = 24;
const SCOPES: Record<string, PostType | null> = { ALL: null, IDEA_LISTS: 'List', PHOTOS: 'Photo', VIDEOS: 'Video' };

type PostType = 'List' | 'Photo' | 'Video';

// ---------------------------------------------------------------------------------------
// Accounts

/** How a page is written: the variations the platform allows, fixed per account. */
interface Style {
  /** `data-a-state` quoting: `&quot;`, `&#34;` or single quotes with raw `"`. */
  quote: ['quot' | '34' | 'single', 'quot' | '34' | 'single'];
  /** `data-a-state` before `type`, plus extra attributes and members. */
  attributesReversed: boolean;
  /** The feed block before the header block. */
  feedFirst: boolean;
  /** Extra a-state blocks (other keys) before and after the two that matter. */
  extraBlocks: number;
  /** JSON: `\/` escapes, every non-ASCII character escaped, indentation, unknown members, shuffled keys. */
  slashes: boolean;
  asciiOnly: boolean;
  indent: number;
  unknownMembers: boolean;
  shuffleKeys: boolean;
  /** Absolute instead of site-relative `detailPageUrl` and `path`. */
  absoluteUrls: boolean;
  /** The last batch: `pageToken` null, or absent. */
  endTokenAbsent: boolean;
}

const STYLES: Style[] = [
  // 0: as the contract's example
  { quote: ['quot', 'single'], attributesReversed: false, feedFirst: false, extraBlocks: 1, slashes: false, asciiOnly: false, indent: 0, unknownMembers: false, shuffleKeys: false, absoluteUrls: false, endTokenAbsent: false },
  // 1: feed block first, single quotes on the header, `&#34;` on the feed, `\/` escapes
  { quote: ['single', '34'], attributesReversed: true, feedFirst: true, extraBlocks: 2, slashes: true, asciiOnly: false, indent: 0, unknownMembers: true, shuffleKeys: false, absoluteUrls: false, endTokenAbsent: true },
  // 2: pretty JSON, shuffled keys, unknown members, ASCII-only escapes
  { quote: ['34', 'quot'], attributesReversed: false, feedFirst: false, extraBlocks: 3, slashes: false, asciiOnly: true, indent: 2, unknownMembers: true, shuffleKeys: true, absoluteUrls: false, endTokenAbsent: false },
  // 3: everything at once
  { quote: ['single', 'single'], attributesReversed: true, feedFirst: true, extraBlocks: 0, slashes: true, asciiOnly: true, indent: 1, unknownMembers: true, shuffleKeys: true, absoluteUrls: true, endTokenAbsent: true },
  // 4: absolute URLs, &quot; everywhere
  { quote: ['quot', 'quot'], attributesReversed: false, feedFirst: false, extraBlocks: 1, slashes: false, asciiOnly: false, indent: 0, unknownMembers: false, shuffleKeys: true, absoluteUrls: true, endTokenAbsent: false },
];

type State =
  | 'active'
  | 'inactive' // INACTIVE_STOREFRONT header, no feed block
  | 'missing' // 404 page
  | 'missing-200' // 200 page titled Page Not Found
  | 'captcha' // captcha page, HTTP 200
  | 'captcha-503' // captcha page, HTTP 503
  | 'ratelimited' // HTTP 429
  | 'signin' // redirect to /ap/signin
  | 'feed-captcha' // page fine, feed endpoint answers the captcha
  | 'feed-rejects'; // page fine, feed endpoint rejects every token

interface Account {
  description: string;
  state: State;
  /** Total posts of the storefront. */
  posts: number;
  /** Batch size, or `varied` (0 to 24 per batch, empty batches while more remain). */
  batch: number | 'varied';
  flavour: TextFlavour;
  /** Currencies of the trending products, cycled. */
  currencies: string[];
  /** Optional members absent or null. */
  sparse: boolean;
  style: number;
}

const ordinary: Omit<Account, 'description'> = {
  state: 'active', posts: 60, batch: 12, flavour: 'plain', currencies: ['USD'], sparse: false, style: 0,
};

/** The accounts the catalogue documents; any other valid handle is an ordinary generated storefront. */
const ACCOUNTS: Record<string, Account> = {
  lunacooks: { ...ordinary, description: 'ordinary storefront: 60 posts in batches of 12, curations, trending products (a price over 1,000, a null price, a null badge) → 200' },
  bighaul: { ...ordinary, posts: 480, batch: 24, style: 1, description: 'large storefront: 480 posts in 20 batches of 24 (feed block first, `\\/` escapes) → 200' },
  batchmix: { ...ordinary, posts: 300, batch: 'varied', style: 2, description: 'large storefront: 300 posts in batches of 0 to 24, empty batches while more remain (pretty JSON, shuffled keys, ASCII-only escapes) → 200' },
  'emoji-kitchen': { ...ordinary, posts: 30, batch: 10, flavour: 'emoji', currencies: ['EUR', 'GBP'], style: 3, description: 'emoji names, titles and bio; EUR and GBP prices; every variation at once → 200' },
  'souq-noor': { ...ordinary, posts: 20, batch: 8, flavour: 'rtl', currencies: ['INR', 'AUD'], style: 4, description: 'right-to-left names and titles; INR and AUD prices; absolute URLs → 200' },
  'tokyo-zakka': { ...ordinary, posts: 16, batch: 16, flavour: 'cjk', currencies: ['JPY', 'MXN', 'CAD'], style: 1, description: 'CJK names and titles; JPY, MXN and CAD prices; one full batch → 200' },
  'mixed-bag': { ...ordinary, posts: 25, batch: 7, flavour: 'mixed', currencies: ['USD', 'SEK', 'CHF', 'CAD'], style: 2, description: 'mixed scripts with quotes, `&` and `<b>` in text; prices in codes without a symbol (SEK, CHF) → 200' },
  'bare-shop': { ...ordinary, posts: 9, batch: 5, sparse: true, style: 3, description: 'absent optional fields: no bio, avatar, tag, badges, links, curations, trending; posts without titles, hearts or products → 200' },
  'empty-shop': { ...ordinary, posts: 0, description: 'active storefront without posts: an empty first batch, no next page → 200' },
  oldkitchenfinds: { ...ordinary, state: 'inactive', description: 'inactive storefront (INACTIVE_STOREFRONT) → 404 NOT_FOUND' },
  nosuchcreator: { ...ordinary, state: 'missing', description: 'missing storefront, HTTP 404 page → 404 NOT_FOUND' },
  'gone-soft': { ...ordinary, state: 'missing-200', description: 'missing storefront, HTTP 200 page titled Page Not Found → 404 NOT_FOUND' },
  'captcha-wall': { ...ordinary, state: 'captcha', description: 'captcha page with HTTP 200 → 502 UPSTREAM_BLOCKED' },
  'captcha-503': { ...ordinary, state: 'captcha-503', description: 'captcha page with HTTP 503 (a block, not retried) → 502 UPSTREAM_BLOCKED' },
  'rate-limited': { ...ordinary, state: 'ratelimited', description: 'HTTP 429 → 502 UPSTREAM_BLOCKED' },
  'signin-wall': { ...ordinary, state: 'signin', description: 'redirect to /ap/signin → 502 UPSTREAM_BLOCKED' },
  'feed-captcha': { ...ordinary, posts: 40, state: 'feed-captcha', description: 'the feed endpoint answers its captcha page: first page → 200, next page → 502 UPSTREAM_BLOCKED' },
  'feed-rejects': { ...ordinary, posts: 40, state: 'feed-rejects', description: 'the feed endpoint rejects every token (INVALID_PAGE_TOKEN): first page → 200, next page → 400 BAD_REQUEST' },
  'slow-cooks': { ...ordinary, description: 'ordinary storefront answering after the configured latency (`slow-` prefix) → 200' },
  'flaky-cooks': { ...ordinary, description: 'answers 503, then a reset, then the storefront, per request (`flaky-` prefix); retried → 200' },
  'down-cooks': { ...ordinary, description: 'always 503 (`down-` prefix); retried → 502 UPSTREAM_BLOCKED' },
  'hiccup-cooks': { ...ordinary, posts: 30, description: 'the storefront page and each feed request first answered with an empty 200 body (`hiccup-` prefix, transient), the answer on the retry, on every page; retried → 200' },
};

function accountOf(handle: string): Account {
  const known = ACCOUNTS[handle];
  if (known) return known;
  // Any other handle: an ordinary storefront whose size and style follow from the name.
  const digest = createHash('sha256').update(handle).digest();
  return {
    ...ordinary,
    description: 'generated storefront',
    posts: 5 + (digest.readUInt16LE(0) % 80),
    batch: 6 + (digest.readUInt8(2) % 19),
    style: digest.readUInt8(3) % STYLES.length,
  };
}

export const shopfrontCatalogue: CatalogueEntry[] = [
  ...Object.entries(ACCOUNTS).map(([handle, account]) => ({
    description: account.description,
    endpoint: ENDPOINT,
    query: `url=${SITE}/shop/${handle}`,
  })),
  {
    description: 'any other handle: an ordinary generated storefront (size and variations follow from the handle) → 200',
    endpoint: ENDPOINT,
    query: `url=${SITE}/shop/creator-03f5875c`,
  },
];

// ---------------------------------------------------------------------------------------
// Generated data

export interface GeneratedStorefront {
  storefrontId: string;
  handle: string;
  account: Account;
  /** HEADER.storefront as served (before the style's unknown members and key order). */
  header: Record<string, unknown>;
}

const storefrontIdOf = (seed: string, handle: string) =>
  `sf1.storefront.${new Rng(seed, `shopfront:id:${handle}`).chars(13, UPPER)}`;

const asinOf = (rng: Rng) => `B0${rng.chars(8, UPPER)}`;
const imageOf = (rng: Rng, suffix: string) => `${MEDIA}/images/I/${rng.chars(10, IMAGE_ID)}L.${suffix}.jpg`;
const url = (style: Style, path: string) => (style.absoluteUrls ? SITE + path : path);

/** An amount with no more fraction digits than the currency allows; now and then over 1,000. */
function amountOf(rng: Rng, currency: string): number {
  if (currency === 'JPY') return rng.int(1, 5) === 1 ? rng.int(10_000, 2_500_000) : rng.int(300, 9_999);
  const cents = rng.int(1, 5) === 1 ? rng.int(100_000, 900_000) : rng.int(50, 99_999);
  return cents / 100;
}

const SOCIAL = [
  ['socialnet', 'https://www.socialnet.example/'],
  ['snapmsg', 'https://www.snapmsg.example/add/'],
  ['linkpage-a', 'https://linkpage-a.example/'],
  ['linkpage-b', 'https://linkpage-b.example/'],
] as const;

/** The storefront of `handle` for `seed`: always the same. */
export function generateStorefront(seed: string, handle: string): GeneratedStorefront {
  const account = accountOf(handle);
  const style = STYLES[account.style] as Style;
  const rng = new Rng(seed, `shopfront:header:${handle}`);
  const person = personOf(seed, handle, account.flavour);
  const storefrontId = storefrontIdOf(seed, handle);
  const partnerTag = `${handle.replace(/[^a-z0-9]/g, '').slice(0, 16) || 'creator'}-20`;
  const header: Record<string, unknown> = {
    storefrontId,
    handle,
    displayName: person.name,
    status: account.state === 'inactive' ? 'INACTIVE_STOREFRONT' : 'ACTIVE',
    marketplace: { marketplaceId: 'MKT1US', domain: 'www.shopfront.example', currencyCode: account.currencies[0], locale: 'en_US' },
  };
  if (account.state === 'inactive') return { storefrontId, handle, account, header };
  if (account.sparse) {
    Object.assign(header, { bio: null, partnerTag: null, badges: [] });
    return { storefrontId, handle, account, header };
  }
  const curations = Array.from({ length: rng.int(0, 5) }, () => {
    const id = rng.chars(13, UPPER);
    return {
      curationId: id,
      title: rng.sentence(rng.int(1, 3), account.flavour),
      postCount: rng.int(0, 60),
      coverImage: { url: imageOf(rng, '_AC_SL600_') },
      path: url(style, `/shop/${handle}/list/${id}`),
    };
  });
  const trending = Array.from({ length: rng.int(3, 8) }, (_, index) => {
    const asin = asinOf(rng);
    const currency = account.currencies[index % account.currencies.length] as string;
    // The first three cover the contract's cases: a price over 1,000, a null price, a null badge.
    const amount = index === 0 ? 1249.5 : amountOf(rng, currency);
    return {
      asin,
      title: rng.sentence(4, account.flavour),
      image: { url: imageOf(rng, '_AC_UL320_') },
      price: index === 1 || (index > 2 && rng.int(1, 6) === 1) ? null : { amount: currency === 'JPY' ? Math.round(amount) : amount, currencyCode: currency },
      badge: index === 2 ? null : rng.pick(['Best Seller', 'Limited time deal', "Editors' pick", null]),
      detailPageUrl: url(style, `/dp/${asin}?tag=${partnerTag}&linkCode=sft`),
    };
  });
  Object.assign(header, {
    bio: person.bio,
    avatar: { url: `${MEDIA}/images/S/creator-profile-image-prod/${handle}-${rng.chars(4)}._SX200_.jpg` },
    partnerTag,
    badges: rng.bool(0.4) ? ['TOP_CREATOR'] : rng.pick([[], ['RISING_STAR']]),
    commissionEligible: rng.bool(0.8),
    postCount: account.posts,
    socialLinks: SOCIAL.filter(() => rng.bool(0.5)).map(([platform, prefix]) => ({ platform, url: prefix + handle })),
    curations,
    trending,
  });
  return { storefrontId, handle, account, header };
}

/** Post `index` of the storefront's feed. */
export function generatePost(seed: string, handle: string, index: number): Record<string, unknown> {
  const account = accountOf(handle);
  const style = STYLES[account.style] as Style;
  const rng = new Rng(seed, `shopfront:post:${handle}:${index}`);
  const type = rng.pick<PostType>(['List', 'List', 'Photo', 'Photo', 'Video']);
  const code = rng.chars(13, UPPER);
  const postId = `sf1.ideas.${code}`;
  const segment = type === 'List' ? `list/${code}` : `${type.toLowerCase()}/${postId}`;
  const hearts = rng.pick([0, rng.int(1, 999), rng.int(1_000, 99_999), rng.int(100_000, 3_000_000)]);
  const productCount = type === 'List' ? rng.int(1, 40) : rng.int(0, type === 'Photo' ? 6 : 3);
  const partnerTag = `${handle.replace(/[^a-z0-9]/g, '').slice(0, 16) || 'creator'}-20`;
  const products = Array.from({ length: Math.min(4, productCount) }, () => {
    const asin = asinOf(rng);
    return {
      asin,
      image: { url: imageOf(rng, '_AC_UL320_'), width: 320, height: 320 },
      detailPageUrl: url(style, `/dp/${asin}?tag=${partnerTag}&linkCode=sfp&ref_=cm_sw_sf`),
    };
  });
  const post: Record<string, unknown> = {
    postId,
    postType: type,
    title: type === 'Photo' && rng.bool(0.5) ? null : rng.sentence(rng.int(2, 5), account.flavour),
    path: url(style, `/shop/${handle}/${segment}`),
    image: {
      url: `${MEDIA}/images/${type === 'List' ? `I/${rng.chars(10, IMAGE_ID)}L._AC_SL600_` : `S/sf-creator-content/${code}`}.jpg`,
      width: 1080,
      height: rng.pick([1080, 1350, 1920]),
    },
  };
  if (type === 'Video') post.video = { url: `${MEDIA}/videos/sf-creator-content/${code}.mp4`, durationMs: rng.int(5, 90) * 1000 };
  if (account.sparse) {
    // Absent members the mapping takes (README.md, "Mapping"): title, engagement (0 hearts), productCount and products.
    delete post.title;
    return post;
  }
  post.engagement = { heartCount: hearts, heartCountLabel: heartLabel(hearts) };
  post.productCount = productCount;
  post.products = products;
  return post;
}

/** The rounded label shown next to the hearts: `987`, `2.0K`, `1.5M`. */
function heartLabel(count: number): string {
  if (count < 1_000) return String(count);
  if (count < 1_000_000) return `${(count / 1_000).toFixed(1)}K`;
  return `${(count / 1_000_000).toFixed(1)}M`;
}

// ---------------------------------------------------------------------------------------
// Feed batches and page tokens

interface Position {
  /** Index of the next post within the scope. */
  o: number;
  s: string;
  /** 1 when the batch that issued this token was empty (the next one never is). */
  e: 0 | 1;
  h: string;
  v: 1;
}

const MAC_BYTES = 6;

const macOf = (seed: string, payload: Buffer) =>
  createHash('sha256').update(`shopfront-token\u0000${seed}\u0000`).update(payload).digest().subarray(0, MAC_BYTES);

/** Opaque standard base64 (so `+`, `/` and `=` appear): a MAC, then the position's JSON. */
function encodeToken(seed: string, position: Position): string {
  const payload = Buffer.from(JSON.stringify(position));
  return Buffer.concat([macOf(seed, payload), payload]).toString('base64');
}

function decodeToken(seed: string, token: string): Position | null {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(token)) return null;
  const raw = Buffer.from(token, 'base64');
  if (raw.length <= MAC_BYTES) return null;
  const payload = raw.subarray(MAC_BYTES);
  if (!macOf(seed, payload).equals(raw.subarray(0, MAC_BYTES))) return null;
  try {
    const position = JSON.parse(payload.toString('utf8')) as Position;
    return Number.isInteger(position.o) && position.o >= 0 && typeof position.h === 'string' ? position : null;
  } catch {
    return null;
  }
}

/** Indexes of the posts in `scope`, in feed order. */
function scopeIndexes(seed: string, handle: string, total: number, scope: string): number[] | null {
  const type = SCOPES[scope];
  if (type === undefined) return null;
  const all = Array.from({ length: total }, (_, index) => index);
  return type === null ? all : all.filter((index) => generatePost(seed, handle, index).postType === type);
}

/** How many posts the batch starting at `offset` holds. */
function batchSize(seed: string, handle: string, account: Account, offset: number, afterEmpty: boolean): number {
  if (typeof account.batch === 'number') return account.batch;
  const rng = new Rng(seed, `shopfront:batch:${handle}:${offset}`);
  if (offset > 0 && !afterEmpty && rng.bool(0.2)) return 0;
  return rng.int(1, MAX_BATCH);
}

/** The FEED BATCH from `position`. */
function feedBatch(seed: string, storefront: GeneratedStorefront, position: Position): Record<string, unknown> {
  const { handle, account } = storefront;
  const style = STYLES[account.style] as Style;
  const indexes = scopeIndexes(seed, handle, account.posts, position.s) ?? [];
  const size = batchSize(seed, handle, account, position.o, position.e === 1);
  const slice = indexes.slice(position.o, position.o + size);
  const end = position.o + slice.length;
  const hasMore = end < indexes.length;
  const batch: Record<string, unknown> = {
    storefrontId: storefront.storefrontId,
    scope: position.s,
    posts: slice.map((index) => generatePost(seed, handle, index)),
  };
  if (hasMore) {
    batch.pageToken = encodeToken(seed, { o: end, s: position.s, e: slice.length === 0 ? 1 : 0, h: handle, v: 1 });
  } else if (!style.endTokenAbsent) {
    batch.pageToken = null;
  }
  batch.hasMore = hasMore;
  return batch;
}

// ---------------------------------------------------------------------------------------
// Serialisation with the style's variations

/** Adds unknown members and reorders keys, deterministically. */
function varied(value: unknown, style: Style, rng: Rng): unknown {
  if (Array.isArray(value)) return value.map((item) => varied(item, style, rng));
  if (typeof value !== 'object' || value === null) return value;
  let entries = Object.entries(value).map(([key, item]) => [key, varied(item, style, rng)] as [string, unknown]);
  if (style.unknownMembers) entries.push([rng.pick(['__typename', 'refMarker', 'impressionId', 'weblab']), rng.pick(['SF_T1', 7, true, null, { x: [] }])]);
  if (style.shuffleKeys) {
    const keyed = entries.map((entry) => [rng.next(), entry] as const);
    entries = keyed.sort((a, b) => a[0] - b[0]).map(([, entry]) => entry);
  }
  return Object.fromEntries(entries);
}

function serialise(value: unknown, style: Style, rng: Rng): string {
  const shaped = varied(value, style, rng);
  const compact = scriptJson(shaped, { slashes: style.slashes, asciiOnly: style.asciiOnly });
  if (style.indent === 0) return compact;
  // Same escapes, with whitespace: re-indent the escaped text (its strings stay as they are).
  return JSON.stringify(JSON.parse(compact), null, style.indent)
    .replace(/</g, '\\u003c')
    .replace(/\//g, style.slashes ? '\\/' : '/')
    .replace(/[\u007f-\uffff]/g, (c) => (style.asciiOnly ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c));
}

/** `<script type="a-state" data-a-state=…>` in the given quoting. */
function stateBlock(key: string, content: string, quote: Style['quote'][number], reversed: boolean): string {
  const state = JSON.stringify(reversed ? { key, v: 2 } : { key });
  const attribute =
    quote === 'single'
      ? `data-a-state='${state.replace(/&/g, '&amp;').replace(/'/g, '&#39;')}'`
      : `data-a-state="${state.replace(/&/g, '&amp;').replace(/"/g, quote === 'quot' ? '&quot;' : '&#34;')}"`;
  const type = quote === 'single' ? "type='a-state'" : 'type="a-state"';
  return reversed
    ? `<script ${attribute} class="sf-state" ${type}>${content}</script>`
    : `<script ${type} ${attribute}>${content}</script>`;
}

const EXTRA_KEYS = ['sf-nav-config', 'sf-analytics', 'sf-i18n', 'sf-footer-config'];

function extraBlock(index: number, style: Style): string {
  const key = EXTRA_KEYS[index % EXTRA_KEYS.length] as string;
  return stateBlock(key, '{"locale":"en_US","cartCount":0,"signedIn":false,"storefront":{"handle":"decoy"}}', style.quote[index % 2] ?? 'quot', index % 2 === 1);
}

// ---------------------------------------------------------------------------------------
// Pages

const HEAD = (title: string) =>
  `<!doctype html><html lang="en-us" class="a-no-js"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>` +
  `<meta name="viewport" content="width=device-width, initial-scale=1">` +
  `<link rel="stylesheet" href="${MEDIA}/static/css/sf-storefront-3.2.1.css"></head>`;

function storefrontPage(seed: string, storefront: GeneratedStorefront): string {
  const { account, header, handle } = storefront;
  const style = STYLES[account.style] as Style;
  const rng = new Rng(seed, `shopfront:page:${handle}`);
  const name = String(header.displayName);
  const headerBlock = stateBlock('sf-storefront-header', serialise({ storefront: header }, style, rng), style.quote[0], style.attributesReversed);
  const rendered =
    `<div id="storefront-header" class="sf-header"><h1 class="sf-name">${escapeHtml(name)}</h1>` +
    (typeof header.bio === 'string' ? `<p class="sf-bio">${escapeHtml(header.bio)}</p>` : '') +
    '</div>';
  const before = Array.from({ length: style.extraBlocks }, (_, i) => extraBlock(i, style)).join('');
  const after = style.extraBlocks > 1 ? extraBlock(style.extraBlocks, style) : '';
  let blocks: string[];
  if (header.status === 'ACTIVE') {
    const batch = feedBatch(seed, storefront, { o: 0, s: 'ALL', e: 0, h: handle, v: 1 });
    const cards = (batch.posts as { postId: string; title?: string | null }[])
      .map((post) => `<div class="sf-card" data-post-id="${escapeHtml(post.postId)}">${escapeHtml(post.title ?? '')}</div>`)
      .join('');
    const feedBlock = stateBlock('sf-storefront-feed', serialise(batch, style, rng), style.quote[1], !style.attributesReversed);
    const feed = `<div id="storefront-feed" class="sf-feed">${cards}</div>`;
    blocks = style.feedFirst ? [feed, feedBlock, rendered, headerBlock] : [rendered, headerBlock, feed, feedBlock];
  } else {
    blocks = ['<div class="sf-inactive"><h2>This storefront is no longer available.</h2></div>', headerBlock];
  }
  const title = header.status === 'ACTIVE' ? `${name}’s storefront | shopfront` : 'shopfront';
  return `${HEAD(title)}<body class="sf-storefront"><div id="a-page">${before}${blocks.join('')}${after}</div></body></html>`;
}

const notFoundPage = () =>
  `${HEAD('Page Not Found')}<body class="sf-storefront"><div id="a-page"><div class="sf-error"><h1>Looking for something?</h1>` +
  `<p>We're sorry. The Web address you entered is not a functioning page on our site.</p><a href="/">Go to the home page</a></div></div></body></html>`;

function captchaPage(seed: string, returnPath: string): string {
  const rng = new Rng(seed, `shopfront:captcha:${returnPath}`);
  const escapedPath = escapeHtml(returnPath).replace(/\//g, '&#047;');
  return (
    '<!doctype html><html lang="en-us" class="a-no-js"><head><meta charset="utf-8"><title>shopfront</title><meta name="robots" content="noindex, nofollow"></head><body>\n' +
    '<div class="a-container a-padding-double-large"><div class="a-row a-spacing-double-large">\n<h4>Enter the characters you see below</h4>\n' +
    "<p class=\"a-last\">Sorry, we just need to make sure you're not a robot. For best results, please make sure your browser is accepting cookies.</p>\n" +
    '<form method="get" action="/errors/validateCaptcha" name="">\n' +
    `<input type="hidden" name="sfx" value="${rng.digits(10)}">\n<input type="hidden" name="sfx-r" value="${escapedPath}">\n` +
    `<div class="a-row a-text-center"><img src="${MEDIA}/captcha/${rng.chars(6)}/Captcha_${rng.chars(8)}.jpg" alt=""></div>\n` +
    '<input autocomplete="off" spellcheck="false" placeholder="Type characters" id="captchacharacters" name="field-keywords" type="text">\n' +
    '<button type="submit" class="a-button-text">Continue shopping</button>\n</form>\n</div></div>\n</body></html>'
  );
}

const signinPage = () =>
  `${HEAD('shopfront Sign-In')}<body><div id="a-page"><form name="signIn" method="post" action="/ap/signin">` +
  '<input type="email" name="email"><input type="password" name="password"><button type="submit">Sign in</button></form></div></body></html>';

// ---------------------------------------------------------------------------------------
// Handler

/** storefrontId → handle, for the feed endpoint: catalogue accounts and every storefront served. */
const known = new Map<string, string>();

function remember(seed: string, storefrontId: string, handle: string): void {
  if (known.size > 100_000) known.clear();
  known.set(`${seed}\u0000${storefrontId}`, handle);
}

function handleOfStorefront(seed: string, storefrontId: string): string | undefined {
  const found = known.get(`${seed}\u0000${storefrontId}`);
  if (found !== undefined) return found;
  for (const handle of Object.keys(ACCOUNTS)) remember(seed, storefrontIdOf(seed, handle), handle);
  return known.get(`${seed}\u0000${storefrontId}`);
}

/** A `User-Agent` without `Mozilla/5.0`, or no `Accept-Language`, is a bot (README.md, "Requests"). */
const isBot = (request: SandboxRequest) =>
  !/Mozilla\/5\.0/.test(request.headers['user-agent'] ?? '') || (request.headers['accept-language'] ?? '').trim() === '';

/** Applies the shared `slow-`/`flaky-`/`down-`/`hiccup-` faults of the account to an answer. */
function withFault(handle: string, context: SandboxContext, answer: () => SandboxResponse): SandboxResponse {
  const fault = accountFault(handle, context);
  if (fault === null) return answer();
  if ('delayMs' in fault && !('status' in fault)) {
    const response = answer();
    return 'reset' in response ? response : { ...response, delayMs: fault.delayMs };
  }
  return fault;
}

function storefrontAnswer(request: SandboxRequest, context: SandboxContext, rawHandle: string): SandboxResponse {
  const { seed } = context;
  if (!HANDLE.test(rawHandle)) return html(notFoundPage(), 404);
  const handle = rawHandle.toLowerCase();
  if (handle !== rawHandle) return redirect(`/shop/${handle}`, 301);
  const account = accountOf(handle);
  return withFault(handle, context, () => {
    switch (account.state) {
      case 'missing':
        return html(notFoundPage(), 404);
      case 'missing-200':
        return html(notFoundPage(), 200);
      case 'captcha':
        return html(captchaPage(seed, request.path), 200);
      case 'captcha-503':
        return html(captchaPage(seed, request.path), 503);
      case 'ratelimited':
        return html(`${HEAD('shopfront')}<body><p>Too many requests.</p></body></html>`, 429, { 'retry-after': '30' });
      case 'signin':
        return redirect(`/ap/signin?openid.return_to=${encodeURIComponent(request.path)}`, 302);
      default: {
        const storefront = generateStorefront(seed, handle);
        remember(seed, storefront.storefrontId, handle);
        return html(storefrontPage(seed, storefront));
      }
    }
  });
}

const feedError = (error: string, message: string, status: number) => json({ error, message }, status);

function feedAnswer(request: SandboxRequest, context: SandboxContext): SandboxResponse {
  const { seed } = context;
  const storefrontId = request.query.get('storefrontId') ?? '';
  const token = request.query.get('pageToken') ?? '';
  const scope = request.query.get('scope') ?? 'ALL';
  if (storefrontId === '' || token === '') {
    return feedError('MISSING_PARAMETER', `Required parameter ${storefrontId === '' ? 'storefrontId' : 'pageToken'} is missing.`, 400);
  }
  const handle = handleOfStorefront(seed, storefrontId);
  if (handle === undefined) return feedError('STOREFRONT_NOT_FOUND', 'No storefront has this id.', 404);
  const account = accountOf(handle);
  return withFault(handle, context, () => {
    if (account.state === 'feed-captcha') return html(captchaPage(seed, request.path), 200);
    if (account.state !== 'active' && account.state !== 'feed-rejects') {
      return feedError('STOREFRONT_NOT_FOUND', 'No active storefront has this id.', 404);
    }
    const position = decodeToken(seed, token);
    if (account.state === 'feed-rejects' || position === null || position.h !== handle || position.s !== scope) {
      return feedError('INVALID_PAGE_TOKEN', 'The page token is malformed, expired or belongs to another feed.', 400);
    }
    if (SCOPES[scope] === undefined) return feedError('INVALID_PAGE_TOKEN', `Unknown scope ${scope}.`, 400);
    const storefront = generateStorefront(seed, handle);
    const style = STYLES[account.style] as Style;
    const rng = new Rng(seed, `shopfront:feed:${handle}:${position.o}`);
    const body = serialise(feedBatch(seed, storefront, position), style, rng);
    return json(body);
  });
}

function handleRequest(request: SandboxRequest, context: SandboxContext): SandboxResponse {
  if (request.method !== 'GET' && request.method !== 'HEAD') return text('Method Not Allowed', 405, { allow: 'GET, HEAD' });
  let path: string;
  try {
    path = decodeURIComponent(request.path);
  } catch {
    return html(notFoundPage(), 404);
  }
  if (path.startsWith('/errors/validateCaptcha')) return html(captchaPage(context.seed, '/'), 200);
  if (path.startsWith('/ap/signin')) return html(signinPage(), 200);
  if (isBot(request) && (path === '/shop/api/feed' || path.startsWith('/shop/'))) {
    return html(captchaPage(context.seed, request.path), 200);
  }
  if (path === '/shop/api/feed') return feedAnswer(request, context);
  const match = /^\/shop\/([^/]+)\/?$/.exec(path);
  if (match) return storefrontAnswer(request, context, match[1] as string);
  return html(notFoundPage(), 404);
}

export const shopfrontSandbox: SandboxPlatform = {
  name: 'shopfront',
  handle: handleRequest,
  catalogue: shopfrontCatalogue,
};
