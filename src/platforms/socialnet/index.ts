// socialnet: timeline posts, reels, comment replies and profiles (README.md).
import { definePlatform } from '../../endpoints/define.ts';
import { description, socialnetPostCommentReplies, socialnetProfile, socialnetProfilePosts, socialnetProfileReels } from './endpoints.ts';

export const socialnet = definePlatform({
  id: 'socialnet',
  description,
  endpoints: [socialnetProfilePosts, socialnetPostCommentReplies, socialnetProfileReels, socialnetProfile],
});
