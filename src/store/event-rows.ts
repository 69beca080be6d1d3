// An account event's row as both stores read it (the same columns in SQLite and PostgreSQL).
import type { AccountEvent } from './types.ts';

type Row = Record<string, unknown>;

export const toEvent = (r: Row): AccountEvent => ({
  id: r.id as string,
  teamId: r.team_id as string,
  type: r.type as AccountEvent['type'],
  data: (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as Record<string, unknown>,
  createdAt: r.created_at instanceof Date ? r.created_at.toISOString() : (r.created_at as string),
});

/** The most events a list answers at once. */
export const MAX_EVENTS = 1_000;

export function eventLimit(limit: number | undefined): number {
  const value = limit ?? 100;
  if (!Number.isSafeInteger(value) || value < 1 || value > MAX_EVENTS) throw new RangeError(`limit must be an integer from 1 to ${MAX_EVENTS}, got ${value}`);
  return value;
}
