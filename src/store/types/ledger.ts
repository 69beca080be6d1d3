// The credit ledger: every top-up, charge and refund of a team, and the reservation of a live
// scrape's credit before it runs.

export interface LedgerEntry {
  id: number;
  teamId: string;
  /** Positive for top-ups and refunds, negative for charges. */
  amount: number;
  reason: 'topup' | 'charge' | 'refund';
  requestId: string | null;
  createdAt: string;
}

export type ReserveResult =
  | { ok: true; reservationId: string; balance: number }
  /** `balance`: the team's balance is short; `key-limit`: the key's daily credit limit would be passed (`limit`, `spent` that day). */
  | { ok: false; reason: 'balance'; balance: number }
  | { ok: false; reason: 'key-limit'; balance: number; limit: number; spent: number };

/** The key a reservation is made for and the UTC day it counts on (its daily credit limit's). */
export interface ReservingKey {
  id: string;
  /** `YYYY-MM-DD`. */
  day: string;
}

/** The team's balance right after a commit or refund. */
export interface Settlement {
  balance: number;
}

export interface Usage {
  teamId: string;
  charged: number;
  refunded: number;
  toppedUp: number;
  balance: number;
  pending: number;
}

export interface Ledger {
  /** Adds a positive amount; returns the new balance. Throws when the team does not exist. */
  addCredits(teamId: string, amount: number, requestId?: string | null): Promise<number>;
  /**
   * Atomically takes `amount` from the balance for a live scrape, recording a durable
   * reservation that expires at `deadline` (epoch ms). Never lets the balance go below zero.
   * With `key`, the amount also counts against the key's spending on `key.day`, in the same
   * atomic step: refused (`key-limit`, nothing taken) when it would pass the key's daily credit
   * limit. A refund of the reservation gives it back to that day's spending.
   */
  reserve(teamId: string, amount: number, requestId: string, deadline: number, key?: ReservingKey): Promise<ReserveResult>;
  /**
   * `reserve` of 1 credit for each of `requests` (of one team and key), as if they were made one
   * after another in that order, in one atomic step: the first as many as the balance and the
   * key's limit allow are granted, each a reservation of its own. Where a store has it, a batch
   * job's pages reserve their credits together (work/job-credits.ts): one write for many.
   */
  reserveEach?(teamId: string, requests: readonly { requestId: string; deadline: number }[], key?: ReservingKey): Promise<ReserveResult[]>;
  /**
   * Keeps a pending reservation's charge. `charged` says whether the charge stands: true when
   * this call committed it (or an earlier commit did), false when the reservation had already
   * been refunded (e.g. by `refundExpired` racing a slow request), in which case nothing is
   * charged and the caller must not report a charge. Throws for an unknown reservation.
   */
  commit(reservationId: string): Promise<Settlement & { charged: boolean }>;
  /**
   * Gives a pending reservation back exactly once. `refunded` is true only for the call that
   * gave it back: false when it was already refunded or committed (a committed charge stays).
   * Throws for an unknown reservation.
   */
  refund(reservationId: string): Promise<Settlement & { refunded: boolean }>;
  /** Refunds every pending reservation whose deadline is before `now`; returns how many. */
  refundExpired(now: number): Promise<number>;
  /**
   * Deletes settled (committed or refunded) reservations whose deadline is before `before`
   * (epoch ms), in batches; pending ones stay whatever their deadline. Returns how many. The
   * ledger keeps their entries: balances, usage and entries do not change. A pruned
   * reservation is unknown to `commit` and `refund` (they throw), so it is never settled again.
   */
  pruneReservations(before: number): Promise<number>;
  balance(teamId: string): Promise<number | null>;
  /** Newest first; only entries older than the entry `beforeId` when given (the next page). */
  entries(teamId: string, limit?: number, beforeId?: number): Promise<LedgerEntry[]>;
  usage(teamId: string): Promise<Usage | null>;
}
