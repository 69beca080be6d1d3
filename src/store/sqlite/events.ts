// Account events on the embedded store (credit crossings are recorded by the ledger's charges,
// ledger.ts; anything else records its own).
import { eventLimit, toEvent } from '../event-rows.ts';
import { isoNow, newId } from '../rules.ts';
import type { EventLog } from '../types.ts';
import { prepare, type Connection } from './connection.ts';

const SQL = {
  list: 'SELECT id, team_id, type, data, created_at FROM events WHERE team_id = ? ORDER BY seq LIMIT ?',
  insert: 'INSERT INTO events (id, team_id, type, data, created_at) VALUES (?, ?, ?, ?, ?)',
};

export function eventLog(c: Connection): EventLog {
  const st = prepare(c.db, SQL);
  return {
    async list(teamId, limit) {
      return c.run(() => st.list.all(teamId, eventLimit(limit))).map(toEvent);
    },
    async record(teamId, type, data) {
      const event = { id: newId('evt'), teamId, type, data, createdAt: isoNow() };
      c.run(() => st.insert.run(event.id, teamId, type, JSON.stringify(data), event.createdAt));
      return event;
    },
  };
}
