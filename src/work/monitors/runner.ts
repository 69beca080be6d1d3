// Monitors' runs: each a live scrape through the same path as the API's (ScrapeService.scrapeFor),
// compared with the last good run's data (diff.ts), recorded with its events in one transaction
// (MonitorStore.finish), then charged. And the loop that takes due runs: every tick (and as soon
// as a run ends) it claims due monitors from the store, up to a number of runs at once. The
// claim is the store's (one conditional UPDATE of the monitor's lock), so any number of
// processes or nodes may run this loop over the same database: each run is taken by one.
//
// This loop is the one scheduling engine monitors need: MonitorClaims (claimDue, claimNow,
// finish) is all it asks of the store, so that it can be handed to another engine (a jobs
// worker) without changing the runs themselves.
import type { FastifyBaseLogger } from 'fastify';
import type { Operation } from 'rfc6902';
import { ApiError, asApiError } from '../../server/errors.ts';
import { newRequestId } from '../../server/ids.ts';
import type { Metrics } from '../../server/metrics.ts';
import type { EndpointRuntime, ScrapeService } from '../../server/scrape.ts';
import type { ClaimedMonitor, MonitorRun, MonitorStore, RequestRecord } from '../../store/types.ts';
import { newId } from '../../store/rules.ts';
import { comparable, diff, watched } from './diff.ts';
import { nextSlot } from './schedule.ts';

/** What the scheduling needs of the store. */
export type MonitorClaims = Pick<MonitorStore, 'claimDue' | 'claimNow' | 'renew' | 'finish'>;

export interface MonitorSettings {
  /** The shortest interval (MONITOR_MIN_INTERVAL_S). */
  minIntervalS: number;
  /** Monitors per team (MONITOR_MAX_PER_TEAM). */
  maxPerTeam: number;
  /** Days runs are kept (MONITOR_RUN_RETENTION_DAYS). */
  runRetentionDays: number;
  /** How often the loop looks for due runs, ms. */
  tickMs: number;
  /** Runs at once on this process (MONITOR_CONCURRENCY). */
  concurrency: number;
  /**
   * How long a run's claim holds without renewal (MONITOR_LOCK_MS); renewed every third of it
   * while the run goes on, so a node that dies mid-run holds its monitor this long at most.
   */
  lockMs: number;
}

export const DEFAULT_MONITOR_SETTINGS: MonitorSettings = { minIntervalS: 900, maxPerTeam: 100, runRetentionDays: 30, tickMs: 1_000, concurrency: 16, lockMs: 15_000 };

/** Failures in a row that record `monitor.failed` (once per streak). */
export const FAILURE_THRESHOLD = 3;

export interface RunnerOptions {
  store: MonitorClaims;
  scraper: ScrapeService;
  /** The endpoints' runtimes by path. */
  runtimes: ReadonlyMap<string, EndpointRuntime>;
  metrics: Metrics;
  log: FastifyBaseLogger;
  now: () => number;
  settings: MonitorSettings;
  /** Keeps the request record of a run's scrape. */
  addRecord: (record: RequestRecord) => void;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export class MonitorRunner {
  readonly #o: RunnerOptions;
  readonly #running = new Set<Promise<unknown>>();
  #timer: NodeJS.Timeout | undefined;
  #filling = false;
  #stopped = true;

  constructor(options: RunnerOptions) {
    this.#o = options;
  }

  /** Starts the loop (the service's start). */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#timer = setInterval(() => void this.#fill(), this.#o.settings.tickMs);
    this.#timer.unref();
    void this.#fill();
  }

  /** Stops taking runs and waits for those in progress to end (the service's stop). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  /** Runs in progress on this process. */
  get running(): number {
    return this.#running.size;
  }

  /** Claims due runs while there are some and room for them. */
  async #fill(): Promise<void> {
    if (this.#filling || this.#stopped) return;
    this.#filling = true;
    try {
      while (!this.#stopped && this.#running.size < this.#o.settings.concurrency) {
        const owner = newId('run');
        const now = this.#o.now();
        const claim = await this.#o.store.claimDue(owner, now, now + this.#o.settings.lockMs);
        if (!claim) break;
        this.#track(this.run(claim));
      }
    } catch (error) {
      this.#o.log.error({ err: error }, 'monitor runs not claimed');
    } finally {
      this.#filling = false;
    }
  }

  #track<T>(promise: Promise<T>): Promise<T> {
    const tracked = promise.finally(() => {
      this.#running.delete(tracked);
      if (!this.#stopped) void this.#fill();
    });
    this.#running.add(tracked);
    return tracked;
  }

  /** A run asked for now: the run, `running` when one is in progress, null when the team has no such monitor. */
  async runNow(teamId: string, id: string): Promise<MonitorRun | 'running' | null> {
    const now = this.#o.now();
    const claim = await this.#o.store.claimNow(teamId, id, newId('run'), now, now + this.#o.settings.lockMs);
    if (claim === null || claim === 'running') return claim;
    return this.#track(this.run(claim));
  }

  /** Runs one claimed monitor to its end; the run, or null when its end could not be recorded (the lock was lost, the monitor deleted). */
  async run(claim: ClaimedMonitor): Promise<MonitorRun | null> {
    const { monitor } = claim;
    const { metrics, scraper, now } = this.#o;
    const startedAt = now();
    metrics.monitorLag.observe(Math.max(0, startedAt - claim.slot) / 1000);
    const requestId = newRequestId();
    const log = this.#o.log.child({ monitor: monitor.id, requestId });
    const runtime = this.#o.runtimes.get(monitor.endpoint);
    let status: MonitorRun['status'] = 'failed';
    let error: ApiError | null = null;
    let patch: Operation[] | null = null;
    let data: string | undefined;
    let reservationId: string | null = null;
    // The claim is renewed while the scrape goes on: it outlasts a live run however long, and a
    // node that dies mid-run lets the others take the monitor MONITOR_LOCK_MS later, not more.
    const { lockMs } = this.#o.settings;
    const renewal = setInterval(() => {
      this.#o.store.renew(monitor.id, claim.owner, now() + lockMs).then(
        (held) => (held ? undefined : log.warn('monitor run no longer holds its monitor (deleted, or its claim lapsed)')),
        (storeError: unknown) => log.warn({ err: storeError }, 'monitor run claim not renewed'),
      );
    }, Math.max(250, Math.floor(lockMs / 3)));
    renewal.unref();
    try {
      if (!runtime) throw new ApiError('NOT_FOUND', `The endpoint ${monitor.endpoint} no longer exists.`);
      const checked = runtime.query.check(monitor.params);
      if ('error' in checked) throw checked.error;
      const result = await scraper.scrapeFor(runtime, checked.value, { teamId: monitor.teamId, keyId: monitor.keyId, test: monitor.test }, requestId, log);
      if ('skipped' in result) {
        status = 'skipped';
        error = result.skipped;
      } else {
        reservationId = result.reservationId;
        const current = comparable(runtime.endpoint, JSON.parse(result.json) as Record<string, unknown>);
        data = JSON.stringify(current);
        if (claim.lastData !== null) patch = watched(diff(JSON.parse(claim.lastData), current), monitor.watch);
        status = 'succeeded';
      }
    } catch (caught) {
      error = asApiError(caught);
      if (!(caught instanceof ApiError)) log.error({ err: caught }, 'monitor run failed unexpectedly');
    } finally {
      clearInterval(renewal);
    }
    const finishedAt = now();
    const changed = patch !== null && patch.length > 0;
    const run: MonitorRun = {
      id: claim.owner,
      monitorId: monitor.id,
      at: claim.slot,
      startedAt,
      finishedAt,
      status,
      creditsCharged: reservationId === null ? 0 : 1,
      changed,
      patch,
      error: error && { code: error.code, message: error.message },
      requestId,
    };
    const schedule = monitor.interval !== null ? { interval: monitor.interval, cron: null, timezone: monitor.timezone } : { interval: null, cron: monitor.cron as string, timezone: monitor.timezone };
    let recorded: MonitorRun | null = null;
    try {
      recorded = await this.#o.store.finish(monitor.id, claim.owner, {
        run,
        nextRunAt: nextSlot(schedule, Math.max(finishedAt, claim.slot), claim.slot),
        // A new schedule or a resume made during the run keeps the slot it set.
        claimedNextRunAt: monitor.nextRunAt,
        ...(data === undefined ? {} : { data }),
        // Kept in the same transaction: the run is charged exactly when it is recorded.
        reservationId,
        event: changed ? { type: 'monitor.changed', data: { monitor: monitor.id, run: run.id, patch, previousAt: iso(claim.lastGoodAt) } } : null,
        failedEvent: { monitor: monitor.id, run: run.id, error: run.error },
        failureThreshold: FAILURE_THRESHOLD,
      });
    } catch (storeError) {
      log.error({ err: storeError }, 'monitor run not recorded; it runs again once its lock expires');
    }
    if (reservationId !== null && runtime) {
      if (recorded === null) {
        // Not recorded (the monitor deleted, its run taken over, the store down): the credit goes back.
        log.warn('monitor run not recorded: the monitor was deleted or its run taken over; its credit is refunded');
        try {
          await scraper.settle(runtime, reservationId, false);
        } catch (storeError) {
          // The reservation stays pending until its deadline, then is refunded by the sweep.
          log.error({ err: storeError, reservationId }, 'monitor run credit not refunded yet');
        }
      } else if (recorded.creditsCharged === 1) scraper.charged(runtime);
      else log.warn({ reservationId }, "monitor run's reservation refunded as abandoned before its run was recorded; not charged");
    }
    const finished = recorded !== null;
    metrics.monitorRuns.inc({ outcome: status });
    if (changed && finished) metrics.monitorChanges.inc();
    this.#o.addRecord({
      requestId,
      at: startedAt,
      teamId: monitor.teamId,
      // A run is made by its monitor, not by a key: its records name it.
      keyId: monitor.id,
      endpoint: monitor.endpoint,
      status: error ? error.status : 200,
      errorCode: error ? error.code : null,
      credits: recorded?.creditsCharged ?? 0,
      cached: false,
      durationMs: finishedAt - startedAt,
    });
    return recorded;
  }
}
