// Rules every store implementation applies the same way: identifiers, and the checks of values
// that the database constraints would otherwise report less clearly.
import { randomFillSync } from 'node:crypto';

// Random bytes for identifiers, drawn from the system 9 KiB at a time: a call per identifier
// (`randomBytes`) was 2% of a live scrape's time in `npm run bench:live` (its reservation's id).
const pool = Buffer.alloc(18 * 512);
let offset = pool.length;

/** `bytes` random bytes, URL-safe base64. */
function randomText(bytes: number): string {
  if (offset + bytes > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const text = pool.toString('base64url', offset, offset + bytes);
  offset += bytes;
  return text;
}

/** `prefix_`, then 20 random URL-safe characters (120 bits). */
export const newId = (prefix: string): string => `${prefix}_${randomText(15)}`;

/** Digits in byte order, so that the encoded times sort as the times do. */
const DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Eight digits of base 62 hold epoch milliseconds until the year 8,900. */
const TIME_DIGITS = 8;
let lastMs = -1;
let lastTime = '';

/** Epoch ms as TIME_DIGITS base-62 digits, computed once per millisecond. */
function timePart(ms: number): string {
  if (ms !== lastMs) {
    let rest = ms;
    let digits = '';
    for (let i = 0; i < TIME_DIGITS; i++) {
      digits = DIGITS[rest % 62] + digits;
      rest = Math.floor(rest / 62);
    }
    lastMs = ms;
    lastTime = digits;
  }
  return lastTime;
}

/**
 * `prefix_`, the time in 8 characters that sort as it does, then 24 URL-safe characters (144
 * random bits). For the keys of tables written on every request (request records,
 * reservations): ids that arrive in order are appended to the key's index rather than
 * scattered over it, so a batch of rows dirties a few pages of it instead of one per row.
 * Measured on a table of 300,000 records, batches of 1,000 with a checkpoint each: 23.6 µs of
 * CPU per record with wholly random ids, 3.9 µs with these.
 */
export const newOrderedId = (prefix: string): string => `${prefix}_${timePart(Date.now())}${randomText(18)}`;
export const isoNow = (): string => new Date().toISOString();

export function checkPositiveInt(what: string, n: number): void {
  if (!Number.isSafeInteger(n) || n <= 0) throw new RangeError(`${what} must be a positive integer, got ${n}`);
}

export function checkTeamFields(changes: { name?: string; rateLimit?: number; credits?: number }): void {
  if (changes.name !== undefined && (typeof changes.name !== 'string' || changes.name.trim() === '')) {
    throw new RangeError('team name must be a non-empty string');
  }
  if (changes.rateLimit !== undefined && (!Number.isSafeInteger(changes.rateLimit) || changes.rateLimit < 1)) {
    throw new RangeError(`rate limit must be an integer >= 1, got ${changes.rateLimit}`);
  }
  if (changes.credits !== undefined && (!Number.isSafeInteger(changes.credits) || changes.credits < 0)) {
    throw new RangeError(`initial credits must be an integer >= 0, got ${changes.credits}`);
  }
}

/** The largest daily credit limit of a key. */
export const MAX_DAILY_CREDITS = 1_000_000_000;

export function checkDailyCreditLimit(limit: number | null | undefined): void {
  if (limit === null || limit === undefined) return;
  if (!Number.isSafeInteger(limit) || limit < 0 || limit > MAX_DAILY_CREDITS) {
    throw new RangeError(`daily credit limit must be a whole number from 0 to ${MAX_DAILY_CREDITS}, or none; got ${limit}`);
  }
}

/** The largest low-balance alert of a team. */
export const MAX_LOW_BALANCE_ALERT = 1_000_000_000_000;

export function checkLowBalanceAlert(alert: number | null | undefined): void {
  if (alert === null || alert === undefined) return;
  if (!Number.isSafeInteger(alert) || alert < 0 || alert > MAX_LOW_BALANCE_ALERT) {
    throw new RangeError(`low-balance alert must be a whole number from 0 to ${MAX_LOW_BALANCE_ALERT}, or none; got ${alert}`);
  }
}

export const ROLES = ['owner', 'member', 'operator'] as const;

/** An email address as users are found by it: trimmed, lower case; RangeError unless it looks like one. */
export function normaliseEmail(email: string): string {
  const normal = typeof email === 'string' ? email.trim().toLowerCase() : '';
  if (normal.length > 254 || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(normal)) throw new RangeError(`not an email address: ${String(email).slice(0, 100)}`);
  return normal;
}

/** The normal form of an email address, or null when it is not one (a lookup finds nobody). */
export function emailOrNull(email: string): string | null {
  try {
    return normaliseEmail(email);
  } catch {
    return null;
  }
}

export function checkRole(role: string): void {
  if (!(ROLES as readonly string[]).includes(role)) throw new RangeError(`role must be one of ${ROLES.join(', ')}, got ${role}`);
}

/** Keyset position of a request record: newest first by arrival, then by request id. */
export interface RecordPosition {
  at: number;
  requestId: string;
}

export const encodeRecordCursor = (p: RecordPosition): string => Buffer.from(`${p.at}.${p.requestId}`).toString('base64url');

export function decodeRecordCursor(cursor: string): RecordPosition {
  const text = Buffer.from(cursor, 'base64url').toString();
  const dot = text.indexOf('.');
  const at = Number(text.slice(0, dot));
  const requestId = text.slice(dot + 1);
  if (dot < 1 || !Number.isSafeInteger(at) || !/^req_[A-Za-z0-9_-]{1,64}$/.test(requestId)) throw new RangeError('malformed cursor');
  return { at, requestId };
}

export function recordLimit(limit: number | undefined): number {
  const value = limit ?? 50;
  if (!Number.isSafeInteger(value) || value < 1 || value > 1_000) throw new RangeError(`limit must be an integer from 1 to 1000, got ${value}`);
  return value;
}
