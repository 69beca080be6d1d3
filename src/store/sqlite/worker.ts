// The embedded store's background thread: its own connection checkpoints the write-ahead log
// at a steady pace, prunes the cache when asked, and writes the request records, so that no
// request of the main thread ever waits on a copy of the log, an fsync, a large delete, or the
// inserts of the records (see maintenance.ts, requests.ts).

import { DatabaseSync } from 'node:sqlite';
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { checkpoint, pruneCache } from './maintenance.ts';
import type { PruneOptions } from './maintenance.ts';
import { recordInserter, type RecordRow } from './record-rows.ts';

export interface WorkerData {
  path: string;
  busyTimeoutMs: number;
  intervalMs: number;
  walMaxBytes: number;
}

export type WorkerRequest =
  | { type: 'checkpoint' }
  | { type: 'prune'; id: number; options: PruneOptions }
  | { type: 'records'; id: number; rows: RecordRow[] }
  | { type: 'stop' };

export type WorkerReply =
  | { type: 'pruned'; id: number; dropped: number }
  | { type: 'written'; id: number }
  | { type: 'failed'; id: number; error: { message: string; code?: unknown; errcode?: unknown } }
  | { type: 'stopped' };

const port = parentPort;
if (!port) throw new Error('worker.ts runs in a worker thread');
const { path, busyTimeoutMs, intervalMs, walMaxBytes } = workerData as WorkerData;
const MIN_ROUND_GAP_MS = 5;
const MIN_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 30_000;

const db = new DatabaseSync(path, { timeout: busyTimeoutMs });
// Should this connection ever restart the log itself, the file is cut back to the limit too.
db.exec(`PRAGMA journal_size_limit = ${Math.trunc(walMaxBytes)}`);

/**
 * One transaction per batch (at most 1,000 rows from records.ts, about 8 ms of the write lock):
 * each commit from this connection empties the main thread's memory of cache entries and keys
 * (it cannot tell this thread's commits from another process's), so they are few and large.
 */
let insertRecords: ((rows: readonly RecordRow[]) => void) | null = null;
const writeRecords = (rows: RecordRow[]): void => {
  insertRecords ??= recordInserter(db);
  db.exec('BEGIN IMMEDIATE');
  try {
    insertRecords(rows);
    db.exec('COMMIT');
  } catch (err) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw err;
  }
};

const failure = (id: number, err: unknown): WorkerReply => {
  const e = err as { message?: unknown; code?: unknown; errcode?: unknown };
  return { type: 'failed', id, error: { message: String(e.message ?? err), code: e.code, errcode: e.errcode } };
};

let roundEndedAt = 0;
// A TRUNCATE checkpoint that found a reader in the way (a long read by another process) is not
// tried again at once: each try holds writers off for a moment. Passive rounds go on meanwhile.
let truncateAfter = 0;
let backoffMs = 0;
const tick = (): void => {
  const now = performance.now();
  try {
    const result = checkpoint(db, path, now < truncateAfter ? Number.POSITIVE_INFINITY : walMaxBytes, busyTimeoutMs);
    if (result.mode === 'TRUNCATE') {
      backoffMs = result.busy ? Math.min(Math.max(2 * backoffMs, MIN_BACKOFF_MS), MAX_BACKOFF_MS) : 0;
      truncateAfter = now + backoffMs;
    }
  } catch {
    // The next tick tries again; the store reports its own errors to requests.
  }
  roundEndedAt = performance.now();
};
const timer = setInterval(tick, intervalMs);

let stopping = false;
let pruning: Promise<unknown> = Promise.resolve();
// Between two batches of a prune: checkpoints run, and a stop ends the prune.
const pause = async (): Promise<void> => {
  await yieldToEvents();
  if (stopping) throw new Error('the store is closing');
};

port.on('message', (request: WorkerRequest) => {
  if (request.type === 'checkpoint') {
    // Calls that queued up during a long round are answered by that round.
    if (!stopping && performance.now() - roundEndedAt > MIN_ROUND_GAP_MS) tick();
    return;
  }
  if (request.type === 'records') {
    // Between two batches of a prune, never inside one of its transactions.
    try {
      writeRecords(request.rows);
      port.postMessage({ type: 'written', id: request.id } satisfies WorkerReply);
    } catch (err) {
      port.postMessage(failure(request.id, err));
    }
    return;
  }
  if (request.type === 'stop') {
    stopping = true;
    clearInterval(timer);
    void pruning.finally(() => {
      tick();
      db.close();
      port.postMessage({ type: 'stopped' } satisfies WorkerReply);
      port.close();
    });
    return;
  }
  // One prune at a time, in the order asked.
  pruning = pruning
    .then(() => pruneCache(db, request.options, pause))
    .then((dropped) => port.postMessage({ type: 'pruned', id: request.id, dropped } satisfies WorkerReply))
    .catch((err: unknown) => port.postMessage(failure(request.id, err)));
});
