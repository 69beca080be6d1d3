// Teams and their API keys: what a team has (credits, rate limit, guards) and the store of both.

export interface Team {
  id: string;
  name: string;
  /** Current balance in credits (reservations in flight already deducted). */
  credits: number;
  /** Requests admitted per rolling 60 seconds. */
  rateLimit: number;
  createdAt: string;
  /**
   * The balance under which the team is warned: crossing below it records `credits.low` once,
   * reaching 0 records `credits.exhausted` once, and a top-up to it or above re-arms both (see
   * EventLog); null: no warning of `credits.low` (`credits.exhausted` is recorded all the same).
   */
  lowBalanceAlert: number | null;
}

export interface ApiKeyRecord {
  id: string;
  teamId: string;
  name: string;
  /** Recognisable start of the key, shown in listings. */
  prefix: string;
  /** Last four characters of the key, shown in listings. */
  last4: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  /** The user who created it in the dashboard; null when the operator CLI did. */
  createdBy: string | null;
  /** Credits the key may spend on live scrapes per UTC day; null: no limit of its own. */
  dailyCreditLimit: number | null;
  /**
   * The last UTC day (`YYYY-MM-DD`) the key spent credits on and how many that day (reservations
   * in flight included, refunds taken off); null before its first. See `spentOn`.
   */
  spent: { day: string; credits: number } | null;
}

/** The credits `key` spent on the UTC day `day` (`YYYY-MM-DD`), as far as its record knows. */
export const spentOn = (key: Pick<ApiKeyRecord, 'spent'>, day: string): number => (key.spent?.day === day ? key.spent.credits : 0);

/** The UTC day (`YYYY-MM-DD`) of epoch ms `at`. */
export const utcDay = (at: number): string => new Date(at).toISOString().slice(0, 10);

export interface NewTeam {
  name: string;
  credits: number;
  rateLimit: number;
}

export interface AccountStore {
  createTeam(team: NewTeam): Promise<Team>;
  getTeam(id: string): Promise<Team | null>;
  listTeams(): Promise<Team[]>;
  /** `lowBalanceAlert`: a number of credits, or null for none; RangeError outside 0 to MAX_LOW_BALANCE_ALERT. */
  updateTeam(id: string, changes: { rateLimit?: number; name?: string; lowBalanceAlert?: number | null }): Promise<Team | null>;
  /** Stores a key by its hash only. RangeError for a daily credit limit that is not a whole number from 0 to MAX_DAILY_CREDITS. */
  createKey(key: { teamId: string; name: string; hash: string; prefix: string; last4: string; createdBy?: string | null; dailyCreditLimit?: number | null }): Promise<ApiKeyRecord>;
  /** The key with this id, active or revoked; null when none. */
  getKey(id: string): Promise<ApiKeyRecord | null>;
  /** Sets a key's daily credit limit (null: none); the key, or null when unknown. RangeError as for createKey. */
  updateKey(id: string, changes: { dailyCreditLimit: number | null }): Promise<ApiKeyRecord | null>;
  /** The stored hash of an active key, to admit a request made for it by the dashboard; null when none. */
  activeKeyHash(id: string): Promise<string | null>;
  /** The active (not revoked) key with this hash, with its team; null when none. */
  findActiveKey(hash: string): Promise<{ key: ApiKeyRecord; hash: string; team: Team } | null>;
  listKeys(teamId: string): Promise<ApiKeyRecord[]>;
  /** True when the key existed and was active. */
  revokeKey(id: string): Promise<boolean>;
  /** Records last use of several keys at once (called in batches, never per request). */
  recordKeyUse(lastUsed: ReadonlyMap<string, string>): Promise<void>;
}
