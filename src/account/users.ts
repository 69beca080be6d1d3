// The rules of account holders' secrets: passwords (scrypt, never stored in clear), the
// one-time links that set them, and session tokens. Stores keep only hashes of links and tokens.
import { createHash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { Role, User, UserStore } from '../store/types.ts';

/** How long a set-password link can be used. */
export const LINK_LIFETIME_MS = 24 * 60 * 60 * 1000;
/** How long a session lasts from sign-in. */
export const SESSION_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;
export const PASSWORD_MIN = 10;
/** Bounds the work a sign-in attempt can ask of scrypt. */
export const PASSWORD_MAX = 200;
/** The dashboard's path of the set-password page. */
export const SET_PASSWORD_PATH = '/dashboard/set-password';

// scrypt at N = 2^15, r = 8: 32 MiB and tens of milliseconds per hash, on the libuv pool.
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
const KEY_BYTES = 32;

/** Roles in order: each may do what the ones below it may. */
const RANK: Record<Role, number> = { member: 0, owner: 1, operator: 2 };

/**
 * Why `actor` may not act on `target` (disable, link, change, delete: every action on a user),
 * or null when it may: a member manages nobody, and nobody acts on itself or on a user whose
 * role is above its own.
 */
export function userActionProblem(actor: User, target: Pick<User, 'id' | 'role'>): string | null {
  if (actor.role === 'member') return "Only an owner manages the team's users.";
  if (target.id === actor.id) return 'You cannot do this to yourself.';
  if (RANK[target.role] > RANK[actor.role]) return `An ${actor.role} cannot act on an ${target.role}.`;
  return null;
}

/** Whether `actor` may give a user the role `role` (never one above its own). */
export const mayGrant = (actor: User, role: Role): boolean => actor.role !== 'member' && RANK[role] <= RANK[actor.role];

/** A random token for a cookie or a link (256 bits). */
export const newToken = (): string => randomBytes(32).toString('base64url');

/** What a store keeps of a token. */
export const tokenHash = (token: string): string => createHash('sha256').update(token).digest('base64url');

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** Why a new password is refused, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN) return `The password must be at least ${PASSWORD_MIN} characters long.`;
  if (password.length > PASSWORD_MAX) return `The password must be at most ${PASSWORD_MAX} characters long.`;
  return null;
}

/** `scrypt$N$r$p$salt$key`, salt and key in base64url. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, SCRYPT);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** A hash to check against when there is no user, so that an unknown email takes as long as a wrong password. */
const NOBODY = hashPassword(newToken());

/** Whether `password` is the one `stored` was made from (null: no password; the same work is done). */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = (stored ?? (await NOBODY)).split('$');
  if (scheme !== 'scrypt' || !salt || !key || password.length > PASSWORD_MAX) return false;
  const expected = Buffer.from(key, 'base64url');
  const derived = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p), maxmem: SCRYPT.maxmem });
  return stored !== null && derived.length === expected.length && timingSafeEqual(derived, expected);
}

/** Issues a one-time link that sets the user's password (also how a forgotten one is reset). */
export async function issuePasswordLink(users: UserStore, userId: string, baseUrl: string, now: number): Promise<string> {
  const token = newToken();
  await users.createPasswordLink({ hash: tokenHash(token), userId, expiresAt: now + LINK_LIFETIME_MS });
  return `${baseUrl.replace(/\/+$/, '')}${SET_PASSWORD_PATH}?token=${token}`;
}
