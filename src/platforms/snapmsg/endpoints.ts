// The snapmsg endpoints: query, data schema and extractor of each.
import { Type } from 'typebox';
import { extractProfile, extractSpotlightComments } from './extract.ts';
import { normaliseSnapmsgUsername, parseSpotlightUrl } from './urls.ts';
import { endpoint } from '../../endpoints/define.ts';
import { normaliseUrl } from '../../endpoints/normalise.ts';
import { Bool, DateTime, Int, NStr, Nullable, Obj, QueryText, Str, TokenParam, UrlParam } from '../../endpoints/schemas/common.ts';

/** The OpenAPI tag's description of every snapmsg endpoint. */
export const description =
  'snapmsg, a messaging app with public web profiles: profiles with their story, lenses and highlights, and the ' +
  'comments on public Spotlight videos.';

/** SNAP mapping (snapmsg.md 4.7). */
const SnapmsgSnap = Obj({
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

/** HIGHLIGHT mapping (snapmsg.md 4.7); also the element of `spotlightHighlights` (4.8). */
const SnapmsgHighlight = Obj({
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

const SnapmsgLens = Obj({
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

const SnapmsgProfile = Obj({
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
  relatedAccounts: Type.Array(
    Obj({
      username: Str(),
      displayName: Str(),
      profilePictureUrl: NStr(),
      subscriberCount: Int(),
      badge: Int(),
    }),
  ),
  sameAsLinks: Type.Array(Str(), { description: 'Absolute URLs the profile links to.' }),
  story: Nullable(
    Obj(
      {
        id: NStr(),
        thumbnailUrl: NStr(),
        snapCount: Int(),
        snaps: Type.Array(SnapmsgSnap),
      },
      'The current story; null when there is none.',
    ),
  ),
  lenses: Type.Array(SnapmsgLens),
  curatedHighlights: Type.Array(SnapmsgHighlight),
  spotlightHighlights: Type.Array(SnapmsgHighlight),
  counts: Obj({ lenses: Int(), curatedHighlights: Int(), spotlightHighlights: Int() }),
});

export const snapmsgProfile = endpoint({
  name: 'profile',
  summary: 'snapmsg public profile',
  description:
    'A snapmsg profile by username: public profile details, current story, lenses, curated and Spotlight ' +
    'highlights (the first batch the profile page embeds) and related accounts. An existing account without ' +
    'a public profile answers with `profileType: "userInfo"` and empty, zero or null fields.',
  query: Type.Object(
    {
      username: QueryText(
        16,
        'snapmsg username, with or without a leading `@`: 3 to 15 characters, a letter first, then letters, digits, `.`, `_`, `-`; case-insensitive.',
      ),
    },
    { additionalProperties: true },
  ),
  data: Obj({ profile: SnapmsgProfile, fetchedAt: DateTime() }),
  normalise: (query) => {
    const raw = query.username;
    if (raw === undefined || raw === '') return { ok: false, details: [{ path: 'username', message: 'Required' }] };
    const result = normaliseSnapmsgUsername(raw);
    return result.ok
      ? { ok: true, params: { username: result.username } }
      : { ok: false, details: [{ path: 'username', message: result.message }] };
  },
  exampleQuery: { username: 'lunavoss' },
  extract: extractProfile as never,
});

const SpotlightComment = Obj({
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

export const snapmsgSpotlightComments = endpoint({
  name: 'spotlight.comments',
  summary: 'Comments on a snapmsg Spotlight video',
  description:
    'Comments on a public Spotlight video, in the platform’s ranking order, one upstream batch per call. ' +
    'Pass `paging.cursor` back as `cursor` (with the same `url`) for the next batch; at the end `paging.cursor` ' +
    'is `""` and `paging.hasMore` is false. A video with comments turned off answers with no comments.',
  query: Type.Object(
    {
      url: UrlParam(
        'Spotlight video URL: `https://www.snapmsg.example/spotlight/{id}` or `https://www.snapmsg.example/@{username}/spotlight/{id}`.',
      ),
      cursor: Type.Optional(TokenParam('`paging.cursor` of a previous response, to fetch the next batch.')),
    },
    { additionalProperties: true },
  ),
  data: Obj({
    comments: Type.Array(SpotlightComment),
    count: Int({ description: 'Number of comments in this batch.' }),
    paging: Obj({
      cursor: Str({ description: 'Opaque cursor of the next batch; `""` at the end.' }),
      hasMore: Bool(),
    }),
    fetchedAt: DateTime(),
  }),
  paging: { param: 'cursor', field: 'cursor', flag: 'hasMore', end: '' },
  normalise: normaliseUrl(parseSpotlightUrl),
  exampleQuery: { url: 'https://www.snapmsg.example/spotlight/Qk3_vT8mZp2LwN5aYc1RdH7sJx0EuGf4KbViOq6yXn9MtW2zAeB8lC3oPr5UgA' },
  extract: extractSpotlightComments as never,
});
