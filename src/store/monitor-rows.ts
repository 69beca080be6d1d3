// A monitor's and a run's rows as both stores read them (the same columns in SQLite and
// PostgreSQL; times are epoch ms, structured values JSON text).
import type { ClaimedMonitor, MonitorRecord, MonitorRun } from './types.ts';

type Row = Record<string, unknown>;

const num = (value: unknown): number => Number(value);
const numOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

/** The columns of a monitor, as every statement that returns one selects them. */
export const MONITOR_COLUMNS =
  'id, team_id, test, key_id, endpoint, params, interval_s, cron, timezone, watch, label, status, created_at, last_run_at, next_run_at, last_change_at, runs, consecutive_failures, failure_alerted';

export const toMonitor = (r: Row): MonitorRecord => ({
  id: r.id as string,
  teamId: r.team_id as string,
  test: Boolean(r.test),
  keyId: r.key_id as string,
  endpoint: r.endpoint as string,
  params: JSON.parse(r.params as string) as Record<string, string>,
  interval: numOrNull(r.interval_s),
  cron: (r.cron as string | null) ?? null,
  timezone: r.timezone as string,
  watch: JSON.parse(r.watch as string) as string[],
  label: (r.label as string | null) ?? null,
  status: r.status as MonitorRecord['status'],
  createdAt: num(r.created_at),
  lastRunAt: numOrNull(r.last_run_at),
  nextRunAt: num(r.next_run_at),
  lastChangeAt: numOrNull(r.last_change_at),
  runs: num(r.runs),
  consecutiveFailures: num(r.consecutive_failures),
  failureAlerted: Boolean(r.failure_alerted),
});

/** A claim's row: the monitor, with its slot and last good data. */
export const toClaim = (r: Row, owner: string): ClaimedMonitor => ({
  monitor: toMonitor(r),
  slot: num(r.next_run_at),
  owner,
  lastData: (r.last_data as string | null) ?? null,
  lastGoodAt: numOrNull(r.last_good_at),
});

export const RUN_COLUMNS = 'id, monitor_id, at, started_at, finished_at, status, credits, changed, patch, error_code, error_message, request_id';

export const toRun = (r: Row): MonitorRun => ({
  id: r.id as string,
  monitorId: r.monitor_id as string,
  at: num(r.at),
  startedAt: num(r.started_at),
  finishedAt: num(r.finished_at),
  status: r.status as MonitorRun['status'],
  creditsCharged: num(r.credits),
  changed: Boolean(r.changed),
  patch: r.patch === null || r.patch === undefined ? null : (JSON.parse(r.patch as string) as unknown[]),
  error: r.error_code === null || r.error_code === undefined ? null : { code: r.error_code as string, message: (r.error_message as string | null) ?? '' },
  requestId: r.request_id as string,
});

/** The values of a run's row, in RUN_COLUMNS order. */
export const runValues = (run: MonitorRun, bool: (value: boolean) => unknown): unknown[] => [
  run.id,
  run.monitorId,
  Math.trunc(run.at),
  Math.trunc(run.startedAt),
  Math.trunc(run.finishedAt),
  run.status,
  run.creditsCharged,
  bool(run.changed),
  run.patch === null ? null : JSON.stringify(run.patch),
  run.error?.code ?? null,
  run.error?.message ?? null,
  run.requestId,
];

/** The most monitors or runs a list answers at once. */
export const MAX_MONITOR_PAGE = 1_000;

export function monitorPageLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_MONITOR_PAGE) throw new RangeError(`limit must be an integer from 1 to ${MAX_MONITOR_PAGE}, got ${limit}`);
  return limit;
}
