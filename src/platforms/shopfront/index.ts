// shopfront: creator storefronts (README.md).
import { definePlatform } from '../../endpoints/define.ts';
import { description, shopfrontShop } from './endpoints.ts';
import { PLATFORM } from './urls.ts';

export const shopfront = definePlatform({ id: PLATFORM, description, endpoints: [shopfrontShop] });
