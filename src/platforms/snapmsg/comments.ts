// The Spotlight comments mapping (upstream/snapmsg.md 5.1 to 5.5): selecting the requested
// story on the Spotlight page, and one line per API field of a comment.
import { parseJson } from './html.ts';
import {
  bool,
  firstOf,
  int,
  isObject,
  list,
  ms,
  need,
  num,
  object,
  opt,
  required,
  Src,
  str,
  unrecognised,
  val,
} from './proto.ts';

/** Comment (5.3): `C` = one entry of `comments`. */
export function comment(C: Src) {
  const timestamp = required(C.get('createTimestampMs'), ms);
  const author = C.get('author');
  return {
    id: need(C.get('commentId')),
    text: str(C.get('text')),
    authorDisplayName: str(firstOf(val(author.get('displayName')), author.get('username'))),
    authorAvatarUrl: str(val(author.get('avatarUrl'))),
    likeCount: int(C.get('likeCount')),
    replyCount: int(C.get('replyCount')),
    timestamp,
    updatedAt: ms(C.get('updateTimestampMs')) ?? timestamp,
    rankingScore: num(C.get('rankingScore')) ?? 0,
  };
}

/** What the Spotlight page says about the requested story's comments (5.1, 5.4). */
export type SpotlightComments =
  | { kind: 'missing' }
  | { kind: 'disabled' }
  | { kind: 'enabled'; contextId: string };

/**
 * Selects the element of `spotlightFeed.spotlightStories` whose `story.storyId.value` is the
 * requested id exactly, and reads its `commentsInfo`.
 */
export function spotlightComments(nextData: Src, spotlightId: string): SpotlightComments {
  const feed = nextData.get('props').get('pageProps').get('spotlightFeed');
  const stories = feed.get('spotlightStories');
  if (!Array.isArray(stories.value)) unrecognised(`${stories.path} is missing`);
  const element = list(stories).find((entry) => val(entry.get('story').get('storyId')).value === spotlightId);
  if (!element) return { kind: 'missing' };
  const info = element.get('commentsInfo');
  if (info.absent) return { kind: 'disabled' };
  object(info);
  const contextId = opt(info.get('contextId'));
  if (!bool(info.get('isCommentingEnabled')) || contextId === null) return { kind: 'disabled' };
  return { kind: 'enabled', contextId };
}

/** One comments response (5.2) mapped: the comments in upstream order, and the next upstream cursor. */
export function mapCommentsPage(body: string): { comments: ReturnType<typeof comment>[]; nextCursor: string | null } {
  const parsed = parseJson(body);
  if (!isObject(parsed)) unrecognised('the comments response is not a JSON object');
  const response = new Src(parsed, 'comments response');
  if (!response.get('error').absent) unrecognised('the comments response is an error, not a list of comments');
  const comments = list(response.get('comments')).map(comment);
  const cursor = opt(val(response.get('nextCursor')));
  return { comments, nextCursor: bool(response.get('hasMore')) && cursor !== null ? cursor : null };
}

/** The `error.code` of a comments error body (5.6), or null when the body has none. */
export function errorCode(body: string): string | null {
  const parsed = parseJson(body);
  const code = isObject(parsed) && isObject(parsed.error) ? parsed.error.code : undefined;
  return typeof code === 'string' ? code : null;
}
