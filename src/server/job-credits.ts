// The credits of batch jobs' pages (and monitors' runs) reserved together. A job runs many pages
// of one team and key at once, and each reserves its credit before it scrapes: one by one, every
// reservation is a write of its own that locks the key's and the team's rows until its commit, and
// the others queue on those locks (bench:jobs: most of the job's database time was there). Here a
// reservation asked while another of the same team, key and day is being written waits for that
// write, and goes with every other one that came meanwhile in the next (Ledger.reserveEach): one
// statement, one lock of the rows and one commit for them all. Each is still a reservation of its
// own, answered as `reserve` would have answered it, committed with its page or refunded.
import { WriteBatches } from '../store/write-batches.ts';
import type { Ledger, ReserveResult, ReservingKey } from '../store/types.ts';

/** Reservations in one statement, at most. */
const MAX_BATCH = 200;

interface Asked {
  teamId: string;
  key: ReservingKey;
  requestId: string;
  deadline: number;
}

export class JobCredits {
  readonly #ledger: Ledger;
  readonly #batches: WriteBatches<Asked, ReserveResult>;

  constructor(ledger: Ledger) {
    this.#ledger = ledger;
    // Every item of a batch has the batch's team, key and day (its key below).
    this.#batches = new WriteBatches((_id, asked) => {
      const [{ teamId, key }] = asked as [Asked];
      return (ledger.reserveEach as NonNullable<Ledger['reserveEach']>)(teamId, asked, key);
    }, MAX_BATCH);
  }

  /** `Ledger.reserve` of 1 credit for a page of `key`'s team. */
  reserve(teamId: string, requestId: string, deadline: number, key: ReservingKey): Promise<ReserveResult> {
    if (!this.#ledger.reserveEach) return this.#ledger.reserve(teamId, 1, requestId, deadline, key);
    return this.#batches.add(`${teamId}\n${key.id}\n${key.day}`, { teamId, key, requestId, deadline });
  }
}
