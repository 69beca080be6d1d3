// Batch jobs on PostgreSQL, shared by every node. The queue is the `job_items` table itself,
// claimed with FOR UPDATE SKIP LOCKED: a claim is one statement that locks the row of the team
// whose turn it is (in `job_teams`, skipping teams another node is claiming for), checks its
// running count under that lock, and takes its oldest item due. Ending an item, requeueing it
// and the rescue of items whose node died lower the count in the same transaction.
import type pg from 'pg';
import { decodeJobCursor, encodeJobCursor, ITEM_COLUMNS, JOB_COLUMNS, jobEventData, toItem, toJob } from '../job-rows.ts';
import { newId } from '../rules.ts';
import type { ClaimedItem, Job, JobItem, JobStore, NewJob } from '../types.ts';
import type { Db } from './pool.ts';

type Row = Record<string, unknown>;

const PRUNE_BATCH = 20;
const INSERT_BATCH = 2_000;

const SQL = {
  lockTeam: 'INSERT INTO job_teams (team_id) VALUES ($1) ON CONFLICT (team_id) DO UPDATE SET team_id = excluded.team_id',
  active: "SELECT count(*) AS n FROM jobs WHERE team_id = $1 AND status IN ('queued', 'running')",
  insertJob: `INSERT INTO jobs (id, team_id, key_id, test, label, status, created_at, total, pending, cache_max_age, max_pages)
              VALUES ($1, $2, $3, $4, $5, 'queued', $6, $7, $7, $8, $9)`,
  insertItems: `INSERT INTO job_items (job_id, idx, team_id, queued_at, endpoint, params, status)
                SELECT $1, i, $2, $3, e, p, 'pending' FROM unnest($4::int[], $5::text[], $6::text[]) AS u (i, e, p)`,
  get: `SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1`,
  getLocked: `SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1 FOR UPDATE`,
  list: `SELECT ${JOB_COLUMNS} FROM jobs WHERE team_id = $1 AND (created_at < $2 OR (created_at = $2 AND id < $3)) ORDER BY created_at DESC, id DESC LIMIT $4`,
  cancelItems: "UPDATE job_items SET status = 'cancelled', finished_at = $1 WHERE job_id = $2 AND status = 'pending'",
  cancelJob: `UPDATE jobs SET status = 'cancelled', pending = pending - $1, cancelled = cancelled + $1,
                completed_at = CASE WHEN pending - $1 = 0 THEN $2 ELSE completed_at END
              WHERE id = $3 RETURNING ${JOB_COLUMNS}`,
  retryItems: `UPDATE job_items SET status = 'pending', attempts = 0, error_code = NULL, error_message = NULL, next_attempt_at = 0, finished_at = NULL
                WHERE job_id = $1 AND status = 'failed'`,
  retryJob: `UPDATE jobs SET status = 'queued', pending = pending + $1, failed = failed - $1, completed_at = NULL WHERE id = $2 RETURNING ${JOB_COLUMNS}`,
  claim: `
    WITH team AS (
      SELECT t.team_id FROM job_teams t
       WHERE t.running < $4
         AND EXISTS (SELECT 1 FROM job_items i WHERE i.team_id = t.team_id AND i.status = 'pending' AND i.next_attempt_at <= $3)
       ORDER BY t.running, t.served_at, t.team_id
       LIMIT 1 FOR UPDATE SKIP LOCKED),
    item AS (
      SELECT i.job_id, i.idx FROM job_items i JOIN team ON i.team_id = team.team_id
       WHERE i.status = 'pending' AND i.next_attempt_at <= $3
       ORDER BY i.queued_at, i.job_id, i.idx
       LIMIT 1 FOR UPDATE OF i SKIP LOCKED),
    taken AS (
      UPDATE job_items i SET status = 'running', lock_owner = $1, lock_until = $2, attempts = i.attempts + 1
        FROM item WHERE i.job_id = item.job_id AND i.idx = item.idx
      RETURNING i.job_id, i.idx, i.team_id, i.endpoint, i.params, i.attempts, i.page_count),
    served AS (UPDATE job_teams t SET running = t.running + 1, served_at = $3 FROM taken WHERE t.team_id = taken.team_id),
    started AS (UPDATE jobs j SET status = 'running', started_at = coalesce(j.started_at, $3) FROM taken WHERE j.id = taken.job_id AND j.status = 'queued')
    SELECT taken.*, j.key_id, j.test, j.max_pages, j.cache_max_age,
           (SELECT p.data FROM job_pages p WHERE p.job_id = taken.job_id AND p.idx = taken.idx ORDER BY p.n DESC LIMIT 1) AS last_page
      FROM taken JOIN jobs j ON j.id = taken.job_id`,
  renew: "UPDATE job_items SET lock_until = $1 WHERE job_id = $2 AND idx = $3 AND status = 'running' AND lock_owner = $4",
  // The page and the commit of its credit in one statement: both, or (the claim lost) neither.
  savePage: `
    WITH held AS (SELECT job_id, idx, page_count FROM job_items WHERE job_id = $1 AND idx = $2 AND status = 'running' AND lock_owner = $3 FOR UPDATE),
    kept AS (UPDATE reservations SET state = 'committed' WHERE id = $4 AND state = 'pending' AND EXISTS (SELECT 1 FROM held) RETURNING id),
    page AS (INSERT INTO job_pages (job_id, idx, n, data) SELECT job_id, idx, page_count, $5 FROM held),
    item AS (UPDATE job_items i SET page_count = i.page_count + 1, credits = i.credits + (SELECT count(*) FROM kept)
               FROM held WHERE i.job_id = held.job_id AND i.idx = held.idx),
    job AS (UPDATE jobs SET pages = pages + 1, credits = credits + (SELECT count(*) FROM kept) WHERE id = $1 AND EXISTS (SELECT 1 FROM held))
    SELECT (SELECT count(*) FROM held) AS saved, (SELECT count(*) FROM kept) AS charged`,
  end: `UPDATE job_items SET status = $1, error_code = $2, error_message = $3, finished_at = $4, lock_owner = NULL, lock_until = NULL
         WHERE job_id = $5 AND idx = $6 AND status = 'running' AND lock_owner = $7 RETURNING team_id`,
  unserve: 'UPDATE job_teams SET running = greatest(0, running - $1) WHERE team_id = $2',
  jobEnded: `UPDATE jobs SET pending = pending - 1, succeeded = succeeded + $1, failed = failed + $2,
               completed_at = CASE WHEN pending - 1 = 0 THEN $3 ELSE completed_at END,
               status = CASE WHEN pending - 1 = 0 AND status <> 'cancelled' THEN 'completed' ELSE status END
             WHERE id = $4 RETURNING ${JOB_COLUMNS}`,
  insertEvent: "INSERT INTO events (id, team_id, type, data) VALUES ($1, $2, 'job.completed', $3)",
  requeue: `
    WITH back AS (UPDATE job_items SET status = 'pending', lock_owner = NULL, lock_until = NULL, next_attempt_at = $1,
                    error_code = coalesce($2, error_code), error_message = coalesce($3, error_message), attempts = attempts - $4
                   WHERE job_id = $5 AND idx = $6 AND status = 'running' AND lock_owner = $7 RETURNING team_id)
    UPDATE job_teams t SET running = greatest(0, t.running - 1) FROM back WHERE t.team_id = back.team_id RETURNING t.team_id`,
  rescue: `
    WITH due AS (SELECT job_id, idx FROM job_items WHERE status = 'running' AND lock_until < $1 FOR UPDATE SKIP LOCKED),
    back AS (UPDATE job_items i SET status = 'pending', lock_owner = NULL, lock_until = NULL FROM due
              WHERE i.job_id = due.job_id AND i.idx = due.idx AND i.status = 'running' RETURNING i.team_id),
    per_team AS (SELECT team_id, count(*) AS n FROM back GROUP BY team_id),
    unserved AS (UPDATE job_teams t SET running = greatest(0, t.running - p.n) FROM per_team p WHERE t.team_id = p.team_id)
    SELECT count(*) AS n FROM back`,
  items: `SELECT ${ITEM_COLUMNS} FROM job_items WHERE job_id = $1 AND idx > $2 ORDER BY idx LIMIT $3`,
  itemsOf: `SELECT ${ITEM_COLUMNS} FROM job_items WHERE job_id = $1 AND idx > $2 AND status IN ($3, $4) ORDER BY idx LIMIT $5`,
  pages: 'SELECT idx, data FROM job_pages WHERE job_id = $1 AND idx = ANY($2::int[]) ORDER BY idx, n',
  depth: "SELECT status, count(*) AS n FROM job_items WHERE status IN ('pending', 'running') GROUP BY status",
  prune: `WITH ended AS (SELECT id FROM jobs WHERE completed_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)
          DELETE FROM jobs j USING ended WHERE j.id = ended.id`,
};

export function jobStore(db: Db): JobStore {
  const { query } = db;
  const one = async (client: pg.PoolClient, text: string, values: unknown[]): Promise<Row | undefined> => (await client.query(text, values)).rows[0] as Row | undefined;
  const teamJob = (job: Job | null, teamId: string): Job | null => (job && job.teamId === teamId ? job : null);
  const recordEnd = async (client: pg.PoolClient, job: Job): Promise<void> => {
    if (job.pending === 0) await client.query(SQL.insertEvent, [newId('evt'), job.teamId, JSON.stringify(jobEventData(job))]);
  };

  return {
    async create(job: NewJob, maxActive: number, now: number) {
      return db.transaction(async (client) => {
        // The team's row serialises the creations of its jobs on every node: the cap holds.
        await client.query(SQL.lockTeam, [job.teamId]);
        if (Number((await one(client, SQL.active, [job.teamId]))?.n) >= maxActive) return null;
        const id = newId('job');
        const at = Math.trunc(now);
        await client.query(SQL.insertJob, [id, job.teamId, job.keyId, job.test, job.label, at, job.items.length, job.cacheMaxAge, job.maxPages]);
        for (let from = 0; from < job.items.length; from += INSERT_BATCH) {
          const batch = job.items.slice(from, from + INSERT_BATCH);
          await client.query(SQL.insertItems, [id, job.teamId, at, batch.map((_, n) => from + n), batch.map((item) => item.endpoint), batch.map((item) => JSON.stringify(item.params))]);
        }
        return toJob((await one(client, SQL.get, [id])) as Row);
      });
    },

    async get(teamId, id) {
      const row = (await query(SQL.get, [id])).rows[0];
      return teamJob(row ? toJob(row) : null, teamId);
    },

    async list(teamId, limit, cursor) {
      const after = cursor ? decodeJobCursor(cursor) : { at: Number.MAX_SAFE_INTEGER, id: '' };
      const rows = (await query(SQL.list, [teamId, after.at, after.id, limit + 1])).rows.map(toJob);
      const jobs = rows.slice(0, limit);
      return { jobs, next: rows.length > limit ? encodeJobCursor(jobs[jobs.length - 1] as Job) : null };
    },

    async cancel(teamId, id, now) {
      return db.transaction(async (client) => {
        const row = await one(client, SQL.getLocked, [id]);
        const job = teamJob(row ? toJob(row) : null, teamId);
        if (!job || (job.status !== 'queued' && job.status !== 'running')) return job;
        const n = (await client.query(SQL.cancelItems, [Math.trunc(now), id])).rowCount ?? 0;
        const after = toJob((await one(client, SQL.cancelJob, [n, Math.trunc(now), id])) as Row);
        await recordEnd(client, after);
        return after;
      });
    },

    async retry(teamId, id) {
      return db.transaction(async (client) => {
        const row = await one(client, SQL.getLocked, [id]);
        const job = teamJob(row ? toJob(row) : null, teamId);
        if (!job) return null;
        if (job.status === 'queued' || job.status === 'running' || job.pending > 0) return 'running' as const;
        const n = (await client.query(SQL.retryItems, [id])).rowCount ?? 0;
        if (n === 0) return job;
        const after = toJob((await one(client, SQL.retryJob, [n, id])) as Row);
        await client.query('INSERT INTO job_teams (team_id) VALUES ($1) ON CONFLICT DO NOTHING', [teamId]);
        return after;
      });
    },

    async claim(owner, lockUntil, now, perTeam) {
      const row = (await query(SQL.claim, [owner, Math.trunc(lockUntil), Math.trunc(now), perTeam])).rows[0];
      if (!row) return null;
      const claimed: ClaimedItem = {
        jobId: row.job_id as string,
        index: row.idx as number,
        teamId: row.team_id as string,
        keyId: row.key_id as string,
        test: row.test as boolean,
        endpoint: row.endpoint as string,
        params: JSON.parse(row.params as string) as Record<string, string>,
        attempts: row.attempts as number,
        maxPages: row.max_pages as number,
        cacheMaxAge: (row.cache_max_age as string | null) ?? null,
        storedPages: row.page_count as number,
        lastPage: (row.last_page as string | null) ?? null,
      };
      return claimed;
    },

    async renew(item, owner, lockUntil) {
      return ((await query(SQL.renew, [Math.trunc(lockUntil), item.jobId, item.index, owner])).rowCount ?? 0) === 1;
    },

    async savePage(item, owner, data, reservationId) {
      const row = (await query(SQL.savePage, [item.jobId, item.index, owner, reservationId, data])).rows[0] as Row;
      return { saved: Number(row.saved) === 1, charged: Number(row.charged) === 1 };
    },

    async finish(item, owner, outcome, now) {
      return db.transaction(async (client) => {
        const error = outcome.status === 'failed' ? outcome.error : null;
        const ended = await one(client, SQL.end, [outcome.status, error?.code ?? null, error?.message ?? null, Math.trunc(now), item.jobId, item.index, owner]);
        if (!ended) return null;
        await client.query(SQL.unserve, [1, ended.team_id]);
        const job = toJob((await one(client, SQL.jobEnded, [outcome.status === 'succeeded' ? 1 : 0, outcome.status === 'failed' ? 1 : 0, Math.trunc(now), item.jobId])) as Row);
        await recordEnd(client, job);
        return job;
      });
    },

    async requeue(item, owner, at, error, giveBack = false) {
      const result = await query(SQL.requeue, [Math.trunc(at), error?.code ?? null, error?.message ?? null, giveBack ? 1 : 0, item.jobId, item.index, owner]);
      return (result.rowCount ?? 0) === 1;
    },

    async rescue(now) {
      return Number((await query(SQL.rescue, [Math.trunc(now)])).rows[0]?.n ?? 0);
    },

    async items(jobId, { after = -1, limit, status }) {
      const rows = (
        status === undefined
          ? await query(SQL.items, [jobId, after, limit])
          : await query(SQL.itemsOf, [jobId, after, status, status === 'pending' ? 'running' : status, limit])
      ).rows;
      if (rows.length === 0) return [];
      const pages = new Map<number, string[]>();
      for (const page of (await query(SQL.pages, [jobId, rows.map((row) => row.idx as number)])).rows) {
        const idx = page.idx as number;
        let list = pages.get(idx);
        if (!list) pages.set(idx, (list = []));
        list.push(page.data as string);
      }
      return rows.map((row): JobItem => toItem(row, pages.get(row.idx as number) ?? []));
    },

    async depth() {
      const rows = (await query(SQL.depth)).rows;
      const count = (status: string) => Number(rows.find((row) => row.status === status)?.n ?? 0);
      return { pending: count('pending'), running: count('running') };
    },

    async prune(before) {
      let dropped = 0;
      for (;;) {
        const n = (await query(SQL.prune, [Math.trunc(before), PRUNE_BATCH])).rowCount ?? 0;
        dropped += n;
        if (n < PRUNE_BATCH) return dropped;
      }
    },
  };
}
