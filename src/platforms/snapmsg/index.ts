// snapmsg: public profiles and Spotlight comments (README.md).
import { definePlatform } from '../../endpoints/define.ts';
import { description, snapmsgProfile, snapmsgSpotlightComments } from './endpoints.ts';

export const snapmsg = definePlatform({ id: 'snapmsg', description, endpoints: [snapmsgProfile, snapmsgSpotlightComments] });
