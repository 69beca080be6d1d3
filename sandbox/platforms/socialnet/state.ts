// What one sandbox instance remembers per seed: the session store and the built profiles.
import type { AccountSpec } from './accounts.ts';
import { buildProfile, type Profile } from './data.ts';
import { SessionStore } from './session.ts';

export class SeedState {
  readonly seed: string;
  readonly sessions: SessionStore;
  readonly #profiles = new Map<number, Profile>();

  constructor(seed: string, now: () => number) {
    this.seed = seed;
    this.sessions = new SessionStore(seed, now);
  }

  profile(spec: AccountSpec): Profile {
    let profile = this.#profiles.get(spec.no);
    if (!profile) {
      profile = buildProfile(this.seed, spec);
      this.#profiles.set(spec.no, profile);
    }
    return profile;
  }
}
