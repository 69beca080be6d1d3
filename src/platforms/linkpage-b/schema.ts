// The data schema of the linkpage-b endpoint, and the types the mapping returns.
import { Type, type Static } from 'typebox';
import { Bool, DateTime, Int, NStr, Nullable, Obj, Str } from '../../endpoints/schemas/common.ts';

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
export const LinkpageBChildLink = Obj({ ...linkpageBLinkFields, children: Type.Null() });

export const LinkpageBLink = Obj({
  ...linkpageBLinkFields,
  children: Nullable(Type.Array(LinkpageBChildLink, { description: 'The links of a GROUP; null for other types.' })),
});

export const LinkpageBPage = Obj({
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

export type LinkpageBChildLink = Static<typeof LinkpageBChildLink>;
export type LinkpageBLink = Static<typeof LinkpageBLink>;
export type LinkpageBPage = Static<typeof LinkpageBPage>;
