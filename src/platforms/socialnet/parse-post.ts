// Timeline posts (upstream/socialnet.md 6.5 to 6.11 → api-spec 2.2). One line per API field,
// in the order of the chapter's tables; `S`, `CS`, `CL` and `F` are the chapter's path aliases.
import type { Node } from './reader.ts';
import { isoFromSeconds, reactionsByType, unshim, type ReactionCount } from './parse-common.ts';

export interface PostMedia {
  type: 'photo' | 'album' | 'video';
  videoId: string | null;
  videoUrl: string | null;
  videoHdUrl: string | null;
  videoSdUrl: string | null;
  thumbnailUrl: string;
  width: number | null;
  height: number | null;
  durationSeconds: number | null;
  images: string[];
  music: { trackTitle: string; isOriginalAudio: boolean; soundtrackId: string } | null;
}

export interface PostLink {
  url: string;
  title: string | null;
  description: string | null;
  domain: string | null;
  imageUrl: string | null;
}

export interface TopComment {
  id: string;
  text: string;
  author: { name: string; id: string; url: string; avatarUrl: string; verified: boolean };
  reactions: number;
  reactionsByType: ReactionCount[];
  replyCount: number;
  feedbackId: string;
  expansionToken: string;
  createdAtMs: number;
  createdAt: string;
  url: string;
}

export interface Post {
  postId: string;
  storyId: string;
  url: string;
  text: string;
  author: { name: string; id: string; url: string; avatarUrl: string; verified: boolean | null };
  createdAt: string;
  createdTimestamp: number;
  media: PostMedia | null;
  link: PostLink | null;
  stats: {
    reactions: number;
    reactionsByType: ReactionCount[];
    comments: number;
    shares: number;
    views: number | null;
    viewsLabel: string | null;
  };
  topComments: TopComment[];
  isReshare: boolean;
  sharedPost: Post | null;
}

const F_PATH =
  'feedback.story.story_ufi_container.story.feedback_context.feedback_target_with_context.comet_ufi_summary_and_actions_renderer.feedback';

const STYLE = {
  photo: 'StoryAttachmentPhotoStyleRenderer',
  album: 'StoryAttachmentAlbumStyleRenderer',
  video: 'StoryAttachmentVideoStyleRenderer',
  share: 'StoryAttachmentShareStyleRenderer',
} as const;

const VERIFIED_BADGE = 'CometFeedUserVerifiedBadgeStrategy';

/** 6.7, with 6.11 for `sharedPost`: the original of a reshare, mapped the same way and nested once. */
export function mapPost(S: Node, nested = false): Post {
  const CS = S.node('comet_sections');
  const CL = CS.node('context_layout.story.comet_sections');
  const F = CS.node(F_PATH);
  const attached = S.nodeOrNull('attached_story');
  const attachments = S.listOrEmpty('attachments');
  const created = S.int('creation_time');
  return {
    postId: S.str('post_id'),
    storyId: S.str('id'),
    url: S.str('permalink_url'),
    text: CS.strOrNull('content.story.message.text') ?? '',
    author: {
      name: S.str('actors.0.name'),
      id: S.str('actors.0.id'),
      url: S.str('actors.0.url'),
      avatarUrl: CL.str('actor_photo.story.actors.0.profile_picture.uri'),
      verified: verified(CL),
    },
    createdAt: isoFromSeconds(created),
    createdTimestamp: created,
    media: mapMedia(attachments),
    link: mapLink(attachments),
    stats: {
      reactions: F.int('reaction_count.count'),
      reactionsByType: reactionsByType(F.nodeOrNull('top_reactions')),
      comments: F.int('comment_rendering_instance.comments.total_count'),
      shares: F.int('share_count.count'),
      views: F.intOrNull('video_view_count'),
      viewsLabel: F.strOrNull('i18n_video_view_count'),
    },
    topComments: F.listOrEmpty('comment_rendering_instance.comments.edges').map((edge) => mapTopComment(edge.node('node'))),
    isReshare: attached !== null,
    sharedPost: attached === null || nested ? null : mapPost(attached, true),
  };
}

/** `author.verified`: the badge's type decides; `null` when `CL.title` is absent or null. */
function verified(CL: Node): boolean | null {
  const title = CL.nodeOrNull('title');
  if (title === null) return null;
  return title.nodeOrNull('story.comet_sections.badge')?.get('__typename') === VERIFIED_BADGE;
}

const styleOf = (attachment: Node): unknown => attachment.get('styles.__typename');

/** 6.8: the first Photo, Album or Video attachment decides; `null` when there is none. */
export function mapMedia(attachments: Node[]): PostMedia | null {
  const first = attachments.find((a) => [STYLE.photo, STYLE.album, STYLE.video].includes(styleOf(a) as never));
  if (first === undefined) return null;
  const attachment = first.node('styles.attachment');
  switch (styleOf(first)) {
    case STYLE.photo: {
      const M = attachment.node('media');
      const uri = M.str('photo_image.uri');
      return {
        type: 'photo',
        videoId: null,
        videoUrl: null,
        videoHdUrl: null,
        videoSdUrl: null,
        thumbnailUrl: uri,
        width: M.intOrNull('photo_image.width'),
        height: M.intOrNull('photo_image.height'),
        durationSeconds: null,
        images: [uri],
        music: null,
      };
    }
    case STYLE.album: {
      const N = attachment.list('all_subattachments.nodes');
      const cover = N[0] ?? attachment.node('all_subattachments.nodes.0');
      return {
        type: 'album',
        videoId: null,
        videoUrl: null,
        videoHdUrl: null,
        videoSdUrl: null,
        thumbnailUrl: cover.str('media.viewer_image.uri'),
        width: cover.intOrNull('media.viewer_image.width'),
        height: cover.intOrNull('media.viewer_image.height'),
        durationSeconds: null,
        images: N.map((node) => node.str('media.viewer_image.uri')),
        music: null,
      };
    }
    default: {
      const M = attachment.node('media');
      const soundtrack = M.nodeOrNull('soundtrack_info');
      return {
        type: 'video',
        videoId: M.str('id'),
        videoUrl: M.str('playable_url'),
        videoHdUrl: M.strOrNull('videoDeliveryLegacyFields.browser_native_hd_url'),
        videoSdUrl: M.strOrNull('videoDeliveryLegacyFields.browser_native_sd_url'),
        thumbnailUrl: M.str('preferred_thumbnail.image.uri'),
        width: M.intOrNull('width'),
        height: M.intOrNull('height'),
        durationSeconds: M.numOrNull('length_in_second'),
        images: [],
        music:
          soundtrack === null
            ? null
            : {
                trackTitle: soundtrack.str('track_title'),
                isOriginalAudio: soundtrack.bool('is_original_audio'),
                soundtrackId: soundtrack.str('soundtrack_id'),
              },
      };
    }
  }
}

/** 6.9: the first Share attachment; `null` when there is none. */
export function mapLink(attachments: Node[]): PostLink | null {
  const first = attachments.find((a) => styleOf(a) === STYLE.share);
  if (first === undefined) return null;
  const A = first.node('styles.attachment');
  return {
    url: unshim(A.str('url')),
    title: A.strOrNull('title_with_entities.text'),
    description: A.strOrNull('description.text'),
    domain: A.strOrNull('source.text'),
    imageUrl: A.strOrNull('media.image.uri'),
  };
}

/** 6.10: a top comment (comment node of 5.3). */
export function mapTopComment(C: Node): TopComment {
  const created = C.int('created_time');
  return {
    id: C.str('id'),
    text: C.strOrNull('body.text') ?? '',
    author: {
      name: C.str('author.name'),
      id: C.str('author.id'),
      url: C.str('author.url'),
      avatarUrl: C.str('author.profile_picture_depth_0.uri'),
      verified: C.bool('author.is_verified'),
    },
    reactions: C.int('feedback.reactors.count'),
    reactionsByType: reactionsByType(C.nodeOrNull('feedback.top_reactions')),
    replyCount: C.int('feedback.replies_fields.total_count'),
    feedbackId: C.str('feedback.id'),
    expansionToken: C.str('feedback.expansion_info.expansion_token'),
    createdAtMs: created * 1000,
    createdAt: isoFromSeconds(created),
    url: C.str('url'),
  };
}
