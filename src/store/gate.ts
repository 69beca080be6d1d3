// The plain way in: look the key up, then count the request against its team's limit.
import { isTestKey } from '../server/keys.ts';
import type { ApiKeyRecord, Gate, Stores, Team } from './types.ts';

/** The rolling window a key's requests count in: its team's, and apart for test-mode keys (`psk_test_`). */
export const teamWindow = ({ key, team }: { key: Pick<ApiKeyRecord, 'prefix'>; team: Pick<Team, 'id'> }): string =>
  isTestKey(key) ? `team:${team.id}:test` : `team:${team.id}`;

/** Admits through `stores.accounts` and `stores.limiter`, read when each request comes. */
export function lookupGate(stores: Pick<Stores, 'accounts' | 'limiter'>): Gate {
  return {
    async admit(hash, windowMs, now) {
      const found = await stores.accounts.findActiveKey(hash);
      if (found === null) return null;
      const decision = await stores.limiter.hit(teamWindow(found), found.team.rateLimit, windowMs, now);
      return { ...found, decision };
    },
  };
}
