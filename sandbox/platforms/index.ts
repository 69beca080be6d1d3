// Every platform the sandbox serves, in the order of their default ports (4101 onwards).
import type { SandboxPlatform } from '../common.ts';
import { socialnetSandbox } from './socialnet.ts';
import { linkpageASandbox } from './linkpage-a.ts';
import { linkpageBSandbox } from './linkpage-b.ts';
import { shopfrontSandbox } from './shopfront.ts';
import { snapmsgSandbox } from './snapmsg.ts';

export const platforms: SandboxPlatform[] = [socialnetSandbox, snapmsgSandbox, linkpageASandbox, linkpageBSandbox, shopfrontSandbox];
