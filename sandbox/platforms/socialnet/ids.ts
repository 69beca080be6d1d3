// Structural identifiers of the socialnet sandbox: profile, post, reel and comment ids, Relay
// ids, expansion tokens and cursors (src/platforms/socialnet/README.md). They derive from a
// fixed key and the account number only, never from the seed, so that the catalogue's ids and
// tokens hold whatever seed the sandbox runs with. Content (texts, counts, media) comes from
// the seed. Ids carry their position (account, index) so the upstream can resolve them, plus
// hash digits it checks; the extractor treats all of them as opaque.
import { createHash } from 'node:crypto';

const STRUCTURE_KEY = 'socialnet-sandbox-structure-v1';

export const WWW = 'https://www.socialnet.example';
export const SCONTENT = 'https://scontent.socialnet-cdn.example';
export const VIDEO_CDN = 'https://video.socialnet-cdn.example';

export function structureHash(...parts: (string | number)[]): Buffer {
  return createHash('sha256').update([STRUCTURE_KEY, ...parts].join('\u0000')).digest();
}

/** `length` decimal digits derived from `parts` (may start with 0: used after a prefix). */
export function hashDigits(length: number, ...parts: (string | number)[]): string {
  let out = '';
  for (let round = 0; out.length < length; round += 1) {
    for (const byte of structureHash(...parts, round)) {
      if (byte < 250) out += String(byte % 10);
      if (out.length === length) break;
    }
  }
  return out;
}

/** A 15- to 17-digit id without a leading zero, for objects nobody resolves (photos, authors). */
export function opaqueId(...parts: (string | number)[]): string {
  const length = 15 + (structureHash('len', ...parts)[0]! % 3);
  const digits = hashDigits(length, ...parts);
  return String(1 + (Number(digits[0]) % 9)) + digits.slice(1);
}

const pad = (value: number, width: number): string => String(value).padStart(width, '0');
const lengthOf = (...parts: (string | number)[]): number => 15 + (structureHash('len', ...parts)[0]! % 3);

export const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
export const unb64 = (text: string): string | null => {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return null;
  const decoded = Buffer.from(text, 'base64');
  return decoded.toString('base64') === text ? decoded.toString('utf8') : null;
};
const b64url = (bytes: Buffer): string => bytes.toString('base64url');

// ---------------------------------------------------------------------------------------
// Numeric ids with positions

/** Profile id of account `no`: 15 to 17 digits. */
export function profileIdOf(no: number): string {
  const length = lengthOf('profile', no);
  return (length === 17 ? '615' : '100') + pad(no, 4) + hashDigits(length - 7, 'profile', no);
}

type PostKind = 'post' | 'reel' | 'video';
const POST_LEAD: Record<PostKind, string> = { post: '1', reel: '2', video: '3' };

/** Id of the `index`-th story (`post`), reel story (`reel`) or reel video (`video`) of account `no`. */
export function postIdOf(kind: PostKind, no: number, index: number): string {
  const length = lengthOf(kind, no, index);
  return POST_LEAD[kind] + pad(no, 3) + pad(index, 5) + hashDigits(length - 9, kind, no, index);
}

/** Account number and index of a post id built by `postIdOf`, or null. */
export function parsePostId(kind: PostKind, id: string): { no: number; index: number } | null {
  if (!/^[1-9][0-9]{14,16}$/.test(id) || id[0] !== POST_LEAD[kind]) return null;
  const no = Number(id.slice(1, 4));
  const index = Number(id.slice(4, 9));
  return postIdOf(kind, no, index) === id ? { no, index } : null;
}

/**
 * Legacy id of top comment `comment` of a post (`reply` = -1), or of its reply number `reply`.
 */
export function legacyIdOf(postId: string, comment: number, reply: number): string {
  const length = lengthOf('comment', postId, comment, reply);
  return '8' + pad(comment, 1) + pad(reply + 1, 6) + hashDigits(length - 8, 'comment', postId, comment, reply);
}

export function parseLegacyId(postId: string, id: string): { comment: number; reply: number } | null {
  if (!/^8[0-9]{14,16}$/.test(id)) return null;
  const comment = Number(id.slice(1, 2));
  const reply = Number(id.slice(2, 8)) - 1;
  return legacyIdOf(postId, comment, reply) === id ? { comment, reply } : null;
}

// ---------------------------------------------------------------------------------------
// Relay ids: base64 of a typed key

export const storyRelayId = (actorId: string, postId: string): string => b64(`S:_I${actorId}:${postId}`);
export const postFeedbackId = (postId: string): string => b64(`feedback:${postId}`);
export const commentRelayId = (postId: string, legacyId: string): string => b64(`comment:${postId}_${legacyId}`);
export const commentFeedbackId = (postId: string, legacyId: string): string => b64(`feedback:${postId}_${legacyId}`);
export const reelNodeId = (videoId: string): string => b64(`profile_reel_node:${videoId}`);

/** The post id and comment legacy id a comment feedback id names, or null. */
export function parseCommentFeedbackId(feedbackId: string): { postId: string; legacyId: string } | null {
  const key = unb64(feedbackId);
  const match = key === null ? null : /^feedback:([1-9][0-9]{14,16})_([1-9][0-9]{14,16})$/.exec(key);
  return match ? { postId: match[1]!, legacyId: match[2]! } : null;
}

/** The reels collection of account `no`; `{appId}` and `{collectionType}` differ between profiles. */
export function collectionIdOf(no: number): string {
  const appId = opaqueId('app', no);
  const type = 100 + (structureHash('collection-type', no).readUInt16BE(0) % 900);
  return b64(`app_collection:${profileIdOf(no)}:${appId}:${type}`);
}

/** Account number of a reels collection id, or null. */
export function parseCollectionId(collectionId: string): number | null {
  const key = unb64(collectionId);
  const match = key === null ? null : /^app_collection:([0-9]+):[0-9]+:[0-9]+$/.exec(key);
  if (!match) return null;
  const no = Number(match[1]!.slice(3, 7));
  return profileIdOf(no) === match[1] && collectionIdOf(no) === collectionId ? no : null;
}

// ---------------------------------------------------------------------------------------
// Tokens and cursors: opaque URL-safe base64, checked by a MAC

const mac = (...parts: (string | number)[]): Buffer => structureHash('mac', ...parts).subarray(0, 9);

/** The expansion token issued for the comment (or reply) with this feedback id. */
export const expansionTokenOf = (feedbackId: string): string =>
  'MTpjb21tZW50OjE6' + b64url(structureHash('expansion', feedbackId).subarray(0, 30));

export type CursorKind = 'timeline' | 'reels' | 'replies';
const CURSOR_PREFIX: Record<CursorKind, string> = {
  timeline: 'Cg8Ob3JnYW5pY19jdXJzb3IJAAAAFUFRSFI',
  reels: 'QVFIU',
  replies: 'MToxNzE4',
};

/** Cursor meaning "continue at item `next`" of the list owned by `owner`. */
export function cursorOf(kind: CursorKind, owner: string, next: number): string {
  const position = Buffer.alloc(4);
  position.writeUInt32BE(next);
  return CURSOR_PREFIX[kind] + b64url(Buffer.concat([position, mac(kind, owner, next)]));
}

/** The position a cursor carries when the upstream issued it for `owner`, else null. */
export function parseCursor(kind: CursorKind, owner: string, cursor: string): number | null {
  const prefix = CURSOR_PREFIX[kind];
  if (!cursor.startsWith(prefix)) return null;
  const rest = cursor.slice(prefix.length);
  if (!/^[A-Za-z0-9_-]{18}$/.test(rest)) return null;
  const bytes = Buffer.from(rest, 'base64url');
  if (bytes.length !== 13) return null;
  const next = bytes.readUInt32BE(0);
  return cursorOf(kind, owner, next) === cursor ? next : null;
}
