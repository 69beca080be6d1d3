// Credits on PostgreSQL: the append-only ledger, balances, and reservations.
//
// Every change of balance is one statement (a data-modifying CTE, atomic on its own): the
// conditional update `credits >= amount` takes the team's row lock, so racing reservations on
// any number of nodes are serialised by the database and never take the balance below zero,
// and the ledger row is written in the same statement. No read-then-write, and one round trip.
// Each change also raises the team's `balance_version` and tells the watcher (a cluster's copy
// of the balance in Redis, read by cache hits).
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import type { Ledger, LedgerEntry, ReserveResult, ReservingKey, Usage } from '../types.ts';
import { checkPositiveInt, newId, newOrderedId } from '../rules.ts';
import type { TeamWatcher } from './accounts.ts';
import type { Query } from './pool.ts';

const REFUND_BATCH = 500;
const PRUNE_BATCH = 500;

const SQL = {
  // A top-up to the low-balance alert or above (above 0 without one) re-arms both alerts.
  addCredits: `
    WITH credited AS (UPDATE teams SET credits = credits + $2, balance_version = balance_version + 1,
                             low_armed = low_armed OR coalesce(credits + $2 >= low_balance_alert, false),
                             exhausted_armed = exhausted_armed OR (CASE WHEN low_balance_alert IS NULL THEN credits + $2 > 0 ELSE credits + $2 >= low_balance_alert END)
                       WHERE id = $1
                      RETURNING id, credits, balance_version),
         entry AS (INSERT INTO ledger (team_id, amount, reason, request_id) SELECT id, $2, 'topup', $3 FROM credited)
    SELECT credits, balance_version FROM credited`,
  // `current` is read from the statement's snapshot. A debit that waited for a concurrent one
  // re-checked the row as that one left it, which the snapshot predates: then `current` may
  // still show enough credits, and the balance is read again.
  // With a key ($7), its row is locked first (FOR UPDATE, which reads its latest version): racing
  // reservations of one key on any number of nodes are serialised there, the team's row after;
  // its spending that day ($6) is raised in the same statement as the debit, or nothing is done.
  // The crossings the debit makes (the low-balance alert, 0) are worked out from the team's row
  // as it was (SET reads the old row; `alerts_due` carries them to RETURNING) and recorded as
  // events ($8, $9) by the same statement: once each, whichever of racing charges makes them.
  reserve: `
    WITH k AS (SELECT id, daily_credit_limit AS lim, CASE WHEN spent_day = $6 THEN spent ELSE 0 END AS spent
                 FROM api_keys WHERE id = $7 FOR UPDATE),
         room AS (SELECT $7::text IS NULL OR EXISTS (SELECT 1 FROM k WHERE lim IS NULL OR spent + $2 <= lim) AS ok),
         debited AS (UPDATE teams SET credits = credits - $2, balance_version = balance_version + 1,
                             alerts_due = (CASE WHEN low_armed AND credits - $2 < low_balance_alert THEN 1 ELSE 0 END)
                                        + (CASE WHEN exhausted_armed AND credits - $2 = 0 THEN 2 ELSE 0 END),
                             low_armed = low_armed AND NOT coalesce(credits - $2 < low_balance_alert, false),
                             exhausted_armed = exhausted_armed AND credits - $2 > 0
                      WHERE id = $1 AND credits >= $2 AND (SELECT ok FROM room)
                     RETURNING id, credits, balance_version, alerts_due, low_balance_alert),
         alerted AS (INSERT INTO events (id, team_id, type, data)
                     SELECT $8, id, 'credits.low', jsonb_build_object('balance', credits, 'threshold', low_balance_alert) FROM debited WHERE alerts_due & 1 = 1
                     UNION ALL
                     SELECT $9, id, 'credits.exhausted', jsonb_build_object('balance', credits) FROM debited WHERE alerts_due & 2 = 2),
         spending AS (UPDATE api_keys a SET spent = k.spent + $2, spent_day = $6 FROM k WHERE a.id = k.id AND EXISTS (SELECT 1 FROM debited)),
         entry AS (INSERT INTO ledger (team_id, amount, reason, request_id) SELECT id, -$2, 'charge', $3 FROM debited),
         held AS (INSERT INTO reservations (id, team_id, request_id, amount, deadline, state, key_id, day)
                  SELECT $4, id, $3, $2, $5, 'pending', $7, $6 FROM debited)
    SELECT (SELECT credits FROM debited) AS after, (SELECT balance_version FROM debited) AS version,
           (SELECT credits FROM teams WHERE id = $1) AS current, (SELECT ok FROM room) AS room,
           (SELECT lim FROM k) AS lim, (SELECT spent FROM k) AS spent`,
  // `reserve` of 1 credit for each of several requests of one team and key ($2 request ids, $3
  // reservation ids, $4 deadlines), as if made one after another in that order: the first `n`
  // are granted, n the most the balance and the key's room that day allow; one statement, one
  // lock of the key's row and then the team's (as `reserve` takes them), one commit. The team's
  // row is read locked (FOR UPDATE reads its latest version), so `n` is worked out from the
  // balance the update changes.
  reserveEach: `
    WITH input AS (SELECT * FROM unnest($2::text[], $3::text[], $4::bigint[]) WITH ORDINALITY AS w (request_id, reservation_id, deadline, n)),
         k AS (SELECT id, daily_credit_limit AS lim, CASE WHEN spent_day = $5 THEN spent ELSE 0 END AS spent
                 FROM api_keys WHERE id = $6 FOR UPDATE),
         t AS (SELECT id, credits, low_armed, exhausted_armed, low_balance_alert FROM teams
                WHERE id = $1 AND (SELECT count(*) FROM k) >= 0 FOR UPDATE),
         g AS (SELECT t.*, greatest(0, least(cardinality($2::text[]), t.credits,
                        CASE WHEN $6::text IS NULL THEN cardinality($2::text[]) ELSE coalesce((SELECT coalesce(lim - spent, cardinality($2::text[])) FROM k), 0) END)) AS granted
                 FROM t),
         debited AS (UPDATE teams SET credits = g.credits - g.granted, balance_version = balance_version + 1,
                             alerts_due = (CASE WHEN g.low_armed AND g.credits - g.granted < g.low_balance_alert THEN 1 ELSE 0 END)
                                        + (CASE WHEN g.exhausted_armed AND g.credits - g.granted = 0 THEN 2 ELSE 0 END),
                             low_armed = g.low_armed AND NOT coalesce(g.credits - g.granted < g.low_balance_alert, false),
                             exhausted_armed = g.exhausted_armed AND g.credits - g.granted > 0
                        FROM g WHERE teams.id = g.id AND g.granted > 0
                     RETURNING teams.id, teams.credits, teams.balance_version, teams.alerts_due, teams.low_balance_alert, g.granted),
         alerted AS (INSERT INTO events (id, team_id, type, data)
                     SELECT $7, id, 'credits.low', jsonb_build_object('balance', credits, 'threshold', low_balance_alert) FROM debited WHERE alerts_due & 1 = 1
                     UNION ALL
                     SELECT $8, id, 'credits.exhausted', jsonb_build_object('balance', credits) FROM debited WHERE alerts_due & 2 = 2),
         spending AS (UPDATE api_keys a SET spent = k.spent + d.granted, spent_day = $5 FROM k, debited d WHERE a.id = k.id),
         granted AS (SELECT input.* FROM input, debited WHERE input.n <= debited.granted),
         entry AS (INSERT INTO ledger (team_id, amount, reason, request_id) SELECT $1, -1, 'charge', request_id FROM granted ORDER BY n),
         held AS (INSERT INTO reservations (id, team_id, request_id, amount, deadline, state, key_id, day)
                  SELECT reservation_id, $1, request_id, 1, deadline, 'pending', $6, $5 FROM granted)
    SELECT (SELECT granted FROM debited) AS granted, (SELECT credits FROM debited) AS after, (SELECT balance_version FROM debited) AS version,
           (SELECT credits FROM t) AS current, (SELECT count(*) FROM k) AS keys, (SELECT lim FROM k) AS lim, (SELECT spent FROM k) AS spent`,
  commit: `
    WITH kept AS (UPDATE reservations SET state = 'committed' WHERE id = $1 AND state = 'pending' RETURNING id)
    SELECT r.state, (SELECT count(*) FROM kept) AS kept, t.credits
      FROM reservations r JOIN teams t ON t.id = r.team_id WHERE r.id = $1`,
  // The key's spending that day is given back first (the reference to \`unspent\` in the team's
  // update orders it so): rows are locked key first, team second, as a reservation locks them.
  refund: `
    WITH given AS (UPDATE reservations SET state = 'refunded' WHERE id = $1 AND state = 'pending'
                   RETURNING team_id, amount, request_id, key_id, day),
         unspent AS (UPDATE api_keys a SET spent = greatest(0, a.spent - g.amount) FROM given g
                      WHERE a.id = g.key_id AND a.spent_day = g.day RETURNING a.id),
         credited AS (UPDATE teams t SET credits = t.credits + g.amount, balance_version = t.balance_version + 1
                        FROM given g WHERE t.id = g.team_id AND (SELECT count(*) FROM unspent) >= 0 RETURNING t.credits, t.balance_version),
         entry AS (INSERT INTO ledger (team_id, amount, reason, request_id) SELECT team_id, amount, 'refund', request_id FROM given)
    SELECT (SELECT credits FROM credited) AS after, (SELECT balance_version FROM credited) AS version, t.id AS team_id, t.credits AS before
      FROM reservations r JOIN teams t ON t.id = r.team_id WHERE r.id = $1`,
  // SKIP LOCKED: nodes sweeping at the same time take disjoint reservations, and one that a
  // request is settling right now is left to that request.
  refundExpired: `
    WITH due AS (SELECT id FROM reservations WHERE state = 'pending' AND deadline < $1
                 ORDER BY deadline LIMIT $2 FOR UPDATE SKIP LOCKED),
         given AS (UPDATE reservations r SET state = 'refunded' FROM due WHERE r.id = due.id AND r.state = 'pending'
                   RETURNING r.team_id, r.amount, r.request_id, r.key_id, r.day),
         per_key AS (SELECT key_id, day, sum(amount)::bigint AS amount FROM given WHERE key_id IS NOT NULL GROUP BY key_id, day),
         unspent AS (UPDATE api_keys a SET spent = greatest(0, a.spent - p.amount) FROM per_key p
                      WHERE a.id = p.key_id AND a.spent_day = p.day RETURNING a.id),
         per_team AS (SELECT team_id, sum(amount)::bigint AS amount FROM given GROUP BY team_id),
         credited AS (UPDATE teams t SET credits = t.credits + p.amount, balance_version = t.balance_version + 1
                        FROM per_team p WHERE t.id = p.team_id AND (SELECT count(*) FROM unspent) >= 0 RETURNING t.id, t.credits, t.balance_version),
         entry AS (INSERT INTO ledger (team_id, amount, reason, request_id) SELECT team_id, amount, 'refund', request_id FROM given)
    SELECT (SELECT count(*) FROM due) AS due, (SELECT count(*) FROM given) AS given,
           (SELECT coalesce(json_agg(json_build_array(id, credits, balance_version)), '[]') FROM credited) AS teams`,
  // Settled reservations only: a pending one is still owed a commit or a refund.
  prune: "DELETE FROM reservations WHERE id IN (SELECT id FROM reservations WHERE state <> 'pending' AND deadline < $1 LIMIT $2)",
  balance: 'SELECT credits FROM teams WHERE id = $1',
  entries: 'SELECT id, team_id, amount, reason, request_id, created_at FROM ledger WHERE team_id = $1 AND id < $3 ORDER BY id DESC LIMIT $2',
  // One statement, so the sums, the count and the balance are one snapshot.
  usage: `
    SELECT t.credits,
           coalesce((SELECT sum(-amount) FROM ledger WHERE team_id = t.id AND reason = 'charge'), 0)::bigint AS charged,
           coalesce((SELECT sum(amount) FROM ledger WHERE team_id = t.id AND reason = 'refund'), 0)::bigint AS refunded,
           coalesce((SELECT sum(amount) FROM ledger WHERE team_id = t.id AND reason = 'topup'), 0)::bigint AS topped_up,
           (SELECT count(*) FROM reservations WHERE team_id = t.id AND state = 'pending') AS pending
      FROM teams t WHERE t.id = $1`,
};

type Row = Record<string, unknown>;

const toEntry = (r: Row): LedgerEntry => ({
  id: r.id as number,
  teamId: r.team_id as string,
  amount: r.amount as number,
  reason: r.reason as LedgerEntry['reason'],
  requestId: (r.request_id as string | null) ?? null,
  createdAt: (r.created_at as Date).toISOString(),
});

export function ledger(query: Query, watcher: () => TeamWatcher | undefined): Ledger {
  const one = async (text: string, values: unknown[]): Promise<Row | undefined> => (await query(text, values)).rows[0];
  const changed = (teamId: string, version: unknown, credits: unknown) => watcher()?.balanceChanged(teamId, version as number, credits as number);
  return {
    async addCredits(teamId: string, amount: number, requestId: string | null = null): Promise<number> {
      checkPositiveInt('credit amount', amount);
      const row = await one(SQL.addCredits, [teamId, amount, requestId]);
      if (!row) throw new Error(`unknown team ${teamId}`);
      changed(teamId, row.balance_version, row.credits);
      return row.credits as number;
    },

    async reserve(teamId: string, amount: number, requestId: string, deadline: number, key?: ReservingKey): Promise<ReserveResult> {
      checkPositiveInt('reservation amount', amount);
      if (!Number.isFinite(deadline)) throw new RangeError(`deadline must be epoch ms, got ${deadline}`);
      const reservationId = newOrderedId('res');
      const row = (await one(SQL.reserve, [teamId, amount, requestId, reservationId, Math.trunc(deadline), key?.day ?? null, key?.id ?? null, newId('evt'), newId('evt')])) as Row;
      if (row.after !== null) {
        changed(teamId, row.version, row.after);
        return { ok: true, reservationId, balance: row.after as number };
      }
      if (row.current === null) throw new Error(`unknown team ${teamId}`);
      if (row.room === false) {
        if (row.spent === null) throw new Error(`unknown key ${key?.id}`);
        return { ok: false, reason: 'key-limit', balance: row.current as number, limit: row.lim as number, spent: row.spent as number };
      }
      if ((row.current as number) < amount) return { ok: false, reason: 'balance', balance: row.current as number };
      const now = await one(SQL.balance, [teamId]);
      return { ok: false, reason: 'balance', balance: (now?.credits as number | undefined) ?? 0 };
    },

    async reserveEach(teamId, requests, key) {
      if (requests.length === 0) return [];
      for (const { deadline } of requests) if (!Number.isFinite(deadline)) throw new RangeError(`deadline must be epoch ms, got ${deadline}`);
      const ids = requests.map(() => newOrderedId('res'));
      const values = [requests.map((r) => r.requestId), ids, requests.map((r) => Math.trunc(r.deadline)), key?.day ?? null, key?.id ?? null, newId('evt'), newId('evt')];
      const row = (await one(SQL.reserveEach, [teamId, ...values])) as Row;
      if (row.current === null) throw new Error(`unknown team ${teamId}`);
      if (key && row.keys === 0) throw new Error(`unknown key ${key.id}`);
      const granted = (row.granted as number | null) ?? 0;
      if (granted > 0) changed(teamId, row.version, row.after);
      const balance = granted > 0 ? (row.after as number) : (row.current as number);
      const lim = row.lim as number | null;
      const spent = ((row.spent as number | null) ?? 0) + granted;
      return ids.map((reservationId, n): ReserveResult => {
        // Each as `reserve` would have answered it, one after another: the balance just after it.
        if (n < granted) return { ok: true, reservationId, balance: balance + granted - n - 1 };
        if (key && lim !== null && spent + 1 > lim) return { ok: false, reason: 'key-limit', balance, limit: lim, spent };
        return { ok: false, reason: 'balance', balance };
      });
    },

    async commit(reservationId: string): Promise<{ charged: boolean; balance: number }> {
      const row = await one(SQL.commit, [reservationId]);
      if (!row) throw new Error(`unknown reservation ${reservationId}`);
      // Only a pending reservation becomes committed; a refunded one stays refunded.
      return { charged: row.kept === 1 || row.state === 'committed', balance: row.credits as number };
    },

    async refund(reservationId: string): Promise<{ refunded: boolean; balance: number }> {
      const row = await one(SQL.refund, [reservationId]);
      if (!row) throw new Error(`unknown reservation ${reservationId}`);
      if (row.after !== null) {
        changed(row.team_id as string, row.version, row.after);
        return { refunded: true, balance: row.after as number };
      }
      // Settled by another call: one that waited for it (a racing refund, the sweep) read
      // \`before\` in a snapshot taken before that call committed, so the balance is read again.
      const now = await one(SQL.balance, [row.team_id]);
      return { refunded: false, balance: Number(now?.credits ?? row.before) };
    },

    async refundExpired(now: number): Promise<number> {
      let total = 0;
      for (;;) {
        const row = (await one(SQL.refundExpired, [Math.trunc(now), REFUND_BATCH])) as Row;
        total += row.given as number;
        for (const [teamId, credits, version] of row.teams as [string, number, number][]) changed(teamId, version, credits);
        if ((row.due as number) < REFUND_BATCH) return total;
        await yieldToEvents();
      }
    },

    async pruneReservations(before: number): Promise<number> {
      let dropped = 0;
      for (;;) {
        const deleted = (await query(SQL.prune, [Math.trunc(before), PRUNE_BATCH])).rowCount ?? 0;
        dropped += deleted;
        if (deleted < PRUNE_BATCH) return dropped;
        await yieldToEvents();
      }
    },

    async balance(teamId: string): Promise<number | null> {
      const row = await one(SQL.balance, [teamId]);
      return row ? (row.credits as number) : null;
    },

    async entries(teamId: string, limit = 100, beforeId = Number.MAX_SAFE_INTEGER): Promise<LedgerEntry[]> {
      if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
      return (await query(SQL.entries, [teamId, limit, Math.trunc(beforeId)])).rows.map(toEntry);
    },

    async usage(teamId: string): Promise<Usage | null> {
      const row = await one(SQL.usage, [teamId]);
      if (!row) return null;
      return {
        teamId,
        charged: row.charged as number,
        refunded: row.refunded as number,
        toppedUp: row.topped_up as number,
        balance: row.credits as number,
        pending: row.pending as number,
      };
    },
  };
}
