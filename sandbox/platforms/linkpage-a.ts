// linkpage-a sandbox upstream (src/platforms/linkpage-a/README.md): server-rendered Nuxt profile pages
// whose data sits in a devalue payload, a JSON-LD block and `<head>` tags, generated from the
// seed. Every variations the platform allows is applied deterministically per account
// (index layout, sharing, wrappers, `["null", …]` objects, `-1` members, date and set forms,
// unknown members, list order, tag attribute order and quoting, entities, whitespace, JSON-LD
// shapes), so the extractor meets all of them. Behaviours are chosen by the username: see
// `behaviourOf` and the catalogue.
import {
  Rng,
  accountFault,
  escapeHtml,
  html,
  iso,
  redirect,
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

// =======================================================================================
// The devalue "flattened array" writer

const DV: unique symbol = Symbol('devalue');

export type DvWrapper = 'ShallowReactive' | 'Reactive' | 'ShallowRef' | 'Ref';

/** Values the plain JSON types cannot say: each becomes a marker (or index `-1`). */
export type DvSpecial =
  | { readonly [DV]: 'undefined' }
  | { readonly [DV]: 'Date'; readonly iso: string }
  | { readonly [DV]: 'Set'; readonly items: readonly DvNode[] }
  | { readonly [DV]: 'Map'; readonly entries: ReadonlyArray<readonly [DvNode, DvNode]> }
  | { readonly [DV]: 'null'; readonly members: Readonly<Record<string, DvNode>> }
  | { readonly [DV]: 'wrap'; readonly marker: DvWrapper; readonly value: DvNode }
  | { readonly [DV]: 'empty'; readonly marker: 'EmptyRef' | 'EmptyShallowRef'; readonly text: string }
  | { readonly [DV]: 'NuxtError'; readonly value: DvNode }
  | { readonly [DV]: 'BigInt'; readonly digits: string }
  | { readonly [DV]: 'RegExp'; readonly source: string; readonly flags: string };

/** A value to write: JSON values, plain objects and arrays, and the special forms of `dv`. */
export type DvNode = null | boolean | number | string | DvSpecial | readonly DvNode[] | { readonly [key: string]: DvNode };

/** Builders of the special forms. */
export const dv = {
  undef: { [DV]: 'undefined' } as DvSpecial,
  date: (value: string): DvSpecial => ({ [DV]: 'Date', iso: value }),
  set: (items: readonly DvNode[]): DvSpecial => ({ [DV]: 'Set', items }),
  map: (entries: ReadonlyArray<readonly [DvNode, DvNode]>): DvSpecial => ({ [DV]: 'Map', entries }),
  nullObject: (members: Readonly<Record<string, DvNode>>): DvSpecial => ({ [DV]: 'null', members }),
  wrap: (marker: DvWrapper, value: DvNode): DvSpecial => ({ [DV]: 'wrap', marker, value }),
  emptyRef: (value: string, marker: 'EmptyRef' | 'EmptyShallowRef' = 'EmptyRef'): DvSpecial => ({ [DV]: 'empty', marker, text: value }),
  error: (value: DvNode): DvSpecial => ({ [DV]: 'NuxtError', value }),
  bigint: (digits: string): DvSpecial => ({ [DV]: 'BigInt', digits }),
  regexp: (source: string, flags: string): DvSpecial => ({ [DV]: 'RegExp', source, flags }),
};

export const isDvSpecial = (node: DvNode): node is DvSpecial => node !== null && typeof node === 'object' && DV in node;

/** Which special form a node is (`'Date'`, `'wrap'`, `'null'`, …), or null for JSON values, arrays and plain objects. */
export const dvKind = (node: DvNode): DvSpecial[typeof DV] | null => (isDvSpecial(node) ? node[DV] : null);

export interface FlattenOptions {
  /** Write each equal primitive once and share its index (the reference serializer does). */
  sharePrimitives?: boolean;
  /** Place every value but the root in an order drawn from this generator, instead of depth-first. */
  shuffle?: Rng;
}

type Part = { ref: number } | { lit: string };
type Slot =
  | { kind: 'lit'; value: null | boolean | number | string }
  | { kind: 'obj'; members: Array<[string, number]> }
  | { kind: 'arr'; items: number[] }
  | { kind: 'marker'; parts: Part[] };

/**
 * Writes `root` as a devalue flattened array. Objects are shared by identity (one object used
 * in several places gets one index); primitives are shared when `sharePrimitives`.
 */
export function flattenNuxtPayload(root: DvNode, options: FlattenOptions = {}): unknown[] {
  const slots: Slot[] = [];
  const primitives = new Map<string, number>();
  const objects = new Map<object, number>();

  const ref = (node: DvNode): number => {
    if (node === null || typeof node !== 'object') {
      const key = `${typeof node}:${String(node)}`;
      if (options.sharePrimitives) {
        const known = primitives.get(key);
        if (known !== undefined) return known;
      }
      slots.push({ kind: 'lit', value: node });
      if (options.sharePrimitives) primitives.set(key, slots.length - 1);
      return slots.length - 1;
    }
    if (isDvSpecial(node) && node[DV] === 'undefined') return -1;
    const known = objects.get(node);
    if (known !== undefined) return known;
    const index = slots.length;
    slots.push({ kind: 'lit', value: null }); // placeholder: children come after their parent
    objects.set(node, index);
    slots[index] = slotOf(node);
    return index;
  };

  const slotOf = (node: object): Slot => {
    if (Array.isArray(node)) return { kind: 'arr', items: (node as DvNode[]).map(ref) };
    if (!isDvSpecial(node as DvNode)) {
      return { kind: 'obj', members: Object.entries(node as Record<string, DvNode>).map(([key, value]) => [key, ref(value)]) };
    }
    const special = node as DvSpecial;
    const marker = (name: string, ...rest: Part[]): Slot => ({ kind: 'marker', parts: [{ lit: name }, ...rest] });
    switch (special[DV]) {
      case 'Date':
        return marker('Date', { lit: special.iso });
      case 'Set':
        return marker('Set', ...special.items.map((item) => ({ ref: ref(item) })));
      case 'Map':
        return marker('Map', ...special.entries.flatMap(([key, value]) => [{ ref: ref(key) }, { ref: ref(value) }]));
      case 'null':
        return marker('null', ...Object.entries(special.members).flatMap(([key, value]) => [{ lit: key }, { ref: ref(value) }]));
      case 'wrap':
        return marker(special.marker, { ref: ref(special.value) });
      case 'empty':
        return marker(special.marker, { ref: ref(special.text) });
      case 'NuxtError':
        return marker('NuxtError', { ref: ref(special.value) });
      case 'BigInt':
        return marker('BigInt', { lit: special.digits });
      case 'RegExp':
        return marker('RegExp', { lit: special.source }, { lit: special.flags });
      default:
        throw new Error('undefined is written as index -1, never as a value');
    }
  };

  ref(root);

  // Index placement: the root stays at 0; the rest depth-first, or shuffled.
  const place = slots.map((_, index) => index);
  if (options.shuffle) {
    const rest = place.slice(1);
    for (let i = rest.length - 1; i > 0; i -= 1) {
      const j = options.shuffle.int(0, i);
      [rest[i], rest[j]] = [rest[j] as number, rest[i] as number];
    }
    // rest[k] = old index that goes to position k + 1
    rest.forEach((old, position) => (place[old] = position + 1));
  }
  const at = (index: number) => (index < 0 ? index : (place[index] as number));
  const out: unknown[] = new Array(slots.length);
  slots.forEach((slot, index) => {
    let value: unknown;
    if (slot.kind === 'lit') value = slot.value;
    else if (slot.kind === 'arr') value = slot.items.map(at);
    else if (slot.kind === 'obj') value = Object.fromEntries(slot.members.map(([key, member]) => [key, at(member)]));
    else value = slot.parts.map((part) => ('lit' in part ? part.lit : at(part.ref)));
    out[at(index)] = value;
  });
  return out;
}

// =======================================================================================
// Accounts and their behaviours

type Behaviour =
  | 'profile'
  | 'private'
  | 'missing'
  | 'soft-missing'
  | 'rate-limited'
  | 'forbidden'
  | 'challenge'
  | 'captcha'
  | 'login-wall'
  | 'checkpoint'
  | 'off-platform'
  | 'no-payload'
  | 'corrupt-profile'
  | 'blank-once';

/** Username prefixes (after an optional `slow-`/`flaky-`/`down-`) and the behaviour they select. */
const PREFIXES: ReadonlyArray<[string, Behaviour]> = [
  ['private-', 'private'],
  ['missing-', 'missing'],
  ['deleted-', 'missing'],
  ['softmissing-', 'soft-missing'],
  ['ratelimited-', 'rate-limited'],
  ['forbidden-', 'forbidden'],
  ['challenge-', 'challenge'],
  ['captcha-', 'captcha'],
  ['loginwall-', 'login-wall'],
  ['checkpoint-', 'checkpoint'],
  ['offsite-', 'off-platform'],
  ['broken-', 'no-payload'],
  ['corrupt-', 'corrupt-profile'],
  ['blank-', 'blank-once'],
];

const baseName = (username: string): string => username.replace(/^(?:slow|flaky|down)-/, '');

function behaviourOf(username: string): Behaviour {
  const base = baseName(username);
  if (base === 'nobody.here') return 'missing';
  if (base === 'quiet.fern') return 'private';
  for (const [prefix, behaviour] of PREFIXES) if (base.startsWith(prefix)) return behaviour;
  return 'profile';
}

interface Traits {
  flavour: TextFlavour;
  large: boolean;
  minimal: boolean;
  adult: boolean;
}

function traitsOf(username: string): Traits {
  const base = baseName(username);
  const flavour = (['emoji', 'rtl', 'cjk', 'mixed'] as const).find((f) => base.startsWith(`${f}-`)) ?? 'plain';
  return { flavour, large: base.startsWith('big-'), minimal: base.startsWith('bare-'), adult: base.startsWith('adult-') };
}

// =======================================================================================
// Generated profiles, in linkpage-a's own terms

const MEDIA = 'https://cdn.linkpage-a.example';
const SITE = 'https://linkpage-a.example';

export interface ModelSocial { platform: string; handle: string | null; url: string; icon: string; is_adult: boolean }
export interface ModelFeatured {
  id: number;
  title: string;
  description: string | null;
  url: string;
  platform: string;
  image_url: string | null;
  icon_url: string;
  thumbnail_size: string;
  color: string | { dark: string; light: string };
  sort_order: number;
  is_adult: boolean;
  kind: string;
}
export interface ModelGallery { id: number; image_url: string; sort_order: number; created_at: string }
export interface ModelSection { key: string; position: number; enabled: boolean }
export type ModelTheme = Record<
  'background_color' | 'background_image_url' | 'bio_background' | 'main_text_color' | 'level1_text_color' | 'level2_text_color' | 'custom_font' | 'custom_font_url',
  string | null
>;

/** One generated profile. `null` members are written as `null`; `undefined` ones are absent. */
export interface LinkpageAModel {
  id: string;
  user_id: number;
  username: string;
  display_name: string;
  first_name: string | null | undefined;
  last_name: string | null | undefined;
  bio: string | null | undefined;
  share_url: string;
  is_verified: boolean;
  verified_badge_color: string | undefined;
  is_ambassador: boolean;
  is_private: boolean;
  is_adult: boolean;
  avatar: { url: string; png_url: string; is_default: boolean };
  cover_image_url: string | null;
  logo_url: string | null | undefined;
  video_profile: { url: string; thumbnail_url: string } | null | undefined;
  visits: number;
  views_label: string;
  followers_count: number | null;
  total_links: number;
  theme: string;
  custom_theme: ModelTheme | null | undefined;
  qr_code_path: string;
  referral_link: string | undefined;
  deeplink: string | undefined;
  created_at: string;
  updated_at: string;
  features: string[];
  social_links: ModelSocial[];
  featured_links: ModelFeatured[];
  contact_info: Array<[string, string]> | undefined;
  gallery: ModelGallery[];
  sections: ModelSection[];
  /** Page-level data: JSON-LD `sameAs` (null: no ProfilePage block) and the `<head>` tags (null: tag left out). */
  same_as: string[] | null;
  title: string;
  meta_description: string | null;
  meta_keywords: string | null;
  og_image: string | null;
}

/** The visit count, abbreviated and truncated to one decimal (README.md, "Mapping": `views`). */
export function viewsLabel(n: number): string {
  if (n < 1000) return String(n);
  const [unit, suffix] = n < 1e6 ? [1e3, 'K'] : n < 1e9 ? [1e6, 'M'] : [1e9, 'B'];
  const tenths = Math.floor(n / (unit / 10));
  return `${tenths % 10 === 0 ? String(tenths / 10) : (tenths / 10).toFixed(1)}${suffix}`;
}

const hex = (rng: Rng, length: number) => rng.chars(length, '0123456789abcdef');
const uuid = (rng: Rng) => `${hex(rng, 8)}-${hex(rng, 4)}-4${hex(rng, 3)}-${rng.pick(['8', '9', 'a', 'b'])}${hex(rng, 3)}-${hex(rng, 12)}`;
const COLOURS = ['#2F80ED', '#E4572E', '#101418', '#F2F4F7', '#22C55E', '#A855F7', '#F59E0B', '#0EA5E9'];
/** Palettes shared by identity: links that use one reference one payload object. */
const PALETTES = [
  { dark: '#1F2937', light: '#F9FAFB' },
  { dark: '#0B3D2E', light: '#E7F6EF' },
];
const SOCIAL_PLATFORMS: ReadonlyArray<[string, (handle: string) => string]> = [
  ['socialnet', (h) => `https://www.socialnet.example/${h}`],
  ['snapmsg', (h) => `https://www.snapmsg.example/add/${h}`],
  ['clipshare', (h) => `https://clipshare.example/@${h}`],
  ['linkpage-b', (h) => `https://linkpage-b.example/${h}`],
  ['tunecloud', (h) => `https://tunecloud.example/${h}`],
  ['streamhub', (h) => `https://streamhub.example/c/${h}`],
];
const LINK_PLATFORMS = ['website', 'events', 'shop', 'music', 'video', 'newsletter', 'podcast'];
const SECTION_KEYS = ['featured_links', 'social_links', 'gallery', 'contact', 'shop', 'tips'];
const EXTRA_SECTION_KEYS = ['video', 'newsletter', 'music', 'events', 'faq', 'booking'];

/** `n` distinct positions `0..n-1` in random order, with a few ties when `ties`. */
function positions(rng: Rng, n: number, ties: boolean): number[] {
  const values = Array.from({ length: n }, (_, i) => i);
  if (ties) for (let i = 1; i < n; i += 1) if (rng.bool(0.15)) values[i] = values[i - 1] as number;
  return values;
}

function shuffled<T>(rng: Rng, items: readonly T[]): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = rng.int(0, i);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** The profile an account shows, generated from the seed (deterministic for a seed and a username). */
export function linkpageAModel(seed: string, username: string): LinkpageAModel {
  const rng = new Rng(seed, `linkpage-a:profile:${username}`);
  const { flavour, large, minimal, adult } = traitsOf(username);
  const person = personOf(seed, username, flavour);
  const name = person.name;
  const [first, ...rest] = name.split(' ');
  const userId = rng.int(1_000_000, 99_999_999);
  const created = rng.time('2019-01-01T00:00:00Z', '2023-06-30T00:00:00Z');
  const updated = created + rng.int(1, 500) * 86_400_000 + rng.int(0, 86_399_999);
  const avatarDefault = minimal || rng.bool(0.1);
  const avatarKey = hex(rng, 6);
  const avatar = avatarDefault
    ? { url: `${MEDIA}/avatars/default/avatar.webp`, png_url: `${MEDIA}/avatars/default/avatar.png`, is_default: true }
    : { url: `${MEDIA}/avatars/${userId}/${avatarKey}.webp`, png_url: `${MEDIA}/avatars/${userId}/${avatarKey}.png`, is_default: false };
  const visits = large ? rng.int(1e9, 9e9) : rng.pick([rng.int(0, 999), rng.int(1000, 999_999), rng.int(1e6, 999_999_999)]);

  // Social links, in the owner's order.
  const socialCount = large ? 40 : minimal ? 1 : rng.int(1, 5);
  const social_links: ModelSocial[] = Array.from({ length: socialCount }, (_, i) => {
    const [platform, urlOf] = SOCIAL_PLATFORMS[i % SOCIAL_PLATFORMS.length] as [string, (h: string) => string];
    const handle = `${username.replace(/[^a-z0-9]/g, '')}${i >= SOCIAL_PLATFORMS.length ? i : ''}`;
    return {
      platform,
      handle: minimal ? null : rng.bool(0.2) ? `@${handle}` : handle,
      url: urlOf(handle),
      icon: rng.bool(0.2) ? `${MEDIA}/icons/social/v2/${platform}.svg` : `/icons/social/${platform}.svg`,
      is_adult: adult && rng.bool(0.5),
    };
  });

  // Featured links: ids ascending with gaps, sort orders with a few ties.
  const featuredCount = large ? 300 : minimal ? 1 : rng.int(2, 8);
  let nextId = rng.int(10_000, 90_000);
  const orders = positions(rng, featuredCount, true);
  const featured_links: ModelFeatured[] = orders.map((order) => {
    nextId += rng.int(1, 9);
    const platform = rng.pick(LINK_PLATFORMS);
    const hasImage = !minimal && rng.bool(0.5);
    return {
      id: nextId,
      title: rng.sentence(rng.int(2, 6), flavour),
      description: minimal || rng.bool(0.4) ? null : rng.sentence(rng.int(4, 12), flavour),
      url: `https://${platform}.example/${username}/${nextId}?utm_source=linkpage-a`,
      platform,
      image_url: hasImage ? `${MEDIA}/links/${nextId}/cover.jpg` : null,
      icon_url: `${MEDIA}/icons/link/${platform}.svg`,
      thumbnail_size: hasImage ? rng.pick(['small', 'medium', 'large']) : 'none',
      color: rng.bool(0.3) ? rng.pick(PALETTES) : rng.pick(COLOURS),
      sort_order: order,
      is_adult: adult && rng.bool(0.3),
      kind: 'link',
    };
  });

  const galleryCount = large ? 250 : minimal ? 0 : rng.int(0, 4);
  let galleryId = rng.int(100, 9000);
  const gallery: ModelGallery[] = positions(rng, galleryCount, false).map((order) => {
    galleryId += rng.int(1, 5);
    return {
      id: galleryId,
      image_url: `${MEDIA}/gallery/${userId}/${galleryId}.jpg`,
      sort_order: order,
      created_at: iso(rng.time(iso(created), iso(updated))),
    };
  });

  const keys = minimal ? [] : large ? [...SECTION_KEYS, ...EXTRA_SECTION_KEYS] : SECTION_KEYS.slice(0, rng.int(2, SECTION_KEYS.length));
  const sections: ModelSection[] = keys.map((key, position) => ({ key, position, enabled: rng.bool(0.8) }));

  const contact_info: Array<[string, string]> | undefined = minimal
    ? rng.pick([undefined, []])
    : ([
        ['email', `${username.replace(/[^a-z0-9.]/g, '')}@mail.example`],
        ['phone', `+351 9${rng.chars(2, '0123456789')} ${rng.chars(3, '0123456789')} ${rng.chars(3, '0123456789')}`],
        ['address', rng.sentence(3, flavour)],
      ] as Array<[string, string]>).filter(() => rng.bool(0.7));

  const custom = !minimal && rng.bool(0.6);
  const custom_theme: ModelTheme | null | undefined = custom
    ? {
        background_color: rng.pick(COLOURS),
        background_image_url: rng.bool(0.3) ? `${MEDIA}/backgrounds/${userId}/bg.jpg` : null,
        bio_background: rng.pick(COLOURS),
        main_text_color: rng.pick(COLOURS),
        level1_text_color: rng.pick(COLOURS),
        level2_text_color: rng.bool(0.8) ? rng.pick(COLOURS) : null,
        custom_font: rng.bool(0.5) ? rng.pick(['DM Sans', 'Inter', 'Playfair Display']) : null,
        custom_font_url: rng.bool(0.5) ? `${MEDIA}/fonts/font-${hex(rng, 4)}.woff2` : null,
      }
    : minimal
      ? undefined
      : null;

  const features = minimal ? [] : ['tips', 'shop', 'analytics', 'newsletter'].filter(() => rng.bool(0.5));
  const bio = minimal ? undefined : person.bio;
  const website = !minimal && rng.bool(0.5) ? `https://${username.replace(/[^a-z0-9]/g, '')}.example` : null;
  const sameAs = minimal ? null : [...social_links.map((s) => s.url), ...(website ? [website] : [])];

  return {
    id: uuid(rng),
    user_id: userId,
    username,
    display_name: name,
    first_name: minimal ? undefined : (first ?? null),
    last_name: minimal ? null : rest.length > 0 ? rest.join(' ') : null,
    bio,
    share_url: `${SITE}/${username}`,
    is_verified: !minimal && rng.bool(0.4),
    verified_badge_color: minimal ? undefined : rng.pick(COLOURS),
    is_ambassador: rng.bool(0.15),
    is_private: false,
    is_adult: adult,
    avatar,
    cover_image_url: !minimal && rng.bool(0.7) ? `${MEDIA}/covers/${userId}/cover-2000.jpg` : null,
    logo_url: minimal ? undefined : rng.bool(0.3) ? `${MEDIA}/logos/${userId}/logo.png` : null,
    video_profile: !minimal && rng.bool(0.3) ? { url: `${MEDIA}/videos/${userId}/intro.mp4`, thumbnail_url: `${MEDIA}/videos/${userId}/intro.jpg` } : rng.pick([null, undefined]),
    visits,
    views_label: viewsLabel(visits),
    followers_count: !minimal && rng.bool(0.6) ? rng.int(0, 2_000_000) : null,
    total_links: featured_links.length + social_links.length,
    theme: custom ? 'custom' : rng.pick(['classic', 'midnight', 'pastel', 'sunset']),
    custom_theme,
    qr_code_path: `/qr/${username}.png`,
    referral_link: minimal ? undefined : `${SITE}/join?ref=${username}`,
    deeplink: minimal ? undefined : `linkpagea://profile/${username}`,
    created_at: iso(created),
    updated_at: iso(updated),
    features,
    social_links,
    featured_links,
    contact_info,
    gallery,
    sections,
    same_as: sameAs,
    title: `${name} (@${username}) • linkpage-a`,
    meta_description: minimal ? null : (bio ?? null),
    meta_keywords: minimal ? null : [name, username, ...rng.sentence(3).toLowerCase().split(' ')].join(', '),
    og_image: minimal ? null : avatar.png_url,
  };
}

// =======================================================================================
// Writing a profile: the payload with the account's variations

interface Layout {
  sharePrimitives: boolean;
  shuffle: boolean;
  /** Share of values wrapped in a reactivity marker. */
  wrapRate: number;
  /** Share of objects written as `["null", …]`. */
  nullObjectRate: number;
  /** Absent members written as index `-1` instead of left out. */
  undefinedMembers: boolean;
  datesAsStrings: boolean;
  featuresAsArray: boolean;
  /** Unknown members in the root, `data`, PROFILE and its elements. */
  extras: boolean;
  escapeSlashes: boolean;
  asciiOnly: boolean;
  // HTML
  payloadAttributes: number;
  metaStyle: number;
  entities: 'named' | 'numeric' | 'hex';
  separator: string;
  jsonLd: 'two' | 'array' | 'graph' | 'single' | 'breadcrumb' | 'string-same-as';
  duplicateTags: boolean;
}

function layoutOf(seed: string, username: string): Layout {
  const rng = new Rng(seed, `linkpage-a:layout:${username}`);
  return {
    sharePrimitives: rng.bool(0.6),
    shuffle: rng.bool(0.5),
    wrapRate: rng.pick([0, 0.05, 0.2]),
    nullObjectRate: rng.pick([0, 0.2, 0.6]),
    undefinedMembers: rng.bool(0.5),
    datesAsStrings: rng.bool(0.3),
    featuresAsArray: rng.bool(0.3),
    extras: rng.bool(0.6),
    escapeSlashes: rng.bool(0.3),
    asciiOnly: rng.bool(0.2),
    payloadAttributes: rng.int(0, 4),
    metaStyle: rng.int(0, 3),
    entities: rng.pick(['named', 'numeric', 'hex'] as const),
    separator: rng.pick(['\n', '', '\n  ', ' \n\t ']),
    jsonLd: rng.pick(['two', 'array', 'graph', 'single', 'breadcrumb', 'string-same-as'] as const),
    duplicateTags: rng.bool(0.3),
  };
}

const WRAPPERS: readonly DvWrapper[] = ['ShallowReactive', 'Reactive', 'ShallowRef', 'Ref'];

/** Turns model values into payload nodes with the layout's variations. */
class Encoder {
  readonly #rng: Rng;
  readonly #layout: Layout;

  constructor(rng: Rng, layout: Layout) {
    this.#rng = rng;
    this.#layout = layout;
  }

  /** Maybe wrapped in a reactivity marker (any value, at any depth). */
  wrap(node: DvNode): DvNode {
    return this.#rng.bool(this.#layout.wrapRate) ? dv.wrap(this.#rng.pick(WRAPPERS), node) : node;
  }

  /** An object: plain or `["null", …]`; `undefined` members left out or written as `-1`. */
  object(members: Record<string, DvNode | undefined>, extras: Record<string, DvNode> = {}): DvNode {
    const out: Record<string, DvNode> = {};
    for (const [key, value] of Object.entries(members)) {
      if (value === undefined) {
        if (this.#layout.undefinedMembers) out[key] = dv.undef;
      } else {
        out[key] = this.wrap(value);
      }
    }
    if (this.#layout.extras) Object.assign(out, extras);
    return this.#rng.bool(this.#layout.nullObjectRate) ? dv.nullObject(out) : out;
  }

  date(value: string): DvNode {
    return this.#layout.datesAsStrings ? value : dv.date(value);
  }

  profile(model: LinkpageAModel): DvNode {
    const rng = this.#rng;
    const colours = new Map<object, DvNode>();
    const colour = (value: ModelFeatured['color']): DvNode => {
      if (typeof value === 'string') return value;
      // One palette object, referenced from every link that uses it.
      let node = colours.get(value);
      if (node === undefined) colours.set(value, (node = this.object({ dark: value.dark, light: value.light })));
      return node;
    };
    return this.object(
      {
        id: model.id,
        user_id: model.user_id,
        username: model.username,
        display_name: model.display_name,
        first_name: model.first_name,
        last_name: model.last_name,
        bio: model.bio,
        share_url: model.share_url,
        is_verified: model.is_verified,
        verified_badge_color: model.verified_badge_color,
        is_ambassador: model.is_ambassador,
        is_private: model.is_private,
        is_adult: model.is_adult,
        avatar: this.object({ ...model.avatar }, { blurhash: 'LEHV6nWB2yk8pyo0adR*.7kCMdnj' }),
        cover_image_url: model.cover_image_url,
        logo_url: model.logo_url,
        video_profile: model.video_profile === undefined || model.video_profile === null ? model.video_profile : this.object({ ...model.video_profile }),
        views_label: model.views_label,
        followers_count: model.followers_count,
        total_links: model.total_links,
        theme: model.theme,
        custom_theme: model.custom_theme ? this.object({ ...model.custom_theme }) : model.custom_theme,
        qr_code_path: model.qr_code_path,
        referral_link: model.referral_link,
        deeplink: model.deeplink,
        created_at: this.date(model.created_at),
        updated_at: this.date(model.updated_at),
        features: this.#layout.featuresAsArray ? model.features : dv.set(model.features),
        social_links: model.social_links.map((s) => this.object({ ...s }, { clicks_label: '1.2K' })),
        featured_links: shuffled(rng, model.featured_links).map((f) =>
          this.object({ ...f, color: colour(f.color) }, { animation: null, schedule: dv.nullObject({ starts_at: dv.undef }) }),
        ),
        contact_info: model.contact_info === undefined ? undefined : dv.map(model.contact_info),
        gallery: shuffled(rng, model.gallery).map((g) => this.object({ ...g, created_at: this.date(g.created_at) }, { width: 1080, height: 1350 })),
        sections: shuffled(rng, model.sections).map((s) => this.object({ ...s }, { layout: 'stack' })),
      },
      {
        links_version: dv.bigint(String(model.user_id * 1000 + 17)),
        slug_pattern: dv.regexp('^[a-z0-9._-]+$', 'i'),
        badges: dv.set(['early-adopter']),
        tracking: dv.emptyRef('null', 'EmptyShallowRef'),
      },
    );
  }
}

/** The root object around the `data` entries, with `state`, `once`, `_errors` and extras. */
function rootNode(encoder: Encoder, layout: Layout, path: string, data: Record<string, DvNode>, errorEntry?: DvNode): DvNode {
  const profileKeys = Object.keys(data).filter((key) => key.startsWith('profile:'));
  const extraData: Record<string, DvNode> = layout.extras
    ? { 'app:announcement': null, 'app:flags': encoder.object({ beta: true, experiments: dv.set(['ab-share']) }), 'app:banner': dv.emptyRef('_') }
    : {};
  const root: Record<string, DvNode> = {
    data: dv.wrap('ShallowReactive', { ...data, ...extraData }),
    state: dv.wrap('Reactive', {
      $slocale: 'en',
      '$scookie-consent': dv.emptyRef('null'),
      '$sshow-share': dv.wrap('Ref', true),
      ...(layout.extras ? { $scount: dv.emptyRef('0'), $sbig: dv.emptyRef('0n'), $sempty: dv.emptyRef('""'), $sflag: dv.emptyRef('false') } : {}),
    }),
    once: dv.set(layout.extras ? ['nuxt-color-mode'] : []),
    _errors: dv.wrap('ShallowReactive', Object.fromEntries(profileKeys.map((key) => [key, null]))),
    serverRendered: true,
    path,
  };
  if (errorEntry !== undefined) root.error = errorEntry;
  if (layout.extras) root.prerenderedAt = 1_700_000_000_000;
  return dv.wrap('ShallowReactive', root);
}

function payloadText(seed: string, username: string, layout: Layout, root: DvNode): string {
  const values = flattenNuxtPayload(root, {
    sharePrimitives: layout.sharePrimitives,
    ...(layout.shuffle ? { shuffle: new Rng(seed, `linkpage-a:order:${username}`) } : {}),
  });
  return scriptJson(values, { slashes: layout.escapeSlashes, asciiOnly: layout.asciiOnly });
}

// =======================================================================================
// HTML

/** An attribute value with entities in the layout's style (named, decimal or hexadecimal references). */
function attributeValue(value: string, style: Layout['entities']): string {
  if (style === 'named') return escapeHtml(value);
  let out = '';
  for (const char of value) {
    const code = char.codePointAt(0) as number;
    const escape = /[&<>"']/.test(char) || (code > 0x7e && style === 'hex');
    out += escape ? (style === 'hex' ? `&#x${code.toString(16).toUpperCase()};` : `&#${code};`) : char;
  }
  return out;
}

/** A tag with its attributes in the order and quoting the style asks for. */
function tag(name: string, attributes: Array<[string, string]>, style: number, entities: Layout['entities']): string {
  const ordered = style % 2 === 1 ? attributes.slice().reverse() : attributes;
  const parts = ordered.map(([key, value]) => {
    const shown = style === 3 ? key.toUpperCase() : key;
    const quote = style >= 2 ? "'" : '"';
    return `${shown}=${quote}${attributeValue(value, entities)}${quote}`;
  });
  return `<${name} ${parts.join(' ')}>`;
}

const PAYLOAD_ATTRIBUTES = [
  '<script type="application/json" data-nuxt-data="nuxt-app" data-ssr="true" id="__NUXT_DATA__">',
  '<script id="__NUXT_DATA__" type="application/json" data-ssr="true" data-nuxt-data="nuxt-app">',
  "<script type='application/json' id='__NUXT_DATA__'>",
  '<script data-ssr="true" id=__NUXT_DATA__ type=application/json>',
  '<script\n  type="application/json"\n  id="__NUXT_DATA__"\n  data-nuxt-data="nuxt-app"\n>',
];

const CONFIG_SCRIPT =
  '<script>window.__NUXT__={};window.__NUXT__.config={public:{cdnBase:"https://cdn.linkpage-a.example"},app:{baseURL:"/",buildId:"6d1e0c2a-9f4b-4c57-8e3d-b2a1f0e9d8c7",buildAssetsDir:"/_nuxt/",cdnURL:""}}</script>';

function jsonLdBlocks(model: LinkpageAModel, layout: Layout): string[] {
  const website = { '@context': 'https://schema.org', '@type': 'WebSite', name: 'linkpage-a', url: `${SITE}/` };
  const breadcrumb = {
    '@context': 'https://schema.org',
    '@type': 'BreadcrumbList',
    itemListElement: [{ '@type': 'ListItem', position: 1, name: model.display_name, item: model.share_url }],
  };
  const block = (value: unknown) => `<script type="application/ld+json">${scriptJson(value, { slashes: layout.escapeSlashes })}</script>`;
  if (model.same_as === null) return [block(website)];
  // A single URL MAY be written as a plain string.
  const sameAs = layout.jsonLd === 'string-same-as' && model.same_as.length === 1 ? model.same_as[0] : model.same_as;
  const profilePage = {
    '@context': 'https://schema.org',
    '@type': 'ProfilePage',
    dateCreated: model.created_at,
    dateModified: model.updated_at,
    mainEntity: {
      '@type': 'Person',
      name: model.display_name,
      alternateName: model.username,
      identifier: String(model.user_id),
      description: model.bio ?? '',
      image: model.avatar.png_url,
      sameAs,
    },
  };
  switch (layout.jsonLd) {
    case 'array':
      return [block([website, profilePage])];
    case 'graph': {
      const { '@context': _context, ...profileNode } = profilePage;
      const { '@context': _websiteContext, ...websiteNode } = website;
      return [block({ '@context': 'https://schema.org', '@graph': [websiteNode, profileNode] })];
    }
    case 'single':
      return [block(profilePage)];
    case 'breadcrumb':
      return [block(breadcrumb), block(website), block(profilePage)];
    default:
      return [block(website), block(profilePage)];
  }
}

function profilePage(model: LinkpageAModel, layout: Layout, payload: string): string {
  const style = layout.metaStyle;
  const entities = layout.entities;
  const head: string[] = [
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${layout.separator}${escapeHtml(model.title)}${layout.separator}</title>`,
    '<link rel="stylesheet" href="/_nuxt/entry.B7kQ2xZp.css" crossorigin>',
  ];
  // Style 3 also writes the `name` and `rel` values in another case (matched case-insensitively).
  const named = (value: string) => (style === 3 ? value.charAt(0).toUpperCase() + value.slice(1) : value);
  if (model.meta_description !== null) head.push(tag('meta', [['name', named('description')], ['content', model.meta_description]], style, entities));
  if (model.meta_keywords !== null) head.push(tag('meta', [['name', named('keywords')], ['content', model.meta_keywords]], style, entities));
  head.push(tag('meta', [['property', 'og:type'], ['content', 'profile']], style, entities));
  head.push(tag('meta', [['property', 'og:title'], ['content', model.title]], style, entities));
  head.push(tag('meta', [['name', 'twitter:card'], ['content', 'summary']], style, entities));
  if (model.og_image !== null) head.push(tag('meta', [['property', 'og:image'], ['content', model.og_image]], style, entities));
  head.push(tag('link', [['rel', named('canonical')], ['href', model.share_url]], style, entities));
  head.push(...jsonLdBlocks(model, layout));
  if (layout.duplicateTags) {
    // Second occurrences: the first one counts, so only tags already written are repeated.
    head.push('<title>linkpage-a</title>');
    if (model.meta_description !== null) head.push('<meta name="description" content="A linkpage-a profile">');
    if (model.og_image !== null) head.push('<meta property="og:image" content="https://cdn.linkpage-a.example/og/default.png">');
    head.push(`<link rel="canonical" href="${SITE}/">`);
  }
  const links = model.featured_links
    .slice(0, 10)
    .map((f) => `<a class="link" href="${escapeHtml(f.url)}">${escapeHtml(f.title)}</a>`)
    .join('');
  const sep = layout.separator;
  return [
    '<!DOCTYPE html>',
    `<html lang="en" data-theme="${escapeHtml(model.theme)}">`,
    '<head>',
    head.join(sep),
    '</head>',
    '<body>',
    `<div id="__nuxt"><main class="profile"><img src="${escapeHtml(model.avatar.url)}" alt="${escapeHtml(model.display_name)}"><h1>${escapeHtml(model.display_name)}</h1><p class="bio">${escapeHtml(model.bio ?? '')}</p>${links}</main></div>`,
    '<div id="teleports"></div>',
    `${PAYLOAD_ATTRIBUTES[layout.payloadAttributes] ?? PAYLOAD_ATTRIBUTES[0]}${payload}</script>`,
    CONFIG_SCRIPT,
    '<script type="module" src="/_nuxt/DyV3pLq1.js" crossorigin></script>',
    '</body>',
    '</html>',
  ].join(sep === '' ? '\n' : sep);
}

/** The Nuxt error page of a missing profile (README.md, "Signals"). */
function errorPage(seed: string, path: string): string {
  const layout = { ...layoutOf(seed, path), wrapRate: 0, extras: false };
  const encoder = new Encoder(new Rng(seed, `linkpage-a:error:${path}`), layout);
  const error = dv.error(encoder.object({ message: 'Profile not found', statusCode: 404, statusMessage: 'Profile not found' }));
  const payload = payloadText(seed, path, layout, rootNode(encoder, layout, path, {}, error));
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<title>Profile not found • linkpage-a</title>',
    '<meta property="og:title" content="Profile not found • linkpage-a">',
    '</head>',
    '<body>',
    '<div id="__nuxt"><main class="error"><h1>404</h1><p>This profile doesn’t exist (yet).</p><a href="/">Claim it</a></main></div>',
    '<div id="teleports"></div>',
    `<script type="application/json" data-nuxt-data="nuxt-app" data-ssr="true" id="__NUXT_DATA__">${payload}</script>`,
    CONFIG_SCRIPT,
    '</body>',
    '</html>',
  ].join('\n');
}

/** A private profile, its PROFILE reduced (README.md, "Signals"). */
function privatePage(seed: string, username: string): string {
  const model = linkpageAModel(seed, username);
  const layout = layoutOf(seed, username);
  const encoder = new Encoder(new Rng(seed, `linkpage-a:encode:${username}`), layout);
  const profile = encoder.object({
    id: model.id,
    user_id: model.user_id,
    username,
    display_name: model.display_name,
    is_private: true,
    avatar: encoder.object({ url: `${MEDIA}/avatars/default/avatar.webp`, png_url: `${MEDIA}/avatars/default/avatar.png`, is_default: true }),
  });
  const payload = payloadText(seed, username, layout, rootNode(encoder, layout, `/${username}`, { [`profile:${username}`]: profile }));
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<title>${escapeHtml(model.display_name)} (@${username}) • linkpage-a</title>`,
    '<meta name="description" content="This profile is private.">',
    `<link rel="canonical" href="${SITE}/${username}">`,
    '</head>',
    '<body>',
    `<div id="__nuxt"><main class="profile profile--private"><h1>${escapeHtml(model.display_name)}</h1><p>This profile is private.</p></main></div>`,
    `<script type="application/json" id="__NUXT_DATA__">${payload}</script>`,
    CONFIG_SCRIPT,
    '</body>',
    '</html>',
  ].join('\n');
}

/** The challenge interstitial (README.md, "Signals"). */
function challengePage(seed: string, key: string): string {
  const ray = new Rng(seed, `linkpage-a:ray:${key}`).chars(16, '0123456789abcdef');
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="robots" content="noindex, nofollow">',
    '<title>One moment…</title>',
    '</head>',
    '<body>',
    `<div id="challenge-root" data-ray="${ray}">`,
    '<h1>Checking your browser before accessing linkpage-a.example</h1>',
    '<noscript>Please enable JavaScript and cookies to continue.</noscript>',
    '</div>',
    '<script src="/__challenge/v1/solve.js" defer></script>',
    '</body>',
    '</html>',
  ].join('\n');
}

const LOGIN_PAGE = [
  '<!DOCTYPE html>',
  '<html lang="en">',
  '<head><meta charset="utf-8"><title>Log in • linkpage-a</title></head>',
  '<body><main class="login"><h1>Log in to linkpage-a</h1><form method="post" action="/login"><input name="email" type="email"><input name="password" type="password"><button>Log in</button></form></main></body>',
  '</html>',
].join('\n');

const HOME_PAGE = [
  '<!DOCTYPE html>',
  '<html lang="en">',
  '<head><meta charset="utf-8"><title>linkpage-a • one link for everything</title></head>',
  '<body><main class="home"><h1>One link for everything you make</h1><a href="/signup">Claim your page</a></main></body>',
  '</html>',
].join('\n');

/** A public profile page, with the account's layout. */
function publicPage(seed: string, username: string, corrupt = false): string {
  const model = linkpageAModel(seed, username);
  const layout = layoutOf(seed, username);
  const encoder = new Encoder(new Rng(seed, `linkpage-a:encode:${username}`), layout);
  let profile = encoder.profile(model);
  if (corrupt) {
    // Contract breach on purpose: a PROFILE without `created_at` (an unrecognised page).
    const members = isDvSpecial(profile) && profile[DV] === 'null' ? profile.members : (profile as Record<string, DvNode>);
    const { created_at: _dropped, ...rest } = members;
    profile = rest;
  }
  const payload = payloadText(seed, username, layout, rootNode(encoder, layout, `/${username}`, { [`profile:${username}`]: profile }));
  return profilePage(model, layout, payload);
}

// =======================================================================================
// Requests

/** The platform's own first path segments. */
const RESERVED = new Set(['join', 'qr', 'login', 'signup', 'api', 'about', 'help', 'terms', 'privacy', '_nuxt', '__challenge']);
const USERNAME = /^[A-Za-z0-9][A-Za-z0-9._-]{1,31}$/;

function account(username: string, context: SandboxContext): SandboxResponse {
  const seed = context.seed;
  const path = `/${username}`;
  switch (behaviourOf(username)) {
    case 'missing':
      return html(errorPage(seed, path), 404);
    case 'soft-missing':
      return html(errorPage(seed, path), 200);
    case 'private':
      return html(privatePage(seed, username));
    case 'rate-limited':
      return html('<!DOCTYPE html><html><head><title>Too many requests</title></head><body><h1>429</h1></body></html>', 429, { 'retry-after': '60' });
    case 'forbidden':
      return text('Forbidden', 403);
    case 'challenge':
      return html(challengePage(seed, path), 200, { 'cache-control': 'no-store' });
    case 'captcha':
      return html(challengePage(seed, path), 403, { 'cache-control': 'no-store' });
    case 'login-wall':
      return redirect(`/login?next=${encodeURIComponent(path)}`, 302);
    case 'checkpoint':
      return redirect(`/__challenge/v1?return=${encodeURIComponent(path)}`, 302);
    case 'off-platform':
      return redirect(`https://verify.linkpage-a-status.example/check?u=${encodeURIComponent(username)}`, 302);
    case 'no-payload':
      return html(`<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>linkpage-a</title></head><body><div id="__nuxt"><p>Maintenance</p></div></body></html>`);
    case 'corrupt-profile':
      return html(publicPage(seed, username, true));
    case 'blank-once':
      // An empty `200` body on every other attempt: a transient failure the client must retry.
      return context.attempt % 2 === 1 ? html('', 200) : html(publicPage(seed, username));
    default:
      return html(publicPage(seed, username));
  }
}

function handle(request: SandboxRequest, context: SandboxContext): SandboxResponse {
  if (request.method !== 'GET' && request.method !== 'HEAD') return text('Method Not Allowed', 405, { allow: 'GET, HEAD' });
  // A client that does not say Mozilla/5.0 is a bot and gets the challenge (README.md, "Requests").
  if (!/Mozilla\/5\.0/.test(request.headers['user-agent'] ?? '')) return html(challengePage(context.seed, `bot:${request.path}`), 403);

  let path: string;
  try {
    path = decodeURIComponent(request.path);
  } catch {
    return html(errorPage(context.seed, request.path), 404);
  }
  if (path === '/' || path === '') return html(HOME_PAGE);
  const lowered = path.toLowerCase();
  if (lowered === '/login') return html(LOGIN_PAGE);
  if (lowered.startsWith('/__challenge')) return html(challengePage(context.seed, path));

  const match = /^\/(@?)([^/]+)\/?$/.exec(path);
  const name = match?.[2] ?? '';
  if (!match || RESERVED.has(name.toLowerCase()) || !USERNAME.test(name)) return html(errorPage(context.seed, path), 404);
  const username = name.toLowerCase();
  // An `@` or upper-case path may be redirected to the canonical one (README.md, "Requests").
  if (match[1] === '@' || name !== username) return redirect(`/${username}`, username.length % 2 === 0 ? 301 : 308);

  const fault = accountFault(username, context);
  let delayMs = 0;
  if (fault !== null) {
    if ('reset' in fault || 'status' in fault) return fault;
    delayMs = fault.delayMs;
  }
  const response = account(username, context);
  return delayMs > 0 && !('reset' in response) ? { ...response, delayMs } : response;
}

// =======================================================================================
// Catalogue

const ENDPOINT = '/v1/linkpage-a/profile';
const entry = (description: string, url: string): CatalogueEntry => ({ description, endpoint: ENDPOINT, query: `url=${url}` });

export const linkpageASandbox: SandboxPlatform = {
  name: 'linkpage-a',
  handle,
  catalogue: [
    entry('ordinary profile: links, socials, gallery, contact details → 200', 'https://linkpage-a.example/luna.voss'),
    entry('ordinary profile, `www` host and `@` form (requested as /mika.orbit) → 200', 'https://www.linkpage-a.example/@Mika.Orbit'),
    entry('ordinary profile (another payload layout) → 200', 'https://linkpage-a.example/rui.silva'),
    entry('large profile: 300 featured links, 40 social links, 250 gallery items, 12 sections → 200', 'https://linkpage-a.example/big-catalogue'),
    entry('emoji in names, bio and link titles → 200', 'https://linkpage-a.example/emoji-party'),
    entry('right-to-left names and text → 200', 'https://linkpage-a.example/rtl-noor'),
    entry('CJK names and text → 200', 'https://linkpage-a.example/cjk-sakura'),
    entry('mixed Unicode, quotes, ampersands and markup-like text → 200', 'https://linkpage-a.example/mixed-zoe'),
    entry('absent optional fields: no bio, names, theme, cover, contact, JSON-LD or meta tags → 200', 'https://linkpage-a.example/bare-profile'),
    entry('adult profile (isAdult true) → 200', 'https://linkpage-a.example/adult-creator'),
    entry('private profile → 404 NOT_FOUND', 'https://linkpage-a.example/quiet.fern'),
    entry('private profile (any `private-…` name) → 404 NOT_FOUND', 'https://linkpage-a.example/private-anyone'),
    entry('not found: Nuxt error page, HTTP 404 → 404 NOT_FOUND', 'https://linkpage-a.example/nobody.here'),
    entry('not found: Nuxt error page served with HTTP 200 → 404 NOT_FOUND', 'https://linkpage-a.example/softmissing-page'),
    entry('blocked: HTTP 429 with Retry-After → 502 UPSTREAM_BLOCKED', 'https://linkpage-a.example/ratelimited-user'),
    entry('blocked: HTTP 403 → 502 UPSTREAM_BLOCKED', 'https://linkpage-a.example/forbidden-user'),
    entry('blocked: challenge interstitial, HTTP 200 → 502 UPSTREAM_BLOCKED', 'https://linkpage-a.example/challenge-user'),
    entry('blocked: captcha challenge, HTTP 403 → 502 UPSTREAM_BLOCKED', 'https://linkpage-a.example/captcha-user'),
    entry('blocked: redirect to /login → 502 UPSTREAM_BLOCKED', 'https://linkpage-a.example/loginwall-user'),
    entry('blocked: redirect to /__challenge → 502 UPSTREAM_BLOCKED', 'https://linkpage-a.example/checkpoint-user'),
    entry('blocked: redirect off the platform → 502 UPSTREAM_BLOCKED', 'https://linkpage-a.example/offsite-user'),
    entry('unrecognised: page without __NUXT_DATA__ → 502 UPSTREAM_UNRECOGNISED', 'https://linkpage-a.example/broken-page'),
    entry('unrecognised: PROFILE without created_at → 502 UPSTREAM_UNRECOGNISED', 'https://linkpage-a.example/corrupt-profile'),
    entry('transient: empty 200 body on odd attempts, then the profile; retried → 200', 'https://linkpage-a.example/blank-once'),
    entry('slow: answers after the configured latency → 200', 'https://linkpage-a.example/slow-luna'),
    entry('flaky: 503, then a reset, then the profile; retried → 200', 'https://linkpage-a.example/flaky-luna'),
    entry('down: always 503; retried → 502 UPSTREAM_BLOCKED', 'https://linkpage-a.example/down-luna'),
    entry('hiccup: each request first answered with an empty 200 body (transient), the profile on the retry; retried → 200', 'https://linkpage-a.example/hiccup-luna'),
  ],
};
