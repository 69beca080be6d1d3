// Account events on the embedded store (recorded by the ledger's charges, ledger.ts).
import { eventLimit, toEvent } from '../event-rows.ts';
import type { EventLog } from '../types.ts';
import { prepare, type Connection } from './connection.ts';

const SQL = {
  list: 'SELECT id, team_id, type, data, created_at FROM events WHERE team_id = ? ORDER BY seq LIMIT ?',
};

export function eventLog(c: Connection): EventLog {
  const st = prepare(c.db, SQL);
  return {
    async list(teamId, limit) {
      return c.run(() => st.list.all(teamId, eventLimit(limit))).map(toEvent);
    },
  };
}
