// Every platform the sandbox serves.
import type { SandboxPlatform } from '../common.ts';
import { linkpageBSandbox } from './linkpage-b.ts';
import { shopfrontSandbox } from './shopfront.ts';

export const platforms: SandboxPlatform[] = [linkpageBSandbox, shopfrontSandbox];
