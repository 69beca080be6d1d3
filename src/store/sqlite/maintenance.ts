// Store work that can take long: checkpoints of the write-ahead log and cache pruning. It runs
// on a connection of its own in a worker thread (src/store/sqlite/worker.ts), so that no
// request waits on it; an in-memory database, which has a single connection, runs it in place.
//
// Why the WAL needs more than passive checkpoints: a checkpoint copies frames into the
// database, but the log only starts over when a writer begins while every frame has been
// copied and no reader uses the log. Under a steady stream of writes that moment never comes
// (each checkpoint ends with new frames appended meanwhile), so a log checkpointed in the
// background alone grows by every page every transaction writes, without bound. Once it passes
// its limit, a TRUNCATE checkpoint restarts it: it takes the write lock, but only after a
// passive pass has copied nearly everything, so writers wait for a few frames and one sync.

import { statSync } from 'node:fs';
import type { DatabaseSync } from 'node:sqlite';

export interface CheckpointResult {
  mode: 'PASSIVE' | 'TRUNCATE';
  /** The checkpoint could not finish: a reader or writer held what it needed. */
  busy: boolean;
  /** Frames in the log, and frames of it copied into the database (both 0 after TRUNCATE). */
  logFrames: number;
  checkpointedFrames: number;
  /** Size of the -wal file afterwards. */
  walBytes: number;
}

/**
 * How long a TRUNCATE checkpoint waits for the write lock and for readers: it holds writers
 * off meanwhile, so not long (this process's own transactions last well under a millisecond;
 * a long reader elsewhere makes it report busy, and the caller backs off).
 */
const TRUNCATE_BUSY_MS = 100;
/**
 * A TRUNCATE checkpoint copies what is left while writers wait, so it runs once passive passes
 * have left at most this many frames (about 1 MiB)... unless the log has grown past
 * HARD_LIMIT_FACTOR times its limit: writes faster than the copy then wait for it.
 */
const SMALL_REMAINDER_FRAMES = 256;
const HARD_LIMIT_FACTOR = 4;
/** Rows deleted per write transaction while pruning: the write lock is never held for long. */
export const PRUNE_BATCH = 500;

export function walBytes(databasePath: string): number {
  try {
    return statSync(`${databasePath}-wal`).size;
  } catch {
    return 0;
  }
}

function runCheckpoint(db: DatabaseSync, databasePath: string, mode: CheckpointResult['mode']): CheckpointResult {
  const row = db.prepare(`PRAGMA wal_checkpoint(${mode})`).get() as { busy: number; log: number; checkpointed: number };
  return { mode, busy: row.busy !== 0, logFrames: row.log, checkpointedFrames: row.checkpointed, walBytes: walBytes(databasePath) };
}

/**
 * Copies the log into the database without blocking anyone, then, when the log file is larger
 * than `walMaxBytes`, restarts it and truncates the file (see SMALL_REMAINDER_FRAMES for when).
 * Returns the last checkpoint's result.
 */
export function checkpoint(db: DatabaseSync, databasePath: string, walMaxBytes: number, busyTimeoutMs: number): CheckpointResult {
  let passive = runCheckpoint(db, databasePath, 'PASSIVE');
  if (passive.walBytes <= walMaxBytes) return passive;
  const waitForSmallerRemainder = (result: CheckpointResult) =>
    result.logFrames - result.checkpointedFrames > SMALL_REMAINDER_FRAMES && result.walBytes <= walMaxBytes * HARD_LIMIT_FACTOR;
  // One more pass copies what was written during the first; then the next round tries again.
  if (waitForSmallerRemainder(passive)) passive = runCheckpoint(db, databasePath, 'PASSIVE');
  if (waitForSmallerRemainder(passive)) return passive;
  db.exec(`PRAGMA busy_timeout = ${Math.min(TRUNCATE_BUSY_MS, busyTimeoutMs)}`);
  try {
    return runCheckpoint(db, databasePath, 'TRUNCATE');
  } finally {
    db.exec(`PRAGMA busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
  }
}

export interface PruneOptions {
  now: number;
  maxAgeMs: number;
  maxBytes: number;
  /** Share of `maxBytes` the cache is brought down to once it is over. */
  evictTo: number;
}

/** Runs `fn` in a write transaction. */
function write<T>(db: DatabaseSync, fn: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = fn();
    db.exec('COMMIT');
    return result;
  } catch (err) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw err;
  }
}

/**
 * Drops cache entries stored before `now - maxAgeMs`, then, while the cache is larger than
 * `maxBytes`, the least recently accessed ones until it is down to `evictTo` of it. Deletes in
 * short transactions of at most PRUNE_BATCH rows and awaits `pause` between them, so that the
 * other connection's writes (and this thread's checkpoints) go on meanwhile. Returns the
 * number of entries dropped.
 */
export async function pruneCache(db: DatabaseSync, options: PruneOptions, pause: () => Promise<void>): Promise<number> {
  const deleteOlder = db.prepare('DELETE FROM cache WHERE rowid IN (SELECT rowid FROM cache WHERE stored_at < ? LIMIT ?)');
  const total = db.prepare('SELECT coalesce(sum(size), 0) AS total FROM cache');
  const oldest = db.prepare('SELECT key, size, accessed_at FROM cache ORDER BY accessed_at, rowid LIMIT ?');
  // An entry written or read again since it was chosen stays.
  const deleteUnused = db.prepare('DELETE FROM cache WHERE key = ? AND accessed_at = ?');

  let dropped = 0;
  for (;;) {
    const changes = Number(write(db, () => deleteOlder.run(options.now - options.maxAgeMs, PRUNE_BATCH).changes));
    dropped += changes;
    if (changes < PRUNE_BATCH) break;
    await pause();
  }

  const size = (total.get() as { total: number }).total;
  if (size <= options.maxBytes) return dropped;
  let excess = size - Math.floor(options.maxBytes * options.evictTo);
  while (excess > 0) {
    const candidates = oldest.all(PRUNE_BATCH) as { key: string; size: number; accessed_at: number }[];
    if (candidates.length === 0) break;
    write(db, () => {
      for (const { key, size, accessed_at: accessedAt } of candidates) {
        if (excess <= 0) break;
        if (deleteUnused.run(key, accessedAt).changes === 1) {
          excess -= size;
          dropped += 1;
        }
      }
    });
    await pause();
  }
  return dropped;
}
