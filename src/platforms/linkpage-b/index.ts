// linkpage-b: link-in-bio pages (README.md).
import { definePlatform } from '../../endpoints/define.ts';
import { description, linkpageBPage } from './endpoints.ts';

export const linkpageB = definePlatform({ id: 'linkpage-b', description, endpoints: [linkpageBPage] });
