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
  TokenParam,
  UrlParam,
  readBoolean,
} from '../../endpoints/schemas/common.ts';
import { PAGE_ID_MESSAGE, isSocialnetId, parseSocialnetUrl } from './urls.ts';
import { Post, Profile, Reel, Reply } from './schema.ts';
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
  'Pagination.',
);

const CURSOR_PAGING = { param: 'cursor', field: 'cursor', flag: 'hasNextPage', end: null } as const;

const cursorParam = TokenParam('`paging.cursor` of a previous response; repeat the target parameters of the first call.');

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
  // Relay ids and tokens are opaque (README.md): passed on unchanged, checked upstream.
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
    { additionalProperties: false },
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
  paging: { ...CURSOR_PAGING, items: 'posts' },
  normalise: normalisePosts,
  exampleQuery: { url: 'https://www.socialnet.example/tidewaterkitchen' },
  extract: socialnetExtractors.posts,
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
    { additionalProperties: false },
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
  paging: { ...CURSOR_PAGING, items: 'reels' },
  normalise: normaliseReels,
  exampleQuery: { url: 'https://www.socialnet.example/tidewaterkitchen' },
  extract: socialnetExtractors.reels,
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
    { additionalProperties: false },
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
  paging: { ...CURSOR_PAGING, items: 'replies' },
  normalise: normaliseReplies,
  exampleQuery: {
    feedbackId: 'ZmVlZGJhY2s6MTAwMTAwMDAwNjExNzc3XzgwMDAwMDAwNTM5NTEzMg==',
    expansionToken: 'MTpjb21tZW50OjE63GoWsShWTZPvmVOLtcrQhc6QPANrcBVtBqHtsET1',
  },
  extract: socialnetExtractors.replies,
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
    { additionalProperties: false },
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
  exampleQuery: { url: 'https://www.socialnet.example/tidewaterkitchen' },
  extract: socialnetExtractors.profile,
});
