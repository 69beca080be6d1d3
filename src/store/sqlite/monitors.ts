// Monitors and their runs on the embedded store. A claim is one UPDATE … RETURNING under the
// write lock (so two processes on the same file never take the same run); a run's end writes
// the run, the monitor and its event in one transaction.
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import { MONITOR_COLUMNS, monitorPageLimit, RUN_COLUMNS, runValues, toClaim, toMonitor, toRun } from '../monitor-rows.ts';
import { newId } from '../rules.ts';
import type { MonitorChanges, MonitorStore } from '../types.ts';
import { PRUNE_BATCH } from './maintenance.ts';
import { prepare, type Connection, type Row } from './connection.ts';

const CLAIMED = `${MONITOR_COLUMNS}, last_data, last_good_at`;

const SQL = {
  count: 'SELECT count(*) AS n FROM monitors WHERE team_id = ?',
  insert: `INSERT INTO monitors (id, team_id, test, key_id, endpoint, params, interval_s, cron, timezone, watch, label, status, created_at, next_run_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?) RETURNING ${MONITOR_COLUMNS}`,
  get: `SELECT ${MONITOR_COLUMNS} FROM monitors WHERE team_id = ? AND id = ?`,
  list: `SELECT ${MONITOR_COLUMNS} FROM monitors WHERE team_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
  seqOf: 'SELECT seq FROM monitors WHERE team_id = ? AND id = ?',
  update: `UPDATE monitors SET interval_s = ?, cron = ?, timezone = ?, watch = ?, label = ?, status = ?, next_run_at = ?
           WHERE team_id = ? AND id = ? RETURNING ${MONITOR_COLUMNS}`,
  delete: 'DELETE FROM monitors WHERE team_id = ? AND id = ?',
  claimDue: `UPDATE monitors SET lock_owner = ?, locked_until = ?
             WHERE seq = (SELECT seq FROM monitors WHERE status = 'active' AND next_run_at <= ? AND (locked_until IS NULL OR locked_until < ?)
                           ORDER BY next_run_at LIMIT 1)
             RETURNING ${CLAIMED}`,
  claimNow: `UPDATE monitors SET lock_owner = ?, locked_until = ?
             WHERE team_id = ? AND id = ? AND (locked_until IS NULL OR locked_until < ?)
             RETURNING ${CLAIMED}`,
  exists: 'SELECT 1 AS one FROM monitors WHERE team_id = ? AND id = ?',
  renew: 'UPDATE monitors SET locked_until = ? WHERE id = ? AND lock_owner = ?',
  anyDue: "SELECT 1 AS one FROM monitors WHERE status = 'active' AND next_run_at <= ? AND (locked_until IS NULL OR locked_until < ?) LIMIT 1",
  insertRun: `INSERT INTO monitor_runs (${RUN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (monitor_id, at) DO NOTHING`,
  owned: 'SELECT team_id, consecutive_failures, failure_alerted FROM monitors WHERE id = ? AND lock_owner = ?',
  finish: `UPDATE monitors SET lock_owner = NULL, locked_until = NULL, next_run_at = CASE WHEN ? IS NULL OR next_run_at = ? THEN ? ELSE next_run_at END, last_run_at = ?, runs = runs + 1,
             consecutive_failures = ?, failure_alerted = ?, last_data = coalesce(?, last_data), last_good_at = coalesce(?, last_good_at),
             last_change_at = coalesce(?, last_change_at)
           WHERE id = ? AND lock_owner = ?`,
  event: 'INSERT INTO events (id, team_id, type, data, created_at) VALUES (?, ?, ?, ?, ?)',
  keep: "UPDATE reservations SET state = 'committed' WHERE id = ? AND state = 'pending'",
  uncharged: 'UPDATE monitor_runs SET credits = 0 WHERE id = ?',
  runs: `SELECT r.${RUN_COLUMNS.split(', ').join(', r.')} FROM monitor_runs r JOIN monitors m ON m.id = r.monitor_id
         WHERE m.team_id = ? AND r.monitor_id = ? AND r.at < ? ORDER BY r.at DESC LIMIT ?`,
  prune: 'DELETE FROM monitor_runs WHERE seq IN (SELECT seq FROM monitor_runs WHERE finished_at < ? LIMIT ?)',
};

const MAX_SEQ = Number.MAX_SAFE_INTEGER;

export function monitorStore(c: Connection): MonitorStore {
  const st = prepare(c.db, SQL);
  return {
    async create(m, maxPerTeam) {
      return c.txGrouped(() => {
        if (Number((st.count.get(m.teamId) as Row).n) >= maxPerTeam) return null;
        const row = st.insert.get(
          newId('mon'),
          m.teamId,
          m.test ? 1 : 0,
          m.keyId,
          m.endpoint,
          JSON.stringify(m.params),
          m.schedule.interval,
          m.schedule.cron,
          m.schedule.timezone,
          JSON.stringify(m.watch),
          m.label,
          Math.trunc(m.createdAt),
          Math.trunc(m.nextRunAt),
        ) as Row;
        return toMonitor(row);
      });
    },

    async get(teamId, id) {
      const row = c.run(() => st.get.get(teamId, id));
      return row ? toMonitor(row) : null;
    },

    async list(teamId, limit, after) {
      return c.run(() => {
        let below = MAX_SEQ;
        if (after !== undefined) {
          const found = st.seqOf.get(teamId, after);
          if (!found) return [];
          below = Number(found.seq);
        }
        return st.list.all(teamId, below, monitorPageLimit(limit)).map(toMonitor);
      });
    },

    async update(teamId, id, changes: MonitorChanges) {
      return c.txGrouped(() => {
        const row = st.get.get(teamId, id);
        if (!row) return null;
        const now = toMonitor(row);
        const schedule = changes.schedule ?? { interval: now.interval, cron: now.cron, timezone: now.timezone };
        const updated = st.update.get(
          schedule.interval,
          schedule.cron,
          schedule.timezone,
          JSON.stringify(changes.watch ?? now.watch),
          changes.label === undefined ? now.label : changes.label,
          changes.status ?? now.status,
          Math.trunc(changes.nextRunAt ?? now.nextRunAt),
          teamId,
          id,
        ) as Row;
        return toMonitor(updated);
      });
    },

    async delete(teamId, id) {
      return c.txGrouped(() => Number(st.delete.run(teamId, id).changes) === 1);
    },

    async claimDue(owner, now, lockedUntil) {
      // A plain read first: the loop asks every second, and nothing due must not take the write lock.
      if (!c.run(() => st.anyDue.get(Math.trunc(now), Math.trunc(now)))) return null;
      const row = c.tx(() => st.claimDue.get(owner, Math.trunc(lockedUntil), Math.trunc(now), Math.trunc(now)));
      return row ? toClaim(row, owner) : null;
    },

    async claimNow(teamId, id, owner, now, lockedUntil) {
      return c.tx(() => {
        const row = st.claimNow.get(owner, Math.trunc(lockedUntil), teamId, id, Math.trunc(now));
        if (row) return { ...toClaim(row, owner), slot: Math.trunc(now) };
        return st.exists.get(teamId, id) ? 'running' : null;
      });
    },

    async renew(monitorId, owner, lockedUntil) {
      return c.tx(() => Number(st.renew.run(Math.trunc(lockedUntil), monitorId, owner).changes) === 1);
    },

    async finish(monitorId, owner, outcome) {
      const { run } = outcome;
      return c.txGrouped(() => {
        const mine = st.owned.get(monitorId, owner);
        if (!mine) return null;
        if (Number(st.insertRun.run(...(runValues(run, (b) => (b ? 1 : 0)) as (string | number | null)[])).changes) !== 1) return null;
        let recorded = run;
        if (outcome.reservationId && Number(st.keep.run(outcome.reservationId).changes) !== 1) {
          st.uncharged.run(run.id);
          recorded = { ...run, creditsCharged: 0 };
        }
        let failures = Number(mine.consecutive_failures);
        let alerted = Boolean(mine.failure_alerted);
        const at = new Date(run.finishedAt).toISOString();
        const teamId = mine.team_id as string;
        if (run.status === 'succeeded') {
          failures = 0;
          alerted = false;
        } else if (run.status === 'failed') {
          failures += 1;
          if (outcome.failedEvent && failures >= outcome.failureThreshold && !alerted) {
            alerted = true;
            st.event.run(newId('evt'), teamId, 'monitor.failed', JSON.stringify({ ...outcome.failedEvent, consecutiveFailures: failures }), at);
          }
        }
        if (outcome.event) st.event.run(newId('evt'), teamId, outcome.event.type, JSON.stringify(outcome.event.data), at);
        const succeeded = run.status === 'succeeded';
        const claimed = outcome.claimedNextRunAt === undefined ? null : Math.trunc(outcome.claimedNextRunAt);
        st.finish.run(
          claimed,
          claimed,
          Math.trunc(outcome.nextRunAt),
          Math.trunc(run.startedAt),
          failures,
          alerted ? 1 : 0,
          succeeded ? (outcome.data ?? null) : null,
          succeeded ? Math.trunc(run.at) : null,
          run.changed ? Math.trunc(run.finishedAt) : null,
          monitorId,
          owner,
        );
        return recorded;
      });
    },

    async runs(teamId, monitorId, limit, before) {
      return c.run(() => st.runs.all(teamId, monitorId, Math.trunc(before ?? MAX_SEQ), monitorPageLimit(limit)).map(toRun));
    },

    async pruneRuns(before) {
      let total = 0;
      for (;;) {
        const deleted = Number(c.tx(() => st.prune.run(Math.trunc(before), PRUNE_BATCH).changes));
        total += deleted;
        if (deleted < PRUNE_BATCH) return total;
        await yieldToEvents();
      }
    },
  };
}
