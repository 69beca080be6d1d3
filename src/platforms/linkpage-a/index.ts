// linkpage-a: link-in-bio profiles (README.md).
import { definePlatform } from '../../endpoints/define.ts';
import { description, linkpageAProfile } from './endpoints.ts';
import { PLATFORM } from './urls.ts';

export const linkpageA = definePlatform({ id: PLATFORM, description, endpoints: [linkpageAProfile] });
