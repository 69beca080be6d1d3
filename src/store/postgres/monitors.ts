// Monitors and their runs on PostgreSQL, shared by every node. A claim is one UPDATE whose
// subquery picks the most overdue free monitor FOR UPDATE SKIP LOCKED: racing nodes never take
// the same run, and a node that died mid-run lets the others take it once its lock expires. A
// run's end writes the run, the monitor and its event in one transaction, only for the lock's
// owner; a slot is recorded once (unique per monitor and slot).
import { MONITOR_COLUMNS, monitorPageLimit, RUN_COLUMNS, runValues, toClaim, toMonitor, toRun } from '../monitor-rows.ts';
import { newId } from '../rules.ts';
import type { MonitorChanges, MonitorStore } from '../types.ts';
import type { Db } from './pool.ts';

const CLAIMED = `${MONITOR_COLUMNS}, last_data, last_good_at`;

const SQL = {
  // Creations of one team wait for each other, so that the count and the insert agree.
  lockTeam: "SELECT pg_advisory_xact_lock(hashtext('monitors:' || $1))",
  count: 'SELECT count(*)::int AS n FROM monitors WHERE team_id = $1',
  insert: `INSERT INTO monitors (id, team_id, test, key_id, endpoint, params, interval_s, cron, timezone, watch, label, status, created_at, next_run_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'active', $12, $13) RETURNING ${MONITOR_COLUMNS}`,
  get: `SELECT ${MONITOR_COLUMNS} FROM monitors WHERE team_id = $1 AND id = $2`,
  list: `SELECT ${MONITOR_COLUMNS} FROM monitors WHERE team_id = $1 AND seq < coalesce((SELECT seq FROM monitors WHERE team_id = $1 AND id = $2), $3)
         ORDER BY seq DESC LIMIT $4`,
  getForUpdate: `SELECT ${MONITOR_COLUMNS} FROM monitors WHERE team_id = $1 AND id = $2 FOR UPDATE`,
  update: `UPDATE monitors SET interval_s = $1, cron = $2, timezone = $3, watch = $4, label = $5, status = $6, next_run_at = $7
           WHERE team_id = $8 AND id = $9 RETURNING ${MONITOR_COLUMNS}`,
  delete: 'DELETE FROM monitors WHERE team_id = $1 AND id = $2',
  claimDue: `UPDATE monitors SET lock_owner = $1, locked_until = $2
             WHERE seq = (SELECT seq FROM monitors WHERE status = 'active' AND next_run_at <= $3 AND (locked_until IS NULL OR locked_until < $3)
                           ORDER BY next_run_at LIMIT 1 FOR UPDATE SKIP LOCKED)
               AND (locked_until IS NULL OR locked_until < $3)
             RETURNING ${CLAIMED}`,
  claimNow: `UPDATE monitors SET lock_owner = $1, locked_until = $2
             WHERE team_id = $3 AND id = $4 AND (locked_until IS NULL OR locked_until < $5)
             RETURNING ${CLAIMED}`,
  exists: 'SELECT 1 AS one FROM monitors WHERE team_id = $1 AND id = $2',
  renew: 'UPDATE monitors SET locked_until = $1 WHERE id = $2 AND lock_owner = $3',
  owned: 'SELECT team_id, consecutive_failures, failure_alerted FROM monitors WHERE id = $1 AND lock_owner = $2 FOR UPDATE',
  insertRun: `INSERT INTO monitor_runs (${RUN_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (monitor_id, at) DO NOTHING`,
  finish: `UPDATE monitors SET lock_owner = NULL, locked_until = NULL,
             next_run_at = CASE WHEN $10::bigint IS NULL OR next_run_at = $10::bigint THEN $1 ELSE next_run_at END, last_run_at = $2, runs = runs + 1,
             consecutive_failures = $3, failure_alerted = $4, last_data = coalesce($5, last_data), last_good_at = coalesce($6, last_good_at),
             last_change_at = coalesce($7, last_change_at)
           WHERE id = $8 AND lock_owner = $9`,
  event: 'INSERT INTO events (id, team_id, type, data) VALUES ($1, $2, $3, $4)',
  keep: "UPDATE reservations SET state = 'committed' WHERE id = $1 AND state = 'pending'",
  uncharged: 'UPDATE monitor_runs SET credits = 0 WHERE id = $1',
  runs: `SELECT ${RUN_COLUMNS.split(', ').map((column) => `r.${column}`).join(', ')} FROM monitor_runs r JOIN monitors m ON m.id = r.monitor_id
         WHERE m.team_id = $1 AND r.monitor_id = $2 AND r.at < $3 ORDER BY r.at DESC LIMIT $4`,
  prune: 'DELETE FROM monitor_runs WHERE seq IN (SELECT seq FROM monitor_runs WHERE finished_at < $1 LIMIT $2)',
};

const MAX = Number.MAX_SAFE_INTEGER;
/** Rows deleted per statement while pruning. */
const PRUNE_BATCH = 1_000;

export function monitorStore(db: Db): MonitorStore {
  const { query } = db;
  return {
    async create(m, maxPerTeam) {
      return db.transaction(async (client) => {
        await client.query(SQL.lockTeam, [m.teamId]);
        const counted = await client.query<{ n: number }>(SQL.count, [m.teamId]);
        if ((counted.rows[0]?.n ?? 0) >= maxPerTeam) return null;
        const { rows } = await client.query(SQL.insert, [
          newId('mon'),
          m.teamId,
          m.test,
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
        ]);
        return toMonitor(rows[0] as Record<string, unknown>);
      });
    },

    async get(teamId, id) {
      const row = (await query(SQL.get, [teamId, id])).rows[0];
      return row ? toMonitor(row) : null;
    },

    async list(teamId, limit, after) {
      const size = monitorPageLimit(limit);
      if (after !== undefined && !(await query(SQL.exists, [teamId, after])).rows[0]) return [];
      return (await query(SQL.list, [teamId, after ?? null, MAX, size])).rows.map(toMonitor);
    },

    async update(teamId, id, changes: MonitorChanges) {
      return db.transaction(async (client) => {
        const row = (await client.query(SQL.getForUpdate, [teamId, id])).rows[0] as Record<string, unknown> | undefined;
        if (!row) return null;
        const now = toMonitor(row);
        const schedule = changes.schedule ?? { interval: now.interval, cron: now.cron, timezone: now.timezone };
        const { rows } = await client.query(SQL.update, [
          schedule.interval,
          schedule.cron,
          schedule.timezone,
          JSON.stringify(changes.watch ?? now.watch),
          changes.label === undefined ? now.label : changes.label,
          changes.status ?? now.status,
          Math.trunc(changes.nextRunAt ?? now.nextRunAt),
          teamId,
          id,
        ]);
        return toMonitor(rows[0] as Record<string, unknown>);
      });
    },

    async delete(teamId, id) {
      return ((await query(SQL.delete, [teamId, id])).rowCount ?? 0) === 1;
    },

    async claimDue(owner, now, lockedUntil) {
      const row = (await query(SQL.claimDue, [owner, Math.trunc(lockedUntil), Math.trunc(now)])).rows[0];
      return row ? toClaim(row, owner) : null;
    },

    async claimNow(teamId, id, owner, now, lockedUntil) {
      const row = (await query(SQL.claimNow, [owner, Math.trunc(lockedUntil), teamId, id, Math.trunc(now)])).rows[0];
      if (row) return { ...toClaim(row, owner), slot: Math.trunc(now) };
      return (await query(SQL.exists, [teamId, id])).rows[0] ? 'running' : null;
    },

    async renew(monitorId, owner, lockedUntil) {
      return ((await query(SQL.renew, [Math.trunc(lockedUntil), monitorId, owner])).rowCount ?? 0) === 1;
    },

    async finish(monitorId, owner, outcome) {
      const { run } = outcome;
      return db.transaction(async (client) => {
        const mine = (await client.query(SQL.owned, [monitorId, owner])).rows[0] as Record<string, unknown> | undefined;
        if (!mine) return null;
        if ((await client.query(SQL.insertRun, runValues(run, (b) => b))).rowCount !== 1) return null;
        let recorded = run;
        if (outcome.reservationId && (await client.query(SQL.keep, [outcome.reservationId])).rowCount !== 1) {
          await client.query(SQL.uncharged, [run.id]);
          recorded = { ...run, creditsCharged: 0 };
        }
        let failures = Number(mine.consecutive_failures);
        let alerted = Boolean(mine.failure_alerted);
        const teamId = mine.team_id as string;
        if (run.status === 'succeeded') {
          failures = 0;
          alerted = false;
        } else if (run.status === 'failed') {
          failures += 1;
          if (outcome.failedEvent && failures >= outcome.failureThreshold && !alerted) {
            alerted = true;
            await client.query(SQL.event, [newId('evt'), teamId, 'monitor.failed', JSON.stringify({ ...outcome.failedEvent, consecutiveFailures: failures })]);
          }
        }
        if (outcome.event) await client.query(SQL.event, [newId('evt'), teamId, outcome.event.type, JSON.stringify(outcome.event.data)]);
        const succeeded = run.status === 'succeeded';
        await client.query(SQL.finish, [
          Math.trunc(outcome.nextRunAt),
          Math.trunc(run.startedAt),
          failures,
          alerted,
          succeeded ? (outcome.data ?? null) : null,
          succeeded ? Math.trunc(run.at) : null,
          run.changed ? Math.trunc(run.finishedAt) : null,
          monitorId,
          owner,
          outcome.claimedNextRunAt === undefined ? null : Math.trunc(outcome.claimedNextRunAt),
        ]);
        return recorded;
      });
    },

    async runs(teamId, monitorId, limit, before) {
      return (await query(SQL.runs, [teamId, monitorId, Math.trunc(before ?? MAX), monitorPageLimit(limit)])).rows.map(toRun);
    },

    async pruneRuns(before) {
      let total = 0;
      for (;;) {
        const deleted = (await query(SQL.prune, [Math.trunc(before), PRUNE_BATCH])).rowCount ?? 0;
        total += deleted;
        if (deleted < PRUNE_BATCH) return total;
      }
    },
  };
}
