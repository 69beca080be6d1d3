// The plain way in: look the key up, then count the request against its team's limit.
import type { Gate, Stores } from './types.ts';

/** Admits through `stores.accounts` and `stores.limiter`, read when each request comes. */
export function lookupGate(stores: Pick<Stores, 'accounts' | 'limiter'>): Gate {
  return {
    async admit(hash, windowMs, now) {
      const found = await stores.accounts.findActiveKey(hash);
      if (found === null) return null;
      const decision = await stores.limiter.hit(`team:${found.team.id}`, found.team.rateLimit, windowMs, now);
      return { ...found, decision };
    },
  };
}
