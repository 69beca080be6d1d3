// The worker of batch jobs on this node: it claims items from the store's queue (each team at
// most JOB_CONCURRENCY_PER_TEAM at once across every node, teams taking turns) and runs each
// through the scrape path of the API (ScrapeService.jobPage: cache, breakers, pace, single-flight,
// the credit reserved for the job's key), page after page along the listing's cursor up to the
// job's `max_pages`. Each page is stored in the transaction that commits its credit. A transient
// failure (502 but an unreadable page, 503) queues the item again with back-off, up to 3 attempts;
// any other failure ends it. Claims are renewed while an item runs. Items whose node died are
// taken up once their claim has lapsed: on the embedded store by `rescue` (and at start, this
// process being its only runner), on PostgreSQL by pg-boss when the node's heartbeats stop.
import type { FastifyBaseLogger } from 'fastify';
import type { UpstreamPosition } from '../endpoints/types.ts';
import { ApiError, asApiError } from '../server/errors.ts';
import { newRequestId } from '../server/ids.ts';
import type { Metrics } from '../server/metrics.ts';
import type { EndpointRuntime, ScrapeService } from '../server/scrape.ts';
import { newId } from '../store/rules.ts';
import { StoreUnavailableError, type ClaimedItem, type Job, type RequestRecord, type Stores } from '../store/types.ts';

/** Claims of one item, the first included, before a transient failure ends it. */
export const MAX_ATTEMPTS = 3;

export interface RunnerSettings {
  concurrencyPerTeam: number;
  /** Items this node runs at once. */
  workers: number;
  /** How long a claim holds without renewal. */
  lockMs: number;
  /** Back-off before the second attempt (doubled for each further one). */
  backoffMs: number;
  /** How often the queue is polled when this node has had nothing to run. */
  pollMs: number;
  /** Whether items claimed by an earlier process are taken up at once at start (one process runs every job). */
  takeOverOnStart: boolean;
  /** Keeps the record of a scrape of an item, written with the API's own in batches (records.ts). */
  addRecord: (record: RequestRecord) => void;
  now: () => number;
}

export class JobRunner {
  readonly #stores: Stores;
  readonly #scraper: ScrapeService;
  readonly #runtimes: ReadonlyMap<string, EndpointRuntime>;
  readonly #metrics: Metrics;
  readonly #log: FastifyBaseLogger;
  readonly #settings: RunnerSettings;
  /** This process's name in the claims it holds. */
  readonly owner = newId('node');
  readonly #running = new Set<Promise<void>>();
  #stopping = false;
  #loop: Promise<void> | null = null;
  #wake: (() => void) | null = null;
  /** A wake that came while the loop was claiming: it claims again at once rather than wait. */
  #woken = false;
  #lastRescue = 0;

  constructor(stores: Stores, scraper: ScrapeService, runtimes: ReadonlyMap<string, EndpointRuntime>, metrics: Metrics, log: FastifyBaseLogger, settings: RunnerSettings) {
    this.#stores = stores;
    this.#scraper = scraper;
    this.#runtimes = runtimes;
    this.#metrics = metrics;
    this.#log = log;
    this.#settings = settings;
    stores.jobs.onQueueError?.((error) => log.error({ err: error }, 'job queue (pg-boss) failed in the background'));
  }

  start(): void {
    if (this.#loop) return;
    this.#loop = this.#run();
  }

  /** Claims at once (a job was just created or retried here) rather than at the next poll. */
  wake(): void {
    if (this.#wake) this.#wake();
    else this.#woken = true;
  }

  /** Stops claiming; each running item stops after its current page and is queued again as it was. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.wake();
    await this.#loop;
    await Promise.allSettled([...this.#running]);
  }

  async #run(): Promise<void> {
    const { now } = this.#settings;
    if (this.#settings.takeOverOnStart) {
      const taken = await this.#stores.jobs.rescue(Number.MAX_SAFE_INTEGER).catch((error: unknown) => (this.#log.error({ err: error }, 'job items of an earlier run not taken up'), 0));
      if (taken > 0) this.#log.warn({ items: taken }, 'job items left running by an earlier run queued again');
    }
    while (!this.#stopping) {
      try {
        if (now() - this.#lastRescue >= this.#settings.lockMs / 4) {
          this.#lastRescue = now();
          const rescued = await this.#stores.jobs.rescue(now());
          if (rescued > 0) this.#log.warn({ items: rescued }, 'job items whose claim lapsed queued again');
        }
        while (!this.#stopping && this.#running.size < this.#settings.workers) {
          // As many as there are free workers, in one claim: on PostgreSQL one transaction and one fetch of the queue.
          const free = this.#settings.workers - this.#running.size;
          const items = await this.#stores.jobs.claimUpTo(this.owner, now() + this.#settings.lockMs, now(), this.#settings.concurrencyPerTeam, free);
          for (const item of items) {
            const running: Promise<void> = this.#item(item)
              .catch((error: unknown) => this.#log.error({ err: error, jobId: item.jobId, index: item.index }, 'job item run failed; its claim lapses and it runs again'))
              .finally(() => {
                this.#running.delete(running);
                this.wake();
              });
            this.#running.add(running);
          }
          // Fewer than asked: nothing more is due now (or every team with items is at its cap);
          // asking again before a wake would only cost the queue another empty fetch.
          if (items.length < free) break;
        }
      } catch (error) {
        this.#log.warn({ err: error }, 'job queue unavailable');
      }
      if (this.#stopping) break;
      // A free slot or a new job wakes the loop (at once when one came while it claimed);
      // otherwise it polls (other nodes' jobs, back-offs).
      const full = this.#running.size >= this.#settings.workers;
      const woken = this.#woken;
      this.#woken = false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, woken && !full ? 0 : this.#settings.pollMs);
        timer.unref();
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = null;
    }
  }

  async #item(item: ClaimedItem): Promise<void> {
    const { now } = this.#settings;
    const started = now();
    const records: RequestRecord[] = [];
    const renewal = setInterval(() => {
      this.#stores.jobs.renew(item, this.owner, now() + this.#settings.lockMs).catch(() => {});
    }, Math.max(250, this.#settings.lockMs / 3));
    renewal.unref();
    try {
      await this.#pages(item, records);
    } finally {
      clearInterval(renewal);
      this.#metrics.jobItemLatency.observe((now() - started) / 1000);
      for (const record of records) this.#settings.addRecord(record);
    }
  }

  async #end(item: ClaimedItem, error: { code: string; message: string } | null): Promise<void> {
    const job = await this.#stores.jobs.finish(item, this.owner, error ? { status: 'failed', error } : { status: 'succeeded' }, this.#settings.now());
    if (job) this.#ended(job.pending === 0 ? job : null, error);
  }

  /** Counts an item that has ended, and its job when the item's end ended it. */
  #ended(job: Job | null, error: { code: string; message: string } | null): void {
    this.#metrics.jobItems.inc({ outcome: error ? 'failed' : 'succeeded' });
    if (job?.completedAt != null) this.#metrics.jobDuration.observe(Math.max(0, job.completedAt - job.createdAt) / 1000);
  }

  async #pages(item: ClaimedItem, records: RequestRecord[]): Promise<void> {
    const { now } = this.#settings;
    const runtime = this.#runtimes.get(item.endpoint);
    if (!runtime) return this.#end(item, { code: 'NOT_FOUND', message: `The endpoint ${item.endpoint} does not exist (any more).` });
    const { cache_max_age: own, ...rest } = item.params;
    const cacheMaxAge = own ?? item.cacheMaxAge;
    const checked = runtime.query.check(cacheMaxAge ? { ...rest, cache_max_age: cacheMaxAge } : rest);
    if ('error' in checked) return this.#end(item, { code: checked.error.code, message: checked.error.message });
    const parsed = checked.value;
    let position: UpstreamPosition | null = null;
    let stored = item.storedPages;
    if (item.lastPage !== null) {
      // An earlier run stored pages: go on after the last of them.
      position = this.#scraper.nextPosition(runtime, item.lastPage, parsed.params, item.test);
      if (position === null || stored >= item.maxPages) return this.#end(item, null);
    } else if (parsed.token !== null) {
      position = this.#scraper.openCursor(runtime, parsed.token, parsed.params, item.test);
      if (position === null) return this.#end(item, { code: 'BAD_REQUEST', message: `The ${runtime.endpoint.paging?.param} is malformed or was not issued by this service for this target.` });
    }
    const log = this.#log.child({ jobId: item.jobId, index: item.index });
    for (;;) {
      if (this.#stopping) {
        await this.#stores.jobs.requeue(item, this.owner, now(), null, true);
        return;
      }
      const requestId = newRequestId();
      const at = now();
      const record = (status: number, errorCode: string | null, credits: number, cached: boolean): void => {
        records.push({ requestId, at, teamId: item.teamId, keyId: item.keyId, endpoint: item.endpoint, status, errorCode, credits, cached, durationMs: Math.round((now() - at) * 100) / 100, jobId: item.jobId });
      };
      let page;
      try {
        page = await this.#scraper.jobPage(runtime, { teamId: item.teamId, keyId: item.keyId, test: item.test, requestId, log }, parsed, position);
      } catch (thrown) {
        const error = asApiError(thrown);
        if (!(thrown instanceof ApiError)) log.error({ err: thrown, requestId }, 'job item page failed');
        record(error.status, error.code, 0, false);
        if (this.#stopping) {
          // Cut short by the shutdown: not the item's fault, and not an attempt.
          await this.#stores.jobs.requeue(item, this.owner, now(), null, true);
          return;
        }
        if (thrown instanceof StoreUnavailableError) {
          // Redis or the database away (restarting, reconnecting): not the item's fault either, and
          // not an attempt however long it lasts; the item waits and runs again once they are back.
          this.#metrics.jobItems.inc({ outcome: 'retried' });
          await this.#stores.jobs.requeue(item, this.owner, now() + this.#settings.backoffMs, null, true).catch(() => false);
          return;
        }
        const transient = (error.status === 502 && error.code !== 'UPSTREAM_UNRECOGNISED') || error.status === 503;
        const failure = { code: error.code, message: error.message };
        if (transient && item.attempts < MAX_ATTEMPTS) {
          this.#metrics.jobItems.inc({ outcome: 'retried' });
          await this.#stores.jobs.requeue(item, this.owner, now() + this.#settings.backoffMs * 2 ** (item.attempts - 1), failure);
          return;
        }
        return this.#end(item, failure);
      }
      // Where the listing goes on; null: this page is the item's last, stored with its end.
      const next = stored + 1 >= item.maxPages ? null : this.#scraper.nextPosition(runtime, page.data, parsed.params, item.test);
      const saved =
        next === null
          ? await this.#stores.jobs.saveLastPage(item, this.owner, page.data, page.reservationId, now())
          : { ...(await this.#stores.jobs.savePage(item, this.owner, page.data, page.reservationId, now())), ended: null };
      if (!saved.saved) {
        // The claim lapsed and another node runs the item: this page is not kept, nor charged.
        if (page.reservationId) await this.#scraper.refundJobPage(page.reservationId);
        record(200, null, 0, page.cached);
        log.warn('job item claim lapsed while it ran; left to the node that took it up');
        return;
      }
      if (saved.charged) this.#metrics.creditsCharged.inc({ endpoint: runtime.endpoint.id });
      record(200, null, saved.charged ? 1 : 0, page.cached);
      if (next === null) return this.#ended(saved.ended, null);
      stored += 1;
      position = next;
    }
  }
}
