// The profile mapping (upstream/snapmsg.md 4.7 to 4.9): one line per API field, its upstream
// path and its conversion, as the chapter's tables give them.
import { parseJson } from './html.ts';
import {
  bool,
  firstOf,
  int,
  isObject,
  list,
  ms,
  need,
  num,
  object,
  opt,
  required,
  sec,
  type Src,
  str,
  unprefixed,
  unrecognised,
  val,
} from './proto.ts';

const CATEGORY_PREFIX = /^public-profile-category-v[0-9]+-/;
const SUBCATEGORY_PREFIX = /^public-profile-subcategory-v[0-9]+-/;

// ------------------------------------------------------------------ element mappings

/** SNAP (4.7): `S` = one entry of a `snapList`. */
export function snap(S: Src) {
  const urls = S.get('snapUrls');
  const location = S.get('snapLocation');
  return {
    index: int(S.get('snapIndex')),
    mediaType: int(S.get('snapMediaType')),
    mediaUrl: need(urls.get('mediaUrl')),
    previewUrl: need(firstOf(val(urls.get('mediaPreviewUrl')), urls.get('mediaUrl'))),
    overlayUrl: opt(val(urls.get('overlayUrl'))),
    timestamp: required(val(S.get('timestampInSec')), sec),
    title: opt(val(S.get('snapTitle'))),
    lat: num(location.get('lat')),
    lng: num(location.get('lng')),
  };
}

/** HIGHLIGHT (4.7): `H` = one entry of `curatedHighlights` or `spotlightHighlights`. */
export function highlight(H: Src) {
  const snaps = list(H.get('snapList')).map(snap);
  return {
    id: need(firstOf(val(H.get('highlightId')), val(H.get('storyId')))),
    storyId: opt(val(H.get('storyId'))),
    title: opt(val(H.get('storyTitle'))),
    subtitle: opt(val(H.get('storySubtitle'))),
    emoji: opt(val(H.get('storyEmoji'))),
    canonicalUrlSuffix: opt(val(H.get('canonicalUrlSuffix'))),
    thumbnailUrl: str(val(H.get('thumbnailUrl'))),
    snapCount: snaps.length,
    snaps,
  };
}

/** STORY (4.8): null when there is no story or its `snapList` is empty. */
export function story(story: Src) {
  const snaps = list(story.get('snapList')).map(snap);
  if (story.absent || snaps.length === 0) return null;
  return {
    id: opt(val(story.get('storyId'))),
    thumbnailUrl: opt(val(story.get('thumbnailUrl'))),
    snapCount: snaps.length,
    snaps,
  };
}

/** LENS (4.7): `L` = one entry of `PP.lenses`. */
export const lens = (L: Src) => ({
  id: need(L.get('lensId')),
  name: str(L.get('lensName')),
  creatorDisplayName: str(L.get('lensCreatorDisplayName')),
  creatorUsername: opt(L.get('lensCreatorUsername')),
  previewImageUrl: str(L.get('lensPreviewImageUrl')),
  iconUrl: str(L.get('iconUrl')),
  unlockUrl: str(L.get('unlockUrl')),
  previewVideoUrl: opt(L.get('lensPreviewVideoUrl')),
  scannableImageUrl: opt(L.get('scannableImageUrl')),
  isOfficial: bool(L.get('isOfficialLens')),
  updatedAt: ms(L.get('lastUpdatedTimestampMs')),
});

/** Related account (4.8): `R` = `entry.publicProfileInfo`. */
export function relatedAccount(entry: Src) {
  const R = entry.get('publicProfileInfo');
  return {
    username: need(R.get('username')),
    displayName: str(R.get('title')),
    profilePictureUrl: opt(R.get('profilePictureUrl')),
    subscriberCount: int(R.get('subscriberCount')),
    badge: int(R.get('badge')),
  };
}

// ------------------------------------------------------------------ the profile

/** `data.profile` of a public profile (4.7). `PP` = `props.pageProps`. */
function publicProfile(PP: Src, sameAsLinks: string[]) {
  const P = object(PP.get('userProfile').get('publicProfileInfo'));
  const lenses = list(PP.get('lenses')).map(lens);
  const curatedHighlights = list(PP.get('curatedHighlights')).map(highlight);
  const spotlightHighlights = list(PP.get('spotlightHighlights')).map(highlight);
  return {
    profileType: 'publicProfileInfo',
    username: need(P.get('username')),
    displayName: str(P.get('title')),
    bio: str(P.get('bio')),
    address: str(P.get('address')),
    websiteUrl: opt(P.get('websiteUrl')),
    profilePictureUrl: str(P.get('profilePictureUrl')),
    snapcodeImageUrl: str(firstOf(P.get('snapcodeImageUrl'), PP.get('pageLinks').get('snapcodeImageUrl'))),
    squareHeroImageUrl: opt(P.get('squareHeroImageUrl')),
    subscriberCount: int(P.get('subscriberCount')),
    badge: int(P.get('badge')),
    isOfficial: bool(P.get('isOfficial')),
    hasStory: bool(P.get('hasStory')),
    hasCuratedHighlights: bool(P.get('hasCuratedHighlights')),
    hasSpotlightHighlights: bool(P.get('hasSpotlightHighlights')),
    category: unprefixed(P.get('categoryStringId'), CATEGORY_PREFIX),
    subcategory: unprefixed(P.get('subcategoryStringId'), SUBCATEGORY_PREFIX),
    publisherType: opt(P.get('publisherType')),
    primaryColor: opt(P.get('primaryColor')),
    createdAt: ms(P.get('creationTimestampMs')),
    updatedAt: ms(P.get('lastUpdateTimestampMs')),
    businessProfileId: str(P.get('businessProfileId')),
    hostUserId: str(P.get('hostUserId')),
    bitmoji3dUrl: opt(P.get('avatar3d').get('avatarImage').get('url')),
    canonicalUrl: need(PP.get('pageLinks').get('canonicalUrl')),
    previewImageUrl: str(PP.get('linkPreview').get('ogImage').get('url')),
    relatedAccounts: list(P.get('relatedAccountsInfo')).map(relatedAccount),
    sameAsLinks,
    story: story(PP.get('story')),
    lenses,
    curatedHighlights,
    spotlightHighlights,
    counts: {
      lenses: lenses.length,
      curatedHighlights: curatedHighlights.length,
      spotlightHighlights: spotlightHighlights.length,
    },
  };
}

/** `data.profile` of an existing account without a public profile (4.9). `U` = `userInfo`. */
function userInfoProfile(PP: Src) {
  const U = object(PP.get('userProfile').get('userInfo'));
  return {
    profileType: 'userInfo',
    username: need(U.get('username')),
    displayName: str(U.get('displayName')),
    bio: '',
    address: '',
    websiteUrl: null,
    profilePictureUrl: '',
    snapcodeImageUrl: str(firstOf(U.get('snapcodeImageUrl'), PP.get('pageLinks').get('snapcodeImageUrl'))),
    squareHeroImageUrl: null,
    subscriberCount: 0,
    badge: 0,
    isOfficial: false,
    hasStory: false,
    hasCuratedHighlights: false,
    hasSpotlightHighlights: false,
    category: null,
    subcategory: null,
    publisherType: null,
    primaryColor: null,
    createdAt: null,
    updatedAt: null,
    businessProfileId: '',
    hostUserId: '',
    bitmoji3dUrl: opt(U.get('avatar3d').get('avatarImage').get('url')),
    canonicalUrl: need(PP.get('pageLinks').get('canonicalUrl')),
    previewImageUrl: str(PP.get('linkPreview').get('ogImage').get('url')),
    relatedAccounts: [],
    sameAsLinks: [],
    story: null,
    lenses: [],
    curatedHighlights: [],
    spotlightHighlights: [],
    counts: { lenses: 0, curatedHighlights: 0, spotlightHighlights: 0 },
  };
}

/** Maps a profile page's `__NEXT_DATA__` (already checked not to be an error page). */
export function mapProfile(nextData: Src, jsonLd: readonly string[]): Record<string, unknown> {
  const PP = object(nextData.get('props').get('pageProps'));
  const userProfile = object(PP.get('userProfile'));
  const kind = userProfile.get('$case');
  switch (kind.value) {
    case 'publicProfileInfo':
      return publicProfile(PP, sameAsLinks(jsonLd));
    case 'userInfo':
      return userInfoProfile(PP);
    default:
      return unrecognised(
        kind.absent ? `${kind.path} is missing` : `${kind.path} is ${JSON.stringify(kind.value)}, not a known profile kind`,
      );
  }
}

// ------------------------------------------------------------------ JSON-LD (4.6)

/** `mainEntity.sameAs` of the first `ProfilePage` object among the JSON-LD blocks; `[]` when none. */
export function sameAsLinks(blocks: readonly string[]): string[] {
  for (const block of blocks) {
    const page = candidates(parseJson(block)).find(isProfilePage);
    if (!page) continue;
    const sameAs = isObject(page.mainEntity) ? page.mainEntity.sameAs : undefined;
    if (typeof sameAs === 'string') return [sameAs];
    return Array.isArray(sameAs) ? sameAs.filter((link): link is string => typeof link === 'string') : [];
  }
  return [];
}

/** The objects of a JSON-LD block: itself, array members and `@graph` members, in order. */
function candidates(value: unknown): Record<string, unknown>[] {
  if (Array.isArray(value)) return value.flatMap(candidates);
  if (!isObject(value)) return [];
  return [value, ...candidates(value['@graph'])];
}

function isProfilePage(node: Record<string, unknown>): boolean {
  const type = node['@type'];
  return type === 'ProfilePage' || (Array.isArray(type) && type.includes('ProfilePage'));
}
