// Drift samples on PostgreSQL: upstream answers a mapping did not recognise, from every node.
// Keeping a sample and dropping the oldest of its hour is one statement.
import { toDriftSummary } from '../drift-rows.ts';
import { newId } from '../rules.ts';
import type { DriftLog } from '../types.ts';
import type { Query } from './pool.ts';

const HOUR_MS = 60 * 60 * 1000;
const SUMMARY = 'id, at, platform, endpoint, request_id, reason, path, status, truncated';

export function driftLog(query: Query): DriftLog {
  return {
    async add(sample, perHour) {
      const id = newId('drift');
      const at = Date.parse(sample.at);
      await query(
        `WITH dropped AS (DELETE FROM drift WHERE id IN (
            SELECT id FROM drift WHERE platform = $3 AND endpoint = $4 AND at > $12
             ORDER BY at DESC, id DESC OFFSET $13))
         INSERT INTO drift (id, at, platform, endpoint, request_id, reason, path, status, headers, body, truncated)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [id, at, sample.platform, sample.endpoint, sample.requestId, sample.reason, sample.path, sample.status, JSON.stringify(sample.headers), sample.body, sample.truncated, at - HOUR_MS, Math.max(0, perHour - 1)],
      );
      return id;
    },
    async list({ platform, limit = 50 }) {
      const { rows } =
        platform === undefined
          ? await query(`SELECT ${SUMMARY} FROM drift ORDER BY at DESC, id DESC LIMIT $1`, [limit])
          : await query(`SELECT ${SUMMARY} FROM drift WHERE platform = $1 ORDER BY at DESC, id DESC LIMIT $2`, [platform, limit]);
      return rows.map(toDriftSummary);
    },
    async get(id) {
      const row = (await query('SELECT * FROM drift WHERE id = $1', [id])).rows[0];
      return row ? { ...toDriftSummary(row), headers: row.headers as Record<string, string>, body: row.body as string } : null;
    },
    async prune(before) {
      return (await query('DELETE FROM drift WHERE at < $1', [Math.trunc(before)])).rowCount ?? 0;
    },
  };
}
