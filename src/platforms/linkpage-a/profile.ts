// The mapping of upstream/linkpage-a.md section 7: one line per API field, reading the decoded
// PROFILE with helpers named after the chapter's notation. A member the mapping copies that is
// missing or of the wrong type is an unrecognised page, named by its path in the PROFILE.
import { UpstreamOutcome } from '../../upstream/outcomes.ts';
import type { PageHead } from './html.ts';

export const PLATFORM = 'linkpage-a';

/** The media host that relative social-link `icon` paths are on (section 4.4). */
const MEDIA_ORIGIN = 'https://cdn.linkpage-a.example';

export const unrecognised = (problem: string): UpstreamOutcome =>
  new UpstreamOutcome('unrecognised', PLATFORM, `linkpage-a profile page: ${problem}`);

// ------------------------------------------------------------------------------ API shapes

export interface CustomTheme {
  backgroundColor: string | null;
  backgroundImageUrl: string | null;
  bioBackground: string | null;
  mainTextColor: string | null;
  level1TextColor: string | null;
  level2TextColor: string | null;
  customFont: string | null;
  customFontUrl: string | null;
}
export interface SocialLink { platform: string; url: string; handle: string; iconUrl: string; isAdult: boolean }
export type LinkColor = { c: string } | { p: { d: string; l: string } };
export interface FeaturedLink {
  id: number;
  title: string;
  description: string | null;
  url: string;
  platform: string;
  imageUrl: string | null;
  iconUrl: string;
  thumbnail: string;
  color: LinkColor;
  order: number;
  isAdult: boolean;
  kind: string;
}
export interface ContactItem { type: string; value: string }
export interface GalleryItem { id: number; url: string; order: number; createdAt: string }
export interface SectionItem { section: string; order: number; enabled: boolean }

export interface LinkpageAProfile {
  id: string;
  userId: string;
  username: string;
  displayName: string;
  firstName: string;
  lastName: string | null;
  bio: string;
  url: string;
  verified: boolean;
  isAmbassador: boolean;
  isPrivate: boolean;
  isAdult: boolean;
  isDefaultProfilePicture: boolean;
  tipsEnabled: boolean;
  shopEnabled: boolean;
  verifiedColor: string;
  avatarUrl: string;
  avatarUrlPng: string;
  coverUrl: string | null;
  logoUrl: string | null;
  videoProfileUrl: string | null;
  videoProfileThumbnailUrl: string | null;
  views: string;
  followers: number | null;
  totalLinks: number;
  theme: string;
  customTheme: CustomTheme;
  qrCode: string;
  referralLink: string;
  deeplink: string;
  createdAt: string;
  updatedAt: string;
  socialLinks: SocialLink[];
  featuredLinks: FeaturedLink[];
  contactInfo: ContactItem[];
  gallery: GalleryItem[];
  sections: SectionItem[];
  sameAs: string[];
  metadata: PageHead;
}

// ------------------------------------------------------------------- reading decoded values

/** A decoded object: plain or prototype-less (`["null", …]`). */
export const isRecord = (value: unknown): value is Record<string, unknown> => {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === null || proto === Object.prototype;
};

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/i;

/**
 * Reads the members of one decoded object; `path` names it in error messages. Each method is a
 * conversion of the chapter: `copied` (required as is), `str`, `opt`, `flag` ("`true` only if
 * `true`"), `int`, `date`, and so on.
 */
export class Reader {
  readonly path: string;
  readonly #value: Record<string, unknown>;

  constructor(value: unknown, path: string) {
    if (!isRecord(value)) throw unrecognised(`${path} is missing or not an object`);
    this.#value = value;
    this.path = path;
  }

  /** The member, `undefined` when absent (an own member only: `constructor` is not a member). */
  get(key: string): unknown {
    return Object.hasOwn(this.#value, key) ? this.#value[key] : undefined;
  }

  #fail(key: string, expected: string): never {
    throw unrecognised(`${this.path}.${key} is missing or not ${expected}`);
  }

  /** Copied: a string that must be there. */
  copied(key: string): string {
    const value = this.get(key);
    return typeof value === 'string' ? value : this.#fail(key, 'a string');
  }

  /** `str(x)`: `undefined` or `null` → `""`. */
  str(key: string): string {
    const value = this.get(key);
    if (value === undefined || value === null) return '';
    return typeof value === 'string' ? value : this.#fail(key, 'a string or null');
  }

  /** `opt(x)`: `undefined`, `null` or `""` → `null`. */
  opt(key: string): string | null {
    const value = this.get(key);
    if (value === undefined || value === null || value === '') return null;
    return typeof value === 'string' ? value : this.#fail(key, 'a string or null');
  }

  /** Copied or `null` (custom theme members): a string, or `null` when absent. */
  nullable(key: string): string | null {
    const value = this.get(key);
    if (value === undefined || value === null) return null;
    return typeof value === 'string' ? value : this.#fail(key, 'a string or null');
  }

  /** `true` only if `true`. */
  flag(key: string): boolean {
    return this.get(key) === true;
  }

  /** An integer that must be there. */
  int(key: string): number {
    const value = this.get(key);
    return typeof value === 'number' && Number.isSafeInteger(value) ? value : this.#fail(key, 'an integer');
  }

  /** An integer, or `null` when absent. */
  intOrNull(key: string): number | null {
    const value = this.get(key);
    if (value === undefined || value === null) return null;
    return typeof value === 'number' && Number.isSafeInteger(value) ? value : this.#fail(key, 'an integer or null');
  }

  /** Integer → decimal string (`4821937` → `"4821937"`); a big integer is accepted too. */
  decimal(key: string): string {
    const value = this.get(key);
    if (typeof value === 'bigint') return value.toString();
    if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
    return this.#fail(key, 'an integer');
  }

  /** `date(x)`: a decoded date or an ISO 8601 string → ISO 8601 UTC with milliseconds. */
  date(key: string): string {
    const value = this.get(key);
    const time = value instanceof Date ? value.getTime() : typeof value === 'string' && ISO_8601.test(value) ? Date.parse(value) : NaN;
    return Number.isFinite(time) ? new Date(time).toISOString() : this.#fail(key, 'a date');
  }

  /** A nested object that must be there. */
  object(key: string): Reader {
    return new Reader(this.get(key), `${this.path}.${key}`);
  }

  /** A nested object, or null when absent (`undefined` or `null`). */
  optionalObject(key: string): Reader | null {
    const value = this.get(key);
    return value === undefined || value === null ? null : new Reader(value, `${this.path}.${key}`);
  }

  /** A list of objects; absent → `[]` (section 10: any number of items, 0 included). */
  list(key: string): Reader[] {
    const value = this.get(key);
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) return this.#fail(key, 'a list');
    return Array.from(value, (item: unknown, index) => new Reader(item, `${this.path}.${key}[${index}]`));
  }

  /** `features`: a Set or an array of strings; absent → empty. */
  stringSet(key: string): Set<string> {
    const value = this.get(key);
    if (value === undefined || value === null) return new Set();
    const items = value instanceof Set ? [...(value as Set<unknown>)] : Array.isArray(value) ? value : this.#fail(key, 'a Set or a list');
    return new Set(items.filter((item): item is string => typeof item === 'string'));
  }

  /** `contact_info`: a Map (or, tolerated, a plain object) of strings, in order; absent → `[]`. */
  entries(key: string): Array<[string, string]> {
    const value = this.get(key);
    if (value === undefined || value === null) return [];
    const entries: Array<[unknown, unknown]> =
      value instanceof Map ? [...(value as Map<unknown, unknown>)] : isRecord(value) ? Object.entries(value) : this.#fail(key, 'a Map');
    return entries.map(([type, text], index) => {
      if (typeof type !== 'string' || typeof text !== 'string') throw unrecognised(`${this.path}.${key} entry ${index} is not a string pair`);
      return [type, text];
    });
  }

  /** `color`: a string → `{c}`; `{dark, light}` → `{p: {d, l}}`. */
  color(key: string): LinkColor {
    const value = this.get(key);
    if (typeof value === 'string') return { c: value };
    if (isRecord(value)) {
      const palette = new Reader(value, `${this.path}.${key}`);
      return { p: { d: palette.copied('dark'), l: palette.copied('light') } };
    }
    return this.#fail(key, 'a colour string or a {dark, light} object');
  }
}

/** `"https://cdn.linkpage-a.example" + icon`; an icon that is already an absolute URL is copied. */
const onMediaHost = (icon: string): string => (/^[a-z][a-z0-9+.-]*:/i.test(icon) ? icon : `${MEDIA_ORIGIN}${icon}`);

/** Ascending by `key`, ties by `tie`; the sort is stable, so full ties keep upstream order. */
const sortedBy = <T>(items: T[], key: (item: T) => number, tie: (item: T) => number = () => 0): T[] =>
  items.sort((a, b) => key(a) - key(b) || tie(a) - tie(b));

// ------------------------------------------------------------------------------ the mapping

/** Section 7 (PROFILE → `data.profile`), with `sameAs` (section 5) and `metadata` (section 6) from the page. */
export function mapProfile(profile: unknown, sameAs: string[], metadata: PageHead): LinkpageAProfile {
  const p = new Reader(profile, 'PROFILE');
  // Section 9: a PROFILE lacking these is an unrecognised page, whatever else it holds.
  const username = p.copied('username');
  const avatar = p.object('avatar');
  const createdAt = p.date('created_at');

  const features = p.stringSet('features');
  const video = p.optionalObject('video_profile');
  const theme = p.optionalObject('custom_theme');

  return {
    id: p.copied('id'),
    userId: p.decimal('user_id'),
    username,
    displayName: p.str('display_name'),
    firstName: p.str('first_name'),
    lastName: p.opt('last_name'),
    bio: p.str('bio'),
    url: p.copied('share_url'),
    verified: p.flag('is_verified'),
    isAmbassador: p.flag('is_ambassador'),
    isPrivate: false, // a private profile never gets here (8.2)
    isAdult: p.flag('is_adult'),
    isDefaultProfilePicture: avatar.flag('is_default'),
    tipsEnabled: features.has('tips'),
    shopEnabled: features.has('shop'),
    verifiedColor: p.str('verified_badge_color'),
    avatarUrl: avatar.str('url'),
    avatarUrlPng: avatar.str('png_url'),
    coverUrl: p.opt('cover_image_url'),
    logoUrl: p.opt('logo_url'),
    videoProfileUrl: video ? video.opt('url') : null,
    videoProfileThumbnailUrl: video ? video.opt('thumbnail_url') : null,
    views: p.copied('views_label'),
    followers: p.intOrNull('followers_count'),
    totalLinks: p.int('total_links'),
    theme: p.copied('theme'),
    customTheme: {
      backgroundColor: theme ? theme.nullable('background_color') : null,
      backgroundImageUrl: theme ? theme.nullable('background_image_url') : null,
      bioBackground: theme ? theme.nullable('bio_background') : null,
      mainTextColor: theme ? theme.nullable('main_text_color') : null,
      level1TextColor: theme ? theme.nullable('level1_text_color') : null,
      level2TextColor: theme ? theme.nullable('level2_text_color') : null,
      customFont: theme ? theme.nullable('custom_font') : null,
      customFontUrl: theme ? theme.nullable('custom_font_url') : null,
    },
    qrCode: p.copied('qr_code_path'),
    referralLink: p.str('referral_link'),
    deeplink: p.str('deeplink'),
    createdAt,
    updatedAt: p.date('updated_at'),
    socialLinks: p.list('social_links').map(mapSocial),
    featuredLinks: sortedBy(p.list('featured_links').map(mapFeatured), (f) => f.order, (f) => f.id),
    contactInfo: p.entries('contact_info').map(([type, value]) => ({ type, value })),
    gallery: sortedBy(p.list('gallery').map(mapGallery), (g) => g.order, (g) => g.id),
    sections: sortedBy(p.list('sections').map(mapSection), (s) => s.order),
    sameAs,
    metadata,
  };
}

const mapSocial = (s: Reader): SocialLink => ({
  platform: s.copied('platform'),
  url: s.copied('url'),
  handle: s.str('handle'),
  iconUrl: onMediaHost(s.copied('icon')),
  isAdult: s.flag('is_adult'),
});

const mapFeatured = (f: Reader): FeaturedLink => ({
  id: f.int('id'),
  title: f.copied('title'),
  description: f.opt('description'),
  url: f.copied('url'),
  platform: f.copied('platform'),
  imageUrl: f.opt('image_url'),
  iconUrl: f.str('icon_url'),
  thumbnail: f.copied('thumbnail_size'),
  color: f.color('color'),
  order: f.int('sort_order'),
  isAdult: f.flag('is_adult'),
  kind: f.copied('kind'),
});

const mapGallery = (g: Reader): GalleryItem => ({
  id: g.int('id'),
  url: g.copied('image_url'),
  order: g.int('sort_order'),
  createdAt: g.date('created_at'),
});

const mapSection = (s: Reader): SectionItem => ({
  section: s.copied('key'),
  order: s.int('position'),
  enabled: s.flag('enabled'),
});
