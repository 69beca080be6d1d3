// Idempotency-Key records on the embedded store. A claim reads and writes in one write
// transaction (synchronous, so nothing interleaves); a key held by a record answers from a
// plain read, without taking the write lock.
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import { heldClaim } from '../idempotency-rows.ts';
import type { IdempotencyClaim, IdempotencyScope, IdempotencyStore, KeptAnswer } from '../types.ts';
import { PRUNE_BATCH } from './maintenance.ts';
import { prepare, type Connection, type Row } from './connection.ts';

const SQL = {
  get: 'SELECT fingerprint, owner, state, until, status, location, body FROM idempotency WHERE team_id = ? AND test = ? AND key = ?',
  claim: `INSERT INTO idempotency (team_id, test, key, fingerprint, owner, state, until) VALUES (?, ?, ?, ?, ?, 'running', ?)
          ON CONFLICT (team_id, test, key) DO UPDATE SET fingerprint = excluded.fingerprint, owner = excluded.owner, state = 'running',
            until = excluded.until, status = NULL, location = NULL, body = NULL`,
  keep: "UPDATE idempotency SET state = 'kept', until = ?, status = ?, location = ?, body = ? WHERE team_id = ? AND test = ? AND key = ? AND owner = ? AND state = 'running'",
  release: "DELETE FROM idempotency WHERE team_id = ? AND test = ? AND key = ? AND owner = ? AND state = 'running'",
  prune: 'DELETE FROM idempotency WHERE rowid IN (SELECT rowid FROM idempotency WHERE until < ? LIMIT ?)',
};

export function idempotencyStore(c: Connection): IdempotencyStore {
  const st = prepare(c.db, SQL);
  const held = (scope: IdempotencyScope, now: number): Row | null => {
    const row = st.get.get(scope.teamId, scope.test ? 1 : 0, scope.key);
    return row && Number(row.until) >= now ? row : null;
  };
  return {
    async claim(scope: IdempotencyScope, fingerprint: string, owner: string, lockedUntil: number, now: number): Promise<IdempotencyClaim> {
      const found = c.run(() => held(scope, now));
      if (found) return heldClaim(found, fingerprint);
      return c.txGrouped(() => {
        // Read again under the write lock: another connection may have claimed it meanwhile.
        const row = held(scope, now);
        if (row) return heldClaim(row, fingerprint);
        st.claim.run(scope.teamId, scope.test ? 1 : 0, scope.key, fingerprint, owner, Math.trunc(lockedUntil));
        return { outcome: 'claimed' };
      });
    },

    async keep(scope: IdempotencyScope, owner: string, answer: KeptAnswer, expiresAt: number): Promise<boolean> {
      return c.txGrouped(
        () => st.keep.run(Math.trunc(expiresAt), answer.status, answer.location, answer.body, scope.teamId, scope.test ? 1 : 0, scope.key, owner).changes === 1,
      );
    },

    async release(scope: IdempotencyScope, owner: string): Promise<void> {
      await c.txGrouped(() => st.release.run(scope.teamId, scope.test ? 1 : 0, scope.key, owner));
    },

    async prune(now: number): Promise<number> {
      let total = 0;
      for (;;) {
        // Short transactions, so that the write lock is never held for long.
        const deleted = Number(c.tx(() => st.prune.run(Math.trunc(now), PRUNE_BATCH).changes));
        total += deleted;
        if (deleted < PRUNE_BATCH) return total;
        await yieldToEvents();
      }
    },
  };
}
