// The data schema of the linkpage-a endpoint, and the type the mapping returns.
import { Type, type Static } from 'typebox';
import { Bool, DateTime, Int, NStr, Nullable, Obj, Str } from '../../endpoints/schemas/common.ts';

export const LinkpageAColor = Type.Union([Obj({ c: Str() }), Obj({ p: Obj({ d: Str(), l: Str() }) })], {
  description: 'A custom colour `{c}`, or a palette `{p: {d, l}}` with dark and light colours.',
});

export const LinkpageAMetadata = Obj({ title: Str(), description: Str(), image: Str(), keywords: Str(), canonical: Str() });

export const LinkpageAProfile = Obj({
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
  socialLinks: Type.Array(Obj({ platform: Str(), url: Str(), handle: Str(), iconUrl: Str(), isAdult: Bool() })),
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
      color: LinkpageAColor,
      order: Int(),
      isAdult: Bool(),
      kind: Str(),
    }),
  ),
  contactInfo: Type.Array(Obj({ type: Str(), value: Str() })),
  gallery: Type.Array(Obj({ id: Int(), url: Str(), order: Int(), createdAt: DateTime() })),
  sections: Type.Array(Obj({ section: Str(), order: Int(), enabled: Bool() })),
  sameAs: Type.Array(Str()),
  metadata: LinkpageAMetadata,
});

export type LinkpageAColor = Static<typeof LinkpageAColor>;
export type LinkpageAMetadata = Static<typeof LinkpageAMetadata>;
export type LinkpageAProfile = Static<typeof LinkpageAProfile>;
