// Batch jobs on PostgreSQL, shared by every node. `job_items` is the record of each item (status,
// pages, credits, attempts); pg-boss (queue.ts) delivers them: a claim fetches the next carrier
// and takes its item, in one transaction that holds the queue's claim lock, so that racing
// claims of every node hold each team's cap exactly. Taking an item is idempotent: a carrier
// whose item has ended (delivered again after its node committed the end) or was cancelled is
// completed and nothing runs. A carrier whose node died comes back through pg-boss's heartbeat,
// and its item, still `running` under the dead claim, is taken over; the dead claim can no
// longer store a page (each claim has a token of its own: node, carrier, attempt).
import type pg from 'pg';
import { decodeJobCursor, encodeJobCursor, ITEM_COLUMNS, JOB_COLUMNS, jobEventData, toItem, toJob } from '../job-rows.ts';
import { WriteBatches } from '../write-batches.ts';
import { newId } from '../rules.ts';
import type { ClaimedItem, ItemRef, Job, JobItem, JobStore, NewJob } from '../types.ts';
import type { Db } from './pool.ts';
import type { ItemQueue } from './queue.ts';

type Row = Record<string, unknown>;

const PRUNE_BATCH = 20;
const INSERT_BATCH = 2_000;
/** Carriers of ended or cancelled items one claim completes before it answers with what it has. */
const STALE_PER_CLAIM = 100;
/** The transaction lock that serialises claims on every node (each team's cap holds exactly). */
const CLAIM_LOCK = 0x6a6f6273;
/** Taken with BEGIN, in its round trip. */
const CLAIM_LOCKED = `SELECT pg_advisory_xact_lock(${CLAIM_LOCK})`;
/** SQLSTATE deadlock_detected, and how many times a claim is tried when it is the deadlock's victim. */
const DEADLOCK = '40P01';
const CLAIM_ATTEMPTS = 3;

/** `job.completed` of the job just updated by the CTE `job`, when it has ended; `id`: the parameter of the event's id. */
const completedEvent = (id: string): string => `
      INSERT INTO events (id, team_id, type, data)
      SELECT ${id}, team_id, 'job.completed', jsonb_build_object('id', id, 'label', label, 'status', status, 'total', total, 'succeeded', succeeded,
               'failed', failed, 'cancelled', cancelled, 'pages', pages, 'creditsCharged', credits,
               'completedAt', to_char(to_timestamp(completed_at / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
        FROM job WHERE pending = 0`;

const SQL = {
  lockTeam: 'INSERT INTO job_teams (team_id) VALUES ($1) ON CONFLICT (team_id) DO UPDATE SET team_id = excluded.team_id',
  active: "SELECT count(*) AS n FROM jobs WHERE team_id = $1 AND status IN ('queued', 'running')",
  waiting: "SELECT count(*) AS n FROM job_items WHERE team_id = $1 AND status = 'pending'",
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
                WHERE job_id = $1 AND status = 'failed' RETURNING idx`,
  retryJob: `UPDATE jobs SET status = 'queued', pending = pending + $1, failed = failed - $1, completed_at = NULL WHERE id = $2 RETURNING ${JOB_COLUMNS}`,
  // The carriers' items, waiting or (a carrier delivered again after its node died) running.
  take: `
    WITH wanted AS (SELECT * FROM unnest($1::text[], $2::int[], $3::text[]) AS w (job_id, idx, token)),
    taken AS (
      UPDATE job_items i SET status = 'running', lock_owner = w.token, lock_until = $4, attempts = i.attempts + 1
        FROM wanted w
       WHERE i.job_id = w.job_id AND i.idx = w.idx AND i.status IN ('pending', 'running')
      RETURNING i.job_id, i.idx, i.team_id, i.endpoint, i.params, i.attempts, i.page_count, i.lock_owner),
    started AS (UPDATE jobs j SET status = 'running', started_at = coalesce(j.started_at, $5) WHERE j.id IN (SELECT job_id FROM taken) AND j.status = 'queued')
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
  // savePage and finish (succeeded) of the last pages of a job's items that end together, in one
  // statement: each item's page, credit and end commit together (or, its claim lost, nothing of
  // it), and the job's row, which every item of the job updates, is updated once for them all.
  // $1 the job; per item $2 index, $3 claim token, $4 reservation, $5 page, $6 when it ended;
  // $7 when the last ended; $8 the id of `job.completed`.
  saveLastPages: `
    WITH input AS (SELECT * FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::bigint[]) AS w (idx, token, reservation_id, data, ended_at)),
    held AS (SELECT i.idx, i.page_count, w.reservation_id, w.data, w.ended_at FROM job_items i JOIN input w ON w.idx = i.idx AND w.token = i.lock_owner
              WHERE i.job_id = $1 AND i.status = 'running' FOR UPDATE OF i),
    kept AS (UPDATE reservations r SET state = 'committed' FROM held WHERE r.id = held.reservation_id AND r.state = 'pending' RETURNING held.idx),
    page AS (INSERT INTO job_pages (job_id, idx, n, data) SELECT $1, idx, page_count, data FROM held),
    item AS (UPDATE job_items i SET page_count = i.page_count + 1, credits = i.credits + (CASE WHEN i.idx IN (SELECT idx FROM kept) THEN 1 ELSE 0 END),
                    status = 'succeeded', error_code = NULL, error_message = NULL, finished_at = held.ended_at, lock_owner = NULL, lock_until = NULL
               FROM held WHERE i.job_id = $1 AND i.idx = held.idx),
    job AS (
      UPDATE jobs SET pages = pages + (SELECT count(*) FROM held), credits = credits + (SELECT count(*) FROM kept),
             pending = pending - (SELECT count(*) FROM held), succeeded = succeeded + (SELECT count(*) FROM held),
             completed_at = CASE WHEN pending - (SELECT count(*) FROM held) = 0 THEN $7 ELSE completed_at END,
             status = CASE WHEN pending - (SELECT count(*) FROM held) = 0 AND status <> 'cancelled' THEN 'completed' ELSE status END
       WHERE id = $1 AND EXISTS (SELECT 1 FROM held) RETURNING ${JOB_COLUMNS}),
    event AS (${completedEvent('$8')})
    SELECT held.idx AS saved_idx, held.idx IN (SELECT idx FROM kept) AS charged, job.* FROM held CROSS JOIN job`,
  // The item's end, its job's counts, and (its last item) `job.completed`: one statement.
  finish: `
    WITH ended AS (
      UPDATE job_items SET status = $1, error_code = $2, error_message = $3, finished_at = $4, lock_owner = NULL, lock_until = NULL
       WHERE job_id = $5 AND idx = $6 AND status = 'running' AND lock_owner = $7 RETURNING job_id),
    job AS (
      UPDATE jobs SET pending = pending - 1, succeeded = succeeded + $8, failed = failed + $9,
             completed_at = CASE WHEN pending - 1 = 0 THEN $4 ELSE completed_at END,
             status = CASE WHEN pending - 1 = 0 AND status <> 'cancelled' THEN 'completed' ELSE status END
       WHERE id = $5 AND EXISTS (SELECT 1 FROM ended) RETURNING ${JOB_COLUMNS}),
    event AS (${completedEvent('$10')})
    SELECT * FROM job`,
  insertEvent: "INSERT INTO events (id, team_id, type, data) VALUES ($1, $2, 'job.completed', $3)",
  requeue: `UPDATE job_items SET status = 'pending', lock_owner = NULL, lock_until = NULL, next_attempt_at = $1,
              error_code = coalesce($2, error_code), error_message = coalesce($3, error_message), attempts = attempts - $4
             WHERE job_id = $5 AND idx = $6 AND status = 'running' AND lock_owner = $7 RETURNING team_id`,
  items: `SELECT ${ITEM_COLUMNS} FROM job_items WHERE job_id = $1 AND idx > $2 ORDER BY idx LIMIT $3`,
  itemsOf: `SELECT ${ITEM_COLUMNS} FROM job_items WHERE job_id = $1 AND idx > $2 AND status IN ($3, $4) ORDER BY idx LIMIT $5`,
  pages: 'SELECT idx, data FROM job_pages WHERE job_id = $1 AND idx = ANY($2::int[]) ORDER BY idx, n',
  depth: "SELECT status, count(*) AS n FROM job_items WHERE status IN ('pending', 'running') GROUP BY status",
  prune: `WITH ended AS (SELECT id FROM jobs WHERE completed_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)
          DELETE FROM jobs j USING ended WHERE j.id = ended.id`,
};

/** A last page stored by `saveLastPages`. */
interface LastPage {
  item: ItemRef;
  token: string;
  carrier: string | null;
  data: string;
  reservationId: string | null;
  now: number;
}

/** What this process's claim of an item is: its carrier, and the token that fences its writes. */
interface Held {
  owner: string;
  carrier: string;
  token: string;
}

export function jobStore(db: Db, queue: ItemQueue): JobStore {
  const { query } = db;
  const one = async (client: pg.PoolClient, text: string, values: unknown[]): Promise<Row | undefined> => (await client.query(text, values)).rows[0] as Row | undefined;
  const teamJob = (job: Job | null, teamId: string): Job | null => (job && job.teamId === teamId ? job : null);
  const recordEnd = async (client: pg.PoolClient, job: Job): Promise<void> => {
    if (job.pending === 0) await client.query(SQL.insertEvent, [newId('evt'), job.teamId, JSON.stringify(jobEventData(job))]);
  };
  const waiting = async (client: pg.PoolClient, teamId: string): Promise<number> => Number((await one(client, SQL.waiting, [teamId]))?.n ?? 0);
  // The claims of this process, by the item the runner holds (the runner hands the same object
  // back to renew, store, end or requeue it). Another owner, or an item not claimed here, has no
  // token: its writes match no row.
  const claims = new WeakMap<ItemRef, Held>();
  const tokenOf = (item: ItemRef, owner: string): string => {
    const held = claims.get(item);
    return held && held.owner === owner ? held.token : `${owner}/unclaimed`;
  };

  // The last pages of each job's items, stored together (store/write-batches.ts): the job's row is
  // locked until each commit, and items stored one by one queued on it and held the pool's
  // connections (bench:jobs).
  const lastPages = new WriteBatches<LastPage, { saved: boolean; charged: boolean; ended: Job | null }>(async (jobId, batch) => {
    const values = [batch.map((p) => p.item.index), batch.map((p) => p.token), batch.map((p) => p.reservationId), batch.map((p) => p.data), batch.map((p) => p.now)];
    const rows = (await query(SQL.saveLastPages, [jobId, ...values, Math.max(...batch.map((p) => p.now)), newId('evt')])).rows as Row[];
    const saved = new Map(rows.map((row) => [row.saved_idx as number, row]));
    let ended = false;
    return batch.map((p) => {
      const row = saved.get(p.item.index);
      if (!row) return { saved: false, charged: false, ended: null };
      if (p.carrier) queue.completeSoon([p.carrier]);
      const job = toJob(row);
      // The job has ended with this batch: told to one of its items.
      const endedHere = !ended && job.pending === 0;
      ended ||= endedHere;
      return { saved: true, charged: row.charged === true, ended: endedHere ? job : null };
    });
  });

  /** One claim, in one transaction (see claimUpTo). */
  const claimOnce = async (owner: string, lockUntil: number, now: number, perTeam: number, max: number): Promise<ClaimedItem[]> => {
    let settled: string[] = [];
    // The claim lock with BEGIN: one round trip.
    return db.transaction(async (client): Promise<ClaimedItem[]> => {
      // The carriers of the items this node ended up to now (the lock held: those that ended
      // while this claim waited for it too) are completed first, in the claim: their team's
      // running count drops before the fetch counts it, with no round trip of their own (the
      // runner claims again as soon as an item ends).
      settled = queue.takeEnded();
      await queue.complete(settled, client);
      const claimed: ClaimedItem[] = [];
      for (let stale = 0; claimed.length < max && stale < STALE_PER_CLAIM; ) {
        const carriers = await queue.fetch(client, perTeam, max - claimed.length);
        if (carriers.length === 0) break;
        const tokens = carriers.map((carrier) => `${owner}/${carrier.id}/${carrier.retryCount}`);
        const rows = (
          await client.query(SQL.take, [carriers.map((c) => c.data.job), carriers.map((c) => c.data.idx), tokens, Math.trunc(lockUntil), Math.trunc(now)])
        ).rows as Row[];
        const byToken = new Map(rows.map((row) => [row.lock_owner as string, row]));
        const ended: string[] = [];
        carriers.forEach((carrier, n) => {
          const row = byToken.get(tokens[n] as string);
          // No row: its item ended (this carrier was delivered again) or was cancelled: nothing runs.
          if (!row) return void ended.push(carrier.id);
          const item: ClaimedItem = {
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
          claims.set(item, { owner, carrier: carrier.id, token: tokens[n] as string });
          claimed.push(item);
        });
        await queue.complete(ended, client);
        stale += ended.length;
        // Every carrier fetched ran: fewer than asked means nothing more is due.
        if (ended.length === 0) break;
      }
      return claimed;
    }, CLAIM_LOCKED).catch((error: unknown) => {
      queue.completeSoon(settled);
      throw error;
    });
  };

  return {
    async create(job: NewJob, maxActive: number, now: number) {
      return db.transaction(async (client) => {
        // The team's row serialises the creations of its jobs on every node: the cap holds.
        await client.query(SQL.lockTeam, [job.teamId]);
        if (Number((await one(client, SQL.active, [job.teamId]))?.n) >= maxActive) return null;
        const ahead = await waiting(client, job.teamId);
        const id = newId('job');
        const at = Math.trunc(now);
        await client.query(SQL.insertJob, [id, job.teamId, job.keyId, job.test, job.label, at, job.items.length, job.cacheMaxAge, job.maxPages]);
        for (let from = 0; from < job.items.length; from += INSERT_BATCH) {
          const batch = job.items.slice(from, from + INSERT_BATCH);
          const indexes = batch.map((_, n) => from + n);
          await client.query(SQL.insertItems, [id, job.teamId, at, indexes, batch.map((item) => item.endpoint), batch.map((item) => JSON.stringify(item.params))]);
          await queue.send(client, indexes.map((index) => ({ jobId: id, index, teamId: job.teamId, ahead: ahead + index, startAfter: null })));
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
      // Under the claim lock: a claim takes items, then updates their job (started); a cancel that
      // locked the job's row first and then its items (and their carriers) would deadlock with it.
      return db.transaction(async (client) => {
        const row = await one(client, SQL.getLocked, [id]);
        const job = teamJob(row ? toJob(row) : null, teamId);
        if (!job || (job.status !== 'queued' && job.status !== 'running')) return job;
        const n = (await client.query(SQL.cancelItems, [Math.trunc(now), id])).rowCount ?? 0;
        await queue.dropQueued(client, id);
        const after = toJob((await one(client, SQL.cancelJob, [n, Math.trunc(now), id])) as Row);
        await recordEnd(client, after);
        return after;
      }, CLAIM_LOCKED);
    },

    async retry(teamId, id) {
      return db.transaction(async (client) => {
        const row = await one(client, SQL.getLocked, [id]);
        const job = teamJob(row ? toJob(row) : null, teamId);
        if (!job) return null;
        if (job.status === 'queued' || job.status === 'running' || job.pending > 0) return 'running' as const;
        const ahead = await waiting(client, teamId);
        const indexes = (await client.query(SQL.retryItems, [id])).rows.map((r) => r.idx as number);
        if (indexes.length === 0) return job;
        await queue.send(client, indexes.map((index, n) => ({ jobId: id, index, teamId, ahead: ahead + n, startAfter: null })));
        return toJob((await one(client, SQL.retryJob, [indexes.length, id])) as Row);
      });
    },

    async claim(owner, lockUntil, now, perTeam) {
      return (await this.claimUpTo(owner, lockUntil, now, perTeam, 1))[0] ?? null;
    },

    async claimUpTo(owner, lockUntil, now, perTeam, max) {
      // PostgreSQL ends a deadlock by aborting one of its transactions (SQLSTATE 40P01). A claim's
      // can be the one: its completion of the ended items' carriers locks them in one order, while
      // pg-boss's supervisor deletes (to re-insert for a retry) the active carriers whose heartbeat
      // lapsed in another (plans.failJobsByHeartbeat). The aborted claim took nothing (its carriers
      // are queued again, the ended ones given back to completeSoon): it is tried again at once
      // rather than at the runner's next poll.
      for (let attempt = 1; ; attempt++) {
        try {
          return await claimOnce(owner, lockUntil, now, perTeam, max);
        } catch (error) {
          if ((error as { code?: unknown }).code !== DEADLOCK || attempt >= CLAIM_ATTEMPTS) throw error;
        }
      }
    },

    async renew(item, owner, lockUntil) {
      const held = (await query(SQL.renew, [Math.trunc(lockUntil), item.jobId, item.index, tokenOf(item, owner)])).rowCount === 1;
      const carrier = claims.get(item)?.carrier;
      if (held && carrier) await queue.touch(carrier);
      return held;
    },

    async savePage(item, owner, data, reservationId) {
      const row = (await query(SQL.savePage, [item.jobId, item.index, tokenOf(item, owner), reservationId, data])).rows[0] as Row;
      return { saved: Number(row.saved) === 1, charged: Number(row.charged) === 1 };
    },

    async saveLastPage(item, owner, data, reservationId, now) {
      return lastPages.add(item.jobId, { item, token: tokenOf(item, owner), carrier: claims.get(item)?.carrier ?? null, data, reservationId, now: Math.trunc(now) });
    },

    async finish(item, owner, outcome, now) {
      const error = outcome.status === 'failed' ? outcome.error : null;
      const values = [outcome.status, error?.code ?? null, error?.message ?? null, Math.trunc(now), item.jobId, item.index, tokenOf(item, owner)];
      const row = (await query(SQL.finish, [...values, outcome.status === 'succeeded' ? 1 : 0, outcome.status === 'failed' ? 1 : 0, newId('evt')])).rows[0];
      if (!row) return null;
      // After the item's commit, not in it, and with other items' (a round trip less per item):
      // a node that dies in between leaves the carrier to come back, and the claim that fetches it
      // finds the item ended.
      queue.completeSoon([(claims.get(item) as Held).carrier]);
      return toJob(row);
    },

    async requeue(item, owner, at, error, giveBack = false) {
      return db.transaction(async (client) => {
        const row = await one(client, SQL.requeue, [Math.trunc(at), error?.code ?? null, error?.message ?? null, giveBack ? 1 : 0, item.jobId, item.index, tokenOf(item, owner)]);
        if (!row) return false;
        // A new carrier, due at `at`, at the head of its team's turn; the old one is done.
        await queue.complete([(claims.get(item) as Held).carrier], client);
        await queue.send(client, [{ jobId: item.jobId, index: item.index, teamId: row.team_id as string, ahead: 0, startAfter: Math.trunc(at) }]);
        return true;
      });
    },

    onQueueError(report) {
      queue.onError(report);
    },

    async rescue() {
      // pg-boss's supervisor does it: a carrier whose heartbeat lapsed goes back to the queue, and
      // the claim that fetches it again takes its item over.
      return 0;
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
