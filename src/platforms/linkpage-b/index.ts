// linkpage-b: link-in-bio pages (README.md).
import { definePlatform } from '../../endpoints/define.ts';
import { description, linkpageBPage } from './endpoints.ts';
import { PLATFORM } from './urls.ts';

export const linkpageB = definePlatform({ id: PLATFORM, description, endpoints: [linkpageBPage] });
