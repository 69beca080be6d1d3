// upstream/shopfront.md section 6, one line per API field: the upstream member and its
// conversion, in the chapter's notation (`S` = HEADER.storefront, `B` = the FEED BATCH).
import type { UpstreamPosition } from '../../endpoints/types.ts';
import { abs, array, CANONICAL_ORIGIN, contains, int, isTrue, isWellFormed, list, member, opt, price, str, unrecognised, type Node } from './read.ts';

/** 6.1 `data.shop` from `S`. */
export const mapShop = (S: Node) => ({
  handle: str(S, 'handle'),
  name: str(S, 'displayName'),
  url: `${CANONICAL_ORIGIN}/shop/${str(S, 'handle')}`,
  avatarUrl: opt(str, S, 'avatar.url', ''),
  bio: opt(str, S, 'bio', ''),
  affiliateTag: opt(str, S, 'partnerTag', ''),
  storefrontId: str(S, 'storefrontId'),
  isTopCreator: contains(S, 'badges', 'TOP_CREATOR'),
  earnsCommissions: isTrue(S, 'commissionEligible'),
  totalPosts: opt(int, S, 'postCount', 0),
  socialLinks: list(S, 'socialLinks', (link) => ({
    platform: str(link, 'platform'),
    url: str(link, 'url'),
  })),
  curations: list(S, 'curations', (curation) => ({
    id: str(curation, 'curationId'),
    title: str(curation, 'title'),
    postCount: int(curation, 'postCount'),
    coverImage: str(curation, 'coverImage.url'),
    url: abs(curation, 'path'),
  })),
  trending: list(S, 'trending', (product) => ({
    asin: str(product, 'asin'),
    image: str(product, 'image.url'),
    price: price(product, 'price'),
    badge: opt(str, product, 'badge', ''),
    productUrl: abs(product, 'detailPageUrl'),
  })),
});

/** 6.2 one element of `data.posts`. */
export const mapPost = (post: Node) => {
  const products = list(post, 'products', (product) => ({
    asin: str(product, 'asin'),
    image: str(product, 'image.url'),
    productUrl: abs(product, 'detailPageUrl'),
  }));
  return {
    id: str(post, 'postId'),
    type: str(post, 'postType'),
    title: opt(str, post, 'title', null),
    url: abs(post, 'path'),
    image: str(post, 'image.url'),
    heartCount: opt(int, post, 'engagement.heartCount', 0),
    productCount: opt(int, post, 'productCount', products.length),
    products,
  };
};

/** 6.2 `data.posts` and `data.postCount` from `B`, and the position of the next batch (section 7). */
export const mapBatch = (B: Node) => {
  const posts = array(B, 'posts', mapPost);
  const token = member(B, 'pageToken').value;
  const hasMore = member(B, 'hasMore').value === true && typeof token === 'string' && token !== '';
  // The token goes back into the feed request's query string, percent-encoded.
  if (hasMore && !isWellFormed(token)) throw unrecognised(`${member(B, 'pageToken').path} is not well-formed text (a lone surrogate)`);
  const next: UpstreamPosition | null = hasMore ? { pageToken: token } : null;
  return { posts, postCount: posts.length, next };
};
