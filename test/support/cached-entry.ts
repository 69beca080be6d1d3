// A cache entry as every cache store hands it out: its value, when it was stored, and the
// value's UTF-8 bytes.
import type { CachedEntry } from '../../src/store/types.ts';

export const cachedEntry = (value: string, storedAt: number): CachedEntry => ({ value, storedAt, bytes: Buffer.from(value) });
