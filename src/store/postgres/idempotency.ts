// Idempotency-Key records on PostgreSQL, shared by every node.
//
// A claim is one statement: an insert that, on a record of the same key, takes it over only
// when that record no longer holds it (an expired answer, a claim past its lock deadline). The
// row lock that ON CONFLICT takes serialises racing claims on any number of nodes, and it
// sees the latest committed record, so exactly one of them claims. When the record still
// holds the key, nothing is written and a second statement reads it (a new snapshot, which
// sees the record the insert waited for).
import { heldClaim } from '../idempotency-rows.ts';
import type { IdempotencyClaim, IdempotencyScope, IdempotencyStore, KeptAnswer } from '../types.ts';
import type { Query } from './pool.ts';

const SQL = {
  claim: `INSERT INTO idempotency (team_id, test, key, fingerprint, owner, state, until) VALUES ($1, $2, $3, $4, $5, 'running', $6)
          ON CONFLICT (team_id, test, key) DO UPDATE SET fingerprint = excluded.fingerprint, owner = excluded.owner, state = 'running',
            until = excluded.until, status = NULL, location = NULL, body = NULL
          WHERE idempotency.until < $7
          RETURNING owner`,
  get: 'SELECT fingerprint, state, until, status, location, body FROM idempotency WHERE team_id = $1 AND test = $2 AND key = $3',
  keep: `UPDATE idempotency SET state = 'kept', until = $1, status = $2, location = $3, body = $4
          WHERE team_id = $5 AND test = $6 AND key = $7 AND owner = $8 AND state = 'running'`,
  release: "DELETE FROM idempotency WHERE team_id = $1 AND test = $2 AND key = $3 AND owner = $4 AND state = 'running'",
  prune: 'DELETE FROM idempotency WHERE ctid IN (SELECT ctid FROM idempotency WHERE until < $1 LIMIT $2)',
};

/** Rows deleted per statement while pruning. */
const PRUNE_BATCH = 1_000;
/** Claims tried before giving up on a key whose record keeps changing under them (released between two statements, each time). */
const ATTEMPTS = 5;

export function idempotencyStore(query: Query): IdempotencyStore {
  return {
    async claim(scope: IdempotencyScope, fingerprint: string, owner: string, lockedUntil: number, now: number): Promise<IdempotencyClaim> {
      const key = [scope.teamId, scope.test, scope.key];
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const claimed = await query(SQL.claim, [...key, fingerprint, owner, Math.trunc(lockedUntil), Math.trunc(now)]);
        if (claimed.rows.length > 0) return { outcome: 'claimed' };
        const row = (await query(SQL.get, key)).rows[0];
        // Gone (released) or expired since the insert met it: claim again.
        if (row && Number(row.until) >= now) return heldClaim(row, fingerprint);
      }
      // A record released between each insert and read, five times over: another request of the
      // same key is coming and going; that is the answer.
      return { outcome: 'running' };
    },

    async keep(scope: IdempotencyScope, owner: string, answer: KeptAnswer, expiresAt: number): Promise<boolean> {
      const { rowCount } = await query(SQL.keep, [Math.trunc(expiresAt), answer.status, answer.location, answer.body, scope.teamId, scope.test, scope.key, owner]);
      return rowCount === 1;
    },

    async release(scope: IdempotencyScope, owner: string): Promise<void> {
      await query(SQL.release, [scope.teamId, scope.test, scope.key, owner]);
    },

    async prune(now: number): Promise<number> {
      let total = 0;
      for (;;) {
        const deleted = (await query(SQL.prune, [Math.trunc(now), PRUNE_BATCH])).rowCount ?? 0;
        total += deleted;
        if (deleted < PRUNE_BATCH) return total;
      }
    },
  };
}
