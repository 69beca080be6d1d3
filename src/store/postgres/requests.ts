// Request records on PostgreSQL: the same rules as the embedded store (sqlite/requests.ts).
import type { RequestLog, RequestPage, RequestQuery, RequestRecord, RequestTotals } from '../types.ts';
import { recordLimit } from '../rules.ts';
import { listingFilter, pageOf } from '../request-query.ts';
import type { Query } from './pool.ts';

const PRUNE_BATCH = 5_000;

/** `?` placeholders as `$1`, `$2`, … */
const numbered = (sql: string): string => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

export function requestLog(query: Query): RequestLog {
  return {
    async append(records: readonly RequestRecord[]): Promise<void> {
      if (records.length === 0) return;
      const column = <T>(pick: (r: RequestRecord) => T): T[] => records.map(pick);
      await query(
        `INSERT INTO requests (request_id, at, team_id, key_id, endpoint, status, error_code, credits, cached, duration_ms, job_id)
         SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::int[], $9::bool[], $10::float8[], $11::text[])
         ON CONFLICT (request_id) DO NOTHING`,
        [
          column((r) => r.requestId),
          column((r) => r.at),
          column((r) => r.teamId),
          column((r) => r.keyId),
          column((r) => r.endpoint),
          column((r) => r.status),
          column((r) => r.errorCode),
          column((r) => r.credits),
          column((r) => r.cached),
          column((r) => r.durationMs),
          column((r) => r.jobId ?? null),
        ],
      );
    },

    async list(q: RequestQuery): Promise<RequestPage> {
      const limit = recordLimit(q.limit);
      const { where, values } = listingFilter(q);
      const sql = numbered(`SELECT * FROM requests WHERE ${where.join(' AND ')} ORDER BY at DESC, request_id DESC LIMIT ?`);
      return pageOf((await query(sql, [...values, limit + 1])).rows, limit);
    },

    async totals(teamId: string, since: number, until = Number.MAX_SAFE_INTEGER): Promise<RequestTotals> {
      const [days, endpoints] = await Promise.all([
        query(
          `SELECT to_char(to_timestamp(at / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
                  count(*) AS requests, sum(credits)::bigint AS credits, count(*) FILTER (WHERE cached) AS cached
             FROM requests WHERE team_id = $1 AND at >= $2 AND at < $3 GROUP BY day ORDER BY day`,
          [teamId, Math.trunc(since), Math.trunc(until)],
        ),
        query(
          `SELECT endpoint, count(*) AS requests, sum(credits)::bigint AS credits, count(*) FILTER (WHERE cached) AS cached
             FROM requests WHERE team_id = $1 AND at >= $2 AND at < $3 GROUP BY endpoint ORDER BY endpoint`,
          [teamId, Math.trunc(since), Math.trunc(until)],
        ),
      ]);
      return {
        days: days.rows.map((r) => ({ day: r.day as string, requests: r.requests as number, credits: r.credits as number, cached: r.cached as number })),
        endpoints: endpoints.rows.map((r) => ({ endpoint: r.endpoint as string, requests: r.requests as number, credits: r.credits as number, cached: r.cached as number })),
      };
    },

    async prune(before: number): Promise<number> {
      let dropped = 0;
      for (;;) {
        const { rowCount } = await query('DELETE FROM requests WHERE request_id IN (SELECT request_id FROM requests WHERE at < $1 LIMIT $2)', [Math.trunc(before), PRUNE_BATCH]);
        dropped += rowCount ?? 0;
        if ((rowCount ?? 0) < PRUNE_BATCH) return dropped;
      }
    },
  };
}
