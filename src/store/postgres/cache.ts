// The response cache on PostgreSQL: a table bounded in bytes and age, shared by every node.
//
// Nothing is kept in a node's memory: a target deleted after a 404 on one node must not be
// served by another, and a result stored by one node is a hit on all of them. Reads do not
// write: their access times are gathered in memory and written in one statement by `prune`
// (or once 10,000 are waiting), as on the embedded store.
import { entryText, type CacheEntry, type CachedEntry, type CacheStore } from '../types.ts';
import type { Query } from './pool.ts';
import { WriteBatches } from '../write-batches.ts';

const EVICT_TO = 0.9;
const MAX_TOUCHED = 10_000;
const PRUNE_BATCH = 500;
/** Entries in one statement of writes made together, at most. */
const MAX_TOGETHER = 200;

/** An entry written with others. */
interface Written {
  key: string;
  target: string;
  value: string;
  storedAt: number;
  size: number;
}

const SQL = {
  get: 'SELECT value, stored_at, target FROM cache WHERE key = $1',
  set: `INSERT INTO cache (key, target, value, stored_at, accessed_at, size) VALUES ($1, $2, $3, $4, $5, $6)
        ON CONFLICT (key) DO UPDATE SET target = excluded.target, value = excluded.value,
          stored_at = excluded.stored_at, accessed_at = excluded.accessed_at, size = excluded.size`,
  // `set` of several entries (distinct keys) in one statement.
  setEach: `INSERT INTO cache (key, target, value, stored_at, accessed_at, size)
            SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[])
            ON CONFLICT (key) DO UPDATE SET target = excluded.target, value = excluded.value,
              stored_at = excluded.stored_at, accessed_at = excluded.accessed_at, size = excluded.size`,
  deleteTarget: 'DELETE FROM cache WHERE target = $1',
  touch: `UPDATE cache c SET accessed_at = t.at FROM unnest($1::text[], $2::bigint[]) AS t (key, at)
          WHERE c.key = t.key AND c.accessed_at < t.at`,
  deleteOlder: 'DELETE FROM cache WHERE key IN (SELECT key FROM cache WHERE stored_at < $1 LIMIT $2)',
  total: 'SELECT coalesce(sum(size), 0)::bigint AS total FROM cache',
  // The least recently used entries, as many as cover `excess` bytes (at most a batch); an
  // entry read or written again since it was chosen stays.
  evict: `
    WITH oldest AS (SELECT key, accessed_at, sum(size) OVER (ORDER BY accessed_at, key) - size AS before
                      FROM (SELECT key, accessed_at, size FROM cache ORDER BY accessed_at, key LIMIT $2) o),
         dropped AS (DELETE FROM cache c USING oldest o
                      WHERE c.key = o.key AND c.accessed_at = o.accessed_at AND o.before < $1
                      RETURNING c.size)
    SELECT count(*) AS n, coalesce(sum(size), 0)::bigint AS bytes FROM dropped`,
};

/** The cache on PostgreSQL: it also hands out an entry's target, and takes note of reads served elsewhere (its eviction goes by them; redis/cache.ts). */
export interface DurableCache extends CacheStore {
  read(key: string): Promise<(CachedEntry & { target: string }) | null>;
  touch(key: string, at: number): void;
}

export function cacheStore(query: Query, maxBytes: number, maxAgeMs: number): DurableCache & { flush(): Promise<void> } {
  let touched = new Map<string, number>();

  const flush = async (): Promise<void> => {
    if (touched.size === 0) return;
    const batch = touched;
    touched = new Map();
    try {
      await query(SQL.touch, [[...batch.keys()], [...batch.values()]]);
    } catch (err) {
      for (const [key, at] of batch) if (!touched.has(key)) touched.set(key, at);
      throw err;
    }
  };

  const touch = (key: string, at: number): void => {
    touched.set(key, at);
    // A read must not fail because access times could not be written.
    if (touched.size >= MAX_TOUCHED) flush().catch(() => {});
  };

  const read = async (key: string): Promise<(CachedEntry & { target: string }) | null> => {
    const row = (await query(SQL.get, [key])).rows[0];
    if (!row) return null;
    touch(key, Date.now());
    return { bytes: Buffer.from(row.value as string), storedAt: row.stored_at as number, target: row.target as string };
  };

  // The writes of batch jobs' pages, many at once: together (store/write-batches.ts).
  const together = new WriteBatches<Written, void>(async (_all, batch) => {
    // One row per key (ON CONFLICT cannot change a row twice in one statement): the last asked.
    // In key order, so that two nodes' statements lock the rows they share in the same order (in
    // any order, each could hold a row the other waits for: a deadlock).
    const rows = [...new Map(batch.map((w) => [w.key, w])).values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const at = Date.now();
    await query(SQL.setEach, [rows.map((w) => w.key), rows.map((w) => w.target), rows.map((w) => w.value), rows.map((w) => w.storedAt), rows.map(() => at), rows.map((w) => w.size)]);
    return batch.map(() => undefined);
  }, MAX_TOGETHER);

  return {
    flush,

    async get(key: string): Promise<CachedEntry | null> {
      const entry = await read(key);
      return entry && { bytes: entry.bytes, storedAt: entry.storedAt };
    },

    read,
    touch,

    async set(key: string, target: string, entry: CacheEntry, options?: { together?: boolean }): Promise<void> {
      const value = entryText(entry);
      const size = (entry.bytes?.length ?? Buffer.byteLength(value)) + Buffer.byteLength(key) + Buffer.byteLength(target);
      if (options?.together) return together.add('', { key, target, value, storedAt: Math.trunc(entry.storedAt), size });
      await query(SQL.set, [key, target, value, Math.trunc(entry.storedAt), Date.now(), size]);
    },

    async deleteTarget(target: string): Promise<void> {
      await query(SQL.deleteTarget, [target]);
    },

    async prune(now: number): Promise<void> {
      await flush();
      for (;;) {
        const { rowCount } = await query(SQL.deleteOlder, [now - maxAgeMs, PRUNE_BATCH]);
        if ((rowCount ?? 0) < PRUNE_BATCH) break;
      }
      const total = (await query(SQL.total)).rows[0]?.total as number;
      if (total <= maxBytes) return;
      let excess = total - Math.floor(maxBytes * EVICT_TO);
      while (excess > 0) {
        const row = (await query(SQL.evict, [excess, PRUNE_BATCH])).rows[0] as { n: number; bytes: number };
        if (row.n === 0) break;
        excess -= row.bytes;
      }
    },
  };
}
