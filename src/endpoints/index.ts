// Every endpoint the service answers: those of each registered platform, in the registry's order.
import type { EndpointDeclaration } from './types.ts';
import { platforms } from '../platforms/index.ts';

export const endpoints: readonly EndpointDeclaration[] = platforms.flatMap((platform) => platform.endpoints);
