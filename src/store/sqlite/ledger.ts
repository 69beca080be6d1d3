// Credits: the append-only ledger, balances, and the reservations a scrape holds until it is
// charged or refunded.
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import type { Ledger, LedgerEntry, ReserveResult, ReservingKey, Usage } from '../types.ts';
import { checkPositiveInt, isoNow, newId, newOrderedId } from '../rules.ts';
import { prepare, type Connection, type Row } from './connection.ts';
import { PRUNE_BATCH } from './maintenance.ts';

const REFUND_BATCH = 500;

const LEDGER_SQL = {
  balance: 'SELECT credits FROM teams WHERE id = ?',
  disarm: 'UPDATE teams SET low_armed = low_armed AND NOT ?1, exhausted_armed = exhausted_armed AND NOT ?2 WHERE id = ?3',
  // A top-up to the alert or above (above 0 without one) re-arms both.
  rearm: `UPDATE teams SET low_armed = low_armed OR (low_balance_alert IS NOT NULL AND credits >= low_balance_alert),
            exhausted_armed = exhausted_armed OR (CASE WHEN low_balance_alert IS NULL THEN credits > 0 ELSE credits >= low_balance_alert END)
          WHERE id = ?`,
  insertEvent: 'INSERT INTO events (id, team_id, type, data, created_at) VALUES (?, ?, ?, ?, ?)',
  credit: 'UPDATE teams SET credits = credits + ? WHERE id = ?',
  // With what the charge's crossings are judged on: one statement rather than a read of the
  // alert and two of the balance after it (`npm run bench:live`: reserving is the largest write
  // of a live scrape).
  debit: 'UPDATE teams SET credits = credits - ?1 WHERE id = ?2 AND credits >= ?1 RETURNING credits, low_balance_alert, low_armed, exhausted_armed',
  insertLedger: 'INSERT INTO ledger (team_id, amount, reason, request_id, created_at) VALUES (?, ?, ?, ?, ?)',
  entries: 'SELECT id, team_id, amount, reason, request_id, created_at FROM ledger WHERE team_id = ? AND id < ? ORDER BY id DESC LIMIT ?',
  usage: `SELECT coalesce(sum(CASE WHEN reason = 'charge' THEN -amount END), 0) AS charged,
              coalesce(sum(CASE WHEN reason = 'refund' THEN amount END), 0) AS refunded,
              coalesce(sum(CASE WHEN reason = 'topup' THEN amount END), 0) AS topped_up
         FROM ledger WHERE team_id = ?`,
  // Through reservations_pending: it holds only the reservations in flight (schema v15).
  pendingCount: "SELECT count(*) AS n FROM reservations WHERE team_id = ? AND state = 'pending'",
  insertReservation: "INSERT INTO reservations (id, team_id, request_id, amount, deadline, state, created_at, key_id, day) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)",
  getReservation: 'SELECT id, team_id, request_id, amount, state, key_id, day FROM reservations WHERE id = ?',
  keySpending: 'SELECT daily_credit_limit, spent_day, spent FROM api_keys WHERE id = ?',
  spend: 'UPDATE api_keys SET spent = (CASE WHEN spent_day = ?1 THEN spent ELSE 0 END) + ?2, spent_day = ?1 WHERE id = ?3',
  unspend: 'UPDATE api_keys SET spent = max(0, spent - ?1) WHERE id = ?2 AND spent_day = ?3',
  markCommitted: "UPDATE reservations SET state = 'committed' WHERE id = ? AND state = 'pending' RETURNING team_id",
  markRefunded: "UPDATE reservations SET state = 'refunded' WHERE id = ? AND state = 'pending'",
  expired: "SELECT id FROM reservations WHERE state = 'pending' AND deadline < ? ORDER BY deadline LIMIT ?",
  prune: "DELETE FROM reservations WHERE rowid IN (SELECT rowid FROM reservations WHERE state <> 'pending' AND deadline < ? LIMIT ?)",
};

function toEntry(r: Row): LedgerEntry {
  return {
    id: r.id as number,
    teamId: r.team_id as string,
    amount: r.amount as number,
    reason: r.reason as LedgerEntry['reason'],
    requestId: (r.request_id as string | null) ?? null,
    createdAt: r.created_at as string,
  };
}
export function ledger(c: Connection): Ledger {
  const st = prepare(c.db, LEDGER_SQL);

  const balanceOf = (teamId: string): number | null => {
    const row = st.balance.get(teamId);
    return row ? (row.credits as number) : null;
  };

  /** Gives a pending reservation back; false when it was not pending. Call inside a transaction. */
  const refundOne = (id: string): { refunded: boolean; teamId: string } | null => {
    const r = st.getReservation.get(id);
    if (!r) return null;
    const teamId = r.team_id as string;
    if (st.markRefunded.run(id).changes !== 1) return { refunded: false, teamId };
    const amount = r.amount as number;
    st.credit.run(amount, teamId);
    // Given back to the day its key spent it on (a day that is over stays as it was).
    if (r.key_id !== null) st.unspend.run(amount, r.key_id as string, r.day as string);
    st.insertLedger.run(teamId, amount, 'refund', r.request_id as string, isoNow());
    return { refunded: true, teamId };
  };

  /** After a charge: the crossings it made (the alert, 0) recorded once each, in the same transaction. `team`: the debit's row. */
  const recordCrossings = (teamId: string, at: string, team: Row): void => {
    const balance = team.credits as number;
    const threshold = team.low_balance_alert as number | null;
    const low = team.low_armed === 1 && threshold !== null && balance < threshold;
    const exhausted = team.exhausted_armed === 1 && balance === 0;
    if (!low && !exhausted) return;
    st.disarm.run(low ? 1 : 0, exhausted ? 1 : 0, teamId);
    if (low) st.insertEvent.run(newId('evt'), teamId, 'credits.low', JSON.stringify({ balance, threshold }), at);
    if (exhausted) st.insertEvent.run(newId('evt'), teamId, 'credits.exhausted', JSON.stringify({ balance }), at);
  };

  return {
    async addCredits(teamId: string, amount: number, requestId: string | null = null): Promise<number> {
      checkPositiveInt('credit amount', amount);
      return c.tx(() => {
        if (st.credit.run(amount, teamId).changes !== 1) throw new Error(`unknown team ${teamId}`);
        st.rearm.run(teamId);
        st.insertLedger.run(teamId, amount, 'topup', requestId, isoNow());
        return balanceOf(teamId) as number;
      });
    },

    async reserve(teamId: string, amount: number, requestId: string, deadline: number, key?: ReservingKey): Promise<ReserveResult> {
      checkPositiveInt('reservation amount', amount);
      if (!Number.isFinite(deadline)) throw new RangeError(`deadline must be epoch ms, got ${deadline}`);
      return c.txGrouped((): ReserveResult => {
        const createdAt = isoNow();
        if (key) {
          const spending = st.keySpending.get(key.id);
          if (!spending) throw new Error(`unknown key ${key.id}`);
          const limit = spending.daily_credit_limit as number | null;
          const spent = spending.spent_day === key.day ? (spending.spent as number) : 0;
          if (limit !== null && spent + amount > limit) {
            const balance = balanceOf(teamId);
            if (balance === null) throw new Error(`unknown team ${teamId}`);
            return { ok: false, reason: 'key-limit', balance, limit, spent };
          }
        }
        const debited = st.debit.get(amount, teamId);
        if (debited === undefined) {
          const balance = balanceOf(teamId);
          if (balance === null) throw new Error(`unknown team ${teamId}`);
          return { ok: false, reason: 'balance', balance };
        }
        const reservationId = newOrderedId('res');
        if (key) st.spend.run(key.day, amount, key.id);
        recordCrossings(teamId, createdAt, debited);
        st.insertLedger.run(teamId, -amount, 'charge', requestId, createdAt);
        st.insertReservation.run(reservationId, teamId, requestId, amount, Math.trunc(deadline), createdAt, key?.id ?? null, key?.day ?? null);
        return { ok: true, reservationId, balance: debited.credits as number };
      });
    },

    async commit(reservationId: string): Promise<{ charged: boolean; balance: number }> {
      return c.txGrouped(() => {
        // A pending reservation becomes committed (one statement, which names its team); a
        // refunded one stays refunded, and its charge was given back: the caller must not report it.
        const committed = st.markCommitted.get(reservationId);
        if (committed) return { charged: true, balance: balanceOf(committed.team_id as string) as number };
        const r = st.getReservation.get(reservationId);
        if (!r) throw new Error(`unknown reservation ${reservationId}`);
        return { charged: r.state === 'committed', balance: balanceOf(r.team_id as string) as number };
      });
    },

    async refund(reservationId: string): Promise<{ refunded: boolean; balance: number }> {
      return c.txGrouped(() => {
        const result = refundOne(reservationId);
        if (!result) throw new Error(`unknown reservation ${reservationId}`);
        return { refunded: result.refunded, balance: balanceOf(result.teamId) as number };
      });
    },

    async refundExpired(now: number): Promise<number> {
      let total = 0;
      for (;;) {
        // One short transaction per batch, so the write lock is never held for long.
        const done = c.tx(() => {
          const ids = st.expired.all(now, REFUND_BATCH).map((r) => r.id as string);
          for (const id of ids) if (refundOne(id)?.refunded) total++;
          return ids.length < REFUND_BATCH;
        });
        if (done) return total;
        // A large backlog (after a crash under load) does not hold the event loop either.
        await yieldToEvents();
      }
    },

    async pruneReservations(before: number): Promise<number> {
      let dropped = 0;
      for (;;) {
        // Short transactions, so that the write lock is never held for long.
        const changes = Number(c.tx(() => st.prune.run(Math.trunc(before), PRUNE_BATCH).changes));
        dropped += changes;
        if (changes < PRUNE_BATCH) return dropped;
        await yieldToEvents();
      }
    },

    async balance(teamId: string): Promise<number | null> {
      return c.run(() => balanceOf(teamId));
    },

    async entries(teamId: string, limit = 100, beforeId = Number.MAX_SAFE_INTEGER): Promise<LedgerEntry[]> {
      if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
      return c.run(() => st.entries.all(teamId, beforeId, limit)).map(toEntry);
    },

    async usage(teamId: string): Promise<Usage | null> {
      // A read transaction so that the sums, the count and the balance are one snapshot.
      return c.run(() => {
        c.db.exec('BEGIN');
        try {
          const balance = balanceOf(teamId);
          if (balance === null) return null;
          const u = st.usage.get(teamId) as Row;
          const pending = st.pendingCount.get(teamId) as Row;
          return {
            teamId,
            charged: u.charged as number,
            refunded: u.refunded as number,
            toppedUp: u.topped_up as number,
            balance,
            pending: pending.n as number,
          };
        } finally {
          c.db.exec('COMMIT');
        }
      });
    },
  };
}
