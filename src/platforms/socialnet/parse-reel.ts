// Reels (upstream/socialnet.md 7.4, 7.5 → api-spec 2.5). One line per API field; `R`, `V` and
// `P` are the chapter's path aliases.
import type { Node } from './reader.ts';
import { isoFromSeconds } from './parse-common.ts';

export interface Reel {
  videoId: string;
  postId: string;
  storyId: string;
  url: string;
  caption: string | null;
  createdAt: string;
  createdTimestamp: number;
  durationSeconds: number;
  width: number;
  height: number;
  thumbnailUrl: string;
  videoUrl: string;
  author: { id: string; name: string; url: string; avatarUrl: string; isVerified: boolean };
  audio: { trackTitle: string; isOriginalAudio: boolean; soundtrackId: string } | null;
  stats: { reactions: number; comments: number; sharesLabel: string; viewsLabel: string };
  feedbackId: string;
}

/** 7.5: one reel edge of `aggregated_sn_shorts.edges`. */
export function mapReel(edge: Node): Reel {
  const R = edge.node('profile_reel_node.node');
  const V = R.node('short_form_video_context');
  const P = V.node('playback_video');
  const soundtrack = V.nodeOrNull('soundtrack_info');
  const created = R.int('creation_time');
  return {
    videoId: P.str('id'),
    postId: R.str('post_id'),
    storyId: R.str('id'),
    url: V.str('shareable_url'),
    caption: R.strOrNull('message.text'),
    createdAt: isoFromSeconds(created),
    createdTimestamp: created,
    durationSeconds: P.num('length_in_second'),
    width: P.int('width'),
    height: P.int('height'),
    thumbnailUrl: P.str('image.uri'),
    videoUrl: P.strOrNull('browser_native_hd_url') ?? P.str('browser_native_sd_url'),
    author: {
      id: V.str('video_owner.id'),
      name: V.str('video_owner.name'),
      url: V.str('video_owner.url'),
      avatarUrl: V.str('video_owner.profile_picture.uri'),
      isVerified: V.bool('video_owner.is_verified'),
    },
    audio:
      soundtrack === null
        ? null
        : {
            trackTitle: soundtrack.str('track_title'),
            isOriginalAudio: soundtrack.bool('is_original_audio'),
            soundtrackId: soundtrack.str('soundtrack_id'),
          },
    stats: {
      reactions: R.int('feedback.reaction_count.count'),
      comments: R.int('feedback.comment_rendering_instance.comments.total_count'),
      sharesLabel: R.str('feedback.i18n_share_count'),
      viewsLabel: V.str('play_count_reduced'),
    },
    feedbackId: R.str('feedback.id'),
  };
}
