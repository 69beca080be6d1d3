// Request records on the embedded store: appended in batches, listed newest first by keyset
// (arrival time, then request id), totalled per day and per endpoint, pruned by age.
import type { RequestLog, RequestPage, RequestQuery, RequestRecord, RequestTotals } from '../types.ts';
import { listingFilter, pageOf } from '../request-query.ts';
import { recordLimit } from '../rules.ts';
import { prepare, type Connection } from './connection.ts';

const PRUNE_BATCH = 500;

const SQL = {
  insert: `INSERT OR IGNORE INTO requests (request_id, at, team_id, key_id, endpoint, status, error_code, credits, cached, duration_ms, job_id)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  byDay: `SELECT strftime('%Y-%m-%d', at / 1000, 'unixepoch') AS day, count(*) AS requests, sum(credits) AS credits, sum(cached) AS cached
            FROM requests WHERE team_id = ? AND at >= ? AND at < ? GROUP BY day ORDER BY day`,
  byEndpoint: `SELECT endpoint, count(*) AS requests, sum(credits) AS credits, sum(cached) AS cached
                 FROM requests WHERE team_id = ? AND at >= ? AND at < ? GROUP BY endpoint ORDER BY endpoint`,
  prune: 'DELETE FROM requests WHERE request_id IN (SELECT request_id FROM requests WHERE at < ? LIMIT ?)',
};

export function requestLog(c: Connection): RequestLog {
  const st = prepare(c.db, SQL);
  return {
    async append(records: readonly RequestRecord[]): Promise<void> {
      if (records.length === 0) return;
      await c.txGrouped(() => {
        for (const r of records) {
          st.insert.run(r.requestId, Date.parse(r.at), r.teamId, r.keyId, r.endpoint, r.status, r.errorCode, r.credits, r.cached ? 1 : 0, r.durationMs, r.jobId ?? null);
        }
      });
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
