// An Idempotency-Key record's row as both stores read it (the same columns in SQLite and PostgreSQL).
import type { IdempotencyClaim } from './types.ts';

type Row = Record<string, unknown>;

/** What a record that holds its key answers to a claim for a request with `fingerprint`. */
export function heldClaim(row: Row, fingerprint: string): IdempotencyClaim {
  if (row.fingerprint !== fingerprint) return { outcome: 'reused' };
  if (row.state === 'running') return { outcome: 'running' };
  const body = row.body as Uint8Array;
  return {
    outcome: 'kept',
    answer: { status: Number(row.status), body: Buffer.from(body.buffer, body.byteOffset, body.byteLength), location: (row.location as string | null) ?? null },
  };
}
