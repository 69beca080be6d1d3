// The shopfront endpoints: query, data schema and extractor of each.
import { Type } from 'typebox';
import { extractShop } from './extract.ts';
import { parseShopfrontUrl } from './urls.ts';
import { endpoint } from '../../endpoints/define.ts';
import { normaliseUrl } from '../../endpoints/normalise.ts';
import { Bool, DateTime, Int, NStr, Obj, Str, TokenParam, UrlParam } from '../../endpoints/schemas/common.ts';

/** The OpenAPI tag's description of every shopfront endpoint. */
export const description =
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

export const shopfrontShop = endpoint({
  name: 'shop',
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
  extract: extractShop as never,
});
