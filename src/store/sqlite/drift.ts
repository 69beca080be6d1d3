// Drift samples on the embedded store: upstream answers a mapping did not recognise.
import { newId } from '../rules.ts';
import { toDriftSummary } from '../drift-rows.ts';
import type { DriftLog, DriftSample } from '../types.ts';
import { prepare, type Connection } from './connection.ts';

const HOUR_MS = 60 * 60 * 1000;
const SUMMARY = 'id, at, platform, endpoint, request_id, reason, path, status, truncated';

const SQL = {
  insert: 'INSERT INTO drift (id, at, platform, endpoint, request_id, reason, path, status, headers, body, truncated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  recent: 'SELECT id FROM drift WHERE platform = ? AND endpoint = ? AND at > ? ORDER BY at, id',
  delete: 'DELETE FROM drift WHERE id = ?',
  listAll: `SELECT ${SUMMARY} FROM drift ORDER BY at DESC, id DESC LIMIT ?`,
  listPlatform: `SELECT ${SUMMARY} FROM drift WHERE platform = ? ORDER BY at DESC, id DESC LIMIT ?`,
  get: 'SELECT * FROM drift WHERE id = ?',
  prune: 'DELETE FROM drift WHERE at < ?',
};

export function driftLog(c: Connection): DriftLog {
  const st = prepare(c.db, SQL);
  return {
    async add(sample, perHour) {
      const id = newId('drift');
      const at = Date.parse(sample.at);
      c.tx(() => {
        const recent = st.recent.all(sample.platform, sample.endpoint, at - HOUR_MS);
        for (const row of recent.slice(0, Math.max(0, recent.length - perHour + 1))) st.delete.run(row.id as string);
        st.insert.run(id, at, sample.platform, sample.endpoint, sample.requestId, sample.reason, sample.path, sample.status, JSON.stringify(sample.headers), sample.body, sample.truncated ? 1 : 0);
      });
      return id;
    },
    async list({ platform, limit = 50 }) {
      return c.run(() => (platform === undefined ? st.listAll.all(limit) : st.listPlatform.all(platform, limit))).map(toDriftSummary);
    },
    async get(id): Promise<DriftSample | null> {
      const row = c.run(() => st.get.get(id));
      return row ? { ...toDriftSummary(row), headers: JSON.parse(row.headers as string) as Record<string, string>, body: row.body as string } : null;
    },
    async prune(before) {
      return c.tx(() => Number(st.prune.run(Math.trunc(before)).changes));
    },
  };
}
