// The dashboard's users and their sessions and set-password links.

/** `owner` manages the team's keys and users; `member` uses its own keys; `operator` sees every team and adds credits. */
export type Role = 'owner' | 'member' | 'operator';

/** An account holder: a user of a team's dashboard. */
export interface User {
  id: string;
  teamId: string;
  /** Lower case; unique within its team (another team may have an account of its own under it). */
  email: string;
  role: Role;
  createdAt: string;
  disabledAt: string | null;
  /** False until the user has set a password from a link. */
  hasPassword: boolean;
}

/** A signed-in user's session, stored by the hash of the token its cookie carries. */
export interface Session {
  userId: string;
  /** The session's CSRF token, given to its pages and required with every change. */
  csrf: string;
  createdAt: string;
  /** Epoch ms. */
  expiresAt: number;
}

export interface UserStore {
  /** Throws RangeError for an email already in the team, or an unknown team. */
  createUser(user: { teamId: string; email: string; role: Role }): Promise<User>;
  getUser(id: string): Promise<User | null>;
  /** The users with this email (any case), one per team at most, oldest first, with their password hashes (null until set). */
  findUsersByEmail(email: string): Promise<{ user: User; passwordHash: string | null }[]>;
  /** Every user, or a team's; oldest first. */
  listUsers(teamId?: string): Promise<User[]>;
  /** Disables the user and ends its sessions; false when unknown or already disabled. */
  disableUser(id: string): Promise<boolean>;
  /** Stores a one-time link's hash: it sets the user's password once, until `expiresAt` (epoch ms). It replaces the user's unused link: a user has one outstanding link at most. */
  createPasswordLink(link: { hash: string; userId: string; expiresAt: number }): Promise<void>;
  /**
   * Uses a link: sets the password hash of its user (enabled, link unused and unexpired) and
   * ends that user's sessions, at once; the user, or null when the link cannot be used.
   */
  usePasswordLink(hash: string, passwordHash: string, now: number): Promise<User | null>;
  /** Whether a link could be used now (for the page that asks for the new password). */
  passwordLinkValid(hash: string, now: number): Promise<boolean>;
  createSession(hash: string, session: Session): Promise<void>;
  /** The session and its user, when the session is unexpired and the user enabled. */
  findSession(hash: string, now: number): Promise<{ session: Session; user: User } | null>;
  deleteSession(hash: string): Promise<void>;
  /** Ends every session of the user; returns how many. */
  deleteUserSessions(userId: string): Promise<number>;
  /** Deletes expired sessions and links; returns how many. */
  pruneSessions(now: number): Promise<number>;
}
