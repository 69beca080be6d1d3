// The credits of batch jobs' pages (and monitors' runs) reserved together. A job runs many pages
// of one team and key at once, and each reserves its credit before it scrapes: one by one, every
// reservation is a write of its own that locks the key's and the team's rows until its commit, and
// the others queue on those locks (bench:jobs: most of the job's database time was there). Here a
// reservation asked while another of the same team, key and day is being written waits for that
// write, and goes with every other one that came meanwhile in the next (Ledger.reserveEach): one
// statement, one lock of the rows and one commit for them all. Each is still a reservation of its
// own, answered as `reserve` would have answered it, committed with its page or refunded.
import type { Ledger, ReserveResult, ReservingKey } from '../store/types.ts';

/** Reservations in one statement, at most. */
const MAX_BATCH = 200;

interface Asked {
  requestId: string;
  deadline: number;
  resolve: (result: ReserveResult) => void;
  reject: (error: unknown) => void;
}

interface Group {
  teamId: string;
  key: ReservingKey;
  asked: Asked[];
}

export class JobCredits {
  readonly #ledger: Ledger;
  /** Reservations waiting for the write under way of their team, key and day. */
  readonly #waiting = new Map<string, Group>();
  readonly #writing = new Set<string>();

  constructor(ledger: Ledger) {
    this.#ledger = ledger;
  }

  /** `Ledger.reserve` of 1 credit for a page of `key`'s team. */
  reserve(teamId: string, requestId: string, deadline: number, key: ReservingKey): Promise<ReserveResult> {
    if (!this.#ledger.reserveEach) return this.#ledger.reserve(teamId, 1, requestId, deadline, key);
    const id = `${teamId}\n${key.id}\n${key.day}`;
    return new Promise((resolve, reject) => {
      let group = this.#waiting.get(id);
      if (!group) this.#waiting.set(id, (group = { teamId, key, asked: [] }));
      group.asked.push({ requestId, deadline, resolve, reject });
      // The first is written at once; the next wait for it.
      if (!this.#writing.has(id)) void this.#write(id);
    });
  }

  async #write(id: string): Promise<void> {
    this.#writing.add(id);
    try {
      for (let group = this.#waiting.get(id); group; group = this.#waiting.get(id)) {
        const batch = group.asked.splice(0, MAX_BATCH);
        if (group.asked.length === 0) this.#waiting.delete(id);
        try {
          const results = await (this.#ledger.reserveEach as NonNullable<Ledger['reserveEach']>)(group.teamId, batch, group.key);
          batch.forEach((asked, n) => asked.resolve(results[n] as ReserveResult));
        } catch (error) {
          for (const asked of batch) asked.reject(error);
        }
      }
    } finally {
      this.#writing.delete(id);
    }
  }
}
