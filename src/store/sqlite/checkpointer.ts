// The store's background work: a worker thread (worker.ts) checkpoints the write-ahead log,
// prunes the cache and writes the request records, so that no request waits on any of them; an
// in-memory database does it in place.
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { StoreUnavailableError } from '../types.ts';
import { toStoreError, type Connection } from './connection.ts';
import { pruneCache, walBytes, type PruneOptions } from './maintenance.ts';
import { inPlaceRecords, type RecordWriter } from './requests.ts';
import type { WorkerData, WorkerReply, WorkerRequest } from './worker.ts';

/** How often the background thread checkpoints the write-ahead log. */
const CHECKPOINT_INTERVAL_MS = 100;
/** Commits between two looks at the log's size from this thread, and the least time between two calls for a round. */
const COMMITS_PER_WAL_CHECK = 32;
const CHECKPOINT_CALL_GAP_MS = 20;

/** Store work that can take long (see maintenance.ts). */
export interface Background {
  prune(options: PruneOptions): Promise<number>;
  /** Writes request records (requests.ts). */
  records: RecordWriter;
  stop(): Promise<void>;
}

/** Turns an error a worker thread reported back into what the store throws. */
function fromWorker(error: { message: string; code?: unknown; errcode?: unknown }): unknown {
  return toStoreError(Object.assign(new Error(error.message), { code: error.code, errcode: error.errcode }));
}

/** For an in-memory database (one connection only) or when the thread is gone: the work runs here. */
export function inPlace(c: Connection): Background {
  return {
    prune: async (options) => {
      if (c.closed) throw new StoreUnavailableError('SQLite store is closed');
      try {
        return await pruneCache(c.db, options, () => yieldToEvents());
      } catch (err) {
        throw toStoreError(err);
      }
    },
    records: inPlaceRecords(c),
    stop: async () => {},
  };
}

/**
 * A worker thread with a connection of its own that checkpoints the log and keeps it bounded,
 * and prunes the cache when asked: no request of this thread waits on a copy of the log, an
 * fsync, or a large delete.
 *
 * The thread starts with the first write of this process (a commit that changed rows, or request
 * records): an idle service, whose timers commit nothing or prune a store nobody has written to
 * since the start, does not carry the thread's own heap and modules (13 MB resident at rest,
 * npm run bench:idle-memory). Until then commits checkpoint as SQLite does by default, and a
 * prune runs in place, as it does without the thread.
 */
export function startBackground(c: Connection, path: string, busyTimeoutMs: number, walMaxBytes: number): Background {
  // Should this connection restart the log itself (when nothing else is using it), the file is
  // cut back to the limit.
  c.db.exec(`PRAGMA journal_size_limit = ${Math.trunc(walMaxBytes)}`);
  let worker: Worker | null = null;
  const thread = (): Worker => {
    if (worker) return worker;
    worker = new Worker(new URL('./worker.ts', import.meta.url), {
      workerData: { path, busyTimeoutMs, intervalMs: CHECKPOINT_INTERVAL_MS, walMaxBytes } satisfies WorkerData,
      execArgv: ['--disable-warning=ExperimentalWarning'],
    });
    worker.unref();
    worker.on('message', answer);
    worker.on('error', lost);
    worker.on('exit', lost);
    // This connection no longer checkpoints on commit.
    c.db.exec('PRAGMA wal_autocheckpoint = 0');
    return worker;
  };

  const fallback = inPlace(c);
  let failed = false;
  // Writes faster than the thread's pace would overrun the limit between two of its rounds:
  // the size is looked at every few commits, and a log over the limit calls a round at once.
  let commits = 0;
  let calledAt = 0;
  // Rows changed by this connection so far (SQLite's count, less the write probe's, which leave
  // nothing behind): a commit that leaves it as it is (a timer's transaction that found nothing
  // to do) does not start the thread.
  const changes = c.db.prepare('SELECT total_changes() AS n');
  const changed = () => (changes.get() as { n: number }).n - c.probeChanges;
  const changedAtStart = changed();
  c.afterCommit = () => {
    if (failed || stopping) return;
    if (!worker && changed() === changedAtStart) return;
    const running = thread();
    commits += 1;
    if (commits % COMMITS_PER_WAL_CHECK !== 0 || walBytes(path) <= walMaxBytes) return;
    const now = Date.now();
    if (now - calledAt < CHECKPOINT_CALL_GAP_MS) return;
    calledAt = now;
    running.postMessage({ type: 'checkpoint' } satisfies WorkerRequest);
  };
  let stopping = false;
  let stopped: (() => void) | null = null;
  let nextId = 0;
  const waiting = new Map<number, { resolve: (value: number) => void; reject: (err: unknown) => void }>();
  const settle = (id: number) => {
    const pending = waiting.get(id);
    waiting.delete(id);
    // The thread keeps the process alive only while an answer is awaited.
    if (waiting.size === 0) worker?.unref();
    return pending;
  };
  function answer(reply: WorkerReply): void {
    if (reply.type === 'stopped') stopped?.();
    else if (reply.type === 'pruned') settle(reply.id)?.resolve(reply.dropped);
    else if (reply.type === 'written') settle(reply.id)?.resolve(0);
    else settle(reply.id)?.reject(stopping ? new StoreUnavailableError('SQLite store is closed') : fromWorker(reply.error));
  }
  function lost(): void {
    if (stopping || failed) return;
    failed = true;
    // Without the thread, commits checkpoint again as SQLite does by default, and the cache
    // is pruned on this thread (still in short batches).
    if (!c.closed) c.db.exec('PRAGMA wal_autocheckpoint = 1000');
    for (const id of [...waiting.keys()]) settle(id)?.reject(new StoreUnavailableError('the SQLite background thread stopped'));
  }

  /** Asks the thread, and resolves with its answer. */
  const ask = (request: (id: number) => WorkerRequest): Promise<number> => {
    if (c.closed || stopping) return Promise.reject(new StoreUnavailableError('SQLite store is closed'));
    const running = thread();
    const id = nextId++;
    return new Promise<number>((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      running.ref();
      running.postMessage(request(id));
    });
  };

  return {
    prune: (options) => (failed || !worker ? fallback.prune(options) : ask((id) => ({ type: 'prune', id, options }))),
    records: async (rows) => {
      if (failed) return fallback.records(rows);
      // Cloned as they are: 0.23 µs a row on this thread, against 0.38 µs as one JSON string.
      await ask((id) => ({ type: 'records', id, rows }));
    },
    stop: async () => {
      stopping = true;
      const running = worker;
      if (failed || !running) return;
      await new Promise<void>((resolve) => {
        const timeout = setTimeout(() => void running.terminate().then(() => resolve()), 2_000);
        const done = () => {
          clearTimeout(timeout);
          resolve();
        };
        stopped = done;
        running.once('exit', done);
        running.ref();
        running.postMessage({ type: 'stop' } satisfies WorkerRequest);
      });
    },
  };
}
