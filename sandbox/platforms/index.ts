// Every platform the sandbox serves.
import type { SandboxPlatform } from '../common.ts';
import { linkpageASandbox } from './linkpage-a.ts';
import { linkpageBSandbox } from './linkpage-b.ts';
import { shopfrontSandbox } from './shopfront.ts';
import { snapmsgSandbox } from './snapmsg.ts';

export const platforms: SandboxPlatform[] = [snapmsgSandbox, linkpageASandbox, linkpageBSandbox, shopfrontSandbox];
