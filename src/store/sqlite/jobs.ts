// Batch jobs on the embedded store. Every change is one write transaction (BEGIN IMMEDIATE):
// the write lock serialises them across processes sharing the file, so a claim reads the team's
// running count and takes an item atomically, and a page is stored with the commit of its
// credit's reservation or not at all.
import { decodeJobCursor, encodeJobCursor, ITEM_COLUMNS, JOB_COLUMNS, jobEventData, toItem, toJob } from '../job-rows.ts';
import { newId } from '../rules.ts';
import type { ClaimedItem, ItemOutcome, ItemRef, Job, JobItem, JobStore, NewJob } from '../types.ts';
import { prepare, type Connection, type Row } from './connection.ts';

const PRUNE_BATCH = 20;

const SQL = {
  active: "SELECT count(*) AS n FROM jobs WHERE team_id = ? AND status IN ('queued', 'running')",
  insertJob: `INSERT INTO jobs (id, team_id, key_id, test, label, status, created_at, total, pending, cache_max_age, max_pages)
              VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?)`,
  insertItem: "INSERT INTO job_items (job_id, idx, team_id, queued_at, endpoint, params, status) VALUES (?, ?, ?, ?, ?, ?, 'pending')",
  insertTeam: 'INSERT INTO job_teams (team_id) VALUES (?) ON CONFLICT DO NOTHING',
  get: `SELECT ${JOB_COLUMNS} FROM jobs WHERE id = ?`,
  list: `SELECT ${JOB_COLUMNS} FROM jobs WHERE team_id = ? AND (created_at < ? OR (created_at = ? AND id < ?)) ORDER BY created_at DESC, id DESC LIMIT ?`,
  cancelItems: "UPDATE job_items SET status = 'cancelled', finished_at = ? WHERE job_id = ? AND status = 'pending'",
  cancelJob: `UPDATE jobs SET status = 'cancelled', pending = pending - ?1, cancelled = cancelled + ?1,
                completed_at = CASE WHEN pending - ?1 = 0 THEN ?2 ELSE completed_at END
              WHERE id = ?3 AND status IN ('queued', 'running')`,
  retryItems: `UPDATE job_items SET status = 'pending', attempts = 0, error_code = NULL, error_message = NULL, next_attempt_at = 0, finished_at = NULL
                WHERE job_id = ? AND status = 'failed'`,
  retryJob: "UPDATE jobs SET status = 'queued', pending = pending + ?1, failed = failed - ?1, completed_at = NULL WHERE id = ?2",
  // The team whose turn it is: under its cap, with an item due; the fewest running first, then
  // the one served longest ago.
  nextTeam: `SELECT t.team_id FROM job_teams t
              WHERE t.running < ?1
                AND EXISTS (SELECT 1 FROM job_items i WHERE i.team_id = t.team_id AND i.status = 'pending' AND i.next_attempt_at <= ?2)
              ORDER BY t.running, t.served_at, t.team_id LIMIT 1`,
  // Its oldest item due, taken in the same statement that finds it.
  take: `UPDATE job_items SET status = 'running', lock_owner = ?1, lock_until = ?2, attempts = attempts + 1
          WHERE (job_id, idx) = (SELECT job_id, idx FROM job_items
                                  WHERE team_id = ?3 AND status = 'pending' AND next_attempt_at <= ?4
                                  ORDER BY queued_at, job_id, idx LIMIT 1)
        RETURNING job_id, idx, endpoint, params, attempts, page_count`,
  served: 'UPDATE job_teams SET running = running + 1, served_at = ? WHERE team_id = ?',
  start: "UPDATE jobs SET status = 'running', started_at = coalesce(started_at, ?) WHERE id = ? AND status = 'queued'",
  lastPage: 'SELECT data FROM job_pages WHERE job_id = ? AND idx = ? ORDER BY n DESC LIMIT 1',
  renew: "UPDATE job_items SET lock_until = ? WHERE job_id = ? AND idx = ? AND status = 'running' AND lock_owner = ?",
  held: "SELECT page_count, team_id FROM job_items WHERE job_id = ? AND idx = ? AND status = 'running' AND lock_owner = ?",
  insertPage: 'INSERT INTO job_pages (job_id, idx, n, data) VALUES (?, ?, ?, ?)',
  commitReservation: "UPDATE reservations SET state = 'committed' WHERE id = ? AND state = 'pending'",
  itemPage: 'UPDATE job_items SET page_count = page_count + 1, credits = credits + ? WHERE job_id = ? AND idx = ?',
  jobPage: 'UPDATE jobs SET pages = pages + 1, credits = credits + ? WHERE id = ?',
  end: `UPDATE job_items SET status = ?, error_code = ?, error_message = ?, finished_at = ?, lock_owner = NULL, lock_until = NULL
         WHERE job_id = ? AND idx = ? AND status = 'running' AND lock_owner = ? RETURNING team_id`,
  unserve: 'UPDATE job_teams SET running = max(0, running - ?) WHERE team_id = ?',
  jobEnded: `UPDATE jobs SET pending = pending - 1, succeeded = succeeded + ?1, failed = failed + ?2,
               completed_at = CASE WHEN pending - 1 = 0 THEN ?3 ELSE completed_at END,
               status = CASE WHEN pending - 1 = 0 AND status != 'cancelled' THEN 'completed' ELSE status END
             WHERE id = ?4 RETURNING ${JOB_COLUMNS}`,
  insertEvent: "INSERT INTO events (id, team_id, type, data, created_at) VALUES (?, ?, 'job.completed', ?, ?)",
  requeue: `UPDATE job_items SET status = 'pending', lock_owner = NULL, lock_until = NULL, next_attempt_at = ?,
              error_code = coalesce(?, error_code), error_message = coalesce(?, error_message), attempts = attempts - ?
             WHERE job_id = ? AND idx = ? AND status = 'running' AND lock_owner = ? RETURNING team_id`,
  expired: `UPDATE job_items SET status = 'pending', lock_owner = NULL, lock_until = NULL
             WHERE status = 'running' AND lock_until < ? RETURNING team_id`,
  items: `SELECT ${ITEM_COLUMNS} FROM job_items WHERE job_id = ? AND idx > ? ORDER BY idx LIMIT ?`,
  itemsOf: `SELECT ${ITEM_COLUMNS} FROM job_items WHERE job_id = ? AND idx > ? AND status IN (?, ?) ORDER BY idx LIMIT ?`,
  pages: 'SELECT idx, data FROM job_pages WHERE job_id = ? AND idx >= ? AND idx <= ? ORDER BY idx, n',
  // Read before a claim or a rescue takes the write lock: an idle queue never writes (a write
  // transaction, even empty, would count as a change for the readers that watch them).
  anyDue: "SELECT 1 AS due FROM job_items WHERE status = 'pending' AND next_attempt_at <= ? LIMIT 1",
  anyLapsed: "SELECT 1 AS due FROM job_items WHERE status = 'running' AND lock_until < ? LIMIT 1",
  depth: "SELECT status, count(*) AS n FROM job_items WHERE status IN ('pending', 'running') GROUP BY status",
  ended: 'SELECT id FROM jobs WHERE completed_at < ? LIMIT ?',
  deleteJob: 'DELETE FROM jobs WHERE id = ?',
};

export function jobStore(c: Connection): JobStore {
  const st = prepare(c.db, SQL);
  const getJob = (id: string): Job | null => {
    const row = st.get.get(id);
    return row ? toJob(row) : null;
  };
  const teamJob = (teamId: string, id: string): Job | null => {
    const job = getJob(id);
    return job && job.teamId === teamId ? job : null;
  };
  const recordEnd = (job: Job, now: number) => {
    if (job.pending === 0) st.insertEvent.run(newId('evt'), job.teamId, JSON.stringify(jobEventData(job)), new Date(now).toISOString());
  };

  // In a write transaction: a page of the item `owner` holds, with the commit of its credit.
  const storePage = (item: ItemRef, owner: string, data: string, reservationId: string | null): { saved: boolean; charged: boolean } => {
    const held = st.held.get(item.jobId, item.index, owner);
    if (!held) return { saved: false, charged: false };
    const charged = reservationId !== null && Number(st.commitReservation.run(reservationId).changes) === 1;
    st.insertPage.run(item.jobId, item.index, held.page_count as number, data);
    st.itemPage.run(charged ? 1 : 0, item.jobId, item.index);
    st.jobPage.run(charged ? 1 : 0, item.jobId);
    return { saved: true, charged };
  };
  // In a write transaction: the end of the item `owner` holds, and of its job with its last item.
  const end = (item: ItemRef, owner: string, outcome: ItemOutcome, now: number): Job | null => {
    const error = outcome.status === 'failed' ? outcome.error : null;
    const ended = st.end.get(outcome.status, error?.code ?? null, error?.message ?? null, Math.trunc(now), item.jobId, item.index, owner);
    if (!ended) return null;
    st.unserve.run(1, ended.team_id as string);
    const job = toJob(st.jobEnded.get(outcome.status === 'succeeded' ? 1 : 0, outcome.status === 'failed' ? 1 : 0, Math.trunc(now), item.jobId) as Row);
    recordEnd(job, now);
    return job;
  };

  return {
    async create(job: NewJob, maxActive: number, now: number) {
      return c.tx(() => {
        if (((st.active.get(job.teamId) as Row).n as number) >= maxActive) return null;
        const id = newId('job');
        const at = Math.trunc(now);
        st.insertJob.run(id, job.teamId, job.keyId, job.test ? 1 : 0, job.label, at, job.items.length, job.items.length, job.cacheMaxAge, job.maxPages);
        job.items.forEach((item, index) => st.insertItem.run(id, index, job.teamId, at, item.endpoint, JSON.stringify(item.params)));
        st.insertTeam.run(job.teamId);
        return getJob(id);
      });
    },

    async get(teamId, id) {
      return c.run(() => teamJob(teamId, id));
    },

    async list(teamId, limit, cursor) {
      const after = cursor ? decodeJobCursor(cursor) : { at: Number.MAX_SAFE_INTEGER, id: '' };
      const rows = c.run(() => st.list.all(teamId, after.at, after.at, after.id, limit + 1)).map(toJob);
      const jobs = rows.slice(0, limit);
      return { jobs, next: rows.length > limit ? encodeJobCursor(jobs[jobs.length - 1] as Job) : null };
    },

    async cancel(teamId, id, now) {
      return c.tx(() => {
        const job = teamJob(teamId, id);
        if (!job || (job.status !== 'queued' && job.status !== 'running')) return job;
        const n = Number(st.cancelItems.run(Math.trunc(now), id).changes);
        st.cancelJob.run(n, Math.trunc(now), id);
        const after = getJob(id) as Job;
        recordEnd(after, now);
        return after;
      });
    },

    async retry(teamId, id) {
      return c.tx(() => {
        const job = teamJob(teamId, id);
        if (!job) return null;
        if (job.status === 'queued' || job.status === 'running' || job.pending > 0) return 'running' as const;
        const n = Number(st.retryItems.run(id).changes);
        if (n === 0) return job;
        st.retryJob.run(n, id);
        st.insertTeam.run(teamId);
        return getJob(id) as Job;
      });
    },

    async claim(owner, lockUntil, now, perTeam) {
      if (!c.run(() => st.anyDue.get(Math.trunc(now)))) return null;
      return c.tx((): ClaimedItem | null => {
        const team = st.nextTeam.get(perTeam, Math.trunc(now));
        if (!team) return null;
        const teamId = team.team_id as string;
        const item = st.take.get(owner, Math.trunc(lockUntil), teamId, Math.trunc(now));
        if (!item) return null;
        st.served.run(Math.trunc(now), teamId);
        const jobId = item.job_id as string;
        st.start.run(Math.trunc(now), jobId);
        const job = getJob(jobId) as Job;
        const stored = item.page_count as number;
        return {
          jobId,
          index: item.idx as number,
          teamId,
          keyId: job.keyId,
          test: job.test,
          endpoint: item.endpoint as string,
          params: JSON.parse(item.params as string) as Record<string, string>,
          attempts: item.attempts as number,
          maxPages: job.maxPages,
          cacheMaxAge: job.cacheMaxAge,
          storedPages: stored,
          lastPage: stored > 0 ? ((st.lastPage.get(jobId, item.idx as number) as Row).data as string) : null,
        };
      });
    },

    async claimUpTo(owner, lockUntil, now, perTeam, max) {
      const claimed: ClaimedItem[] = [];
      for (let item; claimed.length < max && (item = await this.claim(owner, lockUntil, now, perTeam)); ) claimed.push(item);
      return claimed;
    },

    async renew(item, owner, lockUntil) {
      return c.run(() => Number(st.renew.run(Math.trunc(lockUntil), item.jobId, item.index, owner).changes) === 1);
    },

    async savePage(item, owner, data, reservationId) {
      return c.txGrouped(() => storePage(item, owner, data, reservationId));
    },

    async saveLastPage(item, owner, data, reservationId, now) {
      return c.txGrouped(() => {
        const saved = storePage(item, owner, data, reservationId);
        const job = saved.saved ? end(item, owner, { status: 'succeeded' }, now) : null;
        return { ...saved, ended: job && job.pending === 0 ? job : null };
      });
    },

    async finish(item, owner, outcome, now) {
      return c.txGrouped(() => end(item, owner, outcome, now));
    },

    async requeue(item, owner, at, error, giveBack = false) {
      return c.txGrouped(() => {
        const row = st.requeue.get(Math.trunc(at), error?.code ?? null, error?.message ?? null, giveBack ? 1 : 0, item.jobId, item.index, owner);
        if (!row) return false;
        st.unserve.run(1, row.team_id as string);
        return true;
      });
    },

    async rescue(now) {
      if (!c.run(() => st.anyLapsed.get(Math.trunc(now)))) return 0;
      return c.tx(() => {
        const rows = st.expired.all(Math.trunc(now));
        const perTeam = new Map<string, number>();
        for (const row of rows) perTeam.set(row.team_id as string, (perTeam.get(row.team_id as string) ?? 0) + 1);
        for (const [teamId, n] of perTeam) st.unserve.run(n, teamId);
        return rows.length;
      });
    },

    async items(jobId, { after = -1, limit, status }) {
      return c.run(() => {
        c.db.exec('BEGIN');
        try {
          const rows =
            status === undefined
              ? st.items.all(jobId, after, limit)
              : st.itemsOf.all(jobId, after, status, status === 'pending' ? 'running' : status, limit);
          if (rows.length === 0) return [];
          const pages = new Map<number, string[]>();
          const first = rows[0]?.idx as number;
          const last = rows[rows.length - 1]?.idx as number;
          const wanted = new Set(rows.map((row) => row.idx as number));
          for (const page of st.pages.iterate(jobId, first, last)) {
            const idx = page.idx as number;
            if (!wanted.has(idx)) continue;
            let list = pages.get(idx);
            if (!list) pages.set(idx, (list = []));
            list.push(page.data as string);
          }
          return rows.map((row): JobItem => toItem(row, pages.get(row.idx as number) ?? []));
        } finally {
          c.db.exec('COMMIT');
        }
      });
    },

    async depth() {
      const rows = c.run(() => st.depth.all());
      const count = (status: string) => Number(rows.find((row) => row.status === status)?.n ?? 0);
      return { pending: count('pending'), running: count('running') };
    },

    async prune(before) {
      let dropped = 0;
      for (;;) {
        const n = c.tx(() => {
          const ids = st.ended.all(Math.trunc(before), PRUNE_BATCH).map((row) => row.id as string);
          for (const id of ids) st.deleteJob.run(id);
          return ids.length;
        });
        dropped += n;
        if (n < PRUNE_BATCH) return dropped;
      }
    },
  };
}
