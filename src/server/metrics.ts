// Prometheus metrics, one registry per app so that several apps (tests) never share counters.
import type { EgressState } from '../upstream/pacing.ts';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class Metrics {
  readonly registry = new Registry();

  readonly requests = new Counter({
    name: 'api_requests_total',
    help: 'API requests by endpoint and HTTP status',
    labelNames: ['endpoint', 'status'] as const,
    registers: [this.registry],
  });

  readonly latency = new Histogram({
    name: 'api_request_duration_seconds',
    help: 'API request latency by endpoint',
    labelNames: ['endpoint'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20],
    registers: [this.registry],
  });

  readonly cacheLookups = new Counter({
    name: 'api_cache_lookups_total',
    help: 'Cache lookups of requests carrying cache_max_age, by result (hit, miss)',
    labelNames: ['endpoint', 'result'] as const,
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
    collectDefaultMetrics({ register: this.registry });
  }

  // Label children are looked up once per (endpoint, status): counting a request is on the hot path.
  readonly #requestCounters = new Map<string, { inc: () => void }>();
  readonly #latencyObservers = new Map<string, { observe: (value: number) => void }>();

  /** Counts one API request and its latency. */
  countRequest(endpoint: string, status: number, seconds: number): void {
    const key = `${endpoint} ${status}`;
    let counter = this.#requestCounters.get(key);
    if (!counter) this.#requestCounters.set(key, (counter = this.requests.labels(endpoint, String(status))));
    counter.inc();
    let observer = this.#latencyObservers.get(endpoint);
    if (!observer) this.#latencyObservers.set(endpoint, (observer = this.latency.labels(endpoint)));
    observer.observe(seconds);
  }
}
