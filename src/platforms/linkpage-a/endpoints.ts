// The linkpage-a endpoints: query, data schema and extractor of each.
import { Type } from 'typebox';
import { linkpageAProfileExtractor } from './extract.ts';
import { parseLinkpageAUrl } from './urls.ts';
import { endpoint } from '../../endpoints/define.ts';
import { normaliseUrl } from '../../endpoints/normalise.ts';
import { Bool, DateTime, Int, NStr, Nullable, Obj, Str, UrlParam } from '../../endpoints/schemas/common.ts';

/** The OpenAPI tag's description of every linkpage-a endpoint. */
export const description =
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

export const linkpageAProfile = endpoint({
  name: 'profile',
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
  extract: linkpageAProfileExtractor as never,
});
