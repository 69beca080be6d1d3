// The mapping from a decoded linkpage-a PROFILE to the API's `data.profile`, line by line as the
// table of README.md, "Mapping", gives it. `p` = the PROFILE.
import { converter, integer, isTrue, isoFromString, root, string, text, type Node } from '../shared/read.ts';
import type { LinkpageAColor, LinkpageAMetadata, LinkpageAProfile } from './schema.ts';

/** The media host that relative social-link `icon` paths are on. */
const MEDIA_ORIGIN = 'https://cdn.linkpage-a.example';

// ------------------------------------------------------------ linkpage-a's own converters

/** An integer (a number or a decoded BigInt) as its decimal string: `4821937` → `"4821937"`. */
const decimal = converter('an integer', (value) =>
  typeof value === 'bigint' ? value.toString() : typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : undefined,
);

/** A decoded `Date` or an ISO 8601 string with an offset, as ISO 8601 UTC with milliseconds. */
const date = converter('a date', (value) => {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.toISOString();
  return isoFromString.from(value);
});

/** `features`: a decoded `Set` or an array; its strings. Empty default: no feature. */
const features = converter<ReadonlySet<string>>(
  'a Set or an array',
  (value) => {
    const items = value instanceof Set ? [...(value as Set<unknown>)] : Array.isArray(value) ? value : undefined;
    return items && new Set(items.filter((item): item is string => typeof item === 'string'));
  },
  new Set(),
);

/** `contact_info`: a decoded `Map` (or a plain object) of strings, in order. Empty default `[]`. */
const contacts = converter<{ type: string; value: string }[]>(
  'a Map of strings',
  (value) => {
    const entries: [unknown, unknown][] | undefined =
      value instanceof Map ? [...(value as Map<unknown, unknown>)] : value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.entries(value) : undefined;
    if (entries?.every(([type, text]) => typeof type === 'string' && typeof text === 'string') !== true) return undefined;
    return entries.map(([type, text]) => ({ type: type as string, value: text as string }));
  },
  [],
);

/** `color`: a string `s` → `{c: s}`; `{dark, light}` → `{p: {d: dark, l: light}}`. */
const color = converter<LinkpageAColor>('a colour string or a {dark, light} palette', (value) => {
  if (typeof value === 'string') return { c: value };
  const { dark, light } = (value ?? {}) as { dark?: unknown; light?: unknown };
  return typeof dark === 'string' && typeof light === 'string' ? { p: { d: dark, l: light } } : undefined;
});

/** `"https://cdn.linkpage-a.example" + icon`; an icon that is already an absolute URL is copied. */
const onMediaHost = (icon: string): string => (/^[a-z][a-z0-9+.-]*:/i.test(icon) ? icon : `${MEDIA_ORIGIN}${icon}`);

/** Ascending by `key`, ties by `tie`; the sort is stable, so full ties keep upstream order. */
const sortedBy = <T>(items: T[], key: (item: T) => number, tie: (item: T) => number = () => 0): T[] =>
  items.sort((a, b) => key(a) - key(b) || tie(a) - tie(b));

// ------------------------------------------------------------------------------ the mapping

/** The decoded PROFILE as a node; it must be an object. */
export const profileNode = (profile: unknown): Node => root(profile, 'PROFILE').node('');

/** `p.is_private` is `true`: the profile is answered as not found, before any member is required. */
export const isPrivate = (p: Node): boolean => p.orEmpty('is_private', isTrue);

/** `data.profile`, with `sameAs` and `metadata` read from the page around the payload. */
export function mapProfile(p: Node, sameAs: string[], metadata: LinkpageAMetadata): LinkpageAProfile {
  // A PROFILE lacking these is an unrecognised page, whatever else it holds.
  const username = p.get('username', string);
  const avatar = p.node('avatar');
  const createdAt = p.get('created_at', date);

  const featureSet = p.orEmpty('features', features);
  const video = p.nodeOrNull('video_profile');
  const theme = p.nodeOrNull('custom_theme');

  return {
    id: p.get('id', string),
    userId: p.get('user_id', decimal),
    username,
    displayName: p.orEmpty('display_name', string),
    firstName: p.orEmpty('first_name', string),
    lastName: p.orNull('last_name', text),
    bio: p.orEmpty('bio', string),
    url: p.get('share_url', string),
    verified: p.orEmpty('is_verified', isTrue),
    isAmbassador: p.orEmpty('is_ambassador', isTrue),
    isPrivate: false, // a private profile is not found and never mapped
    isAdult: p.orEmpty('is_adult', isTrue),
    isDefaultProfilePicture: avatar.orEmpty('is_default', isTrue),
    tipsEnabled: featureSet.has('tips'),
    shopEnabled: featureSet.has('shop'),
    verifiedColor: p.orEmpty('verified_badge_color', string),
    avatarUrl: avatar.orEmpty('url', string),
    avatarUrlPng: avatar.orEmpty('png_url', string),
    coverUrl: p.orNull('cover_image_url', text),
    logoUrl: p.orNull('logo_url', text),
    videoProfileUrl: video?.orNull('url', text) ?? null,
    videoProfileThumbnailUrl: video?.orNull('thumbnail_url', text) ?? null,
    views: p.get('views_label', string),
    followers: p.orNull('followers_count', integer),
    totalLinks: p.get('total_links', integer),
    theme: p.get('theme', string),
    customTheme: {
      backgroundColor: theme?.orNull('background_color', string) ?? null,
      backgroundImageUrl: theme?.orNull('background_image_url', string) ?? null,
      bioBackground: theme?.orNull('bio_background', string) ?? null,
      mainTextColor: theme?.orNull('main_text_color', string) ?? null,
      level1TextColor: theme?.orNull('level1_text_color', string) ?? null,
      level2TextColor: theme?.orNull('level2_text_color', string) ?? null,
      customFont: theme?.orNull('custom_font', string) ?? null,
      customFontUrl: theme?.orNull('custom_font_url', string) ?? null,
    },
    qrCode: p.get('qr_code_path', string),
    referralLink: p.orEmpty('referral_link', string),
    deeplink: p.orEmpty('deeplink', string),
    createdAt,
    updatedAt: p.get('updated_at', date),
    socialLinks: p.listOrEmpty('social_links').map((s) => ({
      platform: s.get('platform', string),
      url: s.get('url', string),
      handle: s.orEmpty('handle', string),
      iconUrl: onMediaHost(s.get('icon', string)),
      isAdult: s.orEmpty('is_adult', isTrue),
    })),
    featuredLinks: sortedBy(
      p.listOrEmpty('featured_links').map((f) => ({
        id: f.get('id', integer),
        title: f.get('title', string),
        description: f.orNull('description', text),
        url: f.get('url', string),
        platform: f.get('platform', string),
        imageUrl: f.orNull('image_url', text),
        iconUrl: f.orEmpty('icon_url', string),
        thumbnail: f.get('thumbnail_size', string),
        color: f.get('color', color),
        order: f.get('sort_order', integer),
        isAdult: f.orEmpty('is_adult', isTrue),
        kind: f.get('kind', string),
      })),
      (f) => f.order,
      (f) => f.id,
    ),
    contactInfo: p.orEmpty('contact_info', contacts),
    gallery: sortedBy(
      p.listOrEmpty('gallery').map((g) => ({
        id: g.get('id', integer),
        url: g.get('image_url', string),
        order: g.get('sort_order', integer),
        createdAt: g.get('created_at', date),
      })),
      (g) => g.order,
      (g) => g.id,
    ),
    sections: sortedBy(
      p.listOrEmpty('sections').map((sec) => ({
        section: sec.get('key', string),
        order: sec.get('position', integer),
        enabled: sec.orEmpty('enabled', isTrue),
      })),
      (section) => section.order,
    ),
    sameAs,
    metadata,
  };
}
