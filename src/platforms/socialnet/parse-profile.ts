// Page/profile info (upstream/socialnet.md 9.2 to 9.7 → api-spec 2.7). One line per API field;
// `U` is the header preloader's `data.user.profile_header_renderer.user`.
import type { Node } from './reader.ts';
import { unrecognised } from './reader.ts';
import { countFromLabel, countLabel, unshim } from './parse-common.ts';
import { isVanity } from './urls.ts';

type CountLabel = { count: number; label: string };

export interface ProfileLink {
  type: string;
  label: string;
  url: string;
  value: string;
}

export interface Profile {
  id: string | null;
  name: string;
  url: string;
  username: string | null;
  alternateName: string | null;
  gender: string | null;
  verified: boolean | null;
  categories: string[];
  profilePictureUrl: string;
  profilePicture: { small: string; medium: string; large: string } | null;
  coverPhotoUrl: string | null;
  followers: CountLabel | null;
  following: CountLabel | null;
  likes: CountLabel | null;
  intro: string | null;
  contact: { phone: string | null; email: string | null; website: string | null; address: string | null } | null;
  links: ProfileLink[];
  rating: string | null;
  isBusinessPage: boolean | null;
  otherDetails: { type: string; text: string }[];
  businessHours: { status: string } | null;
}

/** The about fields of 9.3, sorted into the API fields they feed. */
export interface AboutFields {
  categories: string[];
  address: string | null;
  phone: string | null;
  email: string | null;
  website: string | null;
  links: ProfileLink[];
  rating: string | null;
  otherDetails: { type: string; text: string }[];
}

/** 9.6: a full profile from the header user `U`, the about fields, `og:description` and the hours. */
export function mapProfile(U: Node, about: AboutFields, ogDescription: string | null, businessHours: { status: string } | null): Profile {
  const url = U.str('url');
  return {
    id: U.str('id'),
    name: U.str('name'),
    url,
    username: usernameOf(url),
    alternateName: U.strOrNull('alternate_name'),
    gender: U.str('gender'),
    verified: U.bool('show_verified_badge_on_profile'),
    categories: about.categories,
    profilePictureUrl: U.str('profilePicLarge.uri'),
    profilePicture: {
      small: U.str('profilePicSmall.uri'),
      medium: U.str('profilePicMedium.uri'),
      large: U.str('profilePicLarge.uri'),
    },
    coverPhotoUrl: U.strOrNull('cover_photo.photo.image.uri'),
    followers: socialContext(U, 'followers'),
    following: socialContext(U, 'following'),
    likes: likesOf(ogDescription),
    intro: U.strOrNull('profile_intro_card.bio.text'),
    contact: { phone: about.phone, email: about.email, website: about.website, address: about.address },
    links: about.links,
    rating: about.rating,
    isBusinessPage: U.boolOrNull('delegate_page.is_business_page_active') ?? false,
    otherDetails: about.otherDetails,
    businessHours,
  };
}

/** 9.7: the limited response of a gated page, from its meta tags. */
export function mapGatedProfile(meta: ReadonlyMap<string, string>): Profile {
  const required = (key: string): string => {
    const value = meta.get(key);
    if (value === undefined || value === '') throw unrecognised(`gated page without ${key}`);
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

/** 9.6 `username`: the vanity when the URL's path is `/{vanity}`, as spelled; otherwise null. */
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

/** 9.6 `followers` / `following`: the social-context item whose uri path ends with `/{kind}/`. */
function socialContext(U: Node, kind: 'followers' | 'following'): CountLabel | null {
  for (const item of U.listOrEmpty('profile_social_context.content')) {
    const uri = item.strOrNull('uri');
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
    if (path.endsWith(`/${kind}/`) || path.endsWith(`/${kind}`)) return countLabel(item.str('text.text'), kind);
  }
  return null;
}

const LIKES = /([0-9][0-9,]*(?:\.[0-9]+)?[KMB]?) (likes?) ·/;

/** 9.5: `{count, label}` from the first `… likes ·` of `og:description`; null when none. */
export function likesOf(ogDescription: string | null): CountLabel | null {
  const match = ogDescription === null ? null : LIKES.exec(ogDescription);
  if (match === null) return null;
  const number = match[1] ?? '';
  const count = countFromLabel(number);
  return count === null ? null : { count, label: `${number} ${match[2] ?? ''}` };
}

/** 9.3: walks every about field in document order; only `field_type` matters. */
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
          const type = field.str('field_type');
          const title = field.str('title.text');
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
              const link = field.strOrNull('link_url');
              if (!websiteSeen) {
                websiteSeen = true;
                fields.website = link === null ? null : unshim(link);
              } else if (link !== null) {
                fields.links.push({ type: 'WEBSITE', label: 'Website', url: unshim(link), value: title });
              }
              break;
            }
            case 'social_link': {
              const link = field.strOrNull('link_url');
              if (link === null) break;
              fields.links.push({
                type: field.str('social_link_type'),
                label: field.strOrNull('subtitle.text') ?? '',
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
 * 9.4: `context_item.title.text` of the first `INTRO_CARD_BUSINESS_HOURS` item in an `INTRO`
 * section of the intro tiles (`data.user`); null when there is none or its title is null.
 */
export function readBusinessHours(user: Node): { status: string } | null {
  for (const edge of user.listOrEmpty('profile_tile_sections.edges')) {
    if (edge.get('node.profile_tile_section_type') !== 'INTRO') continue;
    for (const view of edge.listOrEmpty('node.profile_tile_views.nodes')) {
      for (const item of view.listOrEmpty('view_style_renderer.view.profile_tile_items.nodes')) {
        const context = item.nodeOrNull('node.timeline_context_item');
        if (context?.get('timeline_context_list_item_type') !== 'INTRO_CARD_BUSINESS_HOURS') continue;
        const status = context.strOrNull('renderer.context_item.title.text');
        return status === null ? null : { status };
      }
    }
  }
  return null;
}
