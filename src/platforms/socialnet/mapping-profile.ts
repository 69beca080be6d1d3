// The socialnet profile mapping, line by line as README.md's table "Profile" gives it. `U` is
// the README's path alias: the header preloader's `data.user.profile_header_renderer.user`.
import { boolean, oneOf, string, type Node } from '../shared/read.ts';
import { countFromLabel, countLabel, gender, unrecognised, unshim } from './mapping.ts';
import type { CountLabel, HoursStatus, Profile } from './schema.ts';
import { isVanity } from './urls.ts';

/** The status line of the business hours. */
const hoursStatus = oneOf<HoursStatus>(
  ['Open now', 'Closes soon', 'Closed now', 'Opens soon', 'Always open', 'Temporarily closed', 'Permanently closed'],
  'Open now',
);

/** The about fields, sorted into the API fields they feed. */
export interface AboutFields {
  categories: string[];
  address: string | null;
  phone: string | null;
  email: string | null;
  website: string | null;
  links: Profile['links'];
  rating: string | null;
  otherDetails: { type: string; text: string }[];
}

/** a full profile from the header user `U`, the about fields, `og:description` and the hours. */
export function mapProfile(U: Node, about: AboutFields, ogDescription: string | null, businessHours: Profile['businessHours']): Profile {
  const url = U.get('url', string);
  return {
    id: U.get('id', string),
    name: U.get('name', string),
    url,
    username: usernameOf(url),
    alternateName: U.orNull('alternate_name', string),
    gender: U.get('gender', gender),
    verified: U.get('show_verified_badge_on_profile', boolean),
    categories: about.categories,
    profilePictureUrl: U.get('profilePicLarge.uri', string),
    profilePicture: {
      small: U.get('profilePicSmall.uri', string),
      medium: U.get('profilePicMedium.uri', string),
      large: U.get('profilePicLarge.uri', string),
    },
    coverPhotoUrl: U.orNull('cover_photo.photo.image.uri', string),
    followers: socialContext(U, 'followers'),
    following: socialContext(U, 'following'),
    likes: likesOf(ogDescription),
    intro: U.orNull('profile_intro_card.bio.text', string),
    contact: { phone: about.phone, email: about.email, website: about.website, address: about.address },
    links: about.links,
    rating: about.rating,
    isBusinessPage: U.orNull('delegate_page.is_business_page_active', boolean) ?? false,
    otherDetails: about.otherDetails,
    businessHours,
  };
}

/** the limited response of a gated page, from its meta tags. */
export function mapGatedProfile(meta: ReadonlyMap<string, string>): Profile {
  const required = (key: string): string => {
    const value = meta.get(key);
    if (value === undefined || value === '') throw unrecognised('gated page', `no ${key}`);
    return value;
  };
  const url = required('og:url');
  const android = /^socialnet:\/\/profile\/([0-9]+)/.exec(meta.get('al:android:url') ?? '');
  return {
    id: android?.[1] ?? null,
    name: required('og:title'),
    url,
    username: usernameOf(url),
    alternateName: null,
    gender: null,
    verified: null,
    categories: [],
    profilePictureUrl: required('og:image'),
    profilePicture: null,
    coverPhotoUrl: null,
    followers: null,
    following: null,
    likes: null,
    intro: null,
    contact: null,
    links: [],
    rating: null,
    isBusinessPage: null,
    otherDetails: [],
    businessHours: null,
  };
}

/** `username`: the vanity when the URL's path is `/{vanity}`, as spelled; otherwise null. */
export function usernameOf(url: string): string | null {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return null;
  }
  const segments = path.split('/').filter((segment) => segment !== '');
  const only = segments.length === 1 ? segments[0] : undefined;
  return only !== undefined && isVanity(only) ? only : null;
}

/** `followers` / `following`: the social-context item whose uri path ends with `/{kind}/`. */
function socialContext(U: Node, kind: 'followers' | 'following'): CountLabel | null {
  for (const item of U.listOrEmpty('profile_social_context.content')) {
    const uri = item.orNull('uri', string);
    if (uri === null) continue;
    // A path ending so holds the word as written, unless a tab or newline (which URL parsing
    // drops) splits it: without either, a URI without the word need not be parsed.
    if (!uri.includes(kind) && !/[\t\n\r]/.test(uri)) continue;
    let path: string;
    try {
      path = new URL(uri, 'https://www.socialnet.example').pathname;
    } catch {
      continue;
    }
    if (path.endsWith(`/${kind}/`) || path.endsWith(`/${kind}`)) return countLabel(item.get('text.text', string), kind);
  }
  return null;
}

const LIKES = /([0-9][0-9,]*(?:\.[0-9]+)?[KMB]?) (likes?) ·/;

/** `{count, label}` from the first `… likes ·` of `og:description`; null when none. */
export function likesOf(ogDescription: string | null): CountLabel | null {
  const match = ogDescription === null ? null : LIKES.exec(ogDescription);
  if (match === null) return null;
  const number = match[1] ?? '';
  const count = countFromLabel(number);
  return count === null ? null : { count, label: `${number} ${match[2] ?? ''}` };
}

/** walks every about field in document order; only `field_type` matters. */
export function readAboutFields(user: Node): AboutFields {
  const fields: AboutFields = {
    categories: [],
    address: null,
    phone: null,
    email: null,
    website: null,
    links: [],
    rating: null,
    otherDetails: [],
  };
  let websiteSeen = false;
  for (const section of user.list('about_app_sections.nodes')) {
    for (const collection of section.listOrEmpty('activeCollections.nodes')) {
      for (const fieldSection of collection.listOrEmpty('style_renderer.profile_field_sections')) {
        for (const field of fieldSection.listOrEmpty('profile_fields.nodes')) {
          const type = field.get('field_type', string);
          const title = field.get('title.text', string);
          switch (type) {
            case 'category':
              fields.categories.push(title);
              break;
            case 'address':
              fields.address ??= title;
              break;
            case 'profile_phone':
              fields.phone ??= title;
              break;
            case 'profile_email':
              fields.email ??= title;
              break;
            case 'rating':
              fields.rating ??= title;
              break;
            case 'website': {
              const link = field.orNull('link_url', string);
              if (!websiteSeen) {
                websiteSeen = true;
                fields.website = link === null ? null : unshim(link);
              } else if (link !== null) {
                fields.links.push({ type: 'WEBSITE', label: 'Website', url: unshim(link), value: title });
              }
              break;
            }
            case 'social_link': {
              const link = field.orNull('link_url', string);
              if (link === null) break;
              fields.links.push({
                type: field.get('social_link_type', string),
                label: field.orEmpty('subtitle.text', string),
                url: unshim(link),
                value: title,
              });
              break;
            }
            default:
              fields.otherDetails.push({ type, text: title });
          }
        }
      }
    }
  }
  return fields;
}

/**
 * `context_item.title.text` of the first `INTRO_CARD_BUSINESS_HOURS` item in an `INTRO`
 * section of the intro tiles (`data.user`); null when there is none or its title is null.
 */
export function readBusinessHours(user: Node): Profile['businessHours'] {
  for (const edge of user.listOrEmpty('profile_tile_sections.edges')) {
    if (edge.at('node.profile_tile_section_type').value !== 'INTRO') continue;
    for (const view of edge.listOrEmpty('node.profile_tile_views.nodes')) {
      for (const item of view.listOrEmpty('view_style_renderer.view.profile_tile_items.nodes')) {
        const context = item.nodeOrNull('node.timeline_context_item');
        if (context?.at('timeline_context_list_item_type').value !== 'INTRO_CARD_BUSINESS_HOURS') continue;
        const status = context.orNull('renderer.context_item.title.text', hoursStatus);
        return status === null ? null : { status };
      }
    }
  }
  return null;
}
