// Comment replies (upstream/socialnet.md 8.3 to 8.6 → api-spec 2.4). One line per API field;
// `C` is a reply (comment node of 5.3 with depth 1).
import type { Node } from './reader.ts';
import { isoFromSeconds, reactionsByType, unshim, type ReactionCount } from './parse-common.ts';

export interface ReplyAttachment {
  type: 'photo' | 'sticker' | 'gif' | 'video' | 'link';
  id: string | null;
  url: string;
  width: number | null;
  height: number | null;
}

export interface Reply {
  id: string;
  legacyId: string;
  text: string;
  author: {
    id: string;
    name: string;
    shortName: string;
    url: string;
    avatarUrl: string;
    verified: boolean;
    gender: string;
    isPage: boolean;
  };
  createdAt: string;
  createdTimestamp: number;
  reactionCount: number;
  reactionsByType: ReactionCount[];
  replyCount: number;
  feedbackId: string;
  expansionToken: string;
  url: string;
  depth: number;
  isAuthorOriginalPoster: boolean;
  attachments: ReplyAttachment[];
}

/** 8.5: one reply. */
export function mapReply(C: Node): Reply {
  const created = C.int('created_time');
  return {
    id: C.str('id'),
    legacyId: C.str('legacy_snid'),
    text: C.strOrNull('body.text') ?? '',
    author: {
      id: C.str('author.id'),
      name: C.str('author.name'),
      shortName: C.str('author.short_name'),
      url: C.str('author.url'),
      avatarUrl: C.str('author.profile_picture_depth_0.uri'),
      verified: C.bool('author.is_verified'),
      gender: C.str('author.gender'),
      isPage: C.str('author.__typename') === 'Page',
    },
    createdAt: isoFromSeconds(created),
    createdTimestamp: created,
    reactionCount: C.int('feedback.reactors.count'),
    reactionsByType: reactionsByType(C.nodeOrNull('feedback.top_reactions')),
    replyCount: C.int('feedback.replies_fields.total_count'),
    feedbackId: C.str('feedback.id'),
    expansionToken: C.str('feedback.expansion_info.expansion_token'),
    url: C.str('url'),
    depth: C.int('depth'),
    isAuthorOriginalPoster: C.bool('is_author_original_poster'),
    attachments: C.listOrEmpty('attachments').flatMap((attachment) => mapReplyAttachment(attachment) ?? []),
  };
}

/** 8.6: renderer `__typename` → API `type`; unknown renderers are skipped. */
const MEDIA_RENDERERS: Record<string, ReplyAttachment['type']> = {
  CommentAttachmentPhotoStyleRenderer: 'photo',
  CommentAttachmentStickerStyleRenderer: 'sticker',
  CommentAttachmentAnimatedImageStyleRenderer: 'gif',
  CommentAttachmentVideoStyleRenderer: 'video',
};
const SHARE_RENDERER = 'CommentAttachmentShareStyleRenderer';

/** 8.6: one reply attachment as `{type, id, url, width, height}`, or null for an unknown renderer. */
export function mapReplyAttachment(element: Node): ReplyAttachment | null {
  const renderer = element.node('style_type_renderer');
  const typename = renderer.get('__typename');
  if (typename === SHARE_RENDERER) {
    return { type: 'link', id: null, url: unshim(renderer.str('attachment.url')), width: null, height: null };
  }
  const type = typeof typename === 'string' && Object.hasOwn(MEDIA_RENDERERS, typename) ? MEDIA_RENDERERS[typename] : undefined;
  if (type === undefined) return null;
  const media = renderer.node('attachment.media');
  return {
    type,
    id: media.str('id'),
    url: type === 'video' ? media.str('playable_url') : media.str('image.uri'),
    width: media.intOrNull('image.width'),
    height: media.intOrNull('image.height'),
  };
}
