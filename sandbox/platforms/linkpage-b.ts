// The linkpage-b sandbox upstream (src/platforms/linkpage-b/README.md): `GET /{username}` answers a
// server-rendered page whose `<script id="__NEXT_DATA__">` carries the account, its links, social
// links and store, generated from the seed and the username. Special usernames show missing,
// inactive, sensitive, blocked and broken pages; the variations the platform allows are applied
// deterministically per account (key order, whitespace, escaping, script attributes, extra
// blocks and members, absent optional members, colour case).
import {
  accountFault,
  escapeHtml,
  html,
  redirect,
  Rng,
  text,
  type CatalogueEntry,
  type SandboxContext,
  type SandboxPlatform,
  type SandboxRequest,
  type SandboxResponse,
  type TextFlavour,
} from '../common.ts';
import { personOf } from '../people.ts';

type Json = Record<string, unknown>;

const SITE = 'https://linkpage-b.example';
const CDN = 'https://ugc.linkpage-b-cdn.example';
const ENDPOINT = '/v1/linkpage-b/page';
const BUILD_ID = 'sNdBx7LpB2kQ9wRt4YvZc';
const USERNAME = /^[A-Za-z0-9_.]{2,30}$/;
const RESERVED = new Set(['s', 'admin', 'login', 'register', 'api', 'help', 'privacy', 'terms', 'discover', 'marketplace', '_next', 'static']);

// ---------------------------------------------------------------------------------------
// Accounts

/** What a generated page holds. */
export interface PageSpec {
  flavour: TextFlavour;
  /** Top-level links of `PP.links`, GROUPs and HEADERs included. */
  links: number;
  groups: number;
  pinned: number;
  /** Records of `A.links` not shown now (switched off or scheduled). */
  hidden: number;
  products: number;
  collections: number;
  social: number;
  /** Absent or empty optional data everywhere (no avatar, title, name, description, store…). */
  sparse: boolean;
  warning: null | 'SENSITIVE' | 'AGE_RESTRICTED';
  verified: boolean;
  avatar: 'IMAGE' | 'VIDEO' | 'ANIMATED' | 'NONE';
  banner: 'NONE' | 'IMAGE' | 'VIDEO' | 'COLOR';
}

/** Usernames whose answer is not a page. */
type Special = 'not_found' | 'inactive' | 'rate_limited' | 'denied' | 'login' | 'challenge' | 'empty' | 'no_payload';

const SPECIAL: Record<string, Special> = {
  'ghost.page': 'not_found',
  'suspended.acct': 'inactive',
  'rate.limited': 'rate_limited',
  'edge.denied': 'denied',
  'login.wall': 'login',
  'checkpoint.hit': 'challenge',
  'empty.body': 'empty',
  'layout.changed': 'no_payload',
};

const ORDINARY: PageSpec = {
  flavour: 'plain',
  links: 6,
  groups: 1,
  pinned: 1,
  hidden: 1,
  products: 3,
  collections: 1,
  social: 3,
  sparse: false,
  warning: null,
  verified: true,
  avatar: 'IMAGE',
  banner: 'NONE',
};

const PAGES: Record<string, PageSpec> = {
  'luna.voss': ORDINARY,
  'rui.silva': { ...ORDINARY, links: 9, groups: 2, pinned: 2, hidden: 3, products: 5, collections: 2, social: 5, verified: false, avatar: 'VIDEO', banner: 'VIDEO' },
  'big.catalogue': { ...ORDINARY, links: 320, groups: 25, pinned: 8, hidden: 60, products: 150, collections: 40, social: 14, banner: 'IMAGE' },
  'emoji.studio': { ...ORDINARY, flavour: 'emoji', avatar: 'ANIMATED', banner: 'COLOR' },
  'noor.haddad': { ...ORDINARY, flavour: 'rtl', links: 8 },
  'sakura.kato': { ...ORDINARY, flavour: 'cjk', groups: 2, links: 7 },
  'mixed.bag': { ...ORDINARY, flavour: 'mixed', links: 10, groups: 2, products: 4, collections: 2, social: 4 },
  'bare.page': { ...ORDINARY, links: 0, groups: 0, pinned: 0, hidden: 0, products: 0, collections: 0, social: 0, sparse: true, verified: false, avatar: 'NONE' },
  'after.dark': { ...ORDINARY, warning: 'SENSITIVE', verified: false, avatar: 'NONE', banner: 'IMAGE', products: 0, collections: 0 },
  'adults.only': { ...ORDINARY, warning: 'AGE_RESTRICTED', verified: false, links: 4, groups: 0 },
};

/** `slow_x`, `flaky.x`… (usernames cannot hold `-`) as the shared fault names `slow-x`, `flaky-x`. */
const faultName = (username: string): string => username.replace(/^(slow|flaky|down|hiccup)[_.]/, '$1-');

/** The spec of any other username: an ordinary page drawn from the seed. */
function generatedSpec(seed: string, username: string): PageSpec {
  const rng = new Rng(seed, `spec:${username}`);
  const links = rng.int(2, 12);
  return {
    flavour: rng.pick<TextFlavour>(['plain', 'plain', 'plain', 'emoji', 'rtl', 'cjk', 'mixed']),
    links,
    groups: Math.min(links, rng.int(0, 2)),
    pinned: rng.int(0, 2),
    hidden: rng.int(0, 3),
    products: rng.pick([0, 0, 2, 4, 7]),
    collections: rng.int(0, 2),
    social: rng.int(0, 6),
    sparse: rng.bool(0.1),
    warning: rng.bool(0.1) ? rng.pick(['SENSITIVE', 'AGE_RESTRICTED'] as const) : null,
    verified: rng.bool(0.4),
    avatar: rng.pick(['IMAGE', 'IMAGE', 'IMAGE', 'VIDEO', 'ANIMATED', 'NONE'] as const),
    banner: rng.pick(['NONE', 'NONE', 'IMAGE', 'VIDEO', 'COLOR'] as const),
  };
}

/** What a (lower-case) username answers: a page spec, or a special answer. */
export function accountOf(seed: string, username: string): { special: Special } | { spec: PageSpec } {
  const special = SPECIAL[username] ?? (username.startsWith('ghost') ? 'not_found' : undefined);
  if (special) return { special };
  return { spec: cataloguedSpec(username) ?? generatedSpec(seed, username) };
}

/** The spec of a page the catalogue documents (its fault prefix aside), if it is one. */
const cataloguedSpec = (username: string): PageSpec | undefined => PAGES[username] ?? PAGES[username.replace(/^(slow|flaky|down|hiccup)[_.]/, '')];

// ---------------------------------------------------------------------------------------
// Generated data: the canonical `__NEXT_DATA__` of a page, before any variation

const HEX = '0123456789abcdef';
const UPPER = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

const uuid = (rng: Rng): string =>
  `${rng.chars(8, HEX)}-${rng.chars(4, HEX)}-4${rng.chars(3, HEX)}-${rng.pick(['8', '9', 'a', 'b'])}${rng.chars(3, HEX)}-${rng.chars(12, HEX)}`;

const slugOf = (text: string, rng: Rng): string => {
  const ascii = text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  return ascii === '' ? rng.chars(8) : ascii.slice(0, 40);
};

interface Theme {
  key: string;
  luminance: 'LIGHT' | 'DARK';
  background: [color: string, style: string, type: string];
  button: [type: string, corner: string, color: string, text: string, shadow: string];
  font: [family: string, color: string];
  social: string;
}

const PRESETS: Theme[] = [
  { key: 'midnight', luminance: 'DARK', background: ['#0A0A0A', 'GRADIENT', 'COLOR'], button: ['OUTLINE', 'SQUARE', '#0A0A0A', '#EDEDED', '#0A0A0A'], font: ['Space Mono', '#EDEDED'], social: '#EDEDED' },
  { key: 'air', luminance: 'LIGHT', background: ['#F4F4F0', 'FLAT', 'COLOR'], button: ['SOFT_SHADOW', 'ROUNDED', '#FFFFFF', '#1C1C1C', '#D0D0D0'], font: ['Inter', '#1C1C1C'], social: '#1C1C1C' },
  { key: 'bloom', luminance: 'LIGHT', background: ['#FCE4EC', 'GRADIENT', 'IMAGE'], button: ['FILL', 'ROUNDED_FULL', '#AD1457', '#FFFFFF', '#880E4F'], font: ['Poppins', '#4A0F2A'], social: '#AD1457' },
  { key: 'retro', luminance: 'DARK', background: ['#2B1E3F', 'FLAT', 'VIDEO'], button: ['HARD_SHADOW', 'SQUARE', '#FFD23F', '#2B1E3F', '#000000'], font: ['Press Start 2P', '#FFD23F'], social: '#FFD23F' },
];

function themeOf(rng: Rng): Json {
  const colour = () => `#${rng.chars(6, '0123456789ABCDEF')}`;
  const preset = rng.bool(0.6) ? rng.pick(PRESETS) : null;
  const t: Theme = preset ?? {
    key: 'custom',
    luminance: rng.pick(['LIGHT', 'DARK'] as const),
    background: [colour(), rng.pick(['FLAT', 'GRADIENT']), 'COLOR'],
    button: [rng.pick(['FILL', 'OUTLINE', 'SOFT_SHADOW', 'HARD_SHADOW']), rng.pick(['SQUARE', 'ROUNDED', 'ROUNDED_FULL']), colour(), colour(), colour()],
    font: [rng.pick(['Inter', 'DM Sans', 'Space Mono', 'Playfair Display']), colour()],
    social: colour(),
  };
  return {
    key: t.key,
    luminance: t.luminance,
    background: { color: t.background[0], style: t.background[1], type: t.background[2], imageUrl: t.background[2] === 'COLOR' ? null : `${CDN}/themes/${t.key}/bg.jpg` },
    buttonStyle: {
      type: t.button[0],
      cornerType: t.button[1],
      backgroundStyle: { color: t.button[2] },
      textStyle: { color: t.button[3] },
      shadowStyle: { color: t.button[4] },
    },
    typeface: { family: t.font[0], color: t.font[1] },
    socialStyle: { color: t.social },
  };
}

const GATE_SETTINGS: Record<string, unknown> = {
  age: { minimumAge: 18 },
  sensitiveContent: { type: 'EXPLICIT' },
  passcode: { hint: 'Newsletter code' },
  payment: { amount: 500, currency: 'USD' },
  nft: { chain: 'ETHEREUM', contract: '0x5f3e0b1c9a7d2e4f6a8b0c1d3e5f7a9b1c3d5e7f' },
};
const LOCKING = new Set(['passcode', 'payment', 'nft']);

function gatesOf(rng: Rng, type: string): string[] {
  if (type === 'HEADER' || type === 'GROUP') return [];
  const r = rng.next();
  if (r < 0.74) return [];
  if (r < 0.81) return ['age'];
  if (r < 0.86) return ['sensitiveContent'];
  if (r < 0.9) return ['age', 'sensitiveContent'];
  if (r < 0.95) return ['passcode'];
  if (r < 0.98) return ['payment'];
  return ['nft'];
}

interface Built {
  /** LINK, as in `PP.links` (string id). */
  link: Json;
  /** LINK RECORDs for `A.links` (the link's own and its children's). */
  records: Json[];
}

interface LinkContext {
  rng: Rng;
  username: string;
  domain: string;
  flavour: TextFlavour;
  sparse: boolean;
  nextId: () => number;
}

/** One LINK and its record(s); a GROUP gets 2 to 5 children, one level deep. */
function buildLink(ctx: LinkContext, position: number, type: string, parent: number | null): Built {
  const { rng } = ctx;
  const id = ctx.nextId();
  const title = type === 'HEADER' ? rng.sentence(rng.int(1, 3), ctx.flavour) : rng.sentence(rng.int(2, 6), ctx.flavour);
  const realUrl = type === 'HEADER' || type === 'GROUP' ? '' : `https://${ctx.domain}/${slugOf(title, rng)}-${id % 1000}?utm_source=linkpage-b`;
  const gates = gatesOf(rng, type);
  const locked = gates.some((gate) => LOCKING.has(gate));
  const rich = !ctx.sparse;
  const thumbnail = rich && rng.bool(0.3) ? `${CDN}/${ctx.username}/links/${id}-thumb.jpg` : null;
  const layoutOption = rich ? rng.pick(['STACK', 'STACK', 'FEATURED', 'CAROUSEL', null, null, null]) : null;
  const affiliate = rich && type === 'CLASSIC' && rng.bool(0.1) ? { affiliateTag: `${ctx.domain.split('.')[0]}-20`, disclosure: true } : null;
  const metadata =
    rich && realUrl !== '' && rng.bool(0.4)
      ? {
          title: rng.sentence(rng.int(2, 5), ctx.flavour),
          description: rng.bool(0.6) ? rng.sentence(rng.int(4, 9), ctx.flavour) : null,
          image: rng.bool(0.5) ? `${CDN}/${ctx.username}/links/${id}-og.jpg` : null,
        }
      : null;
  const animation = rich && rng.bool(0.1) ? rng.pick(['BUZZ', 'WOBBLE', 'POP']) : null;
  const rules = {
    gate: {
      activeOrder: gates,
      age: gates.includes('age') ? GATE_SETTINGS.age : null,
      passcode: gates.includes('passcode') ? GATE_SETTINGS.passcode : null,
      nft: gates.includes('nft') ? GATE_SETTINGS.nft : null,
      payment: gates.includes('payment') ? GATE_SETTINGS.payment : null,
      sensitiveContent: gates.includes('sensitiveContent') ? GATE_SETTINGS.sensitiveContent : null,
    },
  };
  const childCount = type === 'GROUP' ? rng.int(2, 5) : 0;
  const children: Built[] = [];
  for (let i = 0; i < childCount; i += 1) children.push(buildLink(ctx, i, rng.bool(0.9) ? 'CLASSIC' : 'MUSIC', id));
  const link: Json = {
    id: String(id),
    type,
    title,
    url: locked ? null : realUrl,
    position,
    locked,
    thumbnail,
    animation,
    layoutOption,
    marketplaceAffiliate: affiliate,
    context: {},
    metadata,
    rules,
    children: type === 'GROUP' ? children.map((child) => child.link) : null,
  };
  const record: Json = {
    id,
    type,
    title,
    position,
    url: realUrl,
    modifiers: { animation, thumbnailUrl: thumbnail, marketplaceAffiliate: affiliate, layoutOption },
    context: {},
    metadata,
    parent: parent === null ? null : { id: parent },
    rules,
  };
  return { link, records: [record, ...children.flatMap((child) => child.records)] };
}

const TOP_TYPES = ['CLASSIC', 'CLASSIC', 'CLASSIC', 'CLASSIC', 'CLASSIC', 'CLASSIC', 'CLASSIC', 'HEADER', 'MUSIC', 'VIDEO_EMBED', 'EXTENSION'];

const SOCIAL: [type: string, url: (name: string) => string][] = [
  ['SOCIALNET', (n) => `https://www.socialnet.example/${n}`],
  ['SNAPMSG', (n) => `https://www.snapmsg.example/add/${n}`],
  ['EMAIL_ADDRESS', (n) => `mailto:hello@${n}.example`],
  ['WEBSITE', (n) => `https://${n}.example/`],
  ['LINKPAGE_A', (n) => `https://linkpage-a.example/${n}`],
  ['SHOPFRONT', (n) => `https://www.shopfront.example/shop/${n}`],
  ['PODCAST', (n) => `https://podcasts.example/${n}`],
];

const CURRENCIES: [code: string, symbol: string][] = [
  ['EUR', '€'],
  ['USD', '$'],
  ['GBP', '£'],
];

/**
 * The canonical `__NEXT_DATA__` of a page (the form before the variations the platform allows), or null
 * when the username answers something else than a page. Deterministic for a seed.
 */
export function linkpageBNextData(seed: string, username: string): Json | null {
  const account = accountOf(seed, username);
  if ('special' in account) return null;
  const { spec } = account;
  const rng = new Rng(seed, `page:${username}`);
  const handle = username.replace(/[._]/g, '');
  const domain = `${handle}.example`;
  let id = rng.int(10_000_000, 89_000_000);
  const ctx: LinkContext = { rng, username, domain, flavour: spec.flavour, sparse: spec.sparse, nextId: () => (id += 1) };

  // Links: GROUPs at drawn positions, other types drawn; pinned links; hidden records.
  const groupAt = new Set<number>();
  while (groupAt.size < Math.min(spec.groups, spec.links)) groupAt.add(rng.int(0, spec.links - 1));
  const top = Array.from({ length: spec.links }, (_, position) => buildLink(ctx, position, groupAt.has(position) ? 'GROUP' : rng.pick(TOP_TYPES), null));
  const pinned = Array.from({ length: spec.pinned }, (_, position) => buildLink(ctx, position, 'CLASSIC', null));
  const hidden = Array.from({ length: spec.hidden }, (_, position) => {
    const built = buildLink(ctx, spec.links + position, 'CLASSIC', null);
    const record = built.records[0] as Json;
    if (rng.bool(0.6)) record.schedule = { startsAt: Date.parse('2031-01-01T00:00:00Z') + rng.int(0, 300) * 86_400_000, endsAt: null };
    return record;
  });
  const records = [...top, ...pinned].flatMap((built) => built.records).concat(hidden);

  const socialLinks = Array.from({ length: spec.social }, (_, position) => {
    const [type, url] = SOCIAL[position % SOCIAL.length] as (typeof SOCIAL)[number];
    const round = Math.floor(position / SOCIAL.length);
    return { type, url: url(round === 0 ? handle : `${handle}${round}`), position };
  });

  const storeProducts = Array.from({ length: spec.products }, (_, index) => {
    const title = rng.sentence(rng.int(2, 5), spec.flavour);
    const isAffiliate = rng.bool(0.3);
    const [currency, symbol] = rng.pick(CURRENCIES);
    const amount = rng.int(300, 25_000);
    return {
      id: `prd_${rng.chars(4, UPPER)}${index.toString(36).toUpperCase()}`,
      title,
      url: isAffiliate ? `https://www.shopfront.example/dp/B0${rng.chars(8, UPPER)}?tag=${handle}-20` : `https://${domain}/shop/${slugOf(title, rng)}`,
      imageUrl: rng.bool(0.75) ? `${CDN}/${username}/store/${index}.jpg` : null,
      price: rng.bool(0.8) ? { amount, currency, formatted: `${symbol}${(amount / 100).toFixed(2)}` } : null,
      isAffiliate,
    };
  });
  const storeCollections = Array.from({ length: spec.collections }, (_, index) => {
    const title = rng.sentence(rng.int(1, 3), spec.flavour);
    return {
      id: `col_${rng.chars(3, UPPER)}${index.toString(36).toUpperCase()}`,
      title,
      url: `https://${domain}/shop/c/${slugOf(title, rng)}`,
      imageUrl: rng.bool(0.7) ? `${CDN}/${username}/store/c${index}.jpg` : null,
      productIds: storeProducts.filter(() => rng.bool(0.4)).map((product) => product.id),
    };
  });

  // The owner is the person behind the username, as on every platform; a generated page's seed-chosen flavour is its content's.
  const person = personOf(seed, username, cataloguedSpec(username) ? spec.flavour : 'plain');
  const name = spec.sparse ? rng.pick(['', null]) : person.name;
  const pageTitle = spec.sparse ? rng.pick(['', null]) : rng.bool(0.8) ? `${name} ${rng.sentence(1)}` : null;
  const description = spec.sparse ? null : person.bio;
  const picture = spec.avatar === 'NONE' ? null : `${CDN}/${username}/avatar/${rng.chars(8, HEX)}-profile.jpg`;
  const customAvatar =
    spec.avatar === 'VIDEO' || spec.avatar === 'ANIMATED'
      ? { type: spec.avatar, url: `${CDN}/${username}/avatar/${rng.chars(8, HEX)}.${spec.avatar === 'VIDEO' ? 'mp4' : 'gif'}` }
      : null;
  const profileBanner =
    spec.banner === 'NONE' ? null : { type: spec.banner, url: spec.banner === 'COLOR' ? null : `${CDN}/${username}/banner/${rng.chars(8, HEX)}.${spec.banner === 'VIDEO' ? 'mp4' : 'jpg'}` };
  const createdAt = rng.time('2019-01-01T00:00:00Z', '2024-06-01T00:00:00Z');
  const updatedAt = createdAt + rng.int(0, 400 * 86_400) * 1000 + rng.int(0, 999);
  const accountId = rng.int(10_000_000, 99_999_999);
  const accountUuid = uuid(rng);
  const themeV2 = themeOf(rng);
  const gating = spec.warning === 'SENSITIVE' ? 'sensitive' : spec.warning === 'AGE_RESTRICTED' ? 'age' : 'none';
  const shownTitle = pageTitle || `@${username}`;

  const accountJson: Json = {
    id: accountId,
    uuid: accountUuid,
    username,
    name,
    tier: rng.pick(['free', 'starter', 'pro', 'premium']),
    isActive: true,
    profilePictureUrl: picture,
    avatarMode: rng.pick(['CIRCLE_SMALL', 'CIRCLE_SMALL', 'CIRCLE_LARGE', 'HERO']),
    customAvatar,
    profileBanner,
    backgroundHeroColor: null,
    pageTitle,
    description,
    socialLinksPosition: rng.pick(['TOP', 'BOTTOM']),
    verticals: spec.sparse ? [] : [rng.pick(['ART_AND_DESIGN', 'MUSIC', 'FOOD', 'FASHION', 'TECH'])],
    createdAt,
    updatedAt,
    profileBadges: null,
    isLogoVisible: true,
    contentWarning: spec.warning,
    activeGates: [...new Set(records.flatMap((record) => ((record.rules as Json).gate as Json).activeOrder as string[]))],
    timezone: rng.pick(['Europe/Lisbon', 'America/New_York', 'Asia/Tokyo', 'Asia/Dubai', 'UTC']),
    isStoreTabEnabled: storeProducts.length > 0,
    affiliateTokens: [],
    ownedBy: { id: rng.int(1_000_000, 9_999_999), uuid: uuid(rng) },
    pageMeta: null,
    links: shuffle(records, rng),
    socialLinks,
    theme: { key: themeV2.key },
    themeV2,
  };
  return {
    props: {
      pageProps: {
        account: accountJson,
        isProfileVerified: spec.verified,
        username,
        pageTitle: shownTitle,
        description,
        metaTitle: `${shownTitle} | linkpage-b`,
        metaDescription: description ?? `View ${username}’s links on linkpage-b.`,
        profilePictureUrl: picture,
        links: top.map((built) => built.link),
        pinnedLinks: pinned.map((built) => built.link),
        socialLinks,
        storeProducts,
        storeCollections,
        storeHasAffiliateProducts: storeProducts.some((product) => product.isAffiliate),
        contentGating: gating,
        hasSensitiveContent: spec.warning !== null,
      },
      __N_SSP: true,
    },
    page: '/[profile]',
    query: { profile: username },
    buildId: BUILD_ID,
    isFallback: false,
    gssp: true,
    scriptLoader: [],
  };
}

function shuffle<T>(items: T[], rng: Rng): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = rng.int(0, i);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Variations, drawn per account

export interface Variant {
  keyOrder: 'as-is' | 'reversed' | 'shuffled';
  indent: 0 | 1 | 2;
  /** `/` as `\/`. */
  slashes: boolean;
  /** Every non-ASCII character as `\uXXXX`. */
  asciiOnly: boolean;
  /** `>` and `&` as `\u003e`, `\u0026` (Next.js); `<` is always escaped. */
  nextEscapes: boolean;
  /** Which `<script id="__NEXT_DATA__">` form (attribute order, quoting, case, extras). */
  script: number;
  /** Other scripts and a decoy comment before the payload. */
  extraBlocks: boolean;
  /** Unknown members in PP, A, links and themeV2. */
  extraMembers: boolean;
  /** Null members of LINKs left out (else kept as null). */
  dropNulls: boolean;
  /** Unlocked links carry `locked: null` (else `false`). */
  lockedNull: boolean;
  /** Empty `pinnedLinks`, `storeProducts`, `storeCollections`, `socialLinks` left out. */
  dropEmpty: boolean;
  legacyTheme: boolean;
  accountSocialLinks: boolean;
  colours: 'as-is' | 'lower';
}

const SCRIPT_FORMS = 5;

/** The plainest form: as the contract's examples are written. */
export const PLAIN_VARIANT: Variant = {
  keyOrder: 'as-is',
  indent: 0,
  slashes: false,
  asciiOnly: false,
  nextEscapes: true,
  script: 0,
  extraBlocks: false,
  extraMembers: false,
  dropNulls: false,
  lockedNull: false,
  dropEmpty: false,
  legacyTheme: true,
  accountSocialLinks: true,
  colours: 'as-is',
};

export function variantOf(seed: string, username: string): Variant {
  const rng = new Rng(seed, `variant:${username}`);
  const sparse = accountOf(seed, username);
  const forced = 'spec' in sparse && sparse.spec.sparse;
  return {
    keyOrder: rng.pick(['as-is', 'as-is', 'reversed', 'shuffled'] as const),
    indent: rng.pick([0, 0, 0, 1, 2] as const),
    slashes: rng.bool(0.4),
    asciiOnly: rng.bool(0.25),
    nextEscapes: rng.bool(0.8),
    script: rng.int(0, SCRIPT_FORMS - 1),
    extraBlocks: rng.bool(0.5),
    extraMembers: rng.bool(0.5),
    dropNulls: forced || rng.bool(0.5),
    lockedNull: rng.bool(0.5),
    dropEmpty: forced || rng.bool(0.5),
    legacyTheme: !forced && rng.bool(0.6),
    accountSocialLinks: !forced && rng.bool(0.6),
    colours: rng.bool(0.3) ? 'lower' : 'as-is',
  };
}

const LINK_NULLABLE = ['thumbnail', 'layoutOption', 'marketplaceAffiliate', 'metadata', 'animation'];

function varyLink(link: Json, variant: Variant, rng: Rng): void {
  if (link.locked === false && variant.lockedNull) link.locked = null;
  if (variant.dropNulls) {
    for (const key of LINK_NULLABLE) if (link[key] === null) delete link[key];
    if (link.type !== 'GROUP' && link.children === null && rng.bool(0.7)) delete link.children;
  }
  if (variant.extraMembers && rng.bool(0.3)) link.clickCount = rng.int(0, 5000);
  for (const child of (link.children as Json[] | null | undefined) ?? []) varyLink(child, variant, rng);
}

function reorderKeys(value: unknown, order: Variant['keyOrder'], rng: Rng): unknown {
  if (Array.isArray(value)) return value.map((inner) => reorderKeys(inner, order, rng));
  if (value === null || typeof value !== 'object') return value;
  let entries = Object.entries(value);
  if (order === 'reversed') entries = entries.reverse();
  else if (order === 'shuffled') entries = shuffle(entries, rng);
  return Object.fromEntries(entries.map(([key, inner]) => [key, reorderKeys(inner, order, rng)]));
}

function lowerColours(value: unknown): unknown {
  if (typeof value === 'string') return /^#[0-9A-Fa-f]{6}$/.test(value) ? value.toLowerCase() : value;
  if (Array.isArray(value)) return value.map(lowerColours);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, lowerColours(inner)]));
  return value;
}

/** The payload as served: the canonical one with the account's variations applied. */
export function variedNextData(data: Json, variant: Variant, seed: string, username: string): unknown {
  const rng = new Rng(seed, `vary:${username}`);
  const out = structuredClone(data);
  const props = out.props as Json;
  const pp = props.pageProps as Json;
  const account = pp.account as Json;
  for (const link of [...(pp.links as Json[]), ...(pp.pinnedLinks as Json[])]) varyLink(link, variant, rng);
  if (variant.dropEmpty) {
    for (const key of ['pinnedLinks', 'storeProducts', 'storeCollections', 'socialLinks']) {
      if (Array.isArray(pp[key]) && (pp[key] as unknown[]).length === 0) delete pp[key];
    }
  }
  if (!variant.legacyTheme) delete account.theme;
  if (!variant.accountSocialLinks) delete account.socialLinks;
  if (variant.colours === 'lower') account.themeV2 = lowerColours(account.themeV2);
  if (variant.extraMembers) {
    pp.experiments = { newLinkEditor: rng.bool(), bucket: rng.int(0, 99) };
    pp.locale = 'en-US';
    account.featureFlags = ['STORE_V2', 'LINK_ANALYTICS'];
    (account.themeV2 as Json).version = 2;
    props.__lpb_cache = { hit: rng.bool(), ttl: 60 };
  }
  return reorderKeys(out, variant.keyOrder, rng);
}

/** JSON inside `<script>` as the variant escapes it (all valid JSON escapes). */
export function encodePayload(value: unknown, variant: Variant): string {
  let out = variant.indent === 0 ? JSON.stringify(value) : JSON.stringify(value, null, variant.indent);
  out = out.replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
  if (variant.nextEscapes) out = out.replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
  if (variant.slashes) out = out.replace(/\//g, '\\/');
  if (variant.asciiOnly) out = out.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return out;
}

function scriptTag(form: number, payload: string): string {
  switch (form) {
    case 1:
      return `<script type="application/json" id="__NEXT_DATA__">${payload}</script>`;
    case 2:
      return `<script id='__NEXT_DATA__' type='application/json' crossorigin="anonymous" nonce="bG9jYWw=">${payload}</script>`;
    case 3:
      return `<script data-nscript="beforeInteractive" type=application/json id=__NEXT_DATA__>${payload}</script>`;
    case 4:
      return `<SCRIPT\n  ID="__NEXT_DATA__"\n  TYPE="application/json"\n>${payload}</SCRIPT >`;
    default:
      return `<script id="__NEXT_DATA__" type="application/json">${payload}</script>`;
  }
}

// ---------------------------------------------------------------------------------------
// Pages

const HEAD_SCRIPTS =
  '<link rel="preload" href="/_next/static/css/5b2e8d1f0a3c7e94.css" as="style"/>' +
  '<script src="/_next/static/chunks/webpack-9d1e4b7c2a0f3e68.js" defer=""></script>' +
  '<script src="/_next/static/chunks/pages/_app-2f7a9c1e4b8d0e35.js" defer=""></script>';

const EXTRA_BLOCKS =
  '<!-- <script id="__NEXT_DATA__" type="application/json">{"props":{"pageProps":{"statusCode":500}}}</script> -->' +
  '<script type="application/ld+json">{"@context":"https://schema.org","@type":"ProfilePage"}</script>' +
  '<script>self.__next_f=self.__next_f||[];self.__next_f.push([1,"__NEXT_DATA__"])</script>';

function document(title: string, head: string, body: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charSet="utf-8"/><meta name="viewport" content="width=device-width"/><title>${escapeHtml(title)}</title>${head}${HEAD_SCRIPTS}</head><body>${body}</body></html>`;
}

/** The rendered part of `<div id="__next">`: not part of the contract, just plausible markup. */
function rendered(pp: Json): string {
  const account = pp.account as Json;
  if (account.contentWarning) {
    return '<div class="sensitive-interstitial"><h2>Sensitive content</h2><p>This profile may contain content that is not appropriate for all audiences.</p><button type="button">Continue</button></div>';
  }
  const items = (pp.links as Json[])
    .map((link) => {
      const title = escapeHtml(String(link.title ?? ''));
      if (link.type === 'HEADER') return `<li class="header"><h3>${title}</h3></li>`;
      if (link.url) return `<li><a href="${escapeHtml(String(link.url))}" rel="noopener">${title}</a></li>`;
      return `<li><span>${title}</span></li>`;
    })
    .join('');
  return `<div class="profile"><h1 id="profile-title">${escapeHtml(String(pp.pageTitle))}</h1><ul>${items}</ul></div>`;
}

function pagePage(seed: string, username: string, data: Json, options: { payload: boolean } = { payload: true }): string {
  const variant = variantOf(seed, username);
  const pp = (data.props as Json).pageProps as Json;
  const picture = pp.profilePictureUrl as string | null;
  const head =
    `<meta name="description" content="${escapeHtml(String(pp.metaDescription))}"/>` +
    (picture ? `<meta property="og:image" content="${escapeHtml(picture)}"/>` : '') +
    `<link rel="canonical" href="${SITE}/${username}"/>`;
  const payload = options.payload ? scriptTag(variant.script, encodePayload(variedNextData(data, variant, seed, username), variant)) : '';
  const body = `${variant.extraBlocks ? EXTRA_BLOCKS : ''}<div id="__next">${rendered(pp)}</div>${payload}`;
  return document(String(pp.metaTitle), head, body);
}

/** The missing page, also served for inactive accounts. */
function notFoundPage(username: string): string {
  const data = {
    props: { pageProps: { statusCode: 404, username }, __N_SSP: true },
    page: '/[profile]',
    query: { profile: username },
    buildId: BUILD_ID,
    isFallback: false,
    gssp: true,
    scriptLoader: [],
  };
  return document(
    'Page not found | linkpage-b',
    '',
    `<div id="__next"><div class="not-found"><h1>The page you’re looking for doesn’t exist.</h1><a href="/">Create your own page</a></div></div>` +
      scriptTag(0, encodePayload(data, PLAIN_VARIANT)),
  );
}

const ACCESS_DENIED = '<!DOCTYPE html><html><head><title>Access denied</title></head><body><h1>Access denied</h1><p>You don’t have permission to access this page.</p><p>Reference #18.4f2e1c.1731571200</p></body></html>';

const loginPage = (): string =>
  document('Log in | linkpage-b', '', '<div id="__next"><form class="login" method="post" action="/login"><h1>Log in to linkpage-b</h1><input name="email"/><input name="password" type="password"/><button>Log in</button></form></div>');

const challengePage = (): string =>
  document('Just a moment… | linkpage-b', '<meta name="robots" content="noindex"/>', '<div id="challenge"><h1>Checking your browser before accessing linkpage-b.example</h1><noscript>Please enable JavaScript and cookies to continue.</noscript></div>');

const homePage = (): string => document('linkpage-b: one link for everything', '', '<div id="__next"><h1>Everything you are, in one simple link.</h1></div>');

const withDelay = (response: SandboxResponse, delayMs: number): SandboxResponse =>
  delayMs > 0 && !('reset' in response) ? { ...response, delayMs: (response.delayMs ?? 0) + delayMs } : response;

function handle(request: SandboxRequest, context: SandboxContext): SandboxResponse {
  if (request.method !== 'GET' && request.method !== 'HEAD') return text('Method Not Allowed', 405, { allow: 'GET, HEAD' });
  // A User-Agent without `Mozilla/5.0` is a bot: 403, a block (README.md, "Requests").
  if (!(request.headers['user-agent'] ?? '').includes('Mozilla/5.0')) return html(ACCESS_DENIED, 403);

  let path: string;
  try {
    path = decodeURIComponent(request.path);
  } catch {
    return html(notFoundPage(''), 404);
  }
  if (path === '/') return html(homePage());
  if (/^\/login\/?$/i.test(path)) return html(loginPage());
  if (/^\/challenge(?:\/|$)/i.test(path)) return html(challengePage());

  const segments = path.slice(1).split('/');
  if (segments.length === 2 && segments[1] === '') segments.pop();
  const name = segments[0] ?? '';
  if (segments.length !== 1 || RESERVED.has(name.toLowerCase()) || !USERNAME.test(name)) return html(notFoundPage(name), 404);

  const username = name.toLowerCase();
  // A username not in lower case may be redirected to the lower-case path (README.md, "Requests").
  if (username !== name) {
    const query = request.query.toString();
    return redirect(`/${username}${query ? `?${query}` : ''}`, new Rng(context.seed, `case:${username}`).bool() ? 301 : 308);
  }

  let delayMs = 0;
  const fault = accountFault(faultName(username), context);
  if (fault !== null) {
    if ('status' in fault || 'reset' in fault) return fault;
    delayMs = fault.delayMs;
  }

  const account = accountOf(context.seed, username);
  if ('special' in account) {
    switch (account.special) {
      case 'not_found':
      case 'inactive':
        return withDelay(html(notFoundPage(username), 404), delayMs);
      case 'rate_limited':
        return withDelay(html('<!DOCTYPE html><html><body><h1>Too many requests</h1></body></html>', 429, { 'retry-after': '60' }), delayMs);
      case 'denied':
        return withDelay(html(ACCESS_DENIED, 403), delayMs);
      case 'login':
        return withDelay(redirect(`/login?next=${encodeURIComponent(`/${username}`)}`, 302), delayMs);
      case 'challenge':
        return withDelay(redirect(`/challenge/js?return=${encodeURIComponent(`/${username}`)}`, 307), delayMs);
      case 'empty':
        return withDelay(html(''), delayMs);
      case 'no_payload': {
        const data = linkpageBNextData(context.seed, 'luna.voss') as Json;
        return withDelay(html(pagePage(context.seed, username, data, { payload: false })), delayMs);
      }
    }
  }
  const data = linkpageBNextData(context.seed, username);
  if (data === null) return withDelay(html(notFoundPage(username), 404), delayMs);
  return withDelay(html(pagePage(context.seed, username, data)), delayMs);
}

// ---------------------------------------------------------------------------------------
// Catalogue

const entry = (username: string, description: string): CatalogueEntry => ({
  description,
  endpoint: ENDPOINT,
  query: `url=${SITE}/${username}`,
});

export const LINKPAGE_B_CATALOGUE: CatalogueEntry[] = [
  entry('luna.voss', 'ordinary page: theme, avatar, links with a GROUP, a pinned link, a hidden link, social links, store → 200'),
  entry('rui.silva', 'ordinary page with a video avatar and video banner, two groups, several pinned and hidden links → 200'),
  entry('big.catalogue', 'large page: 320 links (25 groups), 8 pinned, 60 hidden, 150 products, 40 collections, 14 social links → 200'),
  entry('emoji.studio', 'emoji in names, titles and descriptions; animated avatar, colour banner → 200'),
  entry('noor.haddad', 'right-to-left (Arabic, Hebrew) text → 200'),
  entry('sakura.kato', 'CJK text → 200'),
  entry('mixed.bag', 'mixed scripts, quotes, ampersands and HTML-like text → 200'),
  entry('bare.page', 'absent optional data: no avatar, title, name, description, links, social links or store → 200'),
  entry('after.dark', 'sensitive-content page (HTTP 200, full data) → 200'),
  entry('adults.only', 'age-restricted (18+) page (HTTP 200, full data) → 200'),
  entry('ghost.page', 'missing page: HTTP 404 (any username starting with "ghost") → 404 NOT_FOUND'),
  entry('suspended.acct', 'suspended account: answered as a missing page, HTTP 404 → 404 NOT_FOUND'),
  entry('rate.limited', 'rate limited: HTTP 429 with Retry-After → 502 UPSTREAM_BLOCKED'),
  entry('edge.denied', 'edge "access denied" page: HTTP 403 → 502 UPSTREAM_BLOCKED'),
  entry('login.wall', 'redirect to /login (a block) → 502 UPSTREAM_BLOCKED'),
  entry('checkpoint.hit', 'redirect to a /challenge page (a block) → 502 UPSTREAM_BLOCKED'),
  entry('empty.body', 'empty 200 body on every attempt (transient); retried → 502 UPSTREAM_BLOCKED'),
  entry('layout.changed', 'page without __NEXT_DATA__ → 502 UPSTREAM_UNRECOGNISED'),
  entry('slow_luna', 'ordinary page answered after the configured slow latency → 200'),
  entry('flaky_luna', 'ordinary page: 503, then a reset connection, then the page; retried → 200'),
  entry('down_luna', 'always HTTP 503; retried → 502 UPSTREAM_BLOCKED'),
  entry('hiccup_luna', 'ordinary page: each request first answered with an empty 200 body (transient), the page on the retry; retried → 200'),
  entry('variant7x', 'any other username: an ordinary page generated from the seed and the name → 200'),
];

export const linkpageBSandbox: SandboxPlatform = {
  name: 'linkpage-b',
  handle,
  catalogue: LINKPAGE_B_CATALOGUE,
};
