// Prometheus metrics, one registry per app so that several apps (tests) never share counters.
import type { EgressState } from '../upstream/pacing.ts';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { EndpointLatency } from './latency.ts';

/**
 * How often the event loop's delay is sampled (nodejs_eventloop_lag_*): prom-client's 10 ms
 * woke an idle service 100 times a second, about 1% of a core at rest (190–210 ms of CPU in 20 s
 * of `npm run serve`, against 70–80 ms with 50 ms). A stall of 50 ms or more is still always seen:
 * it overlaps a sample.
 */
const EVENT_LOOP_SAMPLE_MS = 50;

export class Metrics {
  readonly registry = new Registry();

  /** API requests counted since the last scrape, by endpoint and status: added to `requests` when scraped. */
  readonly #requestCounts = new Map<string, Map<number, number>>();

  readonly requests = new Counter({
    name: 'api_requests_total',
    help: 'API requests by endpoint and HTTP status',
    labelNames: ['endpoint', 'status'] as const,
    registers: [this.registry],
    collect: () => {
      for (const [endpoint, byStatus] of this.#requestCounts) {
        for (const [status, count] of byStatus) this.requests.inc({ endpoint, status: String(status) }, count);
      }
      this.#requestCounts.clear();
    },
  });

  readonly latency = new EndpointLatency({
    name: 'api_request_duration_seconds',
    help: 'API request latency by endpoint',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20],
    registry: this.registry,
  });

  readonly cacheLookups = new Counter({
    name: 'api_cache_lookups_total',
    help: 'Cache lookups of requests carrying cache_max_age, by result (hit, miss)',
    labelNames: ['endpoint', 'result'] as const,
    registers: [this.registry],
  });

  readonly monitorRuns = new Counter({
    name: 'api_monitor_runs_total',
    help: "Monitors' runs by outcome (succeeded, failed, skipped)",
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly monitorChanges = new Counter({
    name: 'api_monitor_changes_total',
    help: "Monitors' runs that found a change (a monitor.changed recorded)",
    registers: [this.registry],
  });

  readonly monitorLag = new Histogram({
    name: 'api_monitor_run_lag_seconds',
    help: "Time from a monitor run's slot to its start",
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });

  readonly creditsCharged = new Counter({
    name: 'api_credits_charged_total',
    help: 'Credits kept after a successful live scrape',
    labelNames: ['endpoint'] as const,
    registers: [this.registry],
  });

  readonly creditsRefunded = new Counter({
    name: 'api_credits_refunded_total',
    help: 'Credits given back: failed scrapes, disconnects and abandoned reservations',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly upstreamOutcomes = new Counter({
    name: 'api_upstream_outcomes_total',
    help: 'Live scrape outcomes by platform (ok, not_found, gated, blocked, transient, rejected_cursor, unrecognised, error)',
    labelNames: ['platform', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly singleFlightShared = new Counter({
    name: 'api_single_flight_shared_total',
    help: 'Live scrapes that joined an identical scrape already in flight',
    labelNames: ['endpoint'] as const,
    registers: [this.registry],
  });

  readonly unrecognisedPages = new Counter({
    name: 'api_unrecognised_pages_total',
    help: 'Live scrapes that ended UPSTREAM_UNRECOGNISED (the page kept as a drift sample), by platform and endpoint',
    labelNames: ['platform', 'endpoint'] as const,
    registers: [this.registry],
  });

  readonly breakerRejections = new Counter({
    name: 'api_breaker_rejections_total',
    help: 'Requests answered at once because their platform\'s circuit breaker was open',
    labelNames: ['platform'] as const,
    registers: [this.registry],
  });

  readonly staleServed = new Counter({
    name: 'api_stale_served_total',
    help: 'Cached results served because the live scrape failed (stale_if_error)',
    labelNames: ['endpoint'] as const,
    registers: [this.registry],
  });

  readonly idempotentRequests = new Counter({
    name: 'api_idempotent_requests_total',
    help: 'Requests with an Idempotency-Key, by what their key held: claimed (run), kept (replayed), running (409), reused (422)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  /** Each platform's breaker: 0 closed without failures (ok), 1 closed with failures (degraded), 2 open (down). */
  watchBreakers(platforms: readonly string[], state: (platform: string) => 'ok' | 'degraded' | 'down'): void {
    const value = { ok: 0, degraded: 1, down: 2 } as const;
    new Gauge({
      name: 'api_platform_breaker_state',
      help: 'Circuit breaker of each platform: 0 ok (closed), 1 degraded (closed, failures in the window), 2 down (open)',
      labelNames: ['platform'] as const,
      registers: [this.registry],
      collect() {
        for (const platform of platforms) this.set({ platform }, value[state(platform)]);
      },
    });
  }

  /** Each proxy of each platform: 1 while benched (blocked or unreachable), 0 in use. Proxies by label, without credentials. */
  watchProxies(states: () => Record<string, Record<string, number>>): void {
    new Gauge({
      name: 'api_upstream_proxy_benched',
      help: 'Each proxy of each platform: 1 while benched after a block or a connection failure, 0 in use',
      labelNames: ['platform', 'proxy'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [platform, proxies] of Object.entries(states())) {
          for (const [proxy, until] of Object.entries(proxies)) this.set({ platform, proxy }, until > 0 ? 1 : 0);
        }
      },
    });
  }

  /** Each egress's pace on this node (upstream/pacing.ts): queue depth, slots in use, waits. */
  watchPace(states: () => EgressState[]): void {
    const labelNames = ['platform', 'egress'] as const;
    const registers = [this.registry];
    new Gauge({
      name: 'api_upstream_pace_waiting',
      help: 'Requests of this node waiting for a turn to ask a platform, per egress they may take (a proxy, or direct)',
      labelNames,
      registers,
      collect() {
        this.reset();
        for (const state of states()) this.set({ platform: state.platform, egress: state.egress }, state.waiting);
      },
    });
    new Gauge({
      name: 'api_upstream_pace_active',
      help: "Requests of this node asking a platform now, per egress",
      labelNames,
      registers,
      collect() {
        this.reset();
        for (const state of states()) this.set({ platform: state.platform, egress: state.egress }, state.active);
      },
    });
    new Counter({
      name: 'api_upstream_pace_waits_total',
      help: 'Requests that waited for their turn, per platform and egress',
      labelNames,
      registers,
      collect() {
        this.reset();
        for (const state of states()) this.inc({ platform: state.platform, egress: state.egress }, state.waits);
      },
    });
    new Counter({
      name: 'api_upstream_pace_wait_seconds_total',
      help: 'Seconds requests waited for their turn, per platform and egress',
      labelNames,
      registers,
      collect() {
        this.reset();
        for (const state of states()) this.inc({ platform: state.platform, egress: state.egress }, state.waitedSeconds);
      },
    });
  }

  readonly requestRecordsDropped = new Counter({
    name: 'api_request_records_dropped_total',
    help: 'Request records dropped because the store could not take them before the buffer filled',
    registers: [this.registry],
  });

  readonly webhookDeliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: delivered (2xx), retry (failed, tried again later), failed (failed for good)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly webhookAttemptDuration = new Histogram({
    name: 'webhook_attempt_duration_seconds',
    help: 'Time of one webhook delivery attempt, from the lookup to the end of the answer read',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  /** Webhook deliveries waiting (pending, and events not yet turned into deliveries), read from the store at each scrape. */
  watchWebhookQueue(depth: () => Promise<number>): void {
    new Gauge({
      name: 'webhook_queue_depth',
      help: 'Webhook deliveries pending (due or waiting for a retry), and events not yet turned into deliveries',
      registers: [this.registry],
      async collect() {
        try {
          this.set(await depth());
        } catch {
          // The store is unreachable: the last value stands, and /readyz says why.
        }
      },
    });
  }

  readonly jobItems = new Counter({
    name: 'api_job_items_total',
    help: 'Batch job items by outcome: succeeded, failed (ended so), retried (a transient failure, queued again)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly jobItemLatency = new Histogram({
    name: 'api_job_item_duration_seconds',
    help: 'Time one run of a batch job item took (every page it fetched)',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });

  readonly jobDuration = new Histogram({
    name: 'api_job_duration_seconds',
    help: 'Time from the creation of a batch job to its end',
    buckets: [1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 24 * 3600],
    registers: [this.registry],
  });

  /** The items waiting and running in the batch job queue (every node's), read from the store when scraped. */
  watchJobQueue(depth: () => Promise<{ pending: number; running: number }>): void {
    new Gauge({
      name: 'api_job_queue_depth',
      help: 'Batch job items waiting (pending) and running, every node\'s',
      labelNames: ['state'] as const,
      registers: [this.registry],
      async collect() {
        try {
          const { pending, running } = await depth();
          this.set({ state: 'pending' }, pending);
          this.set({ state: 'running' }, running);
        } catch {
          // The store is down: the gauge keeps its last values (the backend metrics tell).
        }
      },
    });
  }

  /** Reports the stores' round trips to their backends (PostgreSQL, Redis) with every scrape. */
  watchBackends(roundTrips: () => Record<string, number>): void {
    new Counter({
      name: 'store_backend_round_trips_total',
      help: 'Round trips (statements, commands) made to each networked store backend',
      labelNames: ['backend'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [backend, count] of Object.entries(roundTrips())) this.inc({ backend }, count);
      },
    });
  }

  constructor() {
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  }

  /**
   * Counts one API request and its latency. On the request path: the count waits in a map until
   * the next scrape, the latency goes to plain arrays (latency.ts); through prom-client's label
   * children this took 3.45 µs a request, 0.04 µs so (a loop of 500,000 on Node 24).
   */
  countRequest(endpoint: string, status: number, seconds: number): void {
    let byStatus = this.#requestCounts.get(endpoint);
    if (!byStatus) this.#requestCounts.set(endpoint, (byStatus = new Map()));
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    this.latency.observe(endpoint, seconds);
  }
}
