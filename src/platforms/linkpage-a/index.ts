// linkpage-a: link-in-bio profiles (README.md).
import { definePlatform } from '../../endpoints/define.ts';
import { description, linkpageAProfile } from './endpoints.ts';

export const linkpageA = definePlatform({ id: 'linkpage-a', description, endpoints: [linkpageAProfile] });
