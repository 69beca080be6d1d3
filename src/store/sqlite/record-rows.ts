// A request record as the values of its row, and their insert: what the store's background
// thread (worker.ts) loads of the request records, and nothing else, so that the thread stays
// small (each module it imports is stripped of its types and compiled again in its own heap).
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { RequestRecord } from '../types.ts';

/** A record as its row's values, in the insert's column order; what crosses to the background thread. */
export type RecordRow = [string, number, string, string, string, number, string | null, number, number, number, string | null];

export const recordRow = (r: RequestRecord): RecordRow => [r.requestId, r.at, r.teamId, r.keyId, r.endpoint, r.status, r.errorCode, r.credits, r.cached ? 1 : 0, r.durationMs, r.jobId ?? null];

/** Rows per INSERT statement: one statement for many rows spares a call into SQLite per row (8.2 -> 7.2 µs of CPU a row, measured). */
const ROWS_PER_STATEMENT = 32;
const insertSql = (rows: number) =>
  `INSERT OR IGNORE INTO requests (request_id, at, team_id, key_id, endpoint, status, error_code, credits, cached, duration_ms, job_id) VALUES ${Array<string>(rows).fill('(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`;

/** Inserts rows with `db` (inside the caller's transaction), 32 to a statement. */
export function recordInserter(db: DatabaseSync): (rows: readonly RecordRow[]) => void {
  const full = db.prepare(insertSql(ROWS_PER_STATEMENT));
  const single = db.prepare(insertSql(1));
  return (rows) => {
    let i = 0;
    for (; i + ROWS_PER_STATEMENT <= rows.length; i += ROWS_PER_STATEMENT) run(full, rows, i, ROWS_PER_STATEMENT);
    for (; i < rows.length; i += 1) run(single, rows, i, 1);
  };
}

function run(statement: StatementSync, rows: readonly RecordRow[], from: number, count: number): void {
  const values: (string | number | null)[] = [];
  for (let i = from; i < from + count; i += 1) values.push(...(rows[i] as RecordRow));
  statement.run(...values);
}
