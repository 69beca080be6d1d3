// A drift sample's row as both stores read it (the same columns in SQLite and PostgreSQL).
import type { DriftSummary } from './types.ts';

type Row = Record<string, unknown>;

export const toDriftSummary = (r: Row): DriftSummary => ({
  id: r.id as string,
  at: new Date(Number(r.at)).toISOString(),
  platform: r.platform as string,
  endpoint: r.endpoint as string,
  requestId: r.request_id as string,
  reason: r.reason as string,
  path: r.path as string,
  status: Number(r.status),
  truncated: Boolean(r.truncated),
});
