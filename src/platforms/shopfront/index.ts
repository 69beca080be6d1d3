// shopfront: creator storefronts (README.md).
import { definePlatform } from '../../endpoints/define.ts';
import { description, shopfrontShop } from './endpoints.ts';

export const shopfront = definePlatform({ id: 'shopfront', description, endpoints: [shopfrontShop] });
