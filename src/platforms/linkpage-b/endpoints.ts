// The linkpage-b endpoints: query, data schema and extractor of each.
import { Type } from 'typebox';
import { extractPage } from './extract.ts';
import { parseLinkpageBUrl } from './urls.ts';
import { endpoint } from '../../endpoints/define.ts';
import { normaliseUrl } from '../../endpoints/normalise.ts';
import { Bool, DateTime, Int, NStr, Nullable, Obj, Str, UrlParam } from '../../endpoints/schemas/common.ts';

/** The OpenAPI tag's description of every linkpage-b endpoint. */
export const description =
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

export const linkpageBPage = endpoint({
  name: 'page',
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
  extract: extractPage as never,
});
