// Account holders, their one-time password links and their sessions (links and sessions by the
// hash of their token only).
import { checkRole, emailOrNull, isoNow, newId, normaliseEmail } from '../rules.ts';
import type { Role, Session, User, UserStore } from '../types.ts';
import { prepare, type Connection, type Row } from './connection.ts';

const USER_COLS = 'id, team_id, email, role, password_hash, created_at, disabled_at';

const SQL = {
  teamExists: 'SELECT 1 AS one FROM teams WHERE id = ?',
  emailTaken: 'SELECT 1 AS one FROM users WHERE team_id = ? AND email = ?',
  insert: 'INSERT INTO users (id, team_id, email, role, created_at) VALUES (?, ?, ?, ?, ?)',
  get: `SELECT ${USER_COLS} FROM users WHERE id = ?`,
  // Oldest first; rowid orders those made in the same millisecond.
  byEmail: `SELECT ${USER_COLS} FROM users WHERE email = ? ORDER BY created_at, rowid`,
  listAll: `SELECT ${USER_COLS} FROM users ORDER BY created_at, rowid`,
  listTeam: `SELECT ${USER_COLS} FROM users WHERE team_id = ? ORDER BY created_at, rowid`,
  disable: 'UPDATE users SET disabled_at = ? WHERE id = ? AND disabled_at IS NULL',
  // One outstanding link per user (a partial unique index): a new one takes the unused one's place.
  insertLink: `INSERT INTO password_links (hash, user_id, expires_at) VALUES (?, ?, ?)
               ON CONFLICT (user_id) WHERE used_at IS NULL DO UPDATE SET hash = excluded.hash, expires_at = excluded.expires_at`,
  validLink: `SELECT l.user_id FROM password_links l JOIN users u ON u.id = l.user_id
               WHERE l.hash = ? AND l.used_at IS NULL AND l.expires_at > ? AND u.disabled_at IS NULL`,
  useLink: 'UPDATE password_links SET used_at = ? WHERE hash = ?',
  setPassword: 'UPDATE users SET password_hash = ? WHERE id = ?',
  insertSession: 'INSERT INTO sessions (hash, user_id, csrf, created_at, expires_at) VALUES (?, ?, ?, ?, ?)',
  findSession: `SELECT s.user_id, s.csrf, s.created_at AS s_created_at, s.expires_at, ${USER_COLS.split(', ')
    .map((col) => `u.${col}`)
    .join(', ')}
                  FROM sessions s JOIN users u ON u.id = s.user_id
                 WHERE s.hash = ? AND s.expires_at > ? AND u.disabled_at IS NULL`,
  deleteSession: 'DELETE FROM sessions WHERE hash = ?',
  deleteUserSessions: 'DELETE FROM sessions WHERE user_id = ?',
  pruneSessions: 'DELETE FROM sessions WHERE expires_at <= ?',
  pruneLinks: 'DELETE FROM password_links WHERE expires_at <= ?',
};

export const toUser = (r: Row): User => ({
  id: r.id as string,
  teamId: r.team_id as string,
  email: r.email as string,
  role: r.role as Role,
  createdAt: r.created_at as string,
  disabledAt: (r.disabled_at as string | null) ?? null,
  hasPassword: r.password_hash !== null,
});

export function userStore(c: Connection): UserStore {
  const st = prepare(c.db, SQL);
  return {
    async createUser({ teamId, email, role }) {
      const normal = normaliseEmail(email);
      checkRole(role);
      const id = newId('user');
      const createdAt = isoNow();
      c.tx(() => {
        if (!st.teamExists.get(teamId)) throw new RangeError(`unknown team ${teamId}`);
        if (st.emailTaken.get(teamId, normal)) throw new RangeError(`a user with the email ${normal} exists already in team ${teamId}`);
        st.insert.run(id, teamId, normal, role, createdAt);
      });
      return { id, teamId, email: normal, role, createdAt, disabledAt: null, hasPassword: false };
    },

    async getUser(id) {
      const row = c.run(() => st.get.get(id));
      return row ? toUser(row) : null;
    },

    async findUsersByEmail(email) {
      const normal = emailOrNull(email);
      if (normal === null) return [];
      return c.run(() => st.byEmail.all(normal)).map((row) => ({ user: toUser(row), passwordHash: (row.password_hash as string | null) ?? null }));
    },

    async listUsers(teamId) {
      return c.run(() => (teamId === undefined ? st.listAll.all() : st.listTeam.all(teamId))).map(toUser);
    },

    async disableUser(id) {
      return c.tx(() => {
        const changed = st.disable.run(isoNow(), id).changes > 0;
        if (changed) st.deleteUserSessions.run(id);
        return changed;
      });
    },

    async createPasswordLink({ hash, userId, expiresAt }) {
      c.tx(() => st.insertLink.run(hash, userId, Math.trunc(expiresAt)));
    },

    async usePasswordLink(hash, passwordHash, now) {
      return c.tx(() => {
        const link = st.validLink.get(hash, Math.trunc(now));
        if (!link) return null;
        const userId = link.user_id as string;
        st.useLink.run(isoNow(), hash);
        st.setPassword.run(passwordHash, userId);
        st.deleteUserSessions.run(userId);
        return toUser(st.get.get(userId) as Row);
      });
    },

    async passwordLinkValid(hash, now) {
      return c.run(() => st.validLink.get(hash, Math.trunc(now))) !== undefined;
    },

    async createSession(hash, session: Session) {
      c.tx(() => st.insertSession.run(hash, session.userId, session.csrf, session.createdAt, Math.trunc(session.expiresAt)));
    },

    async findSession(hash, now) {
      const row = c.run(() => st.findSession.get(hash, Math.trunc(now)));
      if (!row) return null;
      return {
        session: { userId: row.user_id as string, csrf: row.csrf as string, createdAt: row.s_created_at as string, expiresAt: row.expires_at as number },
        user: toUser(row),
      };
    },

    async deleteSession(hash) {
      c.tx(() => st.deleteSession.run(hash));
    },

    async deleteUserSessions(userId) {
      return c.tx(() => Number(st.deleteUserSessions.run(userId).changes));
    },

    async pruneSessions(now) {
      return c.tx(() => Number(st.pruneSessions.run(Math.trunc(now)).changes) + Number(st.pruneLinks.run(Math.trunc(now)).changes));
    },
  };
}
