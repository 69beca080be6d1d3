// The socialnet endpoints: query, data schema and extractor of each.
import { Type } from 'typebox';
import { endpoint } from '../../endpoints/define.ts';
import type { NormaliseResult, RawQuery, TargetParams, ValidationDetail } from '../../endpoints/types.ts';
import {
  BooleanParam,
  DateTime,
  Nullable,
  Obj,
  QueryText,
  ReactionByType,
  TokenParam,
  UrlParam,
  Url,
  readBoolean,
} from '../../endpoints/schemas/common.ts';
import { PAGE_ID_MESSAGE, isSocialnetId, parseSocialnetUrl } from './urls.ts';
import { socialnetExtractors } from './extract.ts';

// ---------------------------------------------------------------- shared pieces

/** The OpenAPI tag's description of every socialnet endpoint. */
export const description =
  'socialnet, a large social network: the timeline posts, reels and page information of public profiles and ' +
  'pages, and the replies to comments on their posts, as a logged-out visitor sees them.';

const Paging = Obj(
  {
    cursor: Nullable(Type.String({ description: 'Pass back as `cursor` for the next page; `null` at the end.' })),
    hasNextPage: Type.Boolean(),
  },
  'Pagination (api-spec 2.1).',
);

const CURSOR_PAGING = { param: 'cursor', field: 'cursor', flag: 'hasNextPage', end: null } as const;

const cursorParam = TokenParam('`paging.cursor` of a previous response; repeat the target parameters of the first call.');

const ReactionsByType = Type.Array(ReactionByType, {
  description: 'Per reaction type (`Like`, `Love`, `Care`, `Haha`, `Wow`, `Sad`, `Angry`), upstream order; may be empty.',
});

/** Genders of socialnet.md 5.3 / 9.2 (a fixed set: pages are `NEUTER`). */
const Gender = Type.Union([
  Type.Literal('MALE'),
  Type.Literal('FEMALE'),
  Type.Literal('NEUTER'),
  Type.Literal('UNKNOWN'),
]);

// ---------------------------------------------------------------- 2.2 timeline post

/** `media` of a post (socialnet.md 6.8). */
const Media = Obj(
  {
    type: Type.Union([Type.Literal('photo'), Type.Literal('album'), Type.Literal('video')]),
    videoId: Nullable(Type.String()),
    videoUrl: Nullable(Url()),
    videoHdUrl: Nullable(Url()),
    videoSdUrl: Nullable(Url()),
    thumbnailUrl: Url(),
    width: Nullable(Type.Integer()),
    height: Nullable(Type.Integer()),
    durationSeconds: Nullable(Type.Number({ description: 'May be fractional.' })),
    images: Type.Array(Url(), { description: 'Photo: its image; album: every image in order; video: `[]`.' }),
    music: Nullable(
      Obj({ trackTitle: Type.String(), isOriginalAudio: Type.Boolean(), soundtrackId: Type.String() }, 'Video soundtrack.'),
    ),
  },
  'Photo, album or video of the post.',
);

/** `link` of a post: the shape socialnet.md 6.9 fixes where the API spec leaves it open. */
const Link = Obj(
  {
    url: Url('Target URL, unshimmed.'),
    title: Nullable(Type.String()),
    description: Nullable(Type.String()),
    domain: Nullable(Type.String()),
    imageUrl: Nullable(Url()),
  },
  'Shared-link preview.',
);

const PostAuthor = Obj({
  name: Type.String(),
  id: Type.String(),
  url: Url(),
  avatarUrl: Url(),
  verified: Nullable(Type.Boolean({ description: '`null` when the post does not say.' })),
});

const PostStats = Obj({
  reactions: Type.Integer(),
  reactionsByType: ReactionsByType,
  comments: Type.Integer(),
  shares: Type.Integer(),
  views: Nullable(Type.Integer({ description: 'Video posts only.' })),
  viewsLabel: Nullable(Type.String({ description: 'Abbreviated view count, video posts only.' })),
});

/** `topComments` item (socialnet.md 6.10), with the two fields api-decisions adds. */
const TopComment = Obj({
  id: Type.String(),
  text: Type.String(),
  author: Obj({ name: Type.String(), id: Type.String(), url: Url(), avatarUrl: Url(), verified: Type.Boolean() }),
  reactions: Type.Integer(),
  reactionsByType: ReactionsByType,
  replyCount: Type.Integer(),
  feedbackId: Type.String({ description: 'Input `feedbackId` of /v1/socialnet/post/comment/replies.' }),
  expansionToken: Type.String({ description: 'Input `expansionToken` of /v1/socialnet/post/comment/replies.' }),
  createdAtMs: Type.Integer(),
  createdAt: DateTime(),
  url: Url(),
});

const postProperties = {
  postId: Type.String(),
  storyId: Type.String(),
  url: Url('Permalink.'),
  text: Type.String({ description: '`""` when the post has no text.' }),
  author: PostAuthor,
  createdAt: DateTime(),
  createdTimestamp: Type.Integer({ description: 'Unix seconds.' }),
  media: Nullable(Media),
  link: Nullable(Link),
  stats: PostStats,
  topComments: Type.Array(TopComment, { description: 'Up to 2 top comments, in display order.' }),
  isReshare: Type.Boolean(),
};

/** `sharedPost` (socialnet.md 6.11): the original story, same shape, nested once. */
const SharedPost = Obj(
  { ...postProperties, sharedPost: Type.Null({ description: 'Always `null`: nested once only.' }) },
  'The original post of a reshare.',
);

const Post = Obj({ ...postProperties, sharedPost: Nullable(SharedPost) }, 'Timeline post (api-spec 2.2).');

// ---------------------------------------------------------------- 2.4 comment reply

/** Reply attachment: the shape socialnet.md 8.6 fixes. */
const ReplyAttachment = Obj({
  type: Type.Union([
    Type.Literal('photo'),
    Type.Literal('sticker'),
    Type.Literal('gif'),
    Type.Literal('video'),
    Type.Literal('link'),
  ]),
  id: Nullable(Type.String({ description: '`null` for links.' })),
  url: Url(),
  width: Nullable(Type.Integer()),
  height: Nullable(Type.Integer()),
});

const Reply = Obj(
  {
    id: Type.String(),
    legacyId: Type.String(),
    text: Type.String({ description: '`""` for a sticker- or photo-only reply.' }),
    author: Obj({
      id: Type.String(),
      name: Type.String(),
      shortName: Type.String(),
      url: Url(),
      avatarUrl: Url(),
      verified: Type.Boolean(),
      gender: Gender,
      isPage: Type.Boolean(),
    }),
    createdAt: DateTime(),
    createdTimestamp: Type.Integer({ description: 'Unix seconds.' }),
    reactionCount: Type.Integer(),
    reactionsByType: ReactionsByType,
    replyCount: Type.Integer({ description: "The reply's own reply count." }),
    feedbackId: Type.String({ description: "The reply's feedback id." }),
    expansionToken: Type.String({ description: "Token to list this reply's own replies." }),
    url: Url('Permalink.'),
    depth: Type.Integer(),
    isAuthorOriginalPoster: Type.Boolean(),
    attachments: Type.Array(ReplyAttachment),
  },
  'Comment reply (api-spec 2.4).',
);

// ---------------------------------------------------------------- 2.5 reel

const Reel = Obj(
  {
    videoId: Type.String(),
    postId: Type.String(),
    storyId: Type.String(),
    url: Url('Permalink.'),
    caption: Nullable(Type.String()),
    createdAt: DateTime(),
    createdTimestamp: Type.Integer({ description: 'Unix seconds.' }),
    durationSeconds: Type.Number({ description: 'May be fractional.' }),
    width: Type.Integer(),
    height: Type.Integer(),
    thumbnailUrl: Url(),
    videoUrl: Url('Direct MP4 URL (HD when available, else SD).'),
    author: Obj({ id: Type.String(), name: Type.String(), url: Url(), avatarUrl: Url(), isVerified: Type.Boolean() }),
    audio: Nullable(
      Obj(
        { trackTitle: Type.String(), isOriginalAudio: Type.Boolean(), soundtrackId: Type.String() },
        '`null` when the reel has no soundtrack.',
      ),
    ),
    stats: Obj({
      reactions: Type.Integer({ description: 'Exact.' }),
      comments: Type.Integer({ description: 'Exact.' }),
      sharesLabel: Type.String({ description: 'Abbreviated.' }),
      viewsLabel: Type.String({ description: 'Abbreviated.' }),
    }),
    feedbackId: Type.String(),
  },
  'Reel (api-spec 2.5).',
);

// ---------------------------------------------------------------- 2.7 page/profile info

const CountLabel = Obj({ count: Type.Integer(), label: Type.String() });

const HoursStatus = Type.Union([
  Type.Literal('Open now'),
  Type.Literal('Closes soon'),
  Type.Literal('Closed now'),
  Type.Literal('Opens soon'),
  Type.Literal('Always open'),
  Type.Literal('Temporarily closed'),
  Type.Literal('Permanently closed'),
]);

/**
 * Profile info (socialnet.md 9.6). Fields are nullable where 9.6 says so and, in addition,
 * where the gated (limited) response of 9.7 sets them to `null`.
 */
const Profile = Obj(
  {
    id: Nullable(Type.String({ description: '`null` only in a gated response without an id.' })),
    name: Type.String(),
    url: Url(),
    username: Nullable(Type.String({ description: 'The vanity; `null` for id-only profiles.' })),
    alternateName: Nullable(Type.String()),
    gender: Nullable(Gender),
    verified: Nullable(Type.Boolean()),
    categories: Type.Array(Type.String()),
    profilePictureUrl: Url(),
    profilePicture: Nullable(Obj({ small: Url(), medium: Url(), large: Url() })),
    coverPhotoUrl: Nullable(Url()),
    followers: Nullable(CountLabel),
    following: Nullable(CountLabel),
    likes: Nullable(CountLabel),
    intro: Nullable(Type.String()),
    contact: Nullable(
      Obj({
        phone: Nullable(Type.String()),
        email: Nullable(Type.String()),
        website: Nullable(Url()),
        address: Nullable(Type.String()),
      }),
    ),
    links: Type.Array(
      Obj({
        type: Type.String({ description: 'Uppercase network code (open set, e.g. `PICSHARE`), or `WEBSITE`.' }),
        label: Type.String(),
        url: Url(),
        value: Type.String(),
      }),
    ),
    rating: Nullable(Type.String()),
    isBusinessPage: Nullable(Type.Boolean()),
    otherDetails: Type.Array(
      Obj({ type: Type.String({ description: 'Upstream field type, e.g. `price_range`.' }), text: Type.String() }),
    ),
    businessHours: Nullable(Obj({ status: HoursStatus }, 'Current status only.')),
  },
  'Page/profile info (api-spec 2.7).',
);

// ---------------------------------------------------------------- normalisation

const requireUrl = (value: string | undefined, details: ValidationDetail[]): string | undefined => {
  if (value === undefined) {
    details.push({ path: 'url', message: 'Required' });
    return undefined;
  }
  const checked = parseSocialnetUrl(value);
  if (!checked.ok) {
    details.push({ path: 'url', message: checked.message });
    return undefined;
  }
  return checked.url;
};

const result = (params: TargetParams, details: ValidationDetail[]): NormaliseResult =>
  details.length > 0 ? { ok: false, details } : { ok: true, params };

function normalisePosts(query: RawQuery): NormaliseResult {
  const details: ValidationDetail[] = [];
  const { url, pageId } = query;
  if (url === undefined && pageId === undefined) {
    return { ok: false, details: [{ path: 'url', message: 'One of url or pageId is required' }] };
  }
  // Both given: reported on `url` (the pair's first member), plus any problem of each value.
  if (url !== undefined && pageId !== undefined) {
    details.push({ path: 'url', message: 'Give either url or pageId, not both' });
  }
  let canonical: string | undefined;
  if (url !== undefined) canonical = requireUrl(url, details);
  if (pageId !== undefined && !isSocialnetId(pageId)) details.push({ path: 'pageId', message: PAGE_ID_MESSAGE });
  if (details.length > 0) return { ok: false, details };
  return canonical !== undefined ? { ok: true, params: { url: canonical } } : { ok: true, params: { pageId: pageId ?? '' } };
}

function normaliseReels(query: RawQuery): NormaliseResult {
  const details: ValidationDetail[] = [];
  const url = requireUrl(query.url, details);
  return result({ url: url ?? '' }, details);
}

function normaliseReplies(query: RawQuery): NormaliseResult {
  const details: ValidationDetail[] = [];
  // Relay ids and tokens are opaque (socialnet.md 2.4): passed on unchanged, checked upstream.
  const { feedbackId, expansionToken } = query;
  if (feedbackId === undefined) details.push({ path: 'feedbackId', message: 'Required' });
  if (expansionToken === undefined) details.push({ path: 'expansionToken', message: 'Required' });
  return result({ feedbackId: feedbackId ?? '', expansionToken: expansionToken ?? '' }, details);
}

function normaliseProfile(query: RawQuery): NormaliseResult {
  const details: ValidationDetail[] = [];
  const url = requireUrl(query.url, details);
  return result(
    {
      url: url ?? '',
      businessHours: String(readBoolean(query.businessHours, true)),
      allowGated: String(readBoolean(query.allowGated, true)),
    },
    details,
  );
}

// ---------------------------------------------------------------- declarations

const URL_DESCRIPTION =
  'Public profile or page URL on www.socialnet.example (also socialnet.example, m., web.): ' +
  '`/{vanity}`, `/{vanity}/{tab}`, `/profile.php?id={id}` or `/people/{Name}/{id}`.';

export const socialnetProfilePosts = endpoint({
  name: 'profile.posts',
  summary: 'Timeline posts of a public socialnet profile or page',
  description:
    'Returns the newest public timeline posts of a profile or page as seen logged out, newest first, ' +
    'with media, shared-link preview, reaction stats, up to two top comments (with the `feedbackId` and ' +
    '`expansionToken` that list their replies) and the original of a reshare. Give exactly one of `url` ' +
    'or `pageId` (422 otherwise); follow `paging.cursor` for older posts. 404 when the profile is ' +
    'unknown, private, gated or has no public posts; 400 for an invalid or expired cursor.',
  query: Type.Object(
    {
      url: Type.Optional(UrlParam(`${URL_DESCRIPTION} One of \`url\`/\`pageId\` is required.`)),
      pageId: Type.Optional(QueryText(1024, 'Numeric profile id (15 to 17 digits); skips loading the profile page.')),
      cursor: Type.Optional(cursorParam),
    },
    { additionalProperties: true },
  ),
  data: Type.Object(
    {
      posts: Type.Array(Post),
      postCount: Type.Integer({ description: 'Number of posts in this page.' }),
      paging: Paging,
      fetchedAt: DateTime('When the data was scraped.'),
    },
    { additionalProperties: false },
  ),
  paging: CURSOR_PAGING,
  normalise: normalisePosts,
  exampleQuery: { url: 'https://www.socialnet.example/harborbistro' },
  extract: socialnetExtractors.posts as never,
});

export const socialnetProfileReels = endpoint({
  name: 'profile.reels',
  summary: "Reels from a public socialnet page's reels tab",
  description:
    "Returns the reels of a public profile or page, newest first: the first page is the reels tab's " +
    'initial batch; follow `paging.cursor` for more. A profile without reels gives `reels: []`. ' +
    '404 when the profile is unknown, private or gated; 400 for an invalid or expired cursor.',
  query: Type.Object(
    {
      url: UrlParam(URL_DESCRIPTION),
      cursor: Type.Optional(cursorParam),
    },
    { additionalProperties: true },
  ),
  data: Type.Object(
    {
      reels: Type.Array(Reel),
      reelCount: Type.Integer({ description: 'Number of reels in this page.' }),
      paging: Paging,
      fetchedAt: DateTime('When the data was scraped.'),
    },
    { additionalProperties: false },
  ),
  paging: CURSOR_PAGING,
  normalise: normaliseReels,
  exampleQuery: { url: 'https://www.socialnet.example/harborbistro' },
  extract: socialnetExtractors.reels as never,
});

export const socialnetPostCommentReplies = endpoint({
  name: 'post.comment.replies',
  summary: 'Replies to a comment on a public socialnet post or reel',
  description:
    "Returns the replies to one comment, oldest first, with the comment's total reply count. " +
    "`feedbackId` and `expansionToken` are the comment's values from a post's `topComments` " +
    '(the feedback id, not the comment id); follow `paging.cursor` for more. 404 when the comment ' +
    'is unknown, deleted or hidden; 400 when the token does not belong to the comment or the cursor is invalid or expired.',
  query: Type.Object(
    {
      feedbackId: QueryText(1024, "The comment's feedback id (`topComments[].feedbackId`)."),
      expansionToken: QueryText(1024, "The comment's expansion token (`topComments[].expansionToken`)."),
      cursor: Type.Optional(cursorParam),
    },
    { additionalProperties: true },
  ),
  data: Type.Object(
    {
      replies: Type.Array(Reply),
      replyCount: Type.Integer({ description: 'Total replies of the comment.' }),
      paging: Paging,
      feedbackId: Type.String({ description: "The parent comment's feedback id." }),
      fetchedAt: DateTime('When the data was scraped.'),
    },
    { additionalProperties: false },
  ),
  paging: CURSOR_PAGING,
  normalise: normaliseReplies,
  exampleQuery: {
    feedbackId: 'ZmVlZGJhY2s6MTA5MjM0NTY3ODkwMTIzNF84ODIyMDE0NTc3MzE5MDQ=',
    expansionToken: 'MTpjb21tZW50OjE64iKXRAof8p6rehmbW8ENzv28V90PETgWc4Sbu85M',
  },
  extract: socialnetExtractors.replies as never,
});

export const socialnetProfile = endpoint({
  name: 'profile',
  summary: 'Public socialnet page or profile information',
  description:
    "Returns a profile's or page's information from its about tab: names, pictures, follower and like " +
    'counts, categories, contact details, links, rating and, unless `businessHours=false`, the current ' +
    'business-hours status. For a gated (age- or country-restricted) page it returns a limited response ' +
    'with `gated: true`, unknown fields `null`, or 404 with `allowGated=false`. 404 when the profile is unknown or private.',
  query: Type.Object(
    {
      url: UrlParam(URL_DESCRIPTION),
      businessHours: Type.Optional(
        BooleanParam('Include the current business-hours status (one more upstream page load).', true),
      ),
      allowGated: Type.Optional(
        BooleanParam('Return a limited `gated: true` response for a gated page instead of 404.', true),
      ),
    },
    { additionalProperties: true },
  ),
  data: Type.Object(
    {
      gated: Type.Boolean({ description: 'True when a gated page gave a limited response.' }),
      profile: Profile,
      fetchedAt: DateTime('When the data was scraped.'),
    },
    { additionalProperties: false },
  ),
  switches: ['businessHours', 'allowGated'],
  normalise: normaliseProfile,
  exampleQuery: { url: 'https://www.socialnet.example/harborbistro' },
  extract: socialnetExtractors.profile as never,
});
