// One request record per API request of a known caller (RequestLog in store/types.ts), for the
// operator CLI and the account holder's views. Records are gathered in memory and written in
// batches, every second or every 500, never on the request's path. When the store cannot take
// them they wait for the next attempt, up to a bound; beyond it the oldest are dropped and
// counted (api_request_records_dropped_total). Closing the app writes what is left.
import type { FastifyPluginCallback } from 'fastify';
import fp from 'fastify-plugin';
import type { RequestRecord, Stores } from '../../store/types.ts';
import { everyWhileOpen } from './maintenance.ts';

const FLUSH_MS = 1_000;
const BATCH = 500;
const MAX_WAITING = 50_000;

declare module 'fastify' {
  interface FastifyInstance {
    /** Writes the request records gathered so far (they are written every second anyway). */
    writeRecords: () => Promise<void>;
    /** Adds the record of a request made by the service itself (a monitor's run), written with the others. */
    addRecord: (record: RequestRecord) => void;
  }
}

export interface RecordsOptions {
  stores: Stores;
}

const records: FastifyPluginCallback<RecordsOptions> = (app, { stores }, done) => {
  let waiting: RequestRecord[] = [];
  let writing: Promise<void> | null = null;

  const write = async (): Promise<void> => {
    while (waiting.length > 0) {
      const batch = waiting.slice(0, BATCH);
      await stores.requests.append(batch);
      waiting = waiting.slice(batch.length);
    }
  };
  const flush = (): Promise<void> => {
    writing ??= write().finally(() => {
      writing = null;
    });
    return writing;
  };

  app.addHook('onResponse', (request, reply, hookDone) => {
    hookDone();
    const caller = request.caller;
    if (!caller || !request.state?.endpoint) return;
    const { outcome } = request.state;
    waiting.push({
      requestId: request.id,
      at: new Date(Date.now() - reply.elapsedTime).toISOString(),
      teamId: caller.team.id,
      keyId: caller.keyId,
      endpoint: request.routeOptions.url ?? request.url.split('?')[0] ?? '',
      status: reply.statusCode,
      errorCode: reply.statusCode === 200 ? null : outcome.errorCode,
      credits: outcome.creditsCharged,
      cached: outcome.cached,
      durationMs: Math.round(reply.elapsedTime * 100) / 100,
    });
    if (waiting.length > MAX_WAITING) {
      const dropped = waiting.length - MAX_WAITING;
      waiting = waiting.slice(dropped);
      app.metrics.requestRecordsDropped.inc(dropped);
    }
    if (waiting.length >= BATCH && !writing) flush().catch((error: unknown) => app.log.warn({ err: error }, 'request records not written yet'));
  });

  app.decorate('writeRecords', flush);
  app.decorate('addRecord', (record: RequestRecord) => {
    waiting.push(record);
  });
  everyWhileOpen(app, FLUSH_MS, flush, 'writing request records');
  app.addHook('onClose', async () => {
    await flush().catch((error: unknown) => app.log.error({ err: error, lost: waiting.length }, 'request records lost at close'));
  });
  done();
};

export const recordsPlugin = fp(records, { name: 'records', dependencies: ['metrics'] });
