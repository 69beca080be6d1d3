// The socialnet mappings of the listings, line by line as the tables of README.md, "Mapping",
// give them, and the rules they share with the profile's (mapping-profile.ts). `S`, `CS`, `CL`,
// `F` (posts), `M` (a post's media), `L` (its link), `C` (a comment node: a top comment or a
// reply), `R`, `V` and `P` (reels) are the README's path aliases.
import { boolean, integer, number, oneOf, string, UnrecognisedData, type Node } from '../shared/read.ts';
import type { Gender, Link, Media, Post, ReactionsByType, Reel, Reply, ReplyAttachment, TopComment } from './schema.ts';
import { SOCIALNET_HOSTS } from './urls.ts';

/** A page's gender code (pages are `NEUTER`). */
export const gender = oneOf<Gender>(['MALE', 'FEMALE', 'NEUTER', 'UNKNOWN'], 'UNKNOWN');

/** Unix seconds (already read as an integer) as ISO 8601 UTC with milliseconds. */
const isoOf = (seconds: number): string => new Date(seconds * 1000).toISOString();

/** An unrecognised page, where no single path names the problem. */
export const unrecognised = (what: string, problem: string): UnrecognisedData => new UnrecognisedData(what, problem);

// ------------------------------------------------------------------ shared rules

/** `[{type: node.localized_name, count: reaction_count}]` per edge, upstream order; `[]` when null. */
export function reactionsByType(topReactions: Node | null): ReactionsByType {
  if (topReactions === null) return [];
  return topReactions.listOrEmpty('edges').map((edge) => ({
    type: edge.get('node.localized_name', string),
    count: edge.get('reaction_count', integer),
  }));
}

const SOCIALNET_HOST_SET = new Set(SOCIALNET_HOSTS.accepted);

/** the `u` parameter of a socialnet `/l.php` link, decoded; any other URL unchanged. */
export function unshim(url: string): string {
  // A path that parses to `/l.php` is spelled so in the text, unless a tab or newline (which URL
  // parsing drops) splits it: without either, the URL need not be parsed.
  if (!url.includes('l.php') && !/[\t\n\r]/.test(url)) return url;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (!SOCIALNET_HOST_SET.has(parsed.hostname.toLowerCase()) || parsed.pathname !== '/l.php') return url;
  return parsed.searchParams.get('u') ?? url;
}

const COUNT_LABEL = /^([0-9][0-9,]*(?:\.[0-9]+)?)([KMB])?(?![0-9A-Za-z])/;
const MULTIPLIER: Record<string, number> = { K: 1_000, M: 1_000_000, B: 1_000_000_000 };

/** the count a display text starts with (`51K followers` gives 51000), or null. */
export function countFromLabel(text: string): number | null {
  const match = COUNT_LABEL.exec(text);
  if (match === null) return null;
  const value = Number((match[1] ?? '').replaceAll(',', ''));
  if (!Number.isFinite(value)) return null;
  return Math.round(value * (match[2] === undefined ? 1 : (MULTIPLIER[match[2]] ?? 1)));
}

/** A count label the API returns as `{count, label}`; a label without a number is unrecognised. */
export function countLabel(label: string, where: string): { count: number; label: string } {
  const count = countFromLabel(label);
  if (count === null) throw unrecognised(`the ${where} label`, `no count in "${label}"`);
  return { count, label };
}

/**
 * the `end_cursor` to continue from when `has_next_page` is true and `end_cursor` a
 * non-empty string; otherwise null (end of the listing).
 */
export function nextCursor(pageInfo: Node): string | null {
  const endCursor = pageInfo.at('end_cursor').value;
  return pageInfo.at('has_next_page').value === true && typeof endCursor === 'string' && endCursor !== '' ? endCursor : null;
}

// Timeline posts (README.md, "Post"). One line per API field, in the order of the README's
// tables; `S`, `CS`, `CL` and `F` are its path aliases.

const F_PATH =
  'feedback.story.story_ufi_container.story.feedback_context.feedback_target_with_context.comet_ufi_summary_and_actions_renderer.feedback';

const STYLE = {
  photo: 'StoryAttachmentPhotoStyleRenderer',
  album: 'StoryAttachmentAlbumStyleRenderer',
  video: 'StoryAttachmentVideoStyleRenderer',
  share: 'StoryAttachmentShareStyleRenderer',
} as const;

const VERIFIED_BADGE = 'CometFeedUserVerifiedBadgeStrategy';

/** A timeline story `S`, with `sharedPost`: the original of a reshare, mapped the same way and nested once. */
export function mapPost(S: Node): Post {
  const attached = S.nodeOrNull('attached_story');
  return { ...postFields(S), sharedPost: attached === null ? null : { ...postFields(attached), sharedPost: null } };
}

/** Every field of a post but `sharedPost`. */
function postFields(S: Node): Omit<Post, 'sharedPost'> {
  const CS = S.node('comet_sections');
  const CL = CS.node('context_layout.story.comet_sections');
  const F = CS.node(F_PATH);
  const attachments = S.listOrEmpty('attachments');
  const created = S.get('creation_time', integer);
  return {
    postId: S.get('post_id', string),
    storyId: S.get('id', string),
    url: S.get('permalink_url', string),
    text: CS.orEmpty('content.story.message.text', string),
    author: {
      name: S.get('actors.0.name', string),
      id: S.get('actors.0.id', string),
      url: S.get('actors.0.url', string),
      avatarUrl: CL.get('actor_photo.story.actors.0.profile_picture.uri', string),
      verified: verified(CL),
    },
    createdAt: isoOf(created),
    createdTimestamp: created,
    media: mapMedia(attachments),
    link: mapLink(attachments),
    stats: {
      reactions: F.get('reaction_count.count', integer),
      reactionsByType: reactionsByType(F.nodeOrNull('top_reactions')),
      comments: F.get('comment_rendering_instance.comments.total_count', integer),
      shares: F.get('share_count.count', integer),
      views: F.orNull('video_view_count', integer),
      viewsLabel: F.orNull('i18n_video_view_count', string),
    },
    topComments: F.listOrEmpty('comment_rendering_instance.comments.edges').map((edge) => mapTopComment(edge.node('node'))),
    isReshare: S.has('attached_story'),
  };
}

/** `author.verified`: the badge's type decides; `null` when `CL.title` is absent or null. */
function verified(CL: Node): boolean | null {
  const title = CL.nodeOrNull('title');
  if (title === null) return null;
  return title.nodeOrNull('story.comet_sections.badge')?.at('__typename').value === VERIFIED_BADGE;
}

const styleOf = (attachment: Node): unknown => attachment.at('styles.__typename').value;

/** the first Photo, Album or Video attachment decides; `null` when there is none. */
export function mapMedia(attachments: Node[]): Media | null {
  const first = attachments.find((a) => [STYLE.photo, STYLE.album, STYLE.video].includes(styleOf(a) as never));
  if (first === undefined) return null;
  const attachment = first.node('styles.attachment');
  switch (styleOf(first)) {
    case STYLE.photo: {
      const M = attachment.node('media');
      const uri = M.get('photo_image.uri', string);
      return {
        type: 'photo',
        videoId: null,
        videoUrl: null,
        videoHdUrl: null,
        videoSdUrl: null,
        thumbnailUrl: uri,
        width: M.orNull('photo_image.width', integer),
        height: M.orNull('photo_image.height', integer),
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
        thumbnailUrl: cover.get('media.viewer_image.uri', string),
        width: cover.orNull('media.viewer_image.width', integer),
        height: cover.orNull('media.viewer_image.height', integer),
        durationSeconds: null,
        images: N.map((node) => node.get('media.viewer_image.uri', string)),
        music: null,
      };
    }
    default: {
      const M = attachment.node('media');
      const soundtrack = M.nodeOrNull('soundtrack_info');
      return {
        type: 'video',
        videoId: M.get('id', string),
        videoUrl: M.get('playable_url', string),
        videoHdUrl: M.orNull('videoDeliveryLegacyFields.browser_native_hd_url', string),
        videoSdUrl: M.orNull('videoDeliveryLegacyFields.browser_native_sd_url', string),
        thumbnailUrl: M.get('preferred_thumbnail.image.uri', string),
        width: M.orNull('width', integer),
        height: M.orNull('height', integer),
        durationSeconds: M.orNull('length_in_second', number),
        images: [],
        music:
          soundtrack === null
            ? null
            : {
                trackTitle: soundtrack.get('track_title', string),
                isOriginalAudio: soundtrack.get('is_original_audio', boolean),
                soundtrackId: soundtrack.get('soundtrack_id', string),
              },
      };
    }
  }
}

/** the first Share attachment; `null` when there is none. */
export function mapLink(attachments: Node[]): Link | null {
  const first = attachments.find((a) => styleOf(a) === STYLE.share);
  if (first === undefined) return null;
  const L = first.node('styles.attachment');
  return {
    url: unshim(L.get('url', string)),
    title: L.orNull('title_with_entities.text', string),
    description: L.orNull('description.text', string),
    domain: L.orNull('source.text', string),
    imageUrl: L.orNull('media.image.uri', string),
  };
}

/** A top comment: a comment node `C`. */
export function mapTopComment(C: Node): TopComment {
  const created = C.get('created_time', integer);
  return {
    id: C.get('id', string),
    text: C.orEmpty('body.text', string),
    author: {
      name: C.get('author.name', string),
      id: C.get('author.id', string),
      url: C.get('author.url', string),
      avatarUrl: C.get('author.profile_picture_depth_0.uri', string),
      verified: C.get('author.is_verified', boolean),
    },
    reactions: C.get('feedback.reactors.count', integer),
    reactionsByType: reactionsByType(C.nodeOrNull('feedback.top_reactions')),
    replyCount: C.get('feedback.replies_fields.total_count', integer),
    feedbackId: C.get('feedback.id', string),
    expansionToken: C.get('feedback.expansion_info.expansion_token', string),
    createdAtMs: created * 1000,
    createdAt: isoOf(created),
    url: C.get('url', string),
  };
}

// Reels (README.md, "Reel"). One line per API field; `R`, `V` and `P` are the README's path
// aliases.

/** one reel edge of `aggregated_sn_shorts.edges`. */
export function mapReel(edge: Node): Reel {
  const R = edge.node('profile_reel_node.node');
  const V = R.node('short_form_video_context');
  const P = V.node('playback_video');
  const soundtrack = V.nodeOrNull('soundtrack_info');
  const created = R.get('creation_time', integer);
  return {
    videoId: P.get('id', string),
    postId: R.get('post_id', string),
    storyId: R.get('id', string),
    url: V.get('shareable_url', string),
    caption: R.orNull('message.text', string),
    createdAt: isoOf(created),
    createdTimestamp: created,
    durationSeconds: P.get('length_in_second', number),
    width: P.get('width', integer),
    height: P.get('height', integer),
    thumbnailUrl: P.get('image.uri', string),
    videoUrl: P.orNull('browser_native_hd_url', string) ?? P.get('browser_native_sd_url', string),
    author: {
      id: V.get('video_owner.id', string),
      name: V.get('video_owner.name', string),
      url: V.get('video_owner.url', string),
      avatarUrl: V.get('video_owner.profile_picture.uri', string),
      isVerified: V.get('video_owner.is_verified', boolean),
    },
    audio:
      soundtrack === null
        ? null
        : {
            trackTitle: soundtrack.get('track_title', string),
            isOriginalAudio: soundtrack.get('is_original_audio', boolean),
            soundtrackId: soundtrack.get('soundtrack_id', string),
          },
    stats: {
      reactions: R.get('feedback.reaction_count.count', integer),
      comments: R.get('feedback.comment_rendering_instance.comments.total_count', integer),
      sharesLabel: R.get('feedback.i18n_share_count', string),
      viewsLabel: V.get('play_count_reduced', string),
    },
    feedbackId: R.get('feedback.id', string),
  };
}

// Comment replies (README.md, "Reply"). One line per API field; `C` is a comment node, here a
// reply (depth 1).

/** one reply. */
export function mapReply(C: Node): Reply {
  const created = C.get('created_time', integer);
  return {
    id: C.get('id', string),
    legacyId: C.get('legacy_snid', string),
    text: C.orEmpty('body.text', string),
    author: {
      id: C.get('author.id', string),
      name: C.get('author.name', string),
      shortName: C.get('author.short_name', string),
      url: C.get('author.url', string),
      avatarUrl: C.get('author.profile_picture_depth_0.uri', string),
      verified: C.get('author.is_verified', boolean),
      gender: C.get('author.gender', gender),
      isPage: C.get('author.__typename', string) === 'Page',
    },
    createdAt: isoOf(created),
    createdTimestamp: created,
    reactionCount: C.get('feedback.reactors.count', integer),
    reactionsByType: reactionsByType(C.nodeOrNull('feedback.top_reactions')),
    replyCount: C.get('feedback.replies_fields.total_count', integer),
    feedbackId: C.get('feedback.id', string),
    expansionToken: C.get('feedback.expansion_info.expansion_token', string),
    url: C.get('url', string),
    depth: C.get('depth', integer),
    isAuthorOriginalPoster: C.get('is_author_original_poster', boolean),
    attachments: C.listOrEmpty('attachments').flatMap((attachment) => mapReplyAttachment(attachment) ?? []),
  };
}

/** renderer `__typename` → API `type`; unknown renderers are skipped. */
const MEDIA_RENDERERS: Record<string, ReplyAttachment['type']> = {
  CommentAttachmentPhotoStyleRenderer: 'photo',
  CommentAttachmentStickerStyleRenderer: 'sticker',
  CommentAttachmentAnimatedImageStyleRenderer: 'gif',
  CommentAttachmentVideoStyleRenderer: 'video',
};
const SHARE_RENDERER = 'CommentAttachmentShareStyleRenderer';

/** one reply attachment as `{type, id, url, width, height}`, or null for an unknown renderer. */
export function mapReplyAttachment(element: Node): ReplyAttachment | null {
  const renderer = element.node('style_type_renderer');
  const typename = renderer.at('__typename').value;
  if (typename === SHARE_RENDERER) {
    return { type: 'link', id: null, url: unshim(renderer.get('attachment.url', string)), width: null, height: null };
  }
  const type = typeof typename === 'string' && Object.hasOwn(MEDIA_RENDERERS, typename) ? MEDIA_RENDERERS[typename] : undefined;
  if (type === undefined) return null;
  const media = renderer.node('attachment.media');
  return {
    type,
    id: media.get('id', string),
    url: type === 'video' ? media.get('playable_url', string) : media.get('image.uri', string),
    width: media.orNull('image.width', integer),
    height: media.orNull('image.height', integer),
  };
}
