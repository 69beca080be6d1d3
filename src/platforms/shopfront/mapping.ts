// The shopfront mapping, one line per API field (`S` = HEADER.storefront, `B` = the FEED BATCH):
// the upstream path, its converter and its absent-data rule (shared/read.ts).
import type { UpstreamPosition } from '../../endpoints/types.ts';
import { converter, integer, isTrue, string, type Node } from '../shared/read.ts';
import { isWellFormed } from './requests.ts';
import type { ShopfrontPost, ShopfrontShop } from './schema.ts';

export const CANONICAL_ORIGIN = 'https://www.shopfront.example';

/** `abs(p)`: a site-relative path on the canonical host (never the origin); an absolute URL copied. */
const abs = converter('a site-relative path or an absolute URL', (value) => {
  if (typeof value !== 'string') return undefined;
  if (/^https?:\/\//i.test(value)) return value;
  return value.startsWith('/') && !value.startsWith('//') ? CANONICAL_ORIGIN + value : undefined;
});

/** A price amount: a JSON number small enough to be written out in full. */
const amount = converter('a price amount', (value) => (typeof value === 'number' && Number.isFinite(value) && Math.abs(value) < 1e21 ? value : undefined));

/** Currency symbol and fraction digits; any other code is `"{code} "` with 2 digits. */
const CURRENCIES: Record<string, { symbol: string; digits: number }> = {
  USD: { symbol: '$', digits: 2 },
  CAD: { symbol: 'CA$', digits: 2 },
  AUD: { symbol: 'A$', digits: 2 },
  MXN: { symbol: 'MX$', digits: 2 },
  GBP: { symbol: '£', digits: 2 },
  EUR: { symbol: '€', digits: 2 },
  INR: { symbol: '₹', digits: 2 },
  JPY: { symbol: '¥', digits: 0 },
};

/** Formats an amount: sign, symbol, grouped integer part, `.` and the fraction digits. */
export function formatPrice(value: number, currencyCode: string): string {
  const { symbol, digits } = CURRENCIES[currencyCode] ?? { symbol: `${currencyCode} `, digits: 2 };
  const [whole = '0', fraction] = Math.abs(value).toFixed(digits).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${value < 0 ? '-' : ''}${symbol}${grouped}${fraction === undefined ? '' : `.${fraction}`}`;
}

/** `price(p)`: `""` when `p` is null or absent, else the formatted amount. */
const price = (P: Node | null): string => (P === null ? '' : formatPrice(P.get('amount', amount), P.get('currencyCode', string)));

/** `data.shop` from `S`. */
export const mapShop = (S: Node): ShopfrontShop => ({
  handle: S.get('handle', string),
  name: S.get('displayName', string),
  url: `${CANONICAL_ORIGIN}/shop/${S.get('handle', string)}`,
  avatarUrl: S.orEmpty('avatar.url', string),
  bio: S.orEmpty('bio', string),
  affiliateTag: S.orEmpty('partnerTag', string),
  storefrontId: S.get('storefrontId', string),
  isTopCreator: S.listOrEmpty('badges').some((badge) => badge.value === 'TOP_CREATOR'),
  earnsCommissions: S.orEmpty('commissionEligible', isTrue),
  totalPosts: S.orEmpty('postCount', integer),
  socialLinks: S.listOrEmpty('socialLinks').map((link) => ({
    platform: link.get('platform', string),
    url: link.get('url', string),
  })),
  curations: S.listOrEmpty('curations').map((curation) => ({
    id: curation.get('curationId', string),
    title: curation.get('title', string),
    postCount: curation.get('postCount', integer),
    coverImage: curation.get('coverImage.url', string),
    url: curation.get('path', abs),
  })),
  trending: S.listOrEmpty('trending').map((product) => ({
    asin: product.get('asin', string),
    image: product.get('image.url', string),
    price: price(product.nodeOrNull('price')),
    badge: product.orEmpty('badge', string),
    productUrl: product.get('detailPageUrl', abs),
  })),
});

/** One element of `data.posts`. */
export const mapPost = (post: Node): ShopfrontPost => {
  const products = post.listOrEmpty('products').map((product) => ({
    asin: product.get('asin', string),
    image: product.get('image.url', string),
    productUrl: product.get('detailPageUrl', abs),
  }));
  return {
    id: post.get('postId', string),
    type: post.get('postType', string),
    title: post.orNull('title', string),
    url: post.get('path', abs),
    image: post.get('image.url', string),
    heartCount: post.orEmpty('engagement.heartCount', integer),
    productCount: post.orNull('productCount', integer) ?? products.length,
    products,
  };
};

/** `data.posts` and `data.postCount` from `B`, and the position of the next batch (README.md, "Pagination"). */
export const mapBatch = (B: Node): { posts: ShopfrontPost[]; postCount: number; next: UpstreamPosition | null } => {
  const posts = B.list('posts').map(mapPost);
  const token = B.at('pageToken').value;
  const hasMore = B.at('hasMore').value === true && typeof token === 'string' && token !== '';
  // The token goes back into the feed request's query string, percent-encoded.
  if (hasMore && !isWellFormed(token)) throw B.at('pageToken').unrecognised('is not well-formed text (a lone surrogate)');
  return { posts, postCount: posts.length, next: hasMore ? { pageToken: token } : null };
};
