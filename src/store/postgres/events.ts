// Account events on PostgreSQL (recorded by the ledger's charges, ledger.ts).
import { eventLimit, toEvent } from '../event-rows.ts';
import type { EventLog } from '../types.ts';
import type { Query } from './pool.ts';

export function eventLog(query: Query): EventLog {
  return {
    async list(teamId, limit) {
      return (await query('SELECT id, team_id, type, data, created_at FROM events WHERE team_id = $1 ORDER BY seq LIMIT $2', [teamId, eventLimit(limit)])).rows.map(toEvent);
    },
  };
}
