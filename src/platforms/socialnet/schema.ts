// The data schemas of the socialnet endpoints, and the types the mappings return.
import { Type, type Static } from 'typebox';
import { DateTime, Nullable, Obj, ReactionByType, Url } from '../../endpoints/schemas/common.ts';

export const ReactionsByType = Type.Array(ReactionByType, {
  description: 'Per reaction type (`Like`, `Love`, `Care`, `Haha`, `Wow`, `Sad`, `Angry`), upstream order; may be empty.',
});

/** Genders (a fixed set: pages are `NEUTER`). */
export const Gender = Type.Union([
  Type.Literal('MALE'),
  Type.Literal('FEMALE'),
  Type.Literal('NEUTER'),
  Type.Literal('UNKNOWN'),
]);

// ---------------------------------------------------------------- timeline post

/** `media` of a post. */
export const Media = Obj(
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

/** `link` of a post. */
export const Link = Obj(
  {
    url: Url('Target URL, unshimmed.'),
    title: Nullable(Type.String()),
    description: Nullable(Type.String()),
    domain: Nullable(Type.String()),
    imageUrl: Nullable(Url()),
  },
  'Shared-link preview.',
);

export const PostAuthor = Obj({
  name: Type.String(),
  id: Type.String(),
  url: Url(),
  avatarUrl: Url(),
  verified: Nullable(Type.Boolean({ description: '`null` when the post does not say.' })),
});

export const PostStats = Obj({
  reactions: Type.Integer(),
  reactionsByType: ReactionsByType,
  comments: Type.Integer(),
  shares: Type.Integer(),
  views: Nullable(Type.Integer({ description: 'Video posts only.' })),
  viewsLabel: Nullable(Type.String({ description: 'Abbreviated view count, video posts only.' })),
});

/** `topComments` item, with the `feedbackId` and `expansionToken` that list its replies. */
export const TopComment = Obj({
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

/** `sharedPost`: the original story, same shape, nested once. */
export const SharedPost = Obj(
  { ...postProperties, sharedPost: Type.Null({ description: 'Always `null`: nested once only.' }) },
  'The original post of a reshare.',
);

export const Post = Obj({ ...postProperties, sharedPost: Nullable(SharedPost) }, 'Timeline post.');

// ---------------------------------------------------------------- comment reply

/** Reply attachment. */
export const ReplyAttachment = Obj({
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

export const Reply = Obj(
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
  'Comment reply.',
);

// ---------------------------------------------------------------- reel

export const Reel = Obj(
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
  'Reel.',
);

// ---------------------------------------------------------------- page/profile info

export const CountLabel = Obj({ count: Type.Integer(), label: Type.String() });

export const HoursStatus = Type.Union([
  Type.Literal('Open now'),
  Type.Literal('Closes soon'),
  Type.Literal('Closed now'),
  Type.Literal('Opens soon'),
  Type.Literal('Always open'),
  Type.Literal('Temporarily closed'),
  Type.Literal('Permanently closed'),
]);

/**
 * Profile info. Fields are nullable where the page may lack them and, in addition, where the
 * gated (limited) response sets them to `null`.
 */
export const Profile = Obj(
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
  'Page/profile info.',
);

export type ReactionsByType = Static<typeof ReactionsByType>;
export type Gender = Static<typeof Gender>;
export type Media = Static<typeof Media>;
export type Link = Static<typeof Link>;
export type PostAuthor = Static<typeof PostAuthor>;
export type PostStats = Static<typeof PostStats>;
export type TopComment = Static<typeof TopComment>;
export type SharedPost = Static<typeof SharedPost>;
export type Post = Static<typeof Post>;
export type ReplyAttachment = Static<typeof ReplyAttachment>;
export type Reply = Static<typeof Reply>;
export type Reel = Static<typeof Reel>;
export type CountLabel = Static<typeof CountLabel>;
export type HoursStatus = Static<typeof HoursStatus>;
export type Profile = Static<typeof Profile>;
