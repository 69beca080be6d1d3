// Periodic work while the app is open, once when it is ready and then at intervals: refunds of
// abandoned reservations (every 5 s, so that one is refunded within 10 s of its deadline, by
// whichever node sweeps first), and cache pruning with the deletion of old request records,
// sessions, drift samples, Idempotency-Key records that hold their key no longer and settled
// reservations (every 30 s). `app.maintain()` runs both on demand.
import type { FastifyInstance, FastifyPluginCallback } from 'fastify';
import fp from 'fastify-plugin';
import type { Stores } from '../../store/types.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Runs the periodic maintenance once (refunds of abandoned reservations, cache pruning). */
    maintain: () => Promise<void>;
  }
}

/** Runs `job` every `ms` from when `app` is ready until it closes; a failure is logged. */
export function everyWhileOpen(app: FastifyInstance, ms: number, job: () => Promise<void>, what: string): void {
  let timer: NodeJS.Timeout | undefined;
  app.addHook('onReady', (done) => {
    timer = setInterval(() => job().catch((error: unknown) => app.log.error({ err: error }, `${what} failed`)), ms);
    timer.unref();
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    clearInterval(timer);
    done();
  });
}

export interface MaintenanceOptions {
  stores: Stores;
  now: () => number;
  /** Cache pruning. */
  intervalMs: number;
  /** Refunds of abandoned reservations. */
  reapIntervalMs: number;
  /** Request records older than this are deleted with the cache pruning. */
  recordsMaxAgeMs: number;
  /** Monitors' runs finished longer ago than this are deleted with the cache pruning. */
  monitorRunsMaxAgeMs: number;
  /** Batch jobs that ended longer ago than this are deleted with their results. */
  jobsMaxAgeMs?: number;
}

/** Drift samples are kept this many days. */
export const DRIFT_DAYS = 14;
/** Days a delivered or failed webhook delivery (and its attempts) stays in the log. */
export const WEBHOOK_DELIVERY_DAYS = 30;
/**
 * Days a settled (committed or refunded) reservation is kept after its deadline. Past its
 * deadline (the request budget plus RESERVATION_MARGIN_MS after it was made) nothing settles a
 * reservation any more: a pending one is refunded by the sweep within seconds, and a commit or
 * refund that comes later still (of a request, a job's page or a monitor's run) finds it settled
 * and changes nothing. Kept days longer all the same, so that such a late call is answered as
 * before; once pruned, it finds no reservation and neither charges nor refunds. The ledger keeps
 * every charge and refund: balances and usage do not depend on reservations once settled.
 */
export const SETTLED_RESERVATION_DAYS = 7;

const maintenance: FastifyPluginCallback<MaintenanceOptions> = (app, { stores, now, intervalMs, reapIntervalMs, recordsMaxAgeMs, monitorRunsMaxAgeMs, jobsMaxAgeMs = 7 * 24 * 60 * 60 * 1000 }, done) => {
  const reap = async () => {
    const refunded = await stores.ledger.refundExpired(now());
    if (refunded > 0) {
      app.metrics.creditsRefunded.inc({ reason: 'abandoned' }, refunded);
      app.log.warn({ refunded }, 'refunded abandoned reservations');
    }
  };
  const prune = async () => {
    await stores.cache.prune(now());
    await stores.requests.prune(now() - recordsMaxAgeMs);
    await stores.users.pruneSessions(now());
    await stores.drift.prune(now() - DRIFT_DAYS * 24 * 60 * 60 * 1000);
    await stores.idempotency.prune(now());
    await stores.webhooks.prune(now() - WEBHOOK_DELIVERY_DAYS * 24 * 60 * 60 * 1000);
    await stores.monitors.pruneRuns(now() - monitorRunsMaxAgeMs);
    await stores.jobs.prune(now() - jobsMaxAgeMs);
    await stores.ledger.pruneReservations(now() - SETTLED_RESERVATION_DAYS * 24 * 60 * 60 * 1000);
  };
  app.decorate('maintain', async () => {
    await reap();
    await prune();
  });
  app.addHook('onReady', () => app.maintain());
  everyWhileOpen(app, reapIntervalMs, reap, 'refunding abandoned reservations');
  everyWhileOpen(app, intervalMs, prune, 'cache pruning');
  done();
};

export const maintenancePlugin = fp(maintenance, { name: 'maintenance', dependencies: ['metrics'] });
