// The listing of request records as both stores query it: the same columns, filters and
// keyset order (newest first by arrival, then by request id), in SQL both engines accept.
import { decodeRecordCursor, encodeRecordCursor } from './rules.ts';
import type { RequestPage, RequestQuery, RequestRecord } from './types.ts';

type Row = Record<string, unknown>;

export const toRecord = (r: Row): RequestRecord => ({
  requestId: r.request_id as string,
  at: Number(r.at),
  teamId: r.team_id as string,
  keyId: r.key_id as string,
  endpoint: r.endpoint as string,
  status: r.status as number,
  errorCode: (r.error_code as string | null) ?? null,
  credits: r.credits as number,
  cached: Boolean(r.cached),
  durationMs: r.duration_ms as number,
  ...(r.job_id ? { jobId: r.job_id as string } : {}),
});

/** The WHERE clause and values of a listing; `?` placeholders (PostgreSQL's are numbered by the caller). */
export function listingFilter(query: RequestQuery): { where: string[]; values: unknown[] } {
  const where = ['team_id = ?'];
  const values: unknown[] = [query.teamId];
  const add = (condition: string, ...conditionValues: unknown[]) => {
    where.push(condition);
    values.push(...conditionValues);
  };
  if (query.since !== undefined) add('at >= ?', Math.trunc(query.since));
  if (query.until !== undefined) add('at < ?', Math.trunc(query.until));
  if (query.endpoint !== undefined) add('endpoint = ?', query.endpoint);
  if (query.status !== undefined) add('status = ?', query.status);
  if (query.cursor) {
    const { at, requestId } = decodeRecordCursor(query.cursor);
    add('(at < ? OR (at = ? AND request_id < ?))', at, at, requestId);
  }
  return { where, values };
}

/** A page from rows fetched with one more than `limit`. */
export function pageOf(rows: Row[], limit: number): RequestPage {
  const records = rows.slice(0, limit).map(toRecord);
  const last = rows.length > limit ? records[records.length - 1] : undefined;
  return { records, next: last ? encodeRecordCursor({ at: last.at, requestId: last.requestId }) : null };
}

