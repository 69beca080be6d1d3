// Account holders, their one-time password links and their sessions on PostgreSQL (links and
// sessions by the hash of their token only). Using a link is one statement: it can be used once
// however many nodes race for it.
import { checkRole, emailOrNull, newId, normaliseEmail } from '../rules.ts';
import type { Role, User, UserStore } from '../types.ts';
import type { Query } from './pool.ts';

type Row = Record<string, unknown>;

const USER_COLS = 'id, team_id, email, role, password_hash, created_at, disabled_at';
const U_COLS = USER_COLS.split(', ').map((col) => `u.${col}`).join(', ');

const toUser = (r: Row): User => ({
  id: r.id as string,
  teamId: r.team_id as string,
  email: r.email as string,
  role: r.role as Role,
  createdAt: (r.created_at as Date).toISOString(),
  disabledAt: r.disabled_at === null ? null : (r.disabled_at as Date).toISOString(),
  hasPassword: r.password_hash !== null,
});

export function userStore(query: Query): UserStore {
  return {
    async createUser({ teamId, email, role }) {
      const normal = normaliseEmail(email);
      checkRole(role);
      const { rows } = await query(
        `INSERT INTO users (id, team_id, email, role) SELECT $1, id, $3, $4 FROM teams WHERE id = $2
         ON CONFLICT (team_id, email) DO NOTHING RETURNING ${USER_COLS}`,
        [newId('user'), teamId, normal, role],
      );
      if (rows[0]) return toUser(rows[0]);
      const team = (await query('SELECT 1 FROM teams WHERE id = $1', [teamId])).rows[0];
      throw new RangeError(team ? `a user with the email ${normal} exists already in team ${teamId}` : `unknown team ${teamId}`);
    },

    async getUser(id) {
      const row = (await query(`SELECT ${USER_COLS} FROM users WHERE id = $1`, [id])).rows[0];
      return row ? toUser(row) : null;
    },

    async findUsersByEmail(email) {
      const normal = emailOrNull(email);
      if (normal === null) return [];
      const { rows } = await query(`SELECT ${USER_COLS} FROM users WHERE email = $1 ORDER BY created_at, id`, [normal]);
      return rows.map((row) => ({ user: toUser(row), passwordHash: (row.password_hash as string | null) ?? null }));
    },

    async listUsers(teamId) {
      const { rows } =
        teamId === undefined
          ? await query(`SELECT ${USER_COLS} FROM users ORDER BY created_at, id`)
          : await query(`SELECT ${USER_COLS} FROM users WHERE team_id = $1 ORDER BY created_at, id`, [teamId]);
      return rows.map(toUser);
    },

    async disableUser(id) {
      const { rows } = await query(
        `WITH disabled AS (UPDATE users SET disabled_at = now() WHERE id = $1 AND disabled_at IS NULL RETURNING id),
              ended AS (DELETE FROM sessions WHERE user_id IN (SELECT id FROM disabled))
         SELECT count(*)::int AS n FROM disabled`,
        [id],
      );
      return (rows[0]?.n as number) > 0;
    },

    async createPasswordLink({ hash, userId, expiresAt }) {
      // One outstanding link per user (a partial unique index): a new one takes the unused one's place.
      await query(
        `INSERT INTO password_links (hash, user_id, expires_at) VALUES ($1, $2, $3)
         ON CONFLICT (user_id) WHERE used_at IS NULL DO UPDATE SET hash = excluded.hash, expires_at = excluded.expires_at`,
        [hash, userId, Math.trunc(expiresAt)],
      );
    },

    async usePasswordLink(hash, passwordHash, now) {
      const { rows } = await query(
        `WITH used AS (UPDATE password_links l SET used_at = now() FROM users u
                        WHERE l.hash = $1 AND l.used_at IS NULL AND l.expires_at > $2 AND u.id = l.user_id AND u.disabled_at IS NULL
                        RETURNING l.user_id),
              ended AS (DELETE FROM sessions WHERE user_id IN (SELECT user_id FROM used))
         UPDATE users SET password_hash = $3 FROM used WHERE users.id = used.user_id RETURNING ${USER_COLS.split(', ').map((col) => `users.${col}`).join(', ')}`,
        [hash, Math.trunc(now), passwordHash],
      );
      return rows[0] ? toUser(rows[0]) : null;
    },

    async passwordLinkValid(hash, now) {
      const { rows } = await query(
        `SELECT 1 FROM password_links l JOIN users u ON u.id = l.user_id
          WHERE l.hash = $1 AND l.used_at IS NULL AND l.expires_at > $2 AND u.disabled_at IS NULL`,
        [hash, Math.trunc(now)],
      );
      return rows.length > 0;
    },

    async createSession(hash, session) {
      await query('INSERT INTO sessions (hash, user_id, csrf, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)', [
        hash,
        session.userId,
        session.csrf,
        session.createdAt,
        Math.trunc(session.expiresAt),
      ]);
    },

    async findSession(hash, now) {
      const row = (
        await query(
          `SELECT s.user_id, s.csrf, s.created_at AS s_created_at, s.expires_at, ${U_COLS}
             FROM sessions s JOIN users u ON u.id = s.user_id
            WHERE s.hash = $1 AND s.expires_at > $2 AND u.disabled_at IS NULL`,
          [hash, Math.trunc(now)],
        )
      ).rows[0];
      if (!row) return null;
      return {
        session: { userId: row.user_id as string, csrf: row.csrf as string, createdAt: (row.s_created_at as Date).toISOString(), expiresAt: row.expires_at as number },
        user: toUser(row),
      };
    },

    async deleteSession(hash) {
      await query('DELETE FROM sessions WHERE hash = $1', [hash]);
    },

    async deleteUserSessions(userId) {
      return (await query('DELETE FROM sessions WHERE user_id = $1', [userId])).rowCount ?? 0;
    },

    async pruneSessions(now) {
      const { rows } = await query(
        `WITH s AS (DELETE FROM sessions WHERE expires_at <= $1 RETURNING 1), l AS (DELETE FROM password_links WHERE expires_at <= $1 RETURNING 1)
         SELECT (SELECT count(*) FROM s)::int + (SELECT count(*) FROM l)::int AS n`,
        [Math.trunc(now)],
      );
      return rows[0]?.n as number;
    },
  };
}
