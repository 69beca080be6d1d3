// The response cache: a table bounded in bytes and age, with two memory layers in front of
// it. Each was measured by turning it off, on a 2-core machine, against the figures with both
// on (`npm run bench`: cache hits at 0.70x the bare route):
// - recent reads only in memory, their access times written in batches (reads never write):
//   off, every hit is a write transaction, 0.35x;
// - recently used entries in memory with their bytes (the hot layer): off, every hit reads
//   the table and encodes the value, 0.35x.
// Results are written in the connection's group commit, with the ledger writes of the same
// turn (`Connection.txGrouped`); `set` resolves once the result is in the table.
import { entryBytes, StoreUnavailableError, type CacheEntry, type CachedEntry, type CacheStore } from '../types.ts';
import type { Background } from './checkpointer.ts';
import { prepare, type Connection } from './connection.ts';

/** After an eviction the cache is brought down to this share of its bound. */
const EVICT_TO = 0.9;
/** Reads remembered before a flush is forced (bounds the in-memory set). */
const MAX_TOUCHED = 10_000;
/** Bytes of recently used cache entries kept in memory in front of the table. */
const HOT_CACHE_BYTES = 64 * 1024 * 1024;

// The value is text in the table, and travels as its UTF-8 bytes both ways (a cast between TEXT
// and BLOB copies the bytes as they are): written from the bytes the answer is sent with, read
// as the bytes an answer needs. Bound as a string, a result was encoded to UTF-8 a second time
// (`npm run bench:live-steps`, the result's row: 43.4 -> 38.1 µs, alternated); read as a string,
// it was decoded and then encoded again.
const CACHE_SQL = {
  cacheGet: 'SELECT CAST(value AS BLOB) AS value, stored_at, target, size FROM cache WHERE key = ?',
  cacheSet: `INSERT INTO cache (key, target, value, stored_at, accessed_at, size) VALUES (?, ?, CAST(? AS TEXT), ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET target = excluded.target, value = excluded.value,
         stored_at = excluded.stored_at, accessed_at = excluded.accessed_at, size = excluded.size`,
  cacheTouch: 'UPDATE cache SET accessed_at = ?1 WHERE key = ?2 AND accessed_at < ?1',
  cacheDeleteTarget: 'DELETE FROM cache WHERE target = ?',
};

export interface SqliteCache extends CacheStore {
  /** Writes the access times of recent reads. */
  flush(): void;
}

export function cacheStore(c: Connection, background: Background, maxBytes: number, maxAgeMs: number): SqliteCache {
  const st = prepare(c.db, CACHE_SQL);
  // Reads since the last flush: key -> epoch ms of the latest read. Reads never write.
  let touched = new Map<string, number>();
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
      } else {
        const row = c.run(() => st.cacheGet.get(key));
        if (!row) return null;
        const value = row.value as Uint8Array;
        entry = { bytes: Buffer.from(value.buffer, value.byteOffset, value.byteLength), storedAt: row.stored_at as number };
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
      const bytes = entryBytes(entry);
      const size = bytes.length + Buffer.byteLength(key) + Buffer.byteLength(target);
      const stored = { bytes, storedAt: Math.trunc(entry.storedAt) };
      try {
        await c.txGrouped(() => st.cacheSet.run(key, target, bytes, stored.storedAt, Date.now(), size));
      } catch (err) {
        dropHot(key);
        throw err;
      }
      keepHot(key, target, stored, size);
    },

    async deleteTarget(target: string): Promise<void> {
      // In the group, so that it follows the results of the same target stored before it.
      await c.txGrouped(() => st.cacheDeleteTarget.run(target));
      for (const [key, held] of hot) if (held.target === target) dropHot(key);
    },

    async prune(now: number): Promise<void> {
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
