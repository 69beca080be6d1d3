// shopfront: creator storefronts (upstream/shopfront.md). Extractors keyed by endpoint id.
import type { Extractor } from '../../endpoints/types.ts';
import { extractShop } from './extract.ts';

export const shopfrontExtractors: Record<string, Extractor> = {
  'shopfront.shop': extractShop,
};
