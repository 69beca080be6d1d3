// The response cache: a table bounded in bytes and age, with three memory layers in front of
// it. Each was measured by turning it off, on this machine (2 cores), against the figures with
// all of them on (`npm run bench`: cache hits at 0.70x the bare route; `npm run bench:live`:
// live scrapes at 0.13x the proxy):
// - recent reads only in memory, their access times written in batches (reads never write):
//   off, every hit is a write transaction, 0.35x;
// - recently used entries in memory with their bytes (the hot layer): off, every hit reads
//   the table and encodes the value, 0.35x;
// - results gathered for a few milliseconds and written in one transaction: off, one more
//   transaction per live scrape, 0.10x.
import { StoreUnavailableError, type CacheEntry, type CachedEntry, type CacheStore } from '../types.ts';
import type { Background } from './checkpointer.ts';
import { prepare, type Connection } from './connection.ts';

/** After an eviction the cache is brought down to this share of its bound. */
const EVICT_TO = 0.9;
/** Reads remembered before a flush is forced (bounds the in-memory set). */
const MAX_TOUCHED = 10_000;
/** Cache writes are gathered for this long, or up to this many bytes, then written in one transaction. */
const WRITE_DELAY_MS = 20;
const MAX_PENDING_BYTES = 8 * 1024 * 1024;
/** Bytes of recently used cache entries kept in memory in front of the table. */
const HOT_CACHE_BYTES = 64 * 1024 * 1024;

const CACHE_SQL = {
  cacheGet: 'SELECT value, stored_at, target, size FROM cache WHERE key = ?',
  cacheSet: `INSERT INTO cache (key, target, value, stored_at, accessed_at, size) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET target = excluded.target, value = excluded.value,
         stored_at = excluded.stored_at, accessed_at = excluded.accessed_at, size = excluded.size`,
  cacheTouch: 'UPDATE cache SET accessed_at = ?1 WHERE key = ?2 AND accessed_at < ?1',
  cacheDeleteTarget: 'DELETE FROM cache WHERE target = ?',
};

export interface SqliteCache extends CacheStore {
  /** Writes pending results and the access times of recent reads. */
  flush(): void;
}

export function cacheStore(c: Connection, background: Background, maxBytes: number, maxAgeMs: number): SqliteCache {
  const st = prepare(c.db, CACHE_SQL);
  // Reads since the last flush: key -> epoch ms of the latest read. Reads never write.
  let touched = new Map<string, number>();
  // Results stored in the last few milliseconds, written together in one transaction.
  let pendingWrites = new Map<string, { target: string; value: string; entry: CachedEntry; size: number }>();
  let pendingBytes = 0;
  let writeTimer: NodeJS.Timeout | null = null;
  const flushWrites = (): void => {
    if (writeTimer) {
      clearTimeout(writeTimer);
      writeTimer = null;
    }
    if (pendingWrites.size === 0) return;
    const batch = pendingWrites;
    pendingWrites = new Map();
    pendingBytes = 0;
    const at = Date.now();
    c.tx(() => {
      for (const [key, write] of batch) st.cacheSet.run(key, write.target, write.value, write.entry.storedAt, at, write.size);
    });
  };
  // Recently used entries in memory, in least-recently-used order, valid while the database
  // stamp is unchanged by any other connection.
  const hot = new Map<string, { entry: CachedEntry; target: string; size: number }>();
  let hotBytes = 0;
  let hotVersion = -1;
  const dropHot = (key: string) => {
    const held = hot.get(key);
    if (!held) return;
    hot.delete(key);
    hotBytes -= held.size;
  };
  const keepHot = (key: string, target: string, entry: CachedEntry, size: number) => {
    dropHot(key);
    if (size > HOT_CACHE_BYTES / 8) return;
    hot.set(key, { entry, target, size });
    hotBytes += size;
    for (const oldest of hot.keys()) {
      if (hotBytes <= HOT_CACHE_BYTES) break;
      dropHot(oldest);
    }
  };
  /** Empties the memory layer when another connection has committed since it was filled. */
  const checkHot = () => {
    const version = c.dataVersion();
    if (version !== hotVersion) {
      hot.clear();
      hotBytes = 0;
      hotVersion = version;
    }
  };

  const flush = (): void => {
    if (touched.size === 0) return;
    const batch = touched;
    touched = new Map();
    try {
      c.tx(() => {
        for (const [key, at] of batch) st.cacheTouch.run(at, key);
      });
    } catch (err) {
      // Keep them for the next attempt (newer reads win).
      for (const [key, at] of batch) if (!touched.has(key)) touched.set(key, at);
      throw err;
    }
  };

  return {
    flush: () => {
      flushWrites();
      flush();
    },

    async get(key: string): Promise<CachedEntry | null> {
      checkHot();
      const held = hot.get(key);
      let entry: CachedEntry;
      if (held) {
        hot.delete(key);
        hot.set(key, held);
        entry = held.entry;
      } else if (pendingWrites.has(key)) {
        entry = (pendingWrites.get(key) as { entry: CachedEntry }).entry;
      } else {
        const row = c.run(() => st.cacheGet.get(key));
        if (!row) return null;
        entry = { bytes: Buffer.from(row.value as string), storedAt: row.stored_at as number };
        keepHot(key, row.target as string, entry, row.size as number);
      }
      touched.set(key, Date.now());
      if (touched.size >= MAX_TOUCHED) {
        try {
          flush();
        } catch {
          // A read must not fail because the access times could not be written.
        }
      }
      return entry;
    },

    async set(key: string, target: string, entry: CacheEntry): Promise<void> {
      if (c.closed) throw new StoreUnavailableError('SQLite store is closed');
      const bytes = Buffer.from(entry.value);
      const size = bytes.length + Buffer.byteLength(key) + Buffer.byteLength(target);
      const stored = { bytes, storedAt: Math.trunc(entry.storedAt) };
      keepHot(key, target, stored, size);
      // Written with the others of the next few milliseconds in one transaction.
      const previous = pendingWrites.get(key);
      if (previous) pendingBytes -= previous.size;
      pendingWrites.set(key, { target, value: entry.value, entry: stored, size });
      pendingBytes += size;
      if (pendingBytes >= MAX_PENDING_BYTES) flushWrites();
      else if (!writeTimer) {
        writeTimer = setTimeout(() => {
          try {
            flushWrites();
          } catch {
            // A cache write lost to an unreachable store costs one scrape later; nothing more.
          }
        }, WRITE_DELAY_MS);
        writeTimer.unref();
      }
    },

    async deleteTarget(target: string): Promise<void> {
      for (const [key, write] of pendingWrites) {
        if (write.target !== target) continue;
        pendingWrites.delete(key);
        pendingBytes -= write.size;
      }
      c.run(() => st.cacheDeleteTarget.run(target));
      for (const [key, held] of hot) if (held.target === target) dropHot(key);
    },

    async prune(now: number): Promise<void> {
      flushWrites();
      flush();
      // Off the event loop where there is a background thread; in short batches either way.
      const dropped = await background.prune({ now, maxAgeMs, maxBytes, evictTo: EVICT_TO });
      // Whatever the table dropped must not be served from memory either.
      if (dropped > 0) {
        hot.clear();
        hotBytes = 0;
      }
    },
  };
}
