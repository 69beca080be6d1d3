// undici, loaded at its first use (the first request upstream, the first webhook attempt, a
// proxy's dispatcher) rather than with the modules that use it: an idle service does not hold
// it, nor the copy of undici inside Node that it loads (about 7 MB resident at rest, 114 -> 107
// MB, npm run bench:idle-memory). That first use waits for the load once (50-90 ms with the
// compile cache, on a busy machine); every later call returns the module already loaded.
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

let loaded: typeof Undici | undefined;

export const undici = (): typeof Undici => (loaded ??= createRequire(import.meta.url)('undici') as typeof Undici);
