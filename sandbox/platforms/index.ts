// Every platform the sandbox serves. A platform not built yet is simply absent.
import type { SandboxPlatform } from '../common.ts';

export const platforms: SandboxPlatform[] = [];
