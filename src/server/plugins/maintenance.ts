// Periodic work while the app is open: refunds of abandoned reservations and cache pruning,
// once when the app is ready and then at an interval; `app.maintain()` runs it on demand.
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
  intervalMs: number;
}

const maintenance: FastifyPluginCallback<MaintenanceOptions> = (app, { stores, now, intervalMs }, done) => {
  app.decorate('maintain', async () => {
    const refunded = await stores.ledger.refundExpired(now());
    if (refunded > 0) {
      app.metrics.creditsRefunded.inc({ reason: 'abandoned' }, refunded);
      app.log.warn({ refunded }, 'refunded abandoned reservations');
    }
    await stores.cache.prune(now());
  });
  app.addHook('onReady', () => app.maintain());
  everyWhileOpen(app, intervalMs, () => app.maintain(), 'maintenance');
  done();
};

export const maintenancePlugin = fp(maintenance, { name: 'maintenance', dependencies: ['metrics'] });
