// One request record per API request of a known caller (RequestLog in store/types.ts), for the
// operator CLI and the account holder's views. Records are gathered in memory and written in
// batches, every second (sooner past 10,000 waiting), never on the request's path; the embedded
// store writes them from its background thread. Every second rather than every 500: each
// batch the thread writes is a commit from another connection, which empties the embedded
// store's memory of cache entries and keys (cache.ts, accounts.ts), so few large batches cost
// less than many small ones. When the store cannot take them they wait
// for the next attempt, up to a bound; beyond it the oldest are dropped and counted
// (api_request_records_dropped_total). Closing the app writes what is left.
import type { FastifyPluginCallback } from 'fastify';
import fp from 'fastify-plugin';
import type { RequestRecord, Stores } from '../../store/types.ts';
import { everyWhileOpen } from './maintenance.ts';

const FLUSH_MS = 1_000;
/** Records written at most per call to the store. */
const BATCH = 1_000;
/** Records waiting that call for a write before the second is up. */
const EARLY = 10_000;
const MAX_WAITING = 50_000;

declare module 'fastify' {
  interface FastifyInstance {
    /** Writes the request records gathered so far (they are written every second anyway). */
    writeRecords: () => Promise<void>;
    /** Adds the record of a request made by the service itself (a monitor's run, a job's item), written with the others. */
    addRecord: (record: RequestRecord) => void;
  }
}

export interface RecordsOptions {
  stores: Stores;
}

const records: FastifyPluginCallback<RecordsOptions> = (app, { stores }, done) => {
  let waiting: RequestRecord[] = [];
  let writing: Promise<void> | null = null;

  /** Drops the oldest beyond the bound. */
  const bound = (): void => {
    if (waiting.length <= MAX_WAITING) return;
    const dropped = waiting.length - MAX_WAITING;
    waiting = waiting.slice(dropped);
    app.metrics.requestRecordsDropped.inc(dropped);
  };
  /**
   * Writes the records waiting now, not those that arrive meanwhile: writing until none waits
   * would, under a steady stream of requests, commit a small batch per round trip to the store
   * (20 rows every 4 ms at 12,000 requests a second), each commit emptying the store's memory
   * of keys and cache entries; they wait for the next second's batch instead.
   */
  const write = async (): Promise<void> => {
    const taken = waiting;
    waiting = [];
    for (let from = 0; from < taken.length; from += BATCH) {
      try {
        await stores.requests.append(taken.slice(from, from + BATCH));
      } catch (error) {
        // What was not written waits, ahead of what came meanwhile.
        waiting = taken.slice(from).concat(waiting);
        bound();
        throw error;
      }
    }
  };
  /** A flush asked during a write is one more write after it, shared by all who ask meanwhile. */
  let following: Promise<void> | null = null;
  const flush = (): Promise<void> => {
    if (writing) {
      following ??= writing
        .catch(() => undefined)
        .then(() => {
          following = null;
          return flush();
        });
      return following;
    }
    writing = write().finally(() => {
      writing = null;
    });
    return writing;
  };

  app.addHook('onResponse', (request, reply, hookDone) => {
    hookDone();
    const caller = request.caller;
    const state = request.state;
    if (!caller || !state?.endpoint) return;
    const { outcome } = state;
    waiting.push({
      requestId: request.id,
      at: Math.trunc(Date.now() - reply.elapsedTime),
      teamId: caller.team.id,
      keyId: caller.keyId,
      endpoint: state.path ?? request.url.split('?')[0] ?? '',
      status: reply.statusCode,
      errorCode: reply.statusCode === 200 ? null : outcome.errorCode,
      credits: outcome.creditsCharged,
      cached: outcome.cached,
      durationMs: Math.round(reply.elapsedTime * 100) / 100,
    });
    bound();
    if (waiting.length >= EARLY && !writing) flush().catch((error: unknown) => app.log.warn({ err: error }, 'request records not written yet'));
  });

  app.decorate('writeRecords', flush);
  app.decorate('addRecord', (record: RequestRecord) => {
    waiting.push(record);
  });
  everyWhileOpen(app, FLUSH_MS, flush, 'writing request records');
  app.addHook('onClose', async () => {
    try {
      // Those of requests answered while the last batch was being written too.
      do await flush();
      while (waiting.length > 0);
    } catch (error) {
      app.log.error({ err: error, lost: waiting.length }, 'request records lost at close');
    }
  });
  done();
};

export const recordsPlugin = fp(records, { name: 'records', dependencies: ['metrics'] });
