// The socialnet sandbox's catalogue: one entry per behaviour worth trying, with the API call
// that reaches it. Ids, feedback ids and expansion tokens are structural (seed-independent),
// so every entry holds whatever seed the sandbox runs with. Every description ends in the API's
// answer: "→ 200", "→ <status> <code>", or "first page → 200, next page → <status> <code>".
import type { CatalogueEntry } from '../../common.ts';
import { ACCOUNTS, accountNamed } from './accounts.ts';
import { WWW, commentFeedbackId, expansionTokenOf, legacyIdOf, postIdOf, profileIdOf } from './ids.ts';

const POSTS = '/v1/socialnet/profile/posts';
const REELS = '/v1/socialnet/profile/reels';
const REPLIES = '/v1/socialnet/post/comment/replies';
const PROFILE = '/v1/socialnet/profile';

/** Query-string value: readable, with only the characters that would change its meaning escaped. */
const value = (text: string): string => text.replace(/[%&+# ]/g, (c) => encodeURIComponent(c));
const query = (params: Record<string, string>): string =>
  Object.entries(params)
    .map(([key, text]) => `${key}=${value(text)}`)
    .join('&');

const idOf = (vanity: string): string => profileIdOf(accountNamed(vanity).no);
const urlOf = (vanity: string): string => `${WWW}/${vanity.toLowerCase()}`;
const ID_ONLY = ACCOUNTS.find((account) => account.vanity === null && account.state === 'ok')!;
const ID_ONLY_URL = `${WWW}/profile.php?id=${profileIdOf(ID_ONLY.no)}`;

/** feedbackId and expansionToken of top comment `comment` of an account's newest post. */
function comment(no: number, which = 0): { feedbackId: string; expansionToken: string } {
  const postId = postIdOf('post', no, 0);
  const feedbackId = commentFeedbackId(postId, legacyIdOf(postId, which, -1));
  return { feedbackId, expansionToken: expansionTokenOf(feedbackId) };
}
const commentOf = (vanity: string, which = 0) => comment(accountNamed(vanity).no, which);

const posts = (description: string, params: Record<string, string>): CatalogueEntry => ({ description, endpoint: POSTS, query: query(params) });
const reels = (description: string, params: Record<string, string>): CatalogueEntry => ({ description, endpoint: REELS, query: query(params) });
const replies = (description: string, params: Record<string, string>): CatalogueEntry => ({ description, endpoint: REPLIES, query: query(params) });
const profile = (description: string, params: Record<string, string>): CatalogueEntry => ({ description, endpoint: PROFILE, query: query(params) });

const BLOCKED = '→ 502 UPSTREAM_BLOCKED';
const NOT_FOUND = '→ 404 NOT_FOUND';
const UNRECOGNISED = '→ 502 UPSTREAM_UNRECOGNISED';
const REJECTED = '→ 400 BAD_REQUEST';

export const SOCIALNET_CATALOGUE: CatalogueEntry[] = [
  // Profile posts
  posts('Ordinary business page: verified; album, photo, video, link, reshare and text posts; top comments → 200', { url: urlOf('tidewaterkitchen') }),
  posts('Ordinary business page by numeric id (GraphQL timeline; session from the home page) → 200', { pageId: idOf('tidewaterkitchen') }),
  posts('Ordinary personal profile → 200', { url: urlOf('lunavoss') }),
  posts('Large page: 320 posts, 1 to 3 per GraphQL page; follow paging.cursor to the end → 200', { url: urlOf('metrodailynews') }),
  posts('Large page by numeric id → 200', { pageId: idOf('metrodailynews') }),
  posts('Right-to-left text: Arabic name, posts and comments → 200', { url: urlOf('noor.haddad') }),
  posts('CJK text: Japanese name and posts → 200', { url: urlOf('sakura.kato') }),
  posts('Emoji and mixed scripts; markup, quotes and ampersands in texts and in the page name → 200', { url: urlOf('emoji.mixtape') }),
  posts('Absent optional fields: text-only posts (media and link null), verified badge unknown on some posts → 200', { url: urlOf('quietcorner') }),
  posts('Profile without a vanity (profile.php URL, permalink.php permalinks) → 200', { url: ID_ONLY_URL }),
  posts('Id URL of a profile that has a vanity: 302 to the vanity path → 200', { url: `${WWW}/profile.php?id=${idOf('lunavoss')}` }),
  posts('/people/{Name}/{id} URL: /profile.php?id= answered with a redirect to the vanity → 200', { url: `${WWW}/people/Luna-Voss/${idOf('lunavoss')}` }),
  posts('Vanity registered as "MarinaGallery", asked in lower case: 301 to the registered spelling → 200', { url: `${WWW}/marinagallery` }),
  posts('Rotating sessions: from the second GraphQL page on, a reused session meets 1357004 or 1675030 and is refreshed once → 200', { pageId: idOf('rotating.sessions') }),
  posts(`No public posts (empty timeline) ${NOT_FOUND}`, { url: urlOf('emptyshelf') }),
  posts(`Age-restricted page (gated) ${NOT_FOUND}`, { url: urlOf('velvetcellar') }),
  posts(`Private profile ${NOT_FOUND}`, { url: urlOf('privatejournal') }),
  posts(`Deleted profile ${NOT_FOUND}`, { url: urlOf('closedshop') }),
  posts(`Profile that never existed ${NOT_FOUND}`, { url: `${WWW}/nosuchprofile` }),
  posts(`Unknown numeric id (GraphQL data.node null) ${NOT_FOUND}`, { pageId: '100999912345678' }),
  posts(`Gated page by numeric id (GraphQL data.node null) ${NOT_FOUND}`, { pageId: idOf('velvetcellar') }),
  posts(`Login wall instead of the profile page ${BLOCKED}`, { url: urlOf('walledgarden') }),
  posts(`Redirect to /checkpoint/ ${BLOCKED}`, { url: urlOf('checkpointed') }),
  posts(`HTTP 429 with Retry-After ${BLOCKED}`, { url: urlOf('ratelimited') }),
  posts(`GraphQL rate-limit error 1675004 on the timeline query ${BLOCKED}`, { pageId: idOf('throttledpage') }),
  posts(`Profile page without its timeline preloader ${UNRECOGNISED}`, { url: urlOf('brokenlayout') }),
  posts(`The timeline query rejects every cursor (1675012): first page → 200, next page ${REJECTED}`, { url: urlOf('cursorrejects') }),
  posts('Every GraphQL answer first comes back empty (only `for (;;);`, transient), the posts on the retry; retried → 200', { pageId: idOf('blankanswers') }),
  posts('Each timeline page (12 posts in all) first answered empty after `for (;;);` (transient); follow paging.cursor to the end; retried → 200', { url: urlOf('blankanswers') }),
  posts('Timeline first answered without its page_info line (incomplete NDJSON, transient), complete on the retry; retried → 200', { pageId: idOf('lostpageinfo') }),
  posts('Each timeline page (11 posts in all) first answered without its page_info line (transient); follow paging.cursor to the end; retried → 200', { url: urlOf('lostpageinfo') }),
  posts('Timeline first answered with its last NDJSON line cut off (transient), complete on the retry; retried → 200', { pageId: idOf('cutofffeed') }),
  posts('Slow upstream: every answer after SANDBOX_SLOW_MS → 200', { url: urlOf('slow.tidewater') }),
  posts('Flaky upstream: 503, then a reset connection, then the answer (per request), retried → 200', { url: urlOf('flaky.tidewater') }),
  posts(`Upstream down: always 503, retried ${BLOCKED}`, { url: urlOf('down.tidewater') }),

  // Profile reels
  reels('Ordinary business page: 24 reels, captions, original and licensed audio → 200', { url: urlOf('tidewaterkitchen') }),
  reels('Large page: 215 reels; follow paging.cursor to the end → 200', { url: urlOf('metrodailynews') }),
  reels('Right-to-left captions → 200', { url: urlOf('noor.haddad') }),
  reels('Emoji and mixed-script captions → 200', { url: urlOf('emoji.mixtape') }),
  reels('Absent optional fields: no captions, no HD URL, no soundtrack (audio null) → 200', { url: urlOf('quietcorner') }),
  reels('Profile without a vanity (profile.php?id=…&sk=reels_tab) → 200', { url: ID_ONLY_URL }),
  reels('No reels: empty collection (reels []) → 200', { url: urlOf('emptyshelf') }),
  reels('Each reels query (14 reels in all) first answered empty after `for (;;);` (transient); follow paging.cursor to the end; retried → 200', { url: urlOf('blankanswers') }),
  reels('Rotating sessions on the reels query (cursor pages) → 200', { url: urlOf('rotating.sessions') }),
  reels(`GraphQL rate limit on the reels query (the reels tab is served): first page → 200, next page ${BLOCKED}`, { url: urlOf('throttledpage') }),
  reels(`Reels tab without the reels preloader ${UNRECOGNISED}`, { url: urlOf('brokenlayout') }),
  reels(`The reels query rejects every cursor (1675012): first page → 200, next page ${REJECTED}`, { url: urlOf('cursorrejects') }),
  reels(`Country-restricted page (gated) ${NOT_FOUND}`, { url: urlOf('borderlandradio') }),
  reels(`Private profile ${NOT_FOUND}`, { url: urlOf('privatejournal') }),
  reels(`Login wall ${BLOCKED}`, { url: urlOf('walledgarden') }),
  reels(`HTTP 429 ${BLOCKED}`, { url: urlOf('ratelimited') }),

  // Comment replies
  replies('Ordinary comment with 3 replies (page replies as original poster, stickers, attachments) → 200', commentOf('tidewaterkitchen')),
  replies('Comment with 260 replies; follow paging.cursor to the end → 200', commentOf('metrodailynews')),
  replies('Comment without replies (replies []) → 200', commentOf('tidewaterkitchen', 1)),
  replies('Each replies query (15 replies in all) first answered empty after `for (;;);` (transient); follow paging.cursor to the end; retried → 200', commentOf('blankanswers')),
  replies('Right-to-left replies → 200', commentOf('noor.haddad')),
  replies('Emoji and mixed-script replies → 200', commentOf('emoji.mixtape')),
  replies('Comment on a profile without a vanity → 200', comment(ID_ONLY.no)),
  replies('Rotating sessions on the replies query (25 replies) → 200', commentOf('rotating.sessions')),
  replies(`Expansion token of another comment (error 1675012) ${REJECTED}`, {
    feedbackId: commentOf('tidewaterkitchen').feedbackId,
    expansionToken: commentOf('lunavoss').expansionToken,
  }),
  replies(`The replies query rejects every cursor (1675012): first page → 200, next page ${REJECTED}`, commentOf('cursorrejects')),
  replies(`Comment that does not exist (data.node null) ${NOT_FOUND}`, comment(1, 5)),
  replies(`Comment on a gated page (data.node null) ${NOT_FOUND}`, commentOf('velvetcellar')),
  replies(`GraphQL rate-limit error 1675004 ${BLOCKED}`, commentOf('throttledpage')),

  // Profile info
  profile('Ordinary business page: categories, contact, links, rating, hours "Open now" → 200', { url: urlOf('tidewaterkitchen') }),
  profile('Ordinary business page without the hours request (businessHours null) → 200', { url: urlOf('tidewaterkitchen'), businessHours: 'false' }),
  profile('Ordinary personal profile: alternate name, followers only → 200', { url: urlOf('lunavoss') }),
  profile('Large page: duplicate phone (first kept), second website in links, hours "Always open" → 200', { url: urlOf('metrodailynews') }),
  profile('Vanity in another case (301) and hours "Closed now" → 200', { url: `${WWW}/MarinaGallery/about` }),
  profile('Right-to-left name, bio and about fields → 200', { url: urlOf('noor.haddad') }),
  profile('CJK name; intro card without bio → 200', { url: urlOf('sakura.kato') }),
  profile('Mixed-script name with "<3", quotes and ampersand; inactive business page; hours "Opens soon" → 200', { url: urlOf('emoji.mixtape') }),
  profile('Absent optional fields: no cover, bio, followers, contact, links or rating → 200', { url: urlOf('quietcorner') }),
  profile('Profile without a vanity (username null; followers under /people/…) → 200', { url: ID_ONLY_URL }),
  profile('Page without public posts: info is served; hours "Temporarily closed" → 200', { url: urlOf('emptyshelf') }),
  profile('Pages served while GraphQL is rate-limited; hours "Closes soon" → 200', { url: urlOf('throttledpage') }),
  profile('Hours "Permanently closed" → 200', { url: urlOf('rotating.sessions') }),
  profile('Age-restricted page: limited response (gated true) → 200', { url: urlOf('velvetcellar') }),
  profile(`Age-restricted page with allowGated=false ${NOT_FOUND}`, { url: urlOf('velvetcellar'), allowGated: 'false' }),
  profile('Country-restricted page: limited response (gated true) → 200', { url: urlOf('borderlandradio') }),
  profile('Page unavailable to logged-out viewers: limited response (gated true) → 200', { url: urlOf('membersonlyclub') }),
  profile(`Private profile ${NOT_FOUND}`, { url: urlOf('privatejournal') }),
  profile(`Deleted profile ${NOT_FOUND}`, { url: urlOf('closedshop') }),
  profile(`Profile that never existed ${NOT_FOUND}`, { url: `${WWW}/nosuchprofile` }),
  profile(`About tab without the about preloader ${UNRECOGNISED}`, { url: urlOf('brokenlayout') }),
  profile(`Login wall ${BLOCKED}`, { url: urlOf('walledgarden') }),
  profile(`Redirect to /checkpoint/ ${BLOCKED}`, { url: urlOf('checkpointed') }),
  profile(`HTTP 429 ${BLOCKED}`, { url: urlOf('ratelimited') }),
  profile('Slow upstream → 200', { url: urlOf('slow.tidewater') }),
  profile('Flaky upstream: 503, reset, then the answer, retried → 200', { url: urlOf('flaky.tidewater') }),
  profile(`Upstream down ${BLOCKED}`, { url: urlOf('down.tidewater') }),
];
