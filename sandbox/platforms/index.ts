// Every platform the sandbox serves.
import type { SandboxPlatform } from '../common.ts';
import { shopfrontSandbox } from './shopfront.ts';

export const platforms: SandboxPlatform[] = [shopfrontSandbox];
