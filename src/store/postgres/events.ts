// Account events on PostgreSQL (credit crossings are recorded by the ledger's charges,
// ledger.ts; anything else records its own).
import { eventLimit, toEvent } from '../event-rows.ts';
import { newId } from '../rules.ts';
import type { EventLog } from '../types.ts';
import type { Query } from './pool.ts';

export function eventLog(query: Query): EventLog {
  return {
    async list(teamId, limit) {
      return (await query('SELECT id, team_id, type, data, created_at FROM events WHERE team_id = $1 ORDER BY seq LIMIT $2', [teamId, eventLimit(limit)])).rows.map(toEvent);
    },
    async record(teamId, type, data) {
      const sql = 'INSERT INTO events (id, team_id, type, data) VALUES ($1, $2, $3, $4) RETURNING id, team_id, type, data, created_at';
      const [row] = (await query(sql, [newId('evt'), teamId, type, JSON.stringify(data)])).rows;
      return toEvent(row as Record<string, unknown>);
    },
  };
}
