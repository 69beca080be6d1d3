// snapmsg: public profiles and Spotlight comments (README.md).
import { definePlatform } from '../../endpoints/define.ts';
import { description, snapmsgProfile, snapmsgSpotlightComments } from './endpoints.ts';
import { PLATFORM } from './urls.ts';

export const snapmsg = definePlatform({ id: PLATFORM, description, endpoints: [snapmsgProfile, snapmsgSpotlightComments] });
