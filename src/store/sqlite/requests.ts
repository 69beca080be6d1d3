// Request records on the embedded store: appended in batches, listed newest first by keyset
// (arrival time, then request id), totalled per day and per endpoint, pruned by age.
//
// The batches are written by the store's background thread (worker.ts), on its own connection:
// a record's row costs about 25 µs of insert and commit (8 µs of CPU, the rest the log's
// writes; four B-trees, one keyed by a random id), which on the event loop was a quarter of a
// cache hit's time (the insert and its commit: 12% of the service's profile under `npm run
// bench`). Moved here, the main thread's CPU per cache hit went from 102 to 75 µs (the bare
// route: 33 µs; `node bench/compare.ts`, base and change alternated in one run). The request
// path only hands the batch over; an in-memory database writes it in place.
import { StoreUnavailableError, type RequestLog, type RequestPage, type RequestQuery, type RequestRecord, type RequestTotals } from '../types.ts';
import { listingFilter, pageOf } from '../request-query.ts';
import { recordLimit } from '../rules.ts';
import { prepare, type Connection } from './connection.ts';
import { recordInserter, recordRow, type RecordRow } from './record-rows.ts';

/** Where batches of rows go: the background thread, or this connection in place. */
export type RecordWriter = (rows: RecordRow[]) => Promise<void>;

/** Writes on this connection, in a group commit (an in-memory database, or the thread is gone). */
export function inPlaceRecords(c: Connection): RecordWriter {
  let insert: ((rows: readonly RecordRow[]) => void) | null = null;
  return (rows) =>
    c.txGrouped(() => {
      insert ??= recordInserter(c.db);
      insert(rows);
    });
}

const PRUNE_BATCH = 500;

const SQL = {
  byDay: `SELECT strftime('%Y-%m-%d', at / 1000, 'unixepoch') AS day, count(*) AS requests, sum(credits) AS credits, sum(cached) AS cached
            FROM requests WHERE team_id = ? AND at >= ? AND at < ? GROUP BY day ORDER BY day`,
  byEndpoint: `SELECT endpoint, count(*) AS requests, sum(credits) AS credits, sum(cached) AS cached
                 FROM requests WHERE team_id = ? AND at >= ? AND at < ? GROUP BY endpoint ORDER BY endpoint`,
  prune: 'DELETE FROM requests WHERE request_id IN (SELECT request_id FROM requests WHERE at < ? LIMIT ?)',
};

export function requestLog(c: Connection, write: RecordWriter): RequestLog {
  const st = prepare(c.db, SQL);
  return {
    async append(records: readonly RequestRecord[]): Promise<void> {
      if (records.length === 0) return;
      if (c.closed) throw new StoreUnavailableError('SQLite store is closed');
      await write(records.map(recordRow));
    },

    async list(query: RequestQuery): Promise<RequestPage> {
      const limit = recordLimit(query.limit);
      const { where, values } = listingFilter(query);
      const sql = `SELECT * FROM requests WHERE ${where.join(' AND ')} ORDER BY at DESC, request_id DESC LIMIT ?`;
      return pageOf(c.run(() => c.db.prepare(sql).all(...(values as (string | number)[]), limit + 1)), limit);
    },

    async totals(teamId: string, since: number, until = Number.MAX_SAFE_INTEGER): Promise<RequestTotals> {
      return c.run(() => ({
        days: st.byDay.all(teamId, Math.trunc(since), Math.trunc(until)).map((r) => ({ day: r.day as string, requests: r.requests as number, credits: r.credits as number, cached: r.cached as number })),
        endpoints: st.byEndpoint
          .all(teamId, Math.trunc(since), Math.trunc(until))
          .map((r) => ({ endpoint: r.endpoint as string, requests: r.requests as number, credits: r.credits as number, cached: r.cached as number })),
      }));
    },

    async prune(before: number): Promise<number> {
      let dropped = 0;
      for (;;) {
        const changes = Number(c.tx(() => st.prune.run(Math.trunc(before), PRUNE_BATCH).changes));
        dropped += changes;
        if (changes < PRUNE_BATCH) return dropped;
      }
    },
  };
}
