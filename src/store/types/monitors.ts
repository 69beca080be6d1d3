// Monitors: pages scraped on a schedule, each run compared with the last good one.
import type { EventType } from './events.ts';

/** How a monitor runs: every `interval` seconds, or at the times of a cron expression in a time zone. */
export type MonitorSchedule = { interval: number; cron: null; timezone: string } | { interval: null; cron: string; timezone: string };

/** A monitor: a page scraped on a schedule, each run compared with the last good one (monitors). */
export interface MonitorRecord {
  /** `mon_…`. */
  id: string;
  teamId: string;
  /** Made with a test-mode key (its runs scrape the built-in sandbox, free). */
  test: boolean;
  /** The key that made it. */
  keyId: string;
  /** The endpoint's path, e.g. `/v1/snapmsg/profile`. */
  endpoint: string;
  /** The endpoint's own query parameters. */
  params: Record<string, string>;
  /** Seconds between runs; null with a cron expression. */
  interval: number | null;
  cron: string | null;
  /** IANA time zone of the cron expression (UTC by default). */
  timezone: string;
  /** JSON Pointers: only changes at or under one of them count; empty: every change counts. */
  watch: string[];
  label: string | null;
  status: 'active' | 'paused';
  /** Epoch ms, as every time of a monitor. */
  createdAt: number;
  lastRunAt: number | null;
  /** The slot of the next run. */
  nextRunAt: number;
  lastChangeAt: number | null;
  runs: number;
  consecutiveFailures: number;
  /** `monitor.failed` was recorded for the current streak of failures. */
  failureAlerted: boolean;
}

export interface NewMonitor {
  teamId: string;
  test: boolean;
  keyId: string;
  endpoint: string;
  params: Record<string, string>;
  schedule: MonitorSchedule;
  watch: string[];
  label: string | null;
  /** Epoch ms. */
  createdAt: number;
  nextRunAt: number;
}

export interface MonitorChanges {
  schedule?: MonitorSchedule;
  watch?: string[];
  label?: string | null;
  status?: 'active' | 'paused';
  nextRunAt?: number;
}

/** A monitor taken for one run: its lock is held by `owner` until `lockedUntil`. */
export interface ClaimedMonitor {
  monitor: MonitorRecord;
  /** The slot this run is for (epoch ms). */
  slot: number;
  owner: string;
  /** The last successful run's data as compared (serialised), null before the first. */
  lastData: string | null;
  /** When the last successful run was (its slot, epoch ms). */
  lastGoodAt: number | null;
}

export type MonitorRunStatus = 'succeeded' | 'failed' | 'skipped';

export interface MonitorRun {
  /** `run_…`. */
  id: string;
  monitorId: string;
  /** The slot (epoch ms). */
  at: number;
  startedAt: number;
  finishedAt: number;
  status: MonitorRunStatus;
  creditsCharged: number;
  changed: boolean;
  /** RFC 6902 operations (watched ones only); null unless the run succeeded after an earlier success. */
  patch: unknown[] | null;
  error: { code: string; message: string } | null;
  /** The request id of the run's scrape (request records, logs). */
  requestId: string;
}

/** How a finished run leaves its monitor. */
export interface MonitorOutcome {
  run: MonitorRun;
  /** The next slot (epoch ms). */
  nextRunAt: number;
  /**
   * The monitor's next slot when the run took it: `nextRunAt` is set only if it is still that
   * (a change of schedule or a resume made meanwhile keeps its own); absent: set regardless.
   */
  claimedNextRunAt?: number;
  /** A succeeded run's data as compared, to become the last good data. */
  data?: string;
  /**
   * The run's credit reservation, kept (committed) in the same transaction as the run is
   * recorded: a run is charged exactly when it is stored. A reservation already refunded (its
   * deadline passed) is not charged, and the run is recorded with 0 credits.
   */
  reservationId?: string | null;
  /** Recorded in the same transaction (`monitor.changed`). */
  event?: { type: EventType; data: Record<string, unknown> } | null;
  /** `monitor.failed`'s data, recorded in the same transaction when this failure is the streak's `failureThreshold`th or later and none was recorded for it yet. */
  failedEvent?: Record<string, unknown>;
  failureThreshold: number;
}

/**
 * Monitors and their runs. Scheduling is a claim in the store: `claimDue` takes one due monitor
 * in one conditional statement (its lock set to the caller until a deadline), so that on a
 * cluster exactly one node takes each run and a node that died lets the others take it once
 * the lock expires; `finish` records the run and sets the next slot, only for the lock's owner.
 */
export interface MonitorStore {
  /** Creates a monitor unless the team has `maxPerTeam` already (null then), checked in the same transaction. */
  create(monitor: NewMonitor, maxPerTeam: number): Promise<MonitorRecord | null>;
  get(teamId: string, id: string): Promise<MonitorRecord | null>;
  /** Newest first; after the monitor `after` (its id) when given. */
  list(teamId: string, limit: number, after?: string): Promise<MonitorRecord[]>;
  update(teamId: string, id: string, changes: MonitorChanges): Promise<MonitorRecord | null>;
  /** Deletes the monitor and its runs; false when unknown. */
  delete(teamId: string, id: string): Promise<boolean>;
  /** Takes the active monitor most overdue at `now` whose lock is free or expired; null when none is due. */
  claimDue(owner: string, now: number, lockedUntil: number): Promise<ClaimedMonitor | null>;
  /** Takes this monitor now (a run asked for), due or not: `running` when a run holds it, null when unknown. */
  claimNow(teamId: string, id: string, owner: string, now: number, lockedUntil: number): Promise<ClaimedMonitor | 'running' | null>;
  /** Moves the lock's deadline of a run in progress to `lockedUntil`; false when the lock is no longer `owner`'s. */
  renew(monitorId: string, owner: string, lockedUntil: number): Promise<boolean>;
  /**
   * Records the run and its effect on the monitor, keeps its credit, frees the lock, in one
   * transaction: the run as recorded, or null (nothing written) when the lock is no longer
   * `owner`'s, the monitor is gone, or its slot was recorded already.
   */
  finish(monitorId: string, owner: string, outcome: MonitorOutcome): Promise<MonitorRun | null>;
  /** Newest first (by slot); before the slot `before` when given. */
  runs(teamId: string, monitorId: string, limit: number, before?: number): Promise<MonitorRun[]>;
  /** Deletes the runs finished before `before` (epoch ms); returns how many. */
  pruneRuns(before: number): Promise<number>;
}
