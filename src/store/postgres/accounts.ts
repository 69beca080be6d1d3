// Teams and their API keys on PostgreSQL (only hashes of the keys are stored).
//
// Keys are read from the database on every request, never remembered by a node: a key revoked
// on any node (or with the CLI) fails from the very next request everywhere, whatever happened
// to Redis meanwhile, and the team's balance and rate limit are current. It is one indexed read.
import type { AccountStore, ApiKeyRecord, NewTeam, Team } from '../types.ts';
import { checkTeamFields, newId } from '../rules.ts';
import type { Db } from './pool.ts';

type Row = Record<string, unknown>;

const iso = (value: unknown): string => (value as Date).toISOString();
const isoOrNull = (value: unknown): string | null => (value === null ? null : iso(value));

const TEAM_COLS = 'id, name, credits, rate_limit, created_at';
const KEY_COLS = 'id, team_id, name, prefix, last4, created_at, last_used_at, revoked_at';

export const toTeam = (r: Row): Team => ({
  id: r.id as string,
  name: r.name as string,
  credits: r.credits as number,
  rateLimit: r.rate_limit as number,
  createdAt: iso(r.created_at),
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
});

export function accountStore({ query, transaction }: Db): AccountStore {
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

    async updateTeam(id: string, changes: { rateLimit?: number; name?: string }): Promise<Team | null> {
      checkTeamFields(changes);
      const { rows } = await query(
        `UPDATE teams SET name = coalesce($1, name), rate_limit = coalesce($2, rate_limit) WHERE id = $3 RETURNING ${TEAM_COLS}`,
        [changes.name ?? null, changes.rateLimit ?? null, id],
      );
      return rows[0] ? toTeam(rows[0]) : null;
    },

    async createKey(key: { teamId: string; name: string; hash: string; prefix: string; last4: string }): Promise<ApiKeyRecord> {
      const { rows } = await query(
        `INSERT INTO api_keys (id, team_id, name, hash, prefix, last4)
         SELECT $1, id, $3, $4, $5, $6 FROM teams WHERE id = $2
         RETURNING ${KEY_COLS}`,
        [newId('key'), key.teamId, key.name, key.hash, key.prefix, key.last4],
      );
      if (!rows[0]) throw new Error(`unknown team ${key.teamId}`);
      return toKey(rows[0]);
    },

    async findActiveKey(hash: string): Promise<{ key: ApiKeyRecord; hash: string; team: Team } | null> {
      const { rows } = await query(
        `SELECT k.id, k.team_id, k.name, k.prefix, k.last4, k.created_at, k.last_used_at, k.revoked_at,
                t.name AS t_name, t.credits AS t_credits, t.rate_limit AS t_rate_limit, t.created_at AS t_created_at
           FROM api_keys k JOIN teams t ON t.id = k.team_id
          WHERE k.hash = $1 AND k.revoked_at IS NULL`,
        [hash],
      );
      const r = rows[0];
      if (!r) return null;
      return {
        key: toKey(r),
        hash,
        team: toTeam({ id: r.team_id, name: r.t_name, credits: r.t_credits, rate_limit: r.t_rate_limit, created_at: r.t_created_at }),
      };
    },

    async listKeys(teamId: string): Promise<ApiKeyRecord[]> {
      return (await query(`SELECT ${KEY_COLS} FROM api_keys WHERE team_id = $1 ORDER BY created_at, id`, [teamId])).rows.map(toKey);
    },

    async revokeKey(id: string): Promise<boolean> {
      return ((await query('UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [id])).rowCount ?? 0) > 0;
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
