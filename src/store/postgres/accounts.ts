// Teams and their API keys on PostgreSQL (only hashes of the keys are stored).
//
// Every revocation of a key and every change of a team's settings also raises the team's
// `keys_version`, in the same statement, and tells the watcher: a cluster's nodes remember keys
// they have seen only while the copy of that version in Redis matches (redis/gate.ts), so a
// revocation holds on every node from the next request on. On its own (no Redis) a node reads
// the key here on every request.
import type { AccountStore, ApiKeyRecord, NewTeam, Team } from '../types.ts';
import { keyLimits } from '../key-rows.ts';
import { checkDailyCreditLimit, checkLowBalanceAlert, checkTeamFields, newId } from '../rules.ts';
import type { Db } from './pool.ts';

type Row = Record<string, unknown>;

/** A team's versions: `keys` rises with each revocation and settings change, `balance` with each change of its credits. */
export interface TeamVersions {
  keys: number;
  balance: number;
}

export type FoundKey = NonNullable<Awaited<ReturnType<AccountStore['findActiveKey']>>> & { versions: TeamVersions };

/** Told of every change committed to a team's keys or credits (a cluster's copies in Redis). */
export interface TeamWatcher {
  /** Awaited: the change's caller hears of a failure, since nodes may not see the change until it is told. */
  keysChanged(teamId: string, keysVersion: number): Promise<void>;
  /** Best effort: a copy that missed it is refreshed by a later change or when it expires. */
  balanceChanged(teamId: string, balanceVersion: number, credits: number): void;
}

export interface PostgresAccountStore extends AccountStore {
  findActiveKey(hash: string): Promise<FoundKey | null>;
}

const iso = (value: unknown): string => (value as Date).toISOString();
const isoOrNull = (value: unknown): string | null => (value === null ? null : iso(value));

const TEAM_COLS = 'id, name, credits, rate_limit, created_at, low_balance_alert';
const KEY_COLS = 'id, team_id, name, prefix, last4, created_at, last_used_at, revoked_at, created_by, daily_credit_limit, spent_day, spent';

export const toTeam = (r: Row): Team => ({
  id: r.id as string,
  name: r.name as string,
  credits: r.credits as number,
  rateLimit: r.rate_limit as number,
  createdAt: iso(r.created_at),
  lowBalanceAlert: r.low_balance_alert === null || r.low_balance_alert === undefined ? null : Number(r.low_balance_alert),
});

const toKey = (r: Row): ApiKeyRecord => ({
  id: r.id as string,
  teamId: r.team_id as string,
  name: r.name as string,
  prefix: r.prefix as string,
  last4: r.last4 as string,
  createdAt: iso(r.created_at),
  lastUsedAt: isoOrNull(r.last_used_at),
  revokedAt: isoOrNull(r.revoked_at),
  createdBy: (r.created_by as string | null) ?? null,
  ...keyLimits(r),
});

export function accountStore({ query, transaction }: Db, watcher: () => TeamWatcher | undefined): PostgresAccountStore {
  /**
   * A change of keys or settings made without a watcher would go unseen by nodes that remember
   * keys (redis/gate.ts): refused, before anything changes, while any node keeps copies.
   */
  const checkWatched = async (): Promise<void> => {
    if (watcher()) return;
    const held = (await query('SELECT prefix FROM redis_copies ORDER BY registered_at LIMIT 1')).rows[0];
    if (held) {
      throw new Error(
        `Nodes of this database keep copies of keys in Redis (key prefix ${held.prefix as string}): make this change with their REDIS_URL and REDIS_PREFIX set, so that every node sees it from the next request on.`,
      );
    }
  };
  return {
    async createTeam(team: NewTeam): Promise<Team> {
      checkTeamFields(team);
      const id = newId('team');
      const row = await transaction(async (client) => {
        const created = await client.query(`INSERT INTO teams (id, name, credits, rate_limit) VALUES ($1, $2, $3, $4) RETURNING ${TEAM_COLS}`, [
          id,
          team.name,
          team.credits,
          team.rateLimit,
        ]);
        if (team.credits > 0) {
          await client.query("INSERT INTO ledger (team_id, amount, reason, created_at) VALUES ($1, $2, 'topup', $3)", [id, team.credits, created.rows[0].created_at]);
        }
        return created.rows[0] as Row;
      });
      return toTeam(row);
    },

    async getTeam(id: string): Promise<Team | null> {
      const { rows } = await query(`SELECT ${TEAM_COLS} FROM teams WHERE id = $1`, [id]);
      return rows[0] ? toTeam(rows[0]) : null;
    },

    async listTeams(): Promise<Team[]> {
      return (await query(`SELECT ${TEAM_COLS} FROM teams ORDER BY created_at, id`)).rows.map(toTeam);
    },

    async updateTeam(id: string, changes: { rateLimit?: number; name?: string; lowBalanceAlert?: number | null }): Promise<Team | null> {
      checkTeamFields(changes);
      checkLowBalanceAlert(changes.lowBalanceAlert);
      await checkWatched();
      // A new low-balance alert ($4: whether one is given) is armed when the balance is at it or
      // above (below it, the next top-up to it arms it).
      const { rows } = await query(
        `UPDATE teams SET name = coalesce($1, name), rate_limit = coalesce($2, rate_limit), keys_version = keys_version + 1,
                low_balance_alert = CASE WHEN $4 THEN $5::bigint ELSE low_balance_alert END,
                low_armed = CASE WHEN $4 THEN $5::bigint IS NULL OR credits >= $5::bigint ELSE low_armed END
          WHERE id = $3 RETURNING ${TEAM_COLS}, keys_version`,
        [changes.name ?? null, changes.rateLimit ?? null, id, changes.lowBalanceAlert !== undefined, changes.lowBalanceAlert ?? null],
      );
      if (!rows[0]) return null;
      await watcher()?.keysChanged(id, rows[0].keys_version as number);
      return toTeam(rows[0]);
    },

    async createKey(key: { teamId: string; name: string; hash: string; prefix: string; last4: string; createdBy?: string | null; dailyCreditLimit?: number | null }): Promise<ApiKeyRecord> {
      checkDailyCreditLimit(key.dailyCreditLimit);
      const { rows } = await query(
        `INSERT INTO api_keys (id, team_id, name, hash, prefix, last4, created_by, daily_credit_limit)
         SELECT $1, id, $3, $4, $5, $6, $7, $8 FROM teams WHERE id = $2
         RETURNING ${KEY_COLS}`,
        [newId('key'), key.teamId, key.name, key.hash, key.prefix, key.last4, key.createdBy ?? null, key.dailyCreditLimit ?? null],
      );
      if (!rows[0]) throw new Error(`unknown team ${key.teamId}`);
      return toKey(rows[0]);
    },

    async getKey(id: string): Promise<ApiKeyRecord | null> {
      const { rows } = await query(`SELECT ${KEY_COLS} FROM api_keys WHERE id = $1`, [id]);
      return rows[0] ? toKey(rows[0]) : null;
    },

    // The limit is read by each reservation in its own statement (ledger.ts), never from a
    // node's copy: no version to raise.
    async updateKey(id: string, changes: { dailyCreditLimit: number | null }): Promise<ApiKeyRecord | null> {
      checkDailyCreditLimit(changes.dailyCreditLimit);
      const { rows } = await query(`UPDATE api_keys SET daily_credit_limit = $1 WHERE id = $2 RETURNING ${KEY_COLS}`, [changes.dailyCreditLimit, id]);
      return rows[0] ? toKey(rows[0]) : null;
    },

    async findActiveKey(hash: string): Promise<FoundKey | null> {
      const { rows } = await query(
        `SELECT k.id, k.team_id, k.name, k.prefix, k.last4, k.created_at, k.last_used_at, k.revoked_at, k.created_by,
                k.daily_credit_limit, k.spent_day, k.spent,
                t.name AS t_name, t.credits AS t_credits, t.rate_limit AS t_rate_limit, t.created_at AS t_created_at, t.low_balance_alert AS t_low_balance_alert,
                t.keys_version, t.balance_version
           FROM api_keys k JOIN teams t ON t.id = k.team_id
          WHERE k.hash = $1 AND k.revoked_at IS NULL`,
        [hash],
      );
      const r = rows[0];
      if (!r) return null;
      return {
        key: toKey(r),
        hash,
        team: toTeam({ id: r.team_id, name: r.t_name, credits: r.t_credits, rate_limit: r.t_rate_limit, created_at: r.t_created_at, low_balance_alert: r.t_low_balance_alert }),
        versions: { keys: r.keys_version as number, balance: r.balance_version as number },
      };
    },

    async activeKeyHash(id: string): Promise<string | null> {
      return ((await query('SELECT hash FROM api_keys WHERE id = $1 AND revoked_at IS NULL', [id])).rows[0]?.hash as string | undefined) ?? null;
    },

    async listKeys(teamId: string): Promise<ApiKeyRecord[]> {
      return (await query(`SELECT ${KEY_COLS} FROM api_keys WHERE team_id = $1 ORDER BY created_at, id`, [teamId])).rows.map(toKey);
    },

    async revokeKey(id: string): Promise<boolean> {
      await checkWatched();
      const { rows } = await query(
        `WITH revoked AS (UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING team_id)
         UPDATE teams t SET keys_version = t.keys_version + 1 FROM revoked WHERE t.id = revoked.team_id RETURNING t.id, t.keys_version`,
        [id],
      );
      if (rows[0]) {
        await watcher()?.keysChanged(rows[0].id as string, rows[0].keys_version as number);
        return true;
      }
      // Already revoked: tell the watcher again, so that running the revocation again repairs a
      // copy that an earlier run could not reach.
      const team = (await query('SELECT t.id, t.keys_version FROM api_keys k JOIN teams t ON t.id = k.team_id WHERE k.id = $1', [id])).rows[0];
      if (team) await watcher()?.keysChanged(team.id as string, team.keys_version as number);
      return false;
    },

    async recordKeyUse(lastUsed: ReadonlyMap<string, string>): Promise<void> {
      if (lastUsed.size === 0) return;
      await query(
        `UPDATE api_keys k SET last_used_at = u.at
           FROM unnest($1::text[], $2::timestamptz[]) AS u (id, at)
          WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at < u.at)`,
        [[...lastUsed.keys()], [...lastUsed.values()]],
      );
    },
  };
}
