// Declarations of the snapmsg, linkpage-a, linkpage-b and shopfront endpoints. The data
// schemas follow api-spec.md section 2 with the shapes and nullability that the upstream
// chapters' mapping tables fix (upstream/*.md) and api-decisions.md "Absent data".
// Extractors are attached later; until then these endpoints answer 501.
import { Type } from 'typebox';
import { DateTime, Nullable, Obj, QueryText, TokenParam, UrlParam } from './schemas/common.ts';
import type { EndpointDeclaration, NormaliseResult, RawQuery } from './types.ts';
import { normaliseSnapmsgUsername, parseSpotlightUrl } from '../platforms/snapmsg/urls.ts';
import { parseLinkpageAUrl } from '../platforms/linkpage-a/urls.ts';
import { parseLinkpageBUrl } from '../platforms/linkpage-b/urls.ts';
import { parseShopfrontUrl } from '../platforms/shopfront/urls.ts';

const Str = Type.String;
const Int = Type.Integer;
const Bool = Type.Boolean;
const NStr = () => Nullable(Type.String());

/** Runs a platform's URL rule on the `url` parameter; every refusal is a detail on `url`. */
const normaliseUrl =
  (parse: (input: string) => { ok: true; url: string } | { ok: false; message: string }) =>
  (query: RawQuery): NormaliseResult => {
    const raw = query.url;
    if (raw === undefined || raw === '') return { ok: false, details: [{ path: 'url', message: 'Required' }] };
    const result = parse(raw);
    return result.ok
      ? { ok: true, params: { url: result.url } }
      : { ok: false, details: [{ path: 'url', message: result.message }] };
  };

// ---------------------------------------------------------------- snapmsg (upstream/snapmsg.md)

/** The OpenAPI tag's description of every snapmsg endpoint. */
const SNAPMSG =
  'snapmsg, a messaging app with public web profiles: profiles with their story, lenses and highlights, and the ' +
  'comments on public Spotlight videos.';

/** SNAP mapping (snapmsg.md 4.7). */
const SnapmsgSnap = Obj({
  index: Int(),
  mediaType: Int({ description: '`0` image, `1` video.' }),
  mediaUrl: Str(),
  previewUrl: Str({ description: 'The media URL itself when upstream has no preview.' }),
  overlayUrl: NStr(),
  timestamp: DateTime(),
  title: NStr(),
  lat: Nullable(Type.Number()),
  lng: Nullable(Type.Number()),
});

/** HIGHLIGHT mapping (snapmsg.md 4.7); also the element of `spotlightHighlights` (4.8). */
const SnapmsgHighlight = Obj({
  id: Str(),
  storyId: NStr(),
  title: NStr(),
  subtitle: NStr(),
  emoji: NStr(),
  canonicalUrlSuffix: NStr(),
  thumbnailUrl: Str(),
  snapCount: Int(),
  snaps: Type.Array(SnapmsgSnap),
});

const SnapmsgLens = Obj({
  id: Str(),
  name: Str(),
  creatorDisplayName: Str(),
  creatorUsername: Nullable(Str({ description: 'Null for lenses by creators without a public profile.' })),
  previewImageUrl: Str(),
  iconUrl: Str(),
  unlockUrl: Str(),
  previewVideoUrl: NStr(),
  scannableImageUrl: NStr(),
  isOfficial: Bool(),
  updatedAt: Nullable(DateTime('Null when upstream omits it.')),
});

const SnapmsgProfile = Obj({
  profileType: Type.Union([Type.Literal('publicProfileInfo'), Type.Literal('userInfo')], {
    description: '`userInfo` for an account without a public profile: most fields are then empty, zero or null.',
  }),
  username: Str(),
  displayName: Str(),
  bio: Str(),
  address: Str(),
  websiteUrl: NStr(),
  profilePictureUrl: Str(),
  snapcodeImageUrl: Str(),
  squareHeroImageUrl: NStr(),
  subscriberCount: Int(),
  badge: Int({ description: '`0` none, `1` verified.' }),
  isOfficial: Bool(),
  hasStory: Bool(),
  hasCuratedHighlights: Bool(),
  hasSpotlightHighlights: Bool(),
  category: NStr(),
  subcategory: NStr(),
  publisherType: NStr(),
  primaryColor: NStr(),
  createdAt: Nullable(DateTime('Null for an account without a public profile.')),
  updatedAt: Nullable(DateTime('Null for an account without a public profile.')),
  businessProfileId: Str(),
  hostUserId: Str(),
  bitmoji3dUrl: NStr(),
  canonicalUrl: Str(),
  previewImageUrl: Str(),
  relatedAccounts: Type.Array(
    Obj({
      username: Str(),
      displayName: Str(),
      profilePictureUrl: NStr(),
      subscriberCount: Int(),
      badge: Int(),
    }),
  ),
  sameAsLinks: Type.Array(Str(), { description: 'Absolute URLs the profile links to.' }),
  story: Nullable(
    Obj(
      {
        id: NStr(),
        thumbnailUrl: NStr(),
        snapCount: Int(),
        snaps: Type.Array(SnapmsgSnap),
      },
      'The current story; null when there is none.',
    ),
  ),
  lenses: Type.Array(SnapmsgLens),
  curatedHighlights: Type.Array(SnapmsgHighlight),
  spotlightHighlights: Type.Array(SnapmsgHighlight),
  counts: Obj({ lenses: Int(), curatedHighlights: Int(), spotlightHighlights: Int() }),
});

export const snapmsgProfile: EndpointDeclaration = {
  id: 'snapmsg.profile',
  path: '/v1/snapmsg/profile',
  platform: 'snapmsg',
  platformDescription: SNAPMSG,
  summary: 'snapmsg public profile',
  description:
    'A snapmsg profile by username: public profile details, current story, lenses, curated and Spotlight ' +
    'highlights (the first batch the profile page embeds) and related accounts. An existing account without ' +
    'a public profile answers with `profileType: "userInfo"` and empty, zero or null fields.',
  query: Type.Object(
    {
      username: QueryText(
        16,
        'snapmsg username, with or without a leading `@`: 3 to 15 characters, a letter first, then letters, digits, `.`, `_`, `-`; case-insensitive.',
      ),
    },
    { additionalProperties: true },
  ),
  data: Obj({ profile: SnapmsgProfile, fetchedAt: DateTime() }),
  normalise: (query) => {
    const raw = query.username;
    if (raw === undefined || raw === '') return { ok: false, details: [{ path: 'username', message: 'Required' }] };
    const result = normaliseSnapmsgUsername(raw);
    return result.ok
      ? { ok: true, params: { username: result.username } }
      : { ok: false, details: [{ path: 'username', message: result.message }] };
  },
  exampleQuery: { username: 'lunavoss' },
};

const SpotlightComment = Obj({
  id: Str(),
  text: Str(),
  authorDisplayName: Str(),
  authorAvatarUrl: Str({ description: '`""` when the author has no avatar.' }),
  likeCount: Int(),
  replyCount: Int(),
  timestamp: DateTime(),
  updatedAt: DateTime('Equals `timestamp` when the comment was never edited.'),
  rankingScore: Type.Number(),
});

export const snapmsgSpotlightComments: EndpointDeclaration = {
  id: 'snapmsg.spotlight.comments',
  path: '/v1/snapmsg/spotlight/comments',
  platform: 'snapmsg',
  platformDescription: SNAPMSG,
  summary: 'Comments on a snapmsg Spotlight video',
  description:
    'Comments on a public Spotlight video, in the platform’s ranking order, one upstream batch per call. ' +
    'Pass `paging.cursor` back as `cursor` (with the same `url`) for the next batch; at the end `paging.cursor` ' +
    'is `""` and `paging.hasMore` is false. A video with comments turned off answers with no comments.',
  query: Type.Object(
    {
      url: UrlParam(
        'Spotlight video URL: `https://www.snapmsg.example/spotlight/{id}` or `https://www.snapmsg.example/@{username}/spotlight/{id}`.',
      ),
      cursor: Type.Optional(TokenParam('`paging.cursor` of a previous response, to fetch the next batch.')),
    },
    { additionalProperties: true },
  ),
  data: Obj({
    comments: Type.Array(SpotlightComment),
    count: Int({ description: 'Number of comments in this batch.' }),
    paging: Obj({
      cursor: Str({ description: 'Opaque cursor of the next batch; `""` at the end.' }),
      hasMore: Bool(),
    }),
    fetchedAt: DateTime(),
  }),
  paging: { param: 'cursor', field: 'cursor', flag: 'hasMore', end: '' },
  normalise: normaliseUrl(parseSpotlightUrl),
  exampleQuery: { url: 'https://www.snapmsg.example/spotlight/Qk3_vT8mZp2LwN5aYc1RdH7sJx0EuGf4KbViOq6yXn9MtW2zAeB8lC3oPr5UgA' },
};

// ---------------------------------------------------------- linkpage-a (upstream/linkpage-a.md)

/** The OpenAPI tag's description of every linkpage-a endpoint. */
const LINKPAGE_A =
  'linkpage-a, a link-in-bio service: public profiles with their links, social links, contact details and gallery.';

const LinkpageAProfile = Obj({
  id: Str(),
  userId: Str(),
  username: Str(),
  displayName: Str(),
  firstName: Str(),
  lastName: NStr(),
  bio: Str(),
  url: Str(),
  verified: Bool(),
  verifiedColor: Str(),
  isAmbassador: Bool(),
  isPrivate: Bool({ description: 'Always false: a private profile is 404.' }),
  isAdult: Bool(),
  isDefaultProfilePicture: Bool(),
  tipsEnabled: Bool(),
  shopEnabled: Bool(),
  avatarUrl: Str(),
  avatarUrlPng: Str(),
  coverUrl: NStr(),
  logoUrl: NStr(),
  videoProfileUrl: NStr(),
  videoProfileThumbnailUrl: NStr(),
  views: Str({ description: 'Abbreviated view count, e.g. `12.3K`.' }),
  followers: Nullable(Int({ description: 'Null when the owner hides it.' })),
  totalLinks: Int(),
  theme: Str(),
  customTheme: Obj({
    backgroundColor: NStr(),
    backgroundImageUrl: NStr(),
    bioBackground: NStr(),
    mainTextColor: NStr(),
    level1TextColor: NStr(),
    level2TextColor: NStr(),
    customFont: NStr(),
    customFontUrl: NStr(),
  }),
  qrCode: Str({ description: 'Path relative to the site, e.g. `/qr/{username}.png`.' }),
  referralLink: Str(),
  deeplink: Str(),
  createdAt: DateTime(),
  updatedAt: DateTime(),
  socialLinks: Type.Array(
    Obj({ platform: Str(), url: Str(), handle: Str(), iconUrl: Str(), isAdult: Bool() }),
  ),
  featuredLinks: Type.Array(
    Obj({
      id: Int(),
      title: Str(),
      description: NStr(),
      url: Str(),
      platform: Str(),
      imageUrl: NStr(),
      iconUrl: Str(),
      thumbnail: Str({ description: '`none`, `small`, `medium` or `large`.' }),
      color: Type.Union([Obj({ c: Str() }), Obj({ p: Obj({ d: Str(), l: Str() }) })], {
        description: 'A custom colour `{c}`, or a palette `{p: {d, l}}` with dark and light colours.',
      }),
      order: Int(),
      isAdult: Bool(),
      kind: Str(),
    }),
  ),
  contactInfo: Type.Array(Obj({ type: Str(), value: Str() })),
  gallery: Type.Array(Obj({ id: Int(), url: Str(), order: Int(), createdAt: DateTime() })),
  sections: Type.Array(Obj({ section: Str(), order: Int(), enabled: Bool() })),
  sameAs: Type.Array(Str()),
  metadata: Obj({ title: Str(), description: Str(), image: Str(), keywords: Str(), canonical: Str() }),
});

export const linkpageAProfile: EndpointDeclaration = {
  id: 'linkpage-a.profile',
  path: '/v1/linkpage-a/profile',
  platform: 'linkpage-a',
  platformDescription: LINKPAGE_A,
  summary: 'linkpage-a link-in-bio profile',
  description:
    'A public linkpage-a profile: identity, theme, social and featured links, contact details, gallery, ' +
    'sections and page metadata. A private profile is 404.',
  query: Type.Object(
    {
      url: UrlParam('Profile URL: `https://linkpage-a.example/{username}` or `https://linkpage-a.example/@{username}`.'),
    },
    { additionalProperties: true },
  ),
  data: Obj({ profile: LinkpageAProfile, fetchedAt: DateTime() }),
  normalise: normaliseUrl(parseLinkpageAUrl),
  exampleQuery: { url: 'https://linkpage-a.example/theo.marsh' },
};

// ---------------------------------------------------------- linkpage-b (upstream/linkpage-b.md)

/** The OpenAPI tag's description of every linkpage-b endpoint. */
const LINKPAGE_B =
  'linkpage-b, a link-in-bio service: public pages with their links, social links, pinned links and store.';

const linkpageBLinkFields = {
  id: Str(),
  type: Str({ description: '`CLASSIC`, `HEADER`, `GROUP` or another upper-case code.' }),
  title: Str(),
  url: Str({ description: '`""` for headers, groups and locked links.' }),
  thumbnailUrl: NStr(),
  position: Int(),
  locked: Bool(),
  gateTypes: Nullable(
    Type.Array(Str(), {
      description: 'Active gates in order (`age`, `sensitiveContent`, `passcode`, `payment`, `nft`); null when none.',
    }),
  ),
  layout: Str(),
  amazonAffiliate: Bool(),
  meta: Obj({ title: NStr(), description: NStr(), image: NStr() }),
};

/** A GROUP's child: groups are one level deep, so a child's own `children` is always null. */
const LinkpageBChildLink = Obj({ ...linkpageBLinkFields, children: Type.Null() });

const LinkpageBLink = Obj({
  ...linkpageBLinkFields,
  children: Nullable(Type.Array(LinkpageBChildLink, { description: 'The links of a GROUP; null for other types.' })),
});

const LinkpageBPage = Obj({
  username: Str(),
  uuid: Str(),
  title: Str(),
  name: Str(),
  accountId: Int(),
  description: NStr(),
  isVerified: Bool(),
  isActive: Bool(),
  avatarUrl: Str({ description: '`""` when the page has no avatar.' }),
  avatarType: Str(),
  avatarShape: Str(),
  bannerType: Str(),
  bannerImageUrl: NStr(),
  createdAt: DateTime(),
  updatedAt: DateTime(),
  socialLinksPosition: Str(),
  metaTitle: Str(),
  metaDescription: Str(),
  theme: Obj({
    key: Str(),
    luminance: Str(),
    backgroundColor: Str(),
    backgroundStyle: Str(),
    backgroundType: Str(),
    buttonType: Str(),
    buttonColor: Str(),
    buttonTextColor: Str(),
    buttonCornerType: Str(),
    buttonShadowColor: Str(),
    socialColor: Str(),
    fontFamily: Str(),
    fontColor: Str(),
  }),
  socialLinks: Type.Array(Obj({ type: Str(), url: Str(), position: Int() })),
  links: Type.Array(LinkpageBLink),
  pinnedLinks: Type.Array(LinkpageBLink),
  storefront: Obj({
    hasCommissionProducts: Bool(),
    itemCount: Int(),
    postCount: Int(),
    items: Type.Array(
      Obj({
        id: Str(),
        title: Str(),
        url: Str(),
        imageUrl: NStr(),
        price: Nullable(Str({ description: 'Formatted price, e.g. `€38.00`.' })),
        isAffiliate: Bool(),
      }),
    ),
    posts: Type.Array(Obj({ id: Str(), title: Str(), url: Str(), imageUrl: NStr(), productCount: Int() })),
  }),
  linkCount: Int(),
  totalLinkCount: Int(),
  socialCount: Int(),
});

export const linkpageBPage: EndpointDeclaration = {
  id: 'linkpage-b.page',
  path: '/v1/linkpage-b/page',
  platform: 'linkpage-b',
  platformDescription: LINKPAGE_B,
  summary: 'linkpage-b link-in-bio page',
  description:
    'A public linkpage-b page: identity, theme, social links, links (groups with their children), pinned ' +
    'links and the store. Sensitive or 18+ pages are returned normally.',
  query: Type.Object(
    { url: UrlParam('Page URL: `https://linkpage-b.example/{username}`.') },
    { additionalProperties: true },
  ),
  data: Obj({ page: LinkpageBPage, fetchedAt: DateTime() }),
  normalise: normaliseUrl(parseLinkpageBUrl),
  exampleQuery: { url: 'https://linkpage-b.example/maraquill' },
};

// ------------------------------------------------------------ shopfront (upstream/shopfront.md)

/** The OpenAPI tag's description of every shopfront endpoint. */
const SHOPFRONT =
  "shopfront, creator storefronts: a creator's curations, trending products and shoppable feed posts.";

const ShopfrontShop = Obj({
  handle: Str(),
  name: Str(),
  url: Str(),
  avatarUrl: Str(),
  bio: Str(),
  affiliateTag: Str(),
  storefrontId: Str(),
  isTopCreator: Bool(),
  earnsCommissions: Bool(),
  totalPosts: Int({ description: 'Posts of the whole storefront, all batches.' }),
  socialLinks: Type.Array(Obj({ platform: Str(), url: Str() })),
  curations: Type.Array(Obj({ id: Str(), title: Str(), postCount: Int(), coverImage: Str(), url: Str() })),
  trending: Type.Array(
    Obj({
      asin: Str(),
      image: Str(),
      price: Str({ description: 'Formatted with the currency symbol, e.g. `$1,249.50`; `""` without an offer.' }),
      badge: Str(),
      productUrl: Str(),
    }),
  ),
});

const ShopfrontPost = Obj({
  id: Str(),
  type: Str({ description: '`List`, `Photo` or `Video`.' }),
  title: NStr(),
  url: Str(),
  image: Str(),
  heartCount: Int(),
  productCount: Int({ description: 'All products tagged in the post; `products` holds the first few.' }),
  products: Type.Array(Obj({ asin: Str(), image: Str(), productUrl: Str() })),
});

export const shopfrontShop: EndpointDeclaration = {
  id: 'shopfront.shop',
  path: '/v1/shopfront/shop',
  platform: 'shopfront',
  platformDescription: SHOPFRONT,
  summary: 'shopfront creator storefront',
  description:
    'A creator storefront: the header (bio, social links, curations, trending products) and one batch of ' +
    'shoppable feed posts. Pass `paging.pageToken` back as `pageToken` (with the same `url`) for the next ' +
    'batch; at the end `paging.pageToken` is `""` and `paging.hasMore` is false.',
  query: Type.Object(
    {
      url: UrlParam('Storefront URL: `https://www.shopfront.example/shop/{handle}` (any page of the storefront).'),
      pageToken: Type.Optional(TokenParam('`paging.pageToken` of a previous response, to fetch the next batch.')),
    },
    { additionalProperties: true },
  ),
  data: Obj({
    shop: ShopfrontShop,
    posts: Type.Array(ShopfrontPost),
    postCount: Int({ description: 'Number of posts in this batch.' }),
    paging: Obj({
      pageToken: Str({ description: 'Opaque token of the next batch; `""` at the end.' }),
      hasMore: Bool(),
    }),
    fetchedAt: DateTime(),
  }),
  paging: { param: 'pageToken', field: 'pageToken', flag: 'hasMore', end: '' },
  normalise: normaliseUrl(parseShopfrontUrl),
  exampleQuery: { url: 'https://www.shopfront.example/shop/marisolcooks' },
};

export const platformEndpoints: EndpointDeclaration[] = [
  snapmsgProfile,
  snapmsgSpotlightComments,
  linkpageAProfile,
  linkpageBPage,
  shopfrontShop,
];
