// The shopfront endpoints: query, data schema and extractor of each.
import { Type } from 'typebox';
import { extractShop } from './extract.ts';
import { parseShopfrontUrl } from './urls.ts';
import { endpoint } from '../../endpoints/define.ts';
import { normaliseUrl } from '../../endpoints/normalise.ts';
import { Bool, DateTime, Int, Obj, Str, TokenParam, UrlParam } from '../../endpoints/schemas/common.ts';
import { ShopfrontPost, ShopfrontShop } from './schema.ts';

/** The OpenAPI tag's description of every shopfront endpoint. */
export const description =
  "shopfront, creator storefronts: a creator's curations, trending products and shoppable feed posts.";

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
    { additionalProperties: false },
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
  paging: { param: 'pageToken', field: 'pageToken', flag: 'hasMore', end: '', items: 'posts' },
  normalise: normaliseUrl(parseShopfrontUrl),
  exampleQuery: { url: 'https://www.shopfront.example/shop/lunacooks' },
  extract: extractShop,
});
