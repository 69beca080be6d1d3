// Every endpoint the service answers, in the order of the API spec's section 4, each with its
// platform's extractor where one is built.
import type { EndpointDeclaration, Extractor } from './types.ts';
import { socialnetEndpoints } from './socialnet.ts';
import { platformEndpoints } from './platforms.ts';
import { linkpageAExtractors } from '../platforms/linkpage-a/index.ts';
import { linkpageBExtractors } from '../platforms/linkpage-b/index.ts';
import { shopfrontExtractors } from '../platforms/shopfront/index.ts';
import { snapmsgExtractors } from '../platforms/snapmsg/index.ts';
import { socialnetExtractors } from '../platforms/socialnet/index.ts';

const extractors: Record<string, Extractor> = {
  ...socialnetExtractors,
  ...snapmsgExtractors,
  ...linkpageAExtractors,
  ...linkpageBExtractors,
  ...shopfrontExtractors,
};

export const endpoints: readonly EndpointDeclaration[] = [...socialnetEndpoints, ...platformEndpoints].map((endpoint) => {
  const extractor = extractors[endpoint.id];
  return extractor ? { ...endpoint, extractor } : endpoint;
});
