// A cache entry as every cache store hands it out: the value's UTF-8 bytes and when it was stored.
import type { CachedEntry } from '../../src/store/types.ts';

export const cachedEntry = (value: string, storedAt: number): CachedEntry => ({ bytes: Buffer.from(value), storedAt });
