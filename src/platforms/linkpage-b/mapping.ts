// The mapping from a linkpage-b `__NEXT_DATA__` payload to the API's `data.page`, line by line
// as the tables of README.md, "Mapping", give it. `PP` = props.pageProps, `A` = PP.account,
// `T` = A.themeV2, `L` = one LINK.
import {
  boolean,
  id,
  integer,
  isTrue,
  isoFromMillis,
  root,
  string,
  text,
  type Node,
} from '../shared/read.ts';
import type { LinkpageBChildLink, LinkpageBLink, LinkpageBPage } from './schema.ts';

/**
 * What the payload says before any mapping: a missing page or an inactive account (README.md,
 * "Not found"), or a page to map. `props.pageProps.account` missing is unrecognised.
 */
export type PageState = { kind: 'not_found'; why: string } | { kind: 'page'; PP: Node };

export function pageState(nextData: unknown): PageState {
  const PP = root(nextData, '__NEXT_DATA__').node('props.pageProps');
  const statusCode = PP.at('statusCode').value;
  if (statusCode === 404 || statusCode === '404') return { kind: 'not_found', why: 'pageProps.statusCode is 404' };
  const A = PP.node('account');
  if (A.at('isActive').value === false) return { kind: 'not_found', why: 'account.isActive is false' };
  return { kind: 'page', PP };
}

/** null instead of an empty array. */
const nonEmpty = <T>(values: T[]): T[] | null => (values.length === 0 ? null : values);

/** The fields every LINK has, a group's child included. */
function linkFields(L: Node): Omit<LinkpageBChildLink, 'children'> {
  return {
    id: L.get('id', id),
    type: L.get('type', string),
    title: L.orEmpty('title', string),
    url: L.orEmpty('url', string),
    thumbnailUrl: L.orNull('thumbnail', text),
    position: L.get('position', integer),
    locked: L.orEmpty('locked', isTrue),
    gateTypes: nonEmpty(L.listOrEmpty('rules.gate.activeOrder').map((gate) => gate.get('', string))),
    layout: L.orNull('layoutOption', string) ?? 'STACK',
    amazonAffiliate: L.holdsObject('marketplaceAffiliate'),
    meta: {
      title: L.orNull('metadata.title', string),
      description: L.orNull('metadata.description', string),
      image: L.orNull('metadata.image', string),
    },
  };
}

/** LINK mapping (`links`, `pinnedLinks`); a GROUP's `children` are LINKs one level deep. */
export function mapLink(L: Node): LinkpageBLink {
  return { ...linkFields(L), children: L.listOrNull('children')?.map(mapChild) ?? null };
}

/** A group's child: it may not have children of its own (an empty list counts as none). */
function mapChild(L: Node): LinkpageBChildLink {
  if ((L.listOrNull('children')?.length ?? 0) > 0) throw L.at('children').unrecognised("nests links below a group's child (groups are one level deep)");
  return { ...linkFields(L), children: null };
}

/** The API `data.page` of a page payload (`PP` = props.pageProps, which holds `account`). */
export function mapPage(PP: Node): LinkpageBPage {
  const A = PP.node('account');
  const T = A.node('themeV2');
  const links = PP.list('links').map(mapLink);
  const pinnedLinks = PP.listOrEmpty('pinnedLinks').map(mapLink);
  const socialLinks = PP.listOrEmpty('socialLinks').map((S) => ({
    type: S.get('type', string),
    url: S.get('url', string),
    position: S.get('position', integer),
  }));
  const items = PP.listOrEmpty('storeProducts').map((P) => ({
    id: P.get('id', string),
    title: P.get('title', string),
    url: P.get('url', string),
    imageUrl: P.orNull('imageUrl', text),
    price: P.orNull('price.formatted', string),
    isAffiliate: P.orEmpty('isAffiliate', isTrue),
  }));
  const posts = PP.listOrEmpty('storeCollections').map((C) => ({
    id: C.get('id', string),
    title: C.get('title', string),
    url: C.get('url', string),
    imageUrl: C.orNull('imageUrl', text),
    productCount: C.listOrEmpty('productIds').length,
  }));
  const username = A.get('username', string);
  const customAvatar = A.holdsObject('customAvatar');
  const pictureUrl = A.orNull('profilePictureUrl', text);

  return {
    username,
    uuid: A.get('uuid', string),
    title: A.orNull('pageTitle', text) ?? `@${username}`,
    name: A.orNull('name', text) ?? username,
    accountId: A.get('id', integer),
    description: A.orNull('description', text),
    isVerified: PP.orEmpty('isProfileVerified', isTrue),
    isActive: A.get('isActive', boolean),
    avatarUrl: (customAvatar ? A.orNull('customAvatar.url', text) : null) ?? pictureUrl ?? '',
    avatarType: customAvatar ? A.get('customAvatar.type', string) : pictureUrl !== null ? 'IMAGE' : 'NONE',
    avatarShape: A.orNull('avatarMode', string) ?? 'CIRCLE_SMALL',
    bannerType: A.holdsObject('profileBanner') ? A.get('profileBanner.type', string) : 'NONE',
    bannerImageUrl: A.orNull('profileBanner.url', text),
    createdAt: A.get('createdAt', isoFromMillis),
    updatedAt: A.get('updatedAt', isoFromMillis),
    socialLinksPosition: A.get('socialLinksPosition', string),
    metaTitle: PP.orEmpty('metaTitle', string),
    metaDescription: PP.orEmpty('metaDescription', string),
    theme: {
      key: T.get('key', string),
      luminance: T.get('luminance', string),
      backgroundColor: T.get('background.color', string),
      backgroundStyle: T.get('background.style', string),
      backgroundType: T.get('background.type', string),
      buttonType: T.get('buttonStyle.type', string),
      buttonColor: T.get('buttonStyle.backgroundStyle.color', string),
      buttonTextColor: T.get('buttonStyle.textStyle.color', string),
      buttonCornerType: T.get('buttonStyle.cornerType', string),
      buttonShadowColor: T.get('buttonStyle.shadowStyle.color', string),
      socialColor: T.get('socialStyle.color', string),
      fontFamily: T.get('typeface.family', string),
      fontColor: T.get('typeface.color', string),
    },
    socialLinks,
    links,
    pinnedLinks,
    storefront: {
      hasCommissionProducts: PP.orEmpty('storeHasAffiliateProducts', isTrue),
      itemCount: items.length,
      postCount: posts.length,
      items,
      posts,
    },
    linkCount: links.length,
    totalLinkCount: A.list('links').length,
    socialCount: socialLinks.length,
  };
}
