// Every platform the service scrapes. The core knows platforms only through this list.
import type { Platform } from '../endpoints/define.ts';
import { linkpageA } from './linkpage-a/index.ts';
import { linkpageB } from './linkpage-b/index.ts';
import { shopfront } from './shopfront/index.ts';
import { snapmsg } from './snapmsg/index.ts';
import { socialnet } from './socialnet/index.ts';

export const platforms: readonly Platform[] = [socialnet, snapmsg, linkpageA, linkpageB, shopfront];
