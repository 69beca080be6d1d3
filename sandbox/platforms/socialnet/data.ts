// Generated socialnet content: profiles, stories, comments, replies, reels, about fields and
// intro tiles, in the upstream shapes of src/platforms/socialnet/README.md. Every item is
// a pure function of the seed, the account and its position, so any page of any list can be
// produced on its own, and the profile page, the GraphQL pages and the reels tab agree.
import { Rng, type TextFlavour } from '../../common.ts';
import { personOf } from '../../people.ts';
import type { AccountSpec, Gender } from './accounts.ts';
import {
  SCONTENT,
  VIDEO_CDN,
  WWW,
  b64,
  collectionIdOf,
  commentFeedbackId,
  commentRelayId,
  cursorOf,
  expansionTokenOf,
  legacyIdOf,
  opaqueId,
  postFeedbackId,
  postIdOf,
  profileIdOf,
  reelNodeId,
  storyRelayId,
} from './ids.ts';

export type Json = Record<string, unknown>;

// ---------------------------------------------------------------------------------------
// Labels and small helpers

const commas = (n: number): string => n.toLocaleString('en-US');

/** `1.2K`, `48K`, `3.4M`: the upstream's compact count labels. */
export function compactCount(n: number): string {
  const scale = (value: number, unit: string) => {
    const rounded = value >= 100 ? Math.round(value) : Math.round(value * 10) / 10;
    return `${rounded}${unit}`;
  };
  if (n < 10_000) return n >= 1_000 ? scale(n / 1_000, 'K') : String(n);
  if (n < 1_000_000) return scale(n / 1_000, 'K');
  if (n < 1_000_000_000) return scale(n / 1_000_000, 'M');
  return scale(n / 1_000_000_000, 'B');
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const TOKEN = `${ALNUM}_-`;
const HEX = '0123456789abcdef';

function imageUrl(rng: Rng, family: string, objectId: string, stp: string): string {
  return `${SCONTENT}/v/t${family}/${rng.digits(9)}_${objectId}_n.jpg?stp=${stp}&_nc_cat=${rng.int(100, 111)}&ccb=1-7&oh=00_${rng.chars(10, TOKEN)}&oe=${rng.chars(8, HEX).toUpperCase()}`;
}

function videoUrl(rng: Rng, quality: 'hd' | 'sd'): string {
  const tag = quality === 'hd' ? 'eyJ2ZW5jb2RlX3RhZyI6ImhkIn0' : 'eyJ2ZW5jb2RlX3RhZyI6InNkIn0';
  return `${VIDEO_CDN}/o1/v/t2/f2/m69/AQ${rng.chars(24, TOKEN)}.mp4?efg=${tag}&_nc_cat=1&oh=00_${rng.chars(10, TOKEN)}&oe=${rng.chars(8, HEX).toUpperCase()}`;
}

/** An external link through the link shim. */
export const shim = (rng: Rng, target: string): string => `${WWW}/l.php?u=${encodeURIComponent(target)}&h=AT${rng.chars(14, TOKEN)}`;

const icon = (rng: Rng): Json => ({ uri: `${SCONTENT}/rsrc.php/v3/x3ue/r/${rng.chars(11, TOKEN)}.png` });

const REACTIONS: readonly [string, string][] = [
  ['Like', '1635851120773345'],
  ['Love', '1678520049318012'],
  ['Care', '613552094712867'],
  ['Haha', '115940213374490'],
  ['Wow', '478541092815526'],
  ['Sad', '908563459236466'],
  ['Angry', '444813342392137'],
];

/** `top_reactions`: at most 3 edges, largest first, summing to at most `total`. */
function topReactions(rng: Rng, total: number): Json {
  if (total === 0) return { edges: [] };
  const like = Math.max(1, Math.round(total * (0.6 + rng.next() * 0.3)));
  const counts: [string, string, number][] = [[...REACTIONS[0]!, Math.min(like, total)]];
  let left = total - counts[0]![2];
  for (const reaction of [REACTIONS[1 + rng.int(0, 5)]!, REACTIONS[1 + rng.int(0, 5)]!]) {
    if (left <= 0 || counts.some(([name]) => name === reaction[0])) continue;
    const count = counts.length === 1 ? Math.ceil(left * 0.8) : left;
    counts.push([...reaction, count]);
    left -= count;
  }
  counts.sort((a, b) => b[2] - a[2]);
  return {
    edges: counts.map(([name, id, count]) => ({
      visible_in_bling_bar: true,
      node: { id, localized_name: name },
      reaction_count: count,
      i18n_reaction_count: compactCount(count),
    })),
  };
}

function text(rng: Rng, flavour: TextFlavour, min: number, max: number): string {
  let out = rng.sentence(rng.int(min, max), flavour);
  if (rng.bool(0.3)) out += `\n${rng.sentence(rng.int(3, 8), flavour)}`;
  if (rng.bool(0.3)) out += ` #${rng.sentence(1).toLowerCase()}`;
  return out;
}

// ---------------------------------------------------------------------------------------
// Actors

export interface Actor {
  typename: 'User' | 'Page';
  id: string;
  name: string;
  shortName: string;
  url: string;
  verified: boolean;
  gender: Gender;
  avatar32: string;
  avatar40: string;
}

const GENDERS: readonly Gender[] = ['FEMALE', 'MALE', 'FEMALE', 'MALE', 'UNKNOWN'];

/** Someone else: a commenter, a replier, the author of a reshared story. */
function someone(rng: Rng, flavour: TextFlavour): Actor {
  const name = rng.name(flavour === 'plain' || rng.bool(0.4) ? 'plain' : flavour);
  const id = rng.digits(rng.pick([15, 17]));
  const vanity = /^[A-Za-z]+ [A-Za-z]+$/.test(name) && rng.bool(0.7);
  const url = vanity
    ? `${WWW}/${name.toLowerCase().replace(' ', '.')}${rng.bool(0.5) ? `.${rng.int(1, 99)}` : ''}`
    : `${WWW}/profile.php?id=${id}`;
  const picture = imageUrl(rng, '39.30808-1', id, 'cp0_dst-jpg_s32x32');
  return {
    typename: 'User',
    id,
    name,
    shortName: name.split(' ')[0] ?? name,
    url,
    verified: rng.bool(0.08),
    gender: rng.pick(GENDERS),
    avatar32: picture,
    avatar40: picture.replace('s32x32', 's40x40'),
  };
}

// ---------------------------------------------------------------------------------------
// Profiles

export interface Profile {
  spec: AccountSpec;
  id: string;
  /** Registered URL: `/{Vanity}` or `/profile.php?id={id}`. */
  url: string;
  name: string;
  actor: Actor;
  gender: Gender;
  pictures: { small: string; medium: string; large: string };
  cover: Json | null;
  bio: string | null;
  /** `<title>` of its content pages. */
  title: string;
  ogDescription: string;
  collectionId: string;
  /** Newest post time (Unix seconds). */
  since: number;
  /** `profile_header_renderer.user`. */
  header: Json;
  /** `about_app_sections`. */
  about: Json;
  /** `profile_tile_sections`. */
  tiles: Json;
}

const STREETS = ['Front Ave', 'Harbor St', 'Market St', 'Rua Augusta', 'Elm Row', 'Queen St W', 'Congress Ave'];
const NETWORKS: readonly [string, string, string][] = [
  ['PICSHARE', 'PicShare', 'https://picshare.example/'],
  ['VIDTUBE', 'VidTube', 'https://vidtube.example/@'],
  ['MICROBLOG', 'Microblog', 'https://microblog.example/'],
  ['SNAPMSG', 'snapmsg', 'https://www.snapmsg.example/add/'],
];

const peopleName = (name: string): string => name.trim().replace(/\s+/g, '-');

export function buildProfile(seed: string, spec: AccountSpec): Profile {
  const rng = new Rng(seed, `profile:${spec.no}`);
  const id = profileIdOf(spec.no);
  const url = spec.vanity === null ? `${WWW}/profile.php?id=${id}` : `${WWW}/${spec.vanity}`;
  const isPage = spec.kind === 'page';
  const gender: Gender = spec.gender ?? (isPage ? 'NEUTER' : 'UNKNOWN');
  const picture = imageUrl(rng, '39.30808-1', id, 'STP');
  const pictures = {
    small: picture.replace('STP', 'cp0_dst-jpg_s40x40'),
    medium: picture.replace('STP', 'cp0_dst-jpg_s160x160'),
    large: picture.replace('STP', 'dst-jpg_s480x480'),
  };
  const actor: Actor = {
    typename: isPage ? 'Page' : 'User',
    id,
    name: spec.name,
    shortName: isPage ? spec.name : (spec.name.split(' ')[0] ?? spec.name),
    url,
    verified: spec.verified ?? false,
    gender,
    avatar32: picture.replace('STP', 'cp0_dst-jpg_s32x32'),
    avatar40: pictures.small,
  };
  const coverId = opaqueId('cover', spec.no);
  const cover = spec.sparse
    ? null
    : { photo: { id: coverId, image: { uri: imageUrl(rng, '39.30808-6', coverId, 'dst-jpg_s960x960'), width: 1640, height: 624 } } };
  // The bio of the account's person, as on every platform (an id-only profile's person is found by its name).
  const bio = spec.sparse || spec.bioless ? null : personOf(seed, spec.vanity ?? spec.name, spec.flavour).bio;
  const socialBase = spec.vanity === null ? `${WWW}/people/${peopleName(spec.name)}/${id}` : url;

  // Social context (followers, following, others).
  const social: Json[] = [];
  if (!spec.sparse) {
    const followers = isPage ? (spec.posts > 100 ? rng.int(1_000_000, 5_000_000) : rng.int(300, 900_000)) : rng.int(40, 9_000);
    social.push({ text: { text: `${compactCount(followers)} followers` }, uri: `${socialBase}/followers/` });
    if (spec.vanity !== 'lunavoss') {
      social.push({ text: { text: `${compactCount(rng.int(0, 2_000))} following` }, uri: `${socialBase}/following/` });
    }
    if (isPage && rng.bool(0.5)) social.push({ text: { text: `${commas(rng.int(20, 3_000))} reviews` }, uri: `${socialBase}/reviews/` });
  }

  // og:description: likes only on pages.
  let ogDescription: string;
  const place = spec.place ?? null;
  if (isPage) {
    const likes = rng.int(1, 9) === 1 ? 1 : rng.int(150, 250_000);
    const likesLabel = likes === 1 ? '1 like' : likes < 100_000 ? `${commas(likes)} likes` : `${compactCount(likes)} likes`;
    const checkins = place !== null && rng.bool(0.7) ? ` · ${commas(rng.int(10, 20_000))} were here` : '';
    ogDescription = `${spec.name}${place ? `, ${place}` : ''}. ${likesLabel} · ${commas(rng.int(0, 3_000))} talking about this${checkins}. ${bio ?? ''}`.trim();
  } else {
    ogDescription = `${spec.name} is on socialnet.${bio ? ` ${bio}` : ''}`;
  }
  const title = isPage && place ? `${spec.name} | ${place.split(',')[0]} | socialnet` : `${spec.name} | socialnet`;

  const categories = spec.categories ?? [];
  const header: Json = {
    __typename: 'User',
    id,
    name: spec.name,
    alternate_name: spec.alternateName ?? null,
    url,
    gender,
    show_verified_badge_on_profile: spec.verified ?? false,
    profilePicSmall: { uri: pictures.small },
    profilePicMedium: { uri: pictures.medium },
    profilePicLarge: { uri: pictures.large },
    cover_photo: cover,
    delegate_page: isPage
      ? { id: opaqueId('delegate', spec.no), category_name: categories[0] ?? 'Community', is_business_page_active: !spec.inactiveBusiness }
      : null,
    profile_intro_card: spec.sparse ? null : { bio: bio === null ? null : { text: bio } },
    profile_social_context: { content: social },
    profile_plus_transition_path: isPage ? 'PAGE' : 'PROFILE',
  };

  return {
    spec,
    id,
    url,
    name: spec.name,
    actor,
    gender,
    pictures,
    cover,
    bio,
    title,
    ogDescription,
    collectionId: collectionIdOf(spec.no),
    since: 1_767_225_600 - rng.int(0, 30 * 86_400),
    header,
    about: aboutSections(new Rng(seed, `about:${spec.no}`), spec, id),
    tiles: tileSections(new Rng(seed, `tiles:${spec.no}`), spec, id, bio),
  };
}

interface Field {
  type: string;
  title: string;
  subtitle?: string;
  link?: string;
  network?: string;
}

function aboutSections(rng: Rng, spec: AccountSpec, id: string): Json {
  const handle = (spec.vanity ?? spec.name.replace(/[^A-Za-z]/g, '')).toLowerCase() || 'profile';
  const sections: [string, string, Field[]][] = [];
  if (spec.kind === 'page') {
    sections.push(['categories', 'Categories', (spec.categories ?? []).map((category) => ({ type: 'category', title: category }))]);
    const contact: Field[] = [];
    if (spec.place) {
      contact.push({ type: 'address', title: `${rng.int(10, 2999)} ${rng.pick(STREETS)}, ${spec.place}`, link: `${WWW}/maps/place/?id=${opaqueId('place', spec.no)}` });
    }
    contact.push({ type: 'profile_phone', title: `+1 ${rng.int(200, 989)}-555-0${rng.int(100, 199)}` });
    contact.push({ type: 'profile_email', title: `hello@${handle.replace(/\./g, '')}.example` });
    if (spec.posts > 100) contact.push({ type: 'profile_phone', title: `+1 ${rng.int(200, 989)}-555-0${rng.int(100, 199)}` });
    sections.push(['contact_info', 'Contact info', contact]);
    const links: Field[] = [{ type: 'website', title: `${handle.replace(/\./g, '')}.example`, link: `https://${handle.replace(/\./g, '')}.example/` }];
    if (spec.posts > 100) links.push({ type: 'website', title: `shop.${handle}.example`, link: `https://shop.${handle}.example/?ref=sn&lang=en` });
    for (const [network, label, base] of NETWORKS.slice(0, 1 + (spec.no % 3))) {
      const value = network === 'VIDTUBE' ? `@${handle}` : handle;
      links.push({ type: 'social_link', title: value, subtitle: label, link: `${base}${handle}`, network });
    }
    sections.push(['websites_and_social_links', 'Websites and social links', links]);
    const reviews = rng.int(5, 4_000);
    const basic: Field[] = [
      { type: 'rating', title: `${(3 + rng.next() * 2).toFixed(1)} (${commas(reviews)} reviews)`, subtitle: `Based on the opinion of ${commas(reviews)} people` },
      { type: 'price_range', title: rng.pick(['$ · Inexpensive', '$$ · Moderate', '$$$ · Pricey']) },
      { type: 'services', title: 'Outdoor seating · Takeout · Reservations' },
    ];
    sections.push(['basic_info', 'Basic info', basic]);
  } else if (spec.sparse) {
    sections.push(['basic_info', 'Basic info', [{ type: 'gender', title: 'Prefers not to say' }]]);
  } else {
    sections.push(['contact_info', 'Contact info', [{ type: 'profile_email', title: `${handle.replace(/\./g, '')}@mail.example` }]]);
    const [network, label, base] = NETWORKS[spec.no % NETWORKS.length]!;
    sections.push(['websites_and_social_links', 'Websites and social links', [{ type: 'social_link', title: handle, subtitle: label, link: `${base}${handle}`, network }]]);
    sections.push([
      'basic_info',
      'Basic info',
      [
        { type: 'gender', title: spec.gender === 'MALE' ? 'Male' : spec.gender === 'FEMALE' ? 'Female' : 'Prefers not to say' },
        { type: 'languages', title: spec.flavour === 'rtl' ? 'العربية · English' : spec.flavour === 'cjk' ? '日本語 · English' : 'English · Português' },
        { type: 'hometown', title: rng.pick(['Lisbon', 'Osaka', 'Beirut', 'Toronto', 'Austin']) },
      ],
    ]);
  }
  const fieldNode = (field: Field): Json => ({
    field_type: field.type,
    title: { text: field.title },
    subtitle: field.subtitle === undefined ? null : { text: field.subtitle },
    link_url: field.link === undefined ? null : field.type === 'address' ? field.link : shim(rng, field.link),
    icon: icon(rng),
    ...(field.network === undefined ? {} : { social_link_type: field.network }),
  });
  return {
    nodes: [
      {
        id: b64(`app_section:${id}:2327158227`),
        activeCollections: {
          nodes: [
            {
              __typename: 'TimelineAppCollection',
              id: b64(`app_collection:${id}:2327158227:206`),
              name: 'Contact and basic info',
              style_renderer: {
                __typename: 'ProfileAboutFieldSectionsRenderer',
                profile_field_sections: sections.map(([type, title, fields]) => ({
                  field_section_type: type,
                  title: { text: title },
                  profile_fields: { nodes: fields.map(fieldNode) },
                })),
              },
            },
          ],
        },
      },
    ],
  };
}

const HOURS_SUBTITLE: Record<string, string | null> = {
  'Open now': '11:30 AM – 10:00 PM',
  'Closes soon': 'Closes at 9:00 PM',
  'Closed now': 'Opens tomorrow at 10:00 AM',
  'Opens soon': 'Opens at 7:00 AM',
  'Always open': null,
  'Temporarily closed': 'Reopening soon',
  'Permanently closed': null,
};

function tileSections(rng: Rng, spec: AccountSpec, id: string, bio: string | null): Json {
  const item = (type: string, title: string | null, subtitle: string | null = null): Json => ({
    node: {
      timeline_context_item: {
        timeline_context_list_item_type: type,
        renderer: {
          __typename: 'ProfileTimelineContextListItemRenderer',
          context_item: { title: title === null ? null : { text: title, ranges: [] }, subtitle: subtitle === null ? null : { text: subtitle } },
        },
      },
    },
  });
  const items: Json[] = [];
  if (spec.kind === 'page') {
    items.push(item('INTRO_CARD_INFLUENCER_CATEGORY', `Page · ${(spec.categories ?? ['Community'])[0]}`));
    if (spec.place) items.push(item('INTRO_CARD_ADDRESS', spec.place));
    items.push(item('INTRO_CARD_PROFILE_PHONE', `+1 ${rng.int(200, 989)}-555-0${rng.int(100, 199)}`));
    if (spec.hours) items.push(item('INTRO_CARD_BUSINESS_HOURS', spec.hours, HOURS_SUBTITLE[spec.hours] ?? null));
    items.push(item('INTRO_CARD_RATING', `Rating · ${(3 + rng.next() * 2).toFixed(1)} (${commas(rng.int(5, 4_000))} reviews)`));
  } else if (!spec.sparse) {
    items.push(item('INTRO_CARD_CURRENT_CITY', `Lives in ${rng.pick(['Lisbon', 'Osaka', 'Beirut', 'Toronto'])}`));
    items.push(item('INTRO_CARD_WORK', null));
  }
  const views: Json[] = [];
  if (bio !== null) {
    views.push({
      view_style_renderer: {
        __typename: 'ProfileTileViewIntroBioRenderer',
        view: { profile_tile_items: { nodes: [{ node: { profile_status_text: { text: bio } } }] } },
      },
    });
  }
  views.push({ view_style_renderer: { __typename: 'ProfileTileViewContextListRenderer', view: { profile_tile_items: { nodes: items } } } });
  return {
    edges: [
      { node: { id: b64(`profile_tile_section:${id}:intro`), profile_tile_section_type: 'INTRO', profile_tile_views: { nodes: views } } },
      { node: { id: b64(`profile_tile_section:${id}:photos`), profile_tile_section_type: 'PHOTOS', profile_tile_views: { nodes: [] } } },
    ],
  };
}

// ---------------------------------------------------------------------------------------
// Stories

const DAY = 86_400;
const KINDS = ['album', 'photo', 'video', 'link', 'reshare', 'text'] as const;
type StoryKind = (typeof KINDS)[number];

export const postTime = (seed: string, profile: Profile, index: number): number =>
  profile.since - index * DAY - new Rng(seed, `post-time:${profile.spec.no}:${index}`).int(0, DAY / 2);

function storyKind(seed: string, profile: Profile, index: number): StoryKind {
  if (profile.spec.sparse) return 'text';
  const offset = new Rng(seed, `kinds:${profile.spec.no}`).int(0, KINDS.length - 1);
  return KINDS[(index + offset) % KINDS.length]!;
}

const permalinkOf = (profile: Profile, postId: string): string =>
  profile.spec.vanity === null
    ? `${WWW}/permalink.php?story_snid=${postId}&id=${profile.id}`
    : `${profile.url}/posts/${postId}`;

/** Number of top comments shown on post `index` (0 to 2); the newest post always shows 2. */
export function topCommentCount(seed: string, spec: AccountSpec, index: number): number {
  if (index >= spec.posts) return 0;
  if (index === 0) return 2;
  return new Rng(seed, `comment-count:${spec.no}:${index}`).pick([0, 0, 1, 2, 2]);
}

/** Number of replies of top comment `comment` of post `index`. */
export function replyCount(seed: string, spec: AccountSpec, index: number, comment: number): number {
  if (index === 0) return comment === 0 ? spec.firstCommentReplies : (spec.secondCommentReplies ?? 0);
  return new Rng(seed, `reply-count:${spec.no}:${index}:${comment}`).pick([0, 0, 1, 2, 3, 5, 8]);
}

function photoMedia(rng: Rng, postId: string, n: number, key: 'photo_image' | 'viewer_image', flavour: TextFlavour): Json {
  const id = opaqueId('photo', postId, n);
  const [width, height] = rng.pick([[1080, 1080], [1080, 1350], [1080, 720], [960, 1280]] as const);
  return {
    __typename: 'Photo',
    id,
    [key]: { uri: imageUrl(rng, '39.30808-6', id, `dst-jpg_s${width}x${height}`), width, height },
    accessibility_caption: `May be an image of ${rng.sentence(2, flavour === 'mixed' ? 'plain' : flavour).toLowerCase()}`,
  };
}

function videoMedia(rng: Rng, postId: string, owner: string, ownerName: string): Json {
  const id = opaqueId('video', postId);
  const hd = rng.bool(0.8) ? videoUrl(rng, 'hd') : null;
  const sd = rng.bool(0.9) || hd === null ? videoUrl(rng, 'sd') : null;
  const [width, height] = rng.pick([[1280, 720], [1920, 1080], [720, 1280]] as const);
  return {
    __typename: 'Video',
    id,
    owner: { __typename: 'User', id: owner },
    playable_url: sd ?? hd,
    width,
    height,
    length_in_second: rng.int(3_000, 600_000) / 1_000,
    preferred_thumbnail: { image: { uri: imageUrl(rng, '15.5256-10', id, 'dst-jpg_s960x960') } },
    videoDeliveryLegacyFields: { browser_native_hd_url: hd, browser_native_sd_url: sd },
    soundtrack_info: soundtrack(rng, id, ownerName),
  };
}

function soundtrack(rng: Rng, videoId: string, artist: string): Json | null {
  const roll = rng.next();
  if (roll < 0.6) return { soundtrack_id: videoId, track_title: 'Original audio', is_original_audio: true, display_artist: artist };
  if (roll < 0.85) {
    return {
      soundtrack_id: opaqueId('track', videoId),
      track_title: rng.sentence(rng.int(1, 3)),
      is_original_audio: false,
      display_artist: rng.name(),
    };
  }
  return null;
}

function shareAttachment(rng: Rng, flavour: TextFlavour, postId: string): Json {
  const domain = rng.pick(['citywire.example', 'foodguide.example', 'dailyread.example', 'makers.example']);
  const target = `https://${domain}/${rng.sentence(3).toLowerCase().replace(/ /g, '-')}${rng.bool(0.5) ? '?utm_source=socialnet&ref=a%26b' : ''}`;
  const imageId = opaqueId('link-image', postId);
  return {
    styles: {
      __typename: 'StoryAttachmentShareStyleRenderer',
      attachment: {
        url: shim(rng, target),
        title_with_entities: { text: rng.sentence(rng.int(4, 9), flavour) },
        description: rng.bool(0.75) ? { text: rng.sentence(rng.int(6, 14), flavour) } : null,
        source: rng.bool(0.8) ? { text: domain } : null,
        media: rng.bool(0.7)
          ? { __typename: 'GenericAttachmentMedia', image: { uri: imageUrl(rng, '45.1600-4', imageId, 'dst-jpg_s1200x630'), width: 1200, height: 630 } }
          : null,
      },
    },
  };
}

interface StoryCounts {
  reactions: number;
  comments: Json[];
  commentTotal: number;
  shares: number;
  views: number | null;
  omitEdges?: boolean;
}

function storyShell(rng: Rng, actor: Actor, postId: string, permalink: string, time: number, message: string | null, attachments: Json[], counts: StoryCounts, badge: 'verified' | 'none' | 'absent'): Json {
  const id = storyRelayId(actor.id, postId);
  const content =
    message === null
      ? rng.bool(0.5)
        ? null
        : { story: { id, message: null } }
      : { story: { id, message: { text: message, ranges: [] } } };
  return {
    __typename: 'Story',
    id,
    post_id: postId,
    creation_time: time,
    permalink_url: permalink,
    to: null,
    actors: [{ __typename: 'User', id: actor.id, name: actor.name, url: actor.url }],
    attached_story: null,
    attachments,
    comet_sections: {
      content,
      context_layout: {
        story: {
          comet_sections: {
            actor_photo: { story: { actors: [{ id: actor.id, profile_picture: { uri: actor.avatar40, width: 40, height: 40 } }] } },
            title:
              badge === 'absent'
                ? null
                : { story: { comet_sections: { badge: badge === 'verified' ? { __typename: 'CometFeedUserVerifiedBadgeStrategy', is_verified: true } : null } } },
            metadata: [{ __typename: 'CometFeedStoryMinimizedTimestampStrategy', story: { creation_time: time, url: permalink } }],
          },
        },
      },
      feedback: {
        story: {
          story_ufi_container: {
            story: {
              feedback_context: {
                feedback_target_with_context: {
                  comet_ufi_summary_and_actions_renderer: {
                    feedback: {
                      id: postFeedbackId(postId),
                      reaction_count: { count: counts.reactions, is_empty: counts.reactions === 0 },
                      i18n_reaction_count: compactCount(counts.reactions),
                      top_reactions: topReactions(rng, counts.reactions),
                      comment_rendering_instance: {
                        comments: counts.omitEdges
                          ? { total_count: counts.commentTotal }
                          : { total_count: counts.commentTotal, edges: counts.comments.map((node) => ({ node })) },
                      },
                      share_count: { count: counts.shares, is_empty: counts.shares === 0 },
                      i18n_share_count: compactCount(counts.shares),
                      video_view_count: counts.views,
                      i18n_video_view_count: counts.views === null ? null : compactCount(counts.views),
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
    __isFeedUnit: 'Story',
    tracking: `{"top_level_post_id":"${postId}","content_owner_id_new":"${actor.id}"}`,
  };
}

/** Story `index` of the profile's timeline (0 = newest). */
export function storyNode(seed: string, profile: Profile, index: number): Json {
  const spec = profile.spec;
  const rng = new Rng(seed, `post:${spec.no}:${index}`);
  const postId = postIdOf('post', spec.no, index);
  const time = postTime(seed, profile, index);
  const kind = storyKind(seed, profile, index);
  const permalink = permalinkOf(profile, postId);
  const withText = kind === 'text' || kind === 'link' || kind === 'reshare' || rng.bool(0.8);
  const message = withText ? text(rng, spec.flavour, 4, 16) : null;

  const attachments: Json[] = [];
  if ((kind === 'photo' || kind === 'album' || kind === 'video') && rng.bool(0.1)) {
    attachments.push({ styles: { __typename: 'StoryAttachmentUnavailableStyleRenderer', attachment: { title: { text: 'This content isn\'t available' } } } });
  }
  let views: number | null = null;
  if (kind === 'photo') {
    attachments.push({ styles: { __typename: 'StoryAttachmentPhotoStyleRenderer', attachment: { media: photoMedia(rng, postId, 0, 'photo_image', spec.flavour) } } });
  } else if (kind === 'album') {
    const shown = rng.int(2, 4);
    const nodes = Array.from({ length: shown }, (_, n) => ({ media: photoMedia(rng, postId, n, 'viewer_image', spec.flavour) }));
    attachments.push({
      styles: {
        __typename: 'StoryAttachmentAlbumStyleRenderer',
        attachment: { all_subattachments: { count: shown + (rng.bool(0.3) ? rng.int(1, 6) : 0), nodes } },
      },
    });
  } else if (kind === 'video') {
    attachments.push({ styles: { __typename: 'StoryAttachmentVideoStyleRenderer', attachment: { media: videoMedia(rng, postId, profile.id, profile.name) } } });
    views = rng.int(50, 3_000_000);
  } else if (kind === 'link') {
    attachments.push(shareAttachment(rng, spec.flavour, postId));
  }

  const shown = topCommentCount(seed, spec, index);
  const comments = Array.from({ length: shown }, (_, comment) => commentNode(seed, profile, index, comment, -1));
  const commentTotal = shown + (rng.bool(0.8) ? rng.int(0, 300) : 0);
  const story = storyShell(
    rng,
    profile.actor,
    postId,
    permalink,
    time,
    message,
    attachments,
    {
      reactions: rng.int(0, 20_000),
      comments,
      commentTotal,
      shares: rng.int(0, 900),
      views,
      omitEdges: shown === 0 && rng.bool(0.5),
    },
    spec.sparse && index % 2 === 1 ? 'absent' : profile.actor.verified ? 'verified' : 'none',
  );
  if (kind === 'reshare') story.attached_story = originalStory(seed, profile, index);
  return story;
}

/** The original of a reshare: another actor's story, with its own counts and no comment edges. */
function originalStory(seed: string, profile: Profile, index: number): Json {
  const rng = new Rng(seed, `original:${profile.spec.no}:${index}`);
  const author = someone(rng, profile.spec.flavour);
  const postId = opaqueId('original', profile.spec.no, index);
  const vanityUrl = !author.url.includes('profile.php');
  const permalink = vanityUrl ? `${author.url}/posts/${postId}` : `${WWW}/permalink.php?story_snid=${postId}&id=${author.id}`;
  const attachments = rng.bool(0.6)
    ? [shareAttachment(rng, profile.spec.flavour, postId)]
    : [{ styles: { __typename: 'StoryAttachmentPhotoStyleRenderer', attachment: { media: photoMedia(rng, postId, 0, 'photo_image', profile.spec.flavour) } } }];
  const time = postTime(seed, profile, index) - rng.int(3_600, 5 * DAY);
  return storyShell(
    rng,
    author,
    postId,
    permalink,
    time,
    text(rng, profile.spec.flavour, 5, 14),
    attachments,
    { reactions: rng.int(0, 90_000), comments: [], commentTotal: rng.int(0, 900), shares: rng.int(0, 3_000), views: null },
    author.verified ? 'verified' : 'none',
  );
}

// ---------------------------------------------------------------------------------------
// Comments and replies

const commentTime = (seed: string, profile: Profile, index: number, comment: number): number =>
  postTime(seed, profile, index) + (comment + 1) * 1_800 + new Rng(seed, `comment-time:${profile.spec.no}:${index}:${comment}`).int(0, 1_500);

/**
 * Top comment `comment` of post `index` (`reply` = -1), or its reply number `reply` (oldest
 * first).
 */
export function commentNode(seed: string, profile: Profile, index: number, comment: number, reply: number): Json {
  const spec = profile.spec;
  const rng = new Rng(seed, `comment:${spec.no}:${index}:${comment}:${reply}`);
  const postId = postIdOf('post', spec.no, index);
  const topLegacy = legacyIdOf(postId, comment, -1);
  const legacy = reply < 0 ? topLegacy : legacyIdOf(postId, comment, reply);
  const isReply = reply >= 0;
  const byOwner = isReply ? rng.bool(0.2) : rng.bool(0.05);
  const author = byOwner ? profile.actor : someone(rng, spec.flavour);
  const time = isReply ? commentTime(seed, profile, index, comment) + (reply + 1) * 600 + rng.int(0, 500) : commentTime(seed, profile, index, comment);

  const attachments: Json[] = [];
  let body: Json | null = { text: rng.sentence(rng.int(2, 14), spec.flavour), ranges: [] };
  const roll = rng.next();
  if (roll < (isReply ? 0.15 : 0.06)) {
    body = null;
    attachments.push(commentAttachment(rng, 'sticker', legacy));
  } else if (isReply && roll < 0.45) {
    attachments.push(commentAttachment(rng, rng.pick(['photo', 'gif', 'video', 'link', 'unknown'] as const), legacy));
  }
  const permalink = permalinkOf(profile, postId);
  const commentUrl = `${permalink}${permalink.includes('?') ? '&' : '?'}comment_id=${topLegacy}`;
  const replies = isReply ? 0 : replyCount(seed, spec, index, comment);
  const reactions = rng.bool(0.25) ? 0 : rng.int(1, isReply ? 200 : 3_000);
  const feedbackId = commentFeedbackId(postId, legacy);
  return {
    __typename: 'Comment',
    id: commentRelayId(postId, legacy),
    legacy_snid: legacy,
    depth: isReply ? 1 : 0,
    created_time: time,
    body,
    author: {
      __typename: author.typename,
      id: author.id,
      name: author.name,
      short_name: author.shortName,
      url: author.url,
      is_verified: author.verified,
      gender: author.gender,
      profile_picture_depth_0: { uri: author.avatar32 },
    },
    url: isReply ? `${commentUrl}&reply_comment_id=${legacy}` : commentUrl,
    is_author_original_poster: byOwner,
    attachments,
    feedback: {
      id: feedbackId,
      expansion_info: { expansion_token: expansionTokenOf(feedbackId) },
      replies_fields: { total_count: replies, count: replies },
      reactors: { count: reactions, count_reduced: compactCount(reactions) },
      top_reactions: topReactions(rng, reactions),
    },
    comment_action_links: [],
  };
}

function commentAttachment(rng: Rng, type: 'sticker' | 'photo' | 'gif' | 'video' | 'link' | 'unknown', legacy: string): Json {
  const id = opaqueId('comment-media', legacy);
  const image = (width: number, height: number, family = '39.30808-6') => ({ uri: imageUrl(rng, family, id, `dst-jpg_s${width}x${height}`), width, height });
  switch (type) {
    case 'sticker':
      return { style_type_renderer: { __typename: 'CommentAttachmentStickerStyleRenderer', attachment: { media: { __typename: 'Sticker', id, image: image(120, 120, '39.1997-6') } } } };
    case 'photo':
      return { style_type_renderer: { __typename: 'CommentAttachmentPhotoStyleRenderer', attachment: { media: { __typename: 'Photo', id, image: image(960, 720) } } } };
    case 'gif':
      return {
        style_type_renderer: { __typename: 'CommentAttachmentAnimatedImageStyleRenderer', attachment: { media: { __typename: 'GenericAttachmentMedia', id, image: image(480, 270) } } },
      };
    case 'video':
      return {
        style_type_renderer: {
          __typename: 'CommentAttachmentVideoStyleRenderer',
          attachment: { media: { __typename: 'Video', id, playable_url: videoUrl(rng, 'sd'), image: image(640, 360, '15.5256-10') } },
        },
      };
    case 'link':
      return {
        style_type_renderer: {
          __typename: 'CommentAttachmentShareStyleRenderer',
          attachment: { url: shim(rng, `https://dailyread.example/${rng.chars(8)}?a=1&b=2`), title_with_entities: { text: rng.sentence(4) } },
        },
      };
    default:
      return { style_type_renderer: { __typename: 'CommentAttachmentFallbackStyleRenderer', attachment: { title: { text: 'Attachment unavailable' } } } };
  }
}

// ---------------------------------------------------------------------------------------
// Reels

export function reelEdge(seed: string, profile: Profile, index: number): Json {
  const spec = profile.spec;
  const rng = new Rng(seed, `reel:${spec.no}:${index}`);
  const postId = postIdOf('reel', spec.no, index);
  const videoId = postIdOf('video', spec.no, index);
  const time = profile.since - index * 3 * DAY - rng.int(0, DAY);
  const [width, height] = rng.pick([[720, 1280], [1080, 1920], [720, 1280]] as const);
  const caption = spec.sparse || rng.bool(0.15) ? null : `${rng.sentence(rng.int(2, 8), spec.flavour)} #${rng.sentence(1).toLowerCase()}`;
  const hd = spec.sparse || rng.bool(0.15) ? null : videoUrl(rng, 'hd');
  const reactions = rng.int(0, 200_000);
  return {
    cursor: cursorOf('reels', profile.collectionId, index + 1),
    profile_reel_node: {
      id: reelNodeId(videoId),
      node: {
        __typename: 'Story',
        id: storyRelayId(profile.id, postId),
        post_id: postId,
        creation_time: time,
        message: caption === null ? null : { text: caption },
        video: { id: videoId, owner: { id: profile.id } },
        attachments: [{ media: { __typename: 'Video', id: videoId, owner: { __typename: 'User', id: profile.id, name: profile.name } } }],
        short_form_video_context: {
          video: { id: videoId },
          shareable_url: `${WWW}/reel/${videoId}`,
          play_count_reduced: compactCount(rng.int(100, 5_000_000)),
          video_owner: {
            __typename: 'User',
            id: profile.id,
            name: profile.name,
            url: profile.url,
            is_verified: profile.actor.verified,
            profile_picture: { uri: profile.pictures.small },
          },
          playback_video: {
            id: videoId,
            width,
            height,
            length_in_second: rng.int(3_000, 90_000) / 1_000,
            browser_native_hd_url: hd,
            browser_native_sd_url: videoUrl(rng, 'sd'),
            image: { uri: imageUrl(rng, '15.5256-10', videoId, `dst-jpg_s${width}x${height}`) },
          },
          soundtrack_info: spec.sparse ? null : soundtrack(rng, videoId, profile.name),
        },
        feedback: {
          id: postFeedbackId(postId),
          reaction_count: { count: reactions },
          i18n_reaction_count: compactCount(reactions),
          comment_rendering_instance: { comments: { total_count: rng.int(0, 5_000) } },
          i18n_share_count: compactCount(rng.int(0, 40_000)),
        },
      },
    },
  };
}

// ---------------------------------------------------------------------------------------
// Page sizes (the upstream's choice, stable per position)

/** Stories on one timeline page from `start`: 1 to `count`. */
export function timelinePageSize(seed: string, spec: AccountSpec, start: number, count: number): number {
  const roll = new Rng(seed, `timeline-size:${spec.no}:${start}`).int(0, 3);
  return Math.max(1, count - (roll === 2 ? 1 : roll === 3 ? 2 : 0));
}

/** Stories the first NDJSON line carries (the rest are stream lines). */
export const firstLineEdges = (seed: string, spec: AccountSpec, start: number): number =>
  new Rng(seed, `first-line:${spec.no}:${start}`).int(0, 2);

/** Reels on one page from `start` (the reels tab's first batch: `count` = 10). */
export function reelsPageSize(seed: string, spec: AccountSpec, start: number, count: number): number {
  return Math.max(1, count - new Rng(seed, `reels-size:${spec.no}:${start}`).int(0, 2));
}

/** Replies on one page from `start`: 2 to 10. */
export const repliesPageSize = (seed: string, spec: AccountSpec, start: number): number => new Rng(seed, `replies-size:${spec.no}:${start}`).int(2, 10);
