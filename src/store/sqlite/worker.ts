// The embedded store's background thread: its own connection checkpoints the write-ahead log
// at a steady pace and prunes the cache when asked, so that no request of the main thread ever
// waits on a copy of the log, an fsync, or a large delete (see maintenance.ts).

import { DatabaseSync } from 'node:sqlite';
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { checkpoint, pruneCache } from './maintenance.ts';
import type { PruneOptions } from './maintenance.ts';

export interface WorkerData {
  path: string;
  busyTimeoutMs: number;
  intervalMs: number;
  walMaxBytes: number;
}

export type WorkerRequest = { type: 'checkpoint' } | { type: 'prune'; id: number; options: PruneOptions } | { type: 'stop' };

export type WorkerReply =
  | { type: 'pruned'; id: number; dropped: number }
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
    .catch((err: unknown) => {
      const e = err as { message?: unknown; code?: unknown; errcode?: unknown };
      const error = { message: String(e.message ?? err), code: e.code, errcode: e.errcode };
      port.postMessage({ type: 'failed', id: request.id, error } satisfies WorkerReply);
    });
});
