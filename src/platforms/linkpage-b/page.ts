// The mapping from a linkpage-b `__NEXT_DATA__` payload to the API's `data.page`
// (upstream/linkpage-b.md section 5). One line per API field: the upstream path and its
// conversion. `PP` = props.pageProps, `A` = PP.account, `L` = one LINK.
import {
  array,
  copied,
  flag,
  idString,
  int,
  isObject,
  isTrue,
  list,
  ms,
  nonEmpty,
  nullable,
  object,
  opt,
  or,
  str,
  strings,
  unrecognised,
  within,
  type Reader,
} from './read.ts';

export interface LinkpageBLink {
  id: string;
  type: string;
  title: string;
  url: string;
  thumbnailUrl: string | null;
  position: number;
  locked: boolean;
  gateTypes: string[] | null;
  layout: string;
  amazonAffiliate: boolean;
  meta: { title: string | null; description: string | null; image: string | null };
  children: LinkpageBLink[] | null;
}

export interface LinkpageBTheme {
  key: string;
  luminance: string;
  backgroundColor: string;
  backgroundStyle: string;
  backgroundType: string;
  buttonType: string;
  buttonColor: string;
  buttonTextColor: string;
  buttonCornerType: string;
  buttonShadowColor: string;
  socialColor: string;
  fontFamily: string;
  fontColor: string;
}

export interface LinkpageBStoreItem {
  id: string;
  title: string;
  url: string;
  imageUrl: string | null;
  price: string | null;
  isAffiliate: boolean;
}

export interface LinkpageBStorePost {
  id: string;
  title: string;
  url: string;
  imageUrl: string | null;
  productCount: number;
}

export interface LinkpageBPage {
  username: string;
  uuid: string;
  title: string;
  name: string;
  accountId: number;
  description: string | null;
  isVerified: boolean;
  isActive: boolean;
  avatarUrl: string;
  avatarType: string;
  avatarShape: string;
  bannerType: string;
  bannerImageUrl: string | null;
  createdAt: string;
  updatedAt: string;
  socialLinksPosition: string;
  metaTitle: string;
  metaDescription: string;
  theme: LinkpageBTheme;
  socialLinks: { type: string; url: string; position: number }[];
  links: LinkpageBLink[];
  pinnedLinks: LinkpageBLink[];
  storefront: {
    hasCommissionProducts: boolean;
    itemCount: number;
    postCount: number;
    items: LinkpageBStoreItem[];
    posts: LinkpageBStorePost[];
  };
  linkCount: number;
  totalLinkCount: number;
  socialCount: number;
}

/**
 * What the payload says before any mapping: a missing page (7.1), an inactive account (7.2), or
 * a page to map. Throws `unrecognised` when `props.pageProps` itself is missing.
 */
export type PageState = { kind: 'not_found'; why: string } | { kind: 'page'; PP: Reader };

export function pageState(nextData: unknown): PageState {
  const PP = object(within({ value: nextData, path: '__NEXT_DATA__' })('props.pageProps'));
  const statusCode = PP('statusCode').value;
  if (statusCode === 404 || statusCode === '404') return { kind: 'not_found', why: 'pageProps.statusCode is 404' };
  if (PP('account').value === undefined || PP('account').value === null) {
    throw unrecognised('__NEXT_DATA__.props.pageProps.account is missing');
  }
  if (PP('account.isActive').value === false) return { kind: 'not_found', why: 'account.isActive is false' };
  return { kind: 'page', PP };
}

/** LINK mapping (`links`, `pinnedLinks`, and a GROUP's `children`, one level deep). */
export function mapLink(L: Reader, depth = 0): LinkpageBLink {
  return {
    id: idString(L('id')),
    type: copied(L('type')),
    title: str(L('title')),
    url: str(L('url')),
    thumbnailUrl: opt(L('thumbnail')),
    position: int(L('position')),
    locked: isTrue(L('locked')),
    gateTypes: nonEmpty(strings(L('rules.gate.activeOrder'))),
    layout: or(L('layoutOption'), 'STACK'),
    amazonAffiliate: isObject(L('marketplaceAffiliate')),
    meta: {
      title: nullable(L('metadata.title')),
      description: nullable(L('metadata.description')),
      image: nullable(L('metadata.image')),
    },
    children: mapChildren(L, depth),
  };
}

/** `L.children`: an array of LINKs, or null; groups are one level deep. */
function mapChildren(L: Reader, depth: number): LinkpageBLink[] | null {
  const field = L('children');
  if (field.value === null || field.value === undefined) return null;
  const children = array(field);
  if (depth > 0) {
    if (children.length === 0) return null;
    throw unrecognised(`${field.path} nests links below a group's child (groups are one level deep)`);
  }
  return children.map((child) => mapLink(child, depth + 1));
}

/** The API `data.page` of a page payload (`PP` = props.pageProps, which holds `account`). */
export function mapPage(PP: Reader): LinkpageBPage {
  const A = object(PP('account'));
  const T = object(A('themeV2'));
  const links = array(PP('links')).map((L) => mapLink(L));
  const pinnedLinks = list(PP('pinnedLinks')).map((L) => mapLink(L));
  const socialLinks = list(PP('socialLinks')).map((S) => ({
    type: copied(S('type')),
    url: copied(S('url')),
    position: int(S('position')),
  }));
  const items = list(PP('storeProducts')).map(
    (P): LinkpageBStoreItem => ({
      id: copied(P('id')),
      title: copied(P('title')),
      url: copied(P('url')),
      imageUrl: opt(P('imageUrl')),
      price: nullable(P('price.formatted')),
      isAffiliate: isTrue(P('isAffiliate')),
    }),
  );
  const posts = list(PP('storeCollections')).map(
    (C): LinkpageBStorePost => ({
      id: copied(C('id')),
      title: copied(C('title')),
      url: copied(C('url')),
      imageUrl: opt(C('imageUrl')),
      productCount: list(C('productIds')).length,
    }),
  );
  const username = copied(A('username'));
  const customAvatar = isObject(A('customAvatar'));
  const profileBanner = isObject(A('profileBanner'));

  return {
    username,
    uuid: copied(A('uuid')),
    title: opt(A('pageTitle')) ?? `@${username}`,
    name: opt(A('name')) ?? username,
    accountId: int(A('id')),
    description: opt(A('description')),
    isVerified: isTrue(PP('isProfileVerified')),
    isActive: flag(A('isActive')),
    avatarUrl: (customAvatar ? opt(A('customAvatar.url')) : null) ?? opt(A('profilePictureUrl')) ?? '',
    avatarType: customAvatar ? copied(A('customAvatar.type')) : opt(A('profilePictureUrl')) !== null ? 'IMAGE' : 'NONE',
    avatarShape: or(A('avatarMode'), 'CIRCLE_SMALL'),
    bannerType: profileBanner ? copied(A('profileBanner.type')) : 'NONE',
    bannerImageUrl: opt(A('profileBanner.url')),
    createdAt: ms(A('createdAt')),
    updatedAt: ms(A('updatedAt')),
    socialLinksPosition: copied(A('socialLinksPosition')),
    metaTitle: str(PP('metaTitle')),
    metaDescription: str(PP('metaDescription')),
    theme: {
      key: copied(T('key')),
      luminance: copied(T('luminance')),
      backgroundColor: copied(T('background.color')),
      backgroundStyle: copied(T('background.style')),
      backgroundType: copied(T('background.type')),
      buttonType: copied(T('buttonStyle.type')),
      buttonColor: copied(T('buttonStyle.backgroundStyle.color')),
      buttonTextColor: copied(T('buttonStyle.textStyle.color')),
      buttonCornerType: copied(T('buttonStyle.cornerType')),
      buttonShadowColor: copied(T('buttonStyle.shadowStyle.color')),
      socialColor: copied(T('socialStyle.color')),
      fontFamily: copied(T('typeface.family')),
      fontColor: copied(T('typeface.color')),
    },
    socialLinks,
    links,
    pinnedLinks,
    storefront: {
      hasCommissionProducts: isTrue(PP('storeHasAffiliateProducts')),
      itemCount: items.length,
      postCount: posts.length,
      items,
      posts,
    },
    linkCount: links.length,
    totalLinkCount: array(A('links')).length,
    socialCount: socialLinks.length,
  };
}
