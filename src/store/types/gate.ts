// Admission: an API key looked up and its team's rate limit counted, in as few round trips as
// the backend allows.
import type { ApiKeyRecord, Team } from './accounts.ts';
import type { RateDecision } from './rate-limit.ts';

/** A request let in: its caller, and its place under the team's rate limit. */
export interface Admission {
  key: ApiKeyRecord;
  hash: string;
  team: Team;
  decision: RateDecision;
}

/**
 * The door of every API request: the active key with this hash and its team (balance and rate
 * limit current), with the request counted against the team's rolling limit (limiter key
 * `team:<id>`, `team.rateLimit` per `windowMs`). Null, with nothing counted, when no active
 * key has this hash.
 */
export interface Gate {
  admit(hash: string, windowMs: number, now: number): Promise<Admission | null>;
}
