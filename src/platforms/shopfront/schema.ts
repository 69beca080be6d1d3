// The data schemas of the shopfront endpoint, and the types the mapping returns.
import { Type, type Static } from 'typebox';
import { Bool, Int, NStr, Obj, Str } from '../../endpoints/schemas/common.ts';

export const ShopfrontShop = Obj({
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

export const ShopfrontPost = Obj({
  id: Str(),
  type: Str({ description: '`List`, `Photo` or `Video`.' }),
  title: NStr(),
  url: Str(),
  image: Str(),
  heartCount: Int(),
  productCount: Int({ description: 'All products tagged in the post; `products` holds the first few.' }),
  products: Type.Array(Obj({ asin: Str(), image: Str(), productUrl: Str() })),
});

export type ShopfrontShop = Static<typeof ShopfrontShop>;
export type ShopfrontPost = Static<typeof ShopfrontPost>;
