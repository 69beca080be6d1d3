// Every endpoint the service answers, in the order of the API spec's section 4.
import type { EndpointDeclaration } from './types.ts';
import { socialnetEndpoints } from './socialnet.ts';
import { platformEndpoints } from './platforms.ts';

export const endpoints: readonly EndpointDeclaration[] = [...socialnetEndpoints, ...platformEndpoints];
