// The snapmsg mappings, line by line as the tables of README.md, "Mapping", give them:
// `PP` = `props.pageProps`, `P` = `PP.userProfile.publicProfileInfo`, `U` =
// `PP.userProfile.userInfo`; `.value` reads a protobuf wrapper.
import { profilePageSameAs } from '../shared/json-ld.ts';
import { boolean, root, string, text, type Node } from '../shared/read.ts';
import { double, int64, msTime, secTime } from './proto.ts';
import type {
  SnapmsgComment,
  SnapmsgHighlight,
  SnapmsgLens,
  SnapmsgProfile,
  SnapmsgRelatedAccount,
  SnapmsgSnap,
  SnapmsgStory,
} from './schema.ts';

/** `public-profile-category-v3-creator` → `creator`; a value without the prefix is copied; `""` → null. */
function withoutPrefix(value: string | null, prefix: RegExp): string | null {
  const stripped = value?.replace(prefix, '') ?? '';
  return stripped === '' ? null : stripped;
}

const CATEGORY_PREFIX = /^public-profile-category-v[0-9]+-/;
const SUBCATEGORY_PREFIX = /^public-profile-subcategory-v[0-9]+-/;

// ------------------------------------------------------------------ profile elements

/** SNAP: `S` = one entry of a `snapList`. */
export const snap = (S: Node): SnapmsgSnap => ({
  index: S.orEmpty('snapIndex', int64),
  mediaType: S.orEmpty('snapMediaType', int64),
  mediaUrl: S.get('snapUrls.mediaUrl', text),
  previewUrl: S.orNull('snapUrls.mediaPreviewUrl.value', text) ?? S.get('snapUrls.mediaUrl', text),
  overlayUrl: S.orNull('snapUrls.overlayUrl.value', text),
  timestamp: S.get('timestampInSec.value', secTime),
  title: S.orNull('snapTitle.value', text),
  lat: S.orNull('snapLocation.lat', double),
  lng: S.orNull('snapLocation.lng', double),
});

/** HIGHLIGHT: `H` = one entry of `PP.curatedHighlights` or `PP.spotlightHighlights`. */
export function highlight(H: Node): SnapmsgHighlight {
  const snaps = H.listOrEmpty('snapList').map(snap);
  return {
    id: H.orNull('highlightId.value', text) ?? H.get('storyId.value', text),
    storyId: H.orNull('storyId.value', text),
    title: H.orNull('storyTitle.value', text),
    subtitle: H.orNull('storySubtitle.value', text),
    emoji: H.orNull('storyEmoji.value', text),
    canonicalUrlSuffix: H.orNull('canonicalUrlSuffix.value', text),
    thumbnailUrl: H.orEmpty('thumbnailUrl.value', string),
    snapCount: snaps.length,
    snaps,
  };
}

/** STORY: `PP.story`; null when it is absent or its `snapList` is empty. */
export function story(PP: Node): SnapmsgStory | null {
  const story = PP.nodeOrNull('story');
  const snaps = story?.listOrEmpty('snapList').map(snap) ?? [];
  if (story === null || snaps.length === 0) return null;
  return {
    id: story.orNull('storyId.value', text),
    thumbnailUrl: story.orNull('thumbnailUrl.value', text),
    snapCount: snaps.length,
    snaps,
  };
}

/** LENS: `L` = one entry of `PP.lenses`. */
export const lens = (L: Node): SnapmsgLens => ({
  id: L.get('lensId', text),
  name: L.orEmpty('lensName', string),
  creatorDisplayName: L.orEmpty('lensCreatorDisplayName', string),
  creatorUsername: L.orNull('lensCreatorUsername', text),
  previewImageUrl: L.orEmpty('lensPreviewImageUrl', string),
  iconUrl: L.orEmpty('iconUrl', string),
  unlockUrl: L.orEmpty('unlockUrl', string),
  previewVideoUrl: L.orNull('lensPreviewVideoUrl', text),
  scannableImageUrl: L.orNull('scannableImageUrl', text),
  isOfficial: L.orEmpty('isOfficialLens', boolean),
  updatedAt: L.orNull('lastUpdatedTimestampMs', msTime),
});

/** Related account: `R` = `entry.publicProfileInfo`, one entry of `P.relatedAccountsInfo`. */
export function relatedAccount(entry: Node): SnapmsgRelatedAccount {
  const R = entry.at('publicProfileInfo');
  return {
    username: R.get('username', text),
    displayName: R.orEmpty('title', string),
    profilePictureUrl: R.orNull('profilePictureUrl', text),
    subscriberCount: R.orEmpty('subscriberCount', int64),
    badge: R.orEmpty('badge', int64),
  };
}

// ------------------------------------------------------------------ the profile

/** `data.profile` of a public profile. */
function publicProfile(PP: Node, sameAsLinks: string[]): SnapmsgProfile {
  const P = PP.node('userProfile.publicProfileInfo');
  const lenses = PP.listOrEmpty('lenses').map(lens);
  const curatedHighlights = PP.listOrEmpty('curatedHighlights').map(highlight);
  const spotlightHighlights = PP.listOrEmpty('spotlightHighlights').map(highlight);
  return {
    profileType: 'publicProfileInfo',
    username: P.get('username', text),
    displayName: P.orEmpty('title', string),
    bio: P.orEmpty('bio', string),
    address: P.orEmpty('address', string),
    websiteUrl: P.orNull('websiteUrl', text),
    profilePictureUrl: P.orEmpty('profilePictureUrl', string),
    snapcodeImageUrl: P.orNull('snapcodeImageUrl', text) ?? PP.orEmpty('pageLinks.snapcodeImageUrl', string),
    squareHeroImageUrl: P.orNull('squareHeroImageUrl', text),
    subscriberCount: P.orEmpty('subscriberCount', int64),
    badge: P.orEmpty('badge', int64),
    isOfficial: P.orEmpty('isOfficial', boolean),
    hasStory: P.orEmpty('hasStory', boolean),
    hasCuratedHighlights: P.orEmpty('hasCuratedHighlights', boolean),
    hasSpotlightHighlights: P.orEmpty('hasSpotlightHighlights', boolean),
    category: withoutPrefix(P.orNull('categoryStringId', text), CATEGORY_PREFIX),
    subcategory: withoutPrefix(P.orNull('subcategoryStringId', text), SUBCATEGORY_PREFIX),
    publisherType: P.orNull('publisherType', text),
    primaryColor: P.orNull('primaryColor', text),
    createdAt: P.orNull('creationTimestampMs', msTime),
    updatedAt: P.orNull('lastUpdateTimestampMs', msTime),
    businessProfileId: P.orEmpty('businessProfileId', string),
    hostUserId: P.orEmpty('hostUserId', string),
    bitmoji3dUrl: P.orNull('avatar3d.avatarImage.url', text),
    canonicalUrl: PP.get('pageLinks.canonicalUrl', text),
    previewImageUrl: PP.orEmpty('linkPreview.ogImage.url', string),
    relatedAccounts: P.listOrEmpty('relatedAccountsInfo').map(relatedAccount),
    sameAsLinks,
    story: story(PP),
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

/** `data.profile` of an existing account without a public profile. */
function userInfoProfile(PP: Node): SnapmsgProfile {
  const U = PP.node('userProfile.userInfo');
  return {
    profileType: 'userInfo',
    username: U.get('username', text),
    displayName: U.orEmpty('displayName', string),
    bio: '',
    address: '',
    websiteUrl: null,
    profilePictureUrl: '',
    snapcodeImageUrl: U.orNull('snapcodeImageUrl', text) ?? PP.orEmpty('pageLinks.snapcodeImageUrl', string),
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
    bitmoji3dUrl: U.orNull('avatar3d.avatarImage.url', text),
    canonicalUrl: PP.get('pageLinks.canonicalUrl', text),
    previewImageUrl: PP.orEmpty('linkPreview.ogImage.url', string),
    relatedAccounts: [],
    sameAsLinks: [],
    story: null,
    lenses: [],
    curatedHighlights: [],
    spotlightHighlights: [],
    counts: { lenses: 0, curatedHighlights: 0, spotlightHighlights: 0 },
  };
}

/** `data.profile` from a profile page's `__NEXT_DATA__` (not an error page) and JSON-LD blocks. */
export function mapProfile(nextData: Node, jsonLd: readonly string[]): SnapmsgProfile {
  const PP = nextData.node('props.pageProps');
  const kind = PP.node('userProfile').get('$case', string);
  if (kind === 'publicProfileInfo') return publicProfile(PP, profilePageSameAs(jsonLd));
  if (kind === 'userInfo') return userInfoProfile(PP);
  throw PP.at('userProfile.$case').unrecognised(`${JSON.stringify(kind)} is not a known profile kind`);
}

// ------------------------------------------------------------------ Spotlight comments

/** Comment: `C` = one entry of `comments`. */
export function comment(C: Node): SnapmsgComment {
  const timestamp = C.get('createTimestampMs', msTime);
  return {
    id: C.get('commentId', text),
    text: C.orEmpty('text', string),
    authorDisplayName: C.orNull('author.displayName.value', text) ?? C.orEmpty('author.username', string),
    authorAvatarUrl: C.orEmpty('author.avatarUrl.value', string),
    likeCount: C.orEmpty('likeCount', int64),
    replyCount: C.orEmpty('replyCount', int64),
    timestamp,
    updatedAt: C.orNull('updateTimestampMs', msTime) ?? timestamp,
    rankingScore: C.orEmpty('rankingScore', double),
  };
}

/** What the Spotlight page says about the requested story's comments. */
export type SpotlightComments = { kind: 'missing' } | { kind: 'disabled' } | { kind: 'enabled'; contextId: string };

/**
 * The element of `PP.spotlightFeed.spotlightStories` whose `story.storyId.value` is the requested
 * id exactly, and its `commentsInfo`.
 */
export function spotlightComments(nextData: Node, spotlightId: string): SpotlightComments {
  const stories = nextData.list('props.pageProps.spotlightFeed.spotlightStories');
  const element = stories.find((entry) => entry.at('story.storyId.value').value === spotlightId);
  if (!element) return { kind: 'missing' };
  const info = element.nodeOrNull('commentsInfo');
  if (info === null) return { kind: 'disabled' };
  const contextId = info.orNull('contextId', text);
  if (!info.orEmpty('isCommentingEnabled', boolean) || contextId === null) return { kind: 'disabled' };
  return { kind: 'enabled', contextId };
}

/** One comments response mapped: the comments in upstream order, and the next upstream cursor. */
export function mapCommentsPage(response: unknown): { comments: SnapmsgComment[]; nextCursor: string | null } {
  const R = root(response, 'comments response').node('');
  if (R.has('error')) throw R.at('error').unrecognised('the comments response is an error, not a list of comments');
  const comments = R.listOrEmpty('comments').map(comment);
  const cursor = R.orNull('nextCursor.value', text);
  return { comments, nextCursor: R.orEmpty('hasMore', boolean) && cursor !== null ? cursor : null };
}

/** The `error.code` of a comments error body, or null when it has none. */
export function errorCode(response: unknown): string | null {
  const code = root(response, 'comments error').at('error.code').value;
  return typeof code === 'string' ? code : null;
}
