// The data schemas of the snapmsg endpoints, and the types the mappings return.
import { Type, type Static } from 'typebox';
import { Bool, DateTime, Int, NStr, Nullable, Obj, Str } from '../../endpoints/schemas/common.ts';

/** One snap of a story or highlight. */
export const SnapmsgSnap = Obj({
  index: Int(),
  mediaType: Int({ description: '`0` image, `1` video.' }),
  mediaUrl: Str(),
  previewUrl: Str({ description: 'The media URL itself when upstream has no preview.' }),
  overlayUrl: NStr(),
  timestamp: DateTime(),
  title: NStr(),
  lat: Nullable(Type.Number()),
  lng: Nullable(Type.Number()),
});

/** A curated or Spotlight highlight. */
export const SnapmsgHighlight = Obj({
  id: Str(),
  storyId: NStr(),
  title: NStr(),
  subtitle: NStr(),
  emoji: NStr(),
  canonicalUrlSuffix: NStr(),
  thumbnailUrl: Str(),
  snapCount: Int(),
  snaps: Type.Array(SnapmsgSnap),
});

export const SnapmsgLens = Obj({
  id: Str(),
  name: Str(),
  creatorDisplayName: Str(),
  creatorUsername: Nullable(Str({ description: 'Null for lenses by creators without a public profile.' })),
  previewImageUrl: Str(),
  iconUrl: Str(),
  unlockUrl: Str(),
  previewVideoUrl: NStr(),
  scannableImageUrl: NStr(),
  isOfficial: Bool(),
  updatedAt: Nullable(DateTime('Null when upstream omits it.')),
});

export const SnapmsgRelatedAccount = Obj({
  username: Str(),
  displayName: Str(),
  profilePictureUrl: NStr(),
  subscriberCount: Int(),
  badge: Int(),
});

export const SnapmsgStory = Obj(
  {
    id: NStr(),
    thumbnailUrl: NStr(),
    snapCount: Int(),
    snaps: Type.Array(SnapmsgSnap),
  },
  'The current story; null when there is none.',
);

export const SnapmsgProfile = Obj({
  profileType: Type.Union([Type.Literal('publicProfileInfo'), Type.Literal('userInfo')], {
    description: '`userInfo` for an account without a public profile: most fields are then empty, zero or null.',
  }),
  username: Str(),
  displayName: Str(),
  bio: Str(),
  address: Str(),
  websiteUrl: NStr(),
  profilePictureUrl: Str(),
  snapcodeImageUrl: Str(),
  squareHeroImageUrl: NStr(),
  subscriberCount: Int(),
  badge: Int({ description: '`0` none, `1` verified.' }),
  isOfficial: Bool(),
  hasStory: Bool(),
  hasCuratedHighlights: Bool(),
  hasSpotlightHighlights: Bool(),
  category: NStr(),
  subcategory: NStr(),
  publisherType: NStr(),
  primaryColor: NStr(),
  createdAt: Nullable(DateTime('Null for an account without a public profile.')),
  updatedAt: Nullable(DateTime('Null for an account without a public profile.')),
  businessProfileId: Str(),
  hostUserId: Str(),
  bitmoji3dUrl: NStr(),
  canonicalUrl: Str(),
  previewImageUrl: Str(),
  relatedAccounts: Type.Array(SnapmsgRelatedAccount),
  sameAsLinks: Type.Array(Str(), { description: 'Absolute URLs the profile links to.' }),
  story: Nullable(SnapmsgStory),
  lenses: Type.Array(SnapmsgLens),
  curatedHighlights: Type.Array(SnapmsgHighlight),
  spotlightHighlights: Type.Array(SnapmsgHighlight),
  counts: Obj({ lenses: Int(), curatedHighlights: Int(), spotlightHighlights: Int() }),
});

export const SnapmsgComment = Obj({
  id: Str(),
  text: Str(),
  authorDisplayName: Str(),
  authorAvatarUrl: Str({ description: '`""` when the author has no avatar.' }),
  likeCount: Int(),
  replyCount: Int(),
  timestamp: DateTime(),
  updatedAt: DateTime('Equals `timestamp` when the comment was never edited.'),
  rankingScore: Type.Number(),
});

export type SnapmsgSnap = Static<typeof SnapmsgSnap>;
export type SnapmsgHighlight = Static<typeof SnapmsgHighlight>;
export type SnapmsgLens = Static<typeof SnapmsgLens>;
export type SnapmsgRelatedAccount = Static<typeof SnapmsgRelatedAccount>;
export type SnapmsgStory = Static<typeof SnapmsgStory>;
export type SnapmsgProfile = Static<typeof SnapmsgProfile>;
export type SnapmsgComment = Static<typeof SnapmsgComment>;
