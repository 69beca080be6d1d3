// The worker that delivers webhooks, one per node, started with the service. Each round (every
// WEBHOOK_POLL_MS) it turns new rows of `events` into deliveries (stored before any attempt, so
// they survive restarts), claims the due ones (each attempt by one node: the claim is one
// conditional statement, locked until the attempt's time has passed with a margin), sends them,
// and records each attempt and what follows: delivered, retried on the schedule, or failed. It
// runs beside the requests, never in their way: a round is a few short statements, and the
// attempts wait on the network, not on the event loop.
import { randomBytes } from 'node:crypto';
import type { Metrics } from '../server/metrics.ts';
import type { AttemptOutcome, ClaimedDelivery, Stores } from '../store/types.ts';
import type { GuardSettings, Resolver } from './guard.ts';
import { Sender } from './send.ts';
import { signedHeaders, signingSecrets } from './sign.ts';

export interface DispatcherSettings {
  guard: GuardSettings;
  resolver?: Resolver;
  /** Waits before each retry, ms; past the last, the delivery has failed. */
  retryScheduleMs: readonly number[];
  disableAfterMs: number;
  timeoutMs: number;
  pollMs: number;
  /** Attempts at once on this node. */
  maxInFlight?: number;
  /** Attempts at once per endpoint (counting every node's). */
  perEndpoint?: number;
  /** Events turned into deliveries per round. */
  fanOutBatch?: number;
}

export interface DispatcherOptions extends DispatcherSettings {
  stores: Stores;
  metrics?: Metrics;
  /** Where faults of a round are told (the store unreachable…); the next round tries again. */
  onError?: (error: unknown) => void;
  /** This node's name in the locks; random by default. */
  nodeId?: string;
  now?: () => number;
}

/** The margin past an attempt's timeout before its lock lets another node try. */
const LOCK_MARGIN_MS = 5_000;

/** What an attempt that did not deliver leads to, after `attempts` attempts in all. */
export function nextAfterFailure(attempts: number, schedule: readonly number[], now: number): AttemptOutcome {
  const wait = schedule[attempts - 1];
  return wait === undefined ? { state: 'failed', nextAttemptAt: null } : { state: 'pending', nextAttemptAt: now + wait };
}

export class WebhookDispatcher {
  readonly #o: DispatcherOptions;
  readonly #sender: Sender;
  readonly #node: string;
  readonly #now: () => number;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #stopping = new AbortController();
  #timer: NodeJS.Timeout | null = null;
  #round: Promise<void> | null = null;
  #again = false;

  constructor(options: DispatcherOptions) {
    this.#o = options;
    this.#node = options.nodeId ?? `node_${randomBytes(6).toString('hex')}`;
    this.#now = options.now ?? Date.now;
    this.#sender = new Sender({ guard: options.guard, resolver: options.resolver, timeoutMs: options.timeoutMs, connectionsPerOrigin: options.perEndpoint ?? 2 });
  }

  get nodeId(): string {
    return this.#node;
  }

  start(): void {
    this.#schedule(0);
  }

  /** Runs a round soon (a delivery was just made due on this node). */
  nudge(): void {
    if (this.#stopping.signal.aborted) return;
    if (this.#round) this.#again = true;
    else this.#schedule(0);
  }

  /** Stops polling; attempts in flight are cut short and freed for the next node or start. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#round;
    await Promise.allSettled([...this.#inFlight]);
    await this.#sender.close();
  }

  #schedule(ms: number): void {
    if (this.#stopping.signal.aborted) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#round = this.#runRound().finally(() => {
        this.#round = null;
        const again = this.#again;
        this.#again = false;
        this.#schedule(again ? 0 : this.#o.pollMs);
      });
    }, ms);
    this.#timer.unref();
  }

  async #runRound(): Promise<void> {
    const { stores } = this.#o;
    try {
      const batch = this.#o.fanOutBatch ?? 100;
      // A backlog of events is worked off a batch per round, between claims.
      await stores.webhooks.fanOut(batch, this.#now());
      const room = (this.#o.maxInFlight ?? 32) - this.#inFlight.size;
      if (room <= 0 || this.#stopping.signal.aborted) return;
      const now = this.#now();
      const claimed = await stores.webhooks.claim(this.#node, now, now + this.#o.timeoutMs + LOCK_MARGIN_MS, room, this.#o.perEndpoint ?? 2);
      for (const delivery of claimed) {
        const attempt = this.#attempt(delivery).catch((error: unknown) => this.#o.onError?.(error));
        this.#inFlight.add(attempt);
        void attempt.finally(() => {
          this.#inFlight.delete(attempt);
          // Room again: the next due delivery need not wait for the next poll.
          this.nudge();
        });
      }
    } catch (error) {
      this.#o.onError?.(error);
    }
  }

  async #attempt(delivery: ClaimedDelivery): Promise<void> {
    const { stores, metrics } = this.#o;
    const startedAt = this.#now();
    const headers = signedHeaders(delivery.id, delivery.payload, signingSecrets(delivery.endpoint, startedAt), startedAt);
    const result = await this.#sender.send(delivery.endpoint.url, headers, delivery.payload, this.#stopping.signal);
    if (this.#stopping.signal.aborted && !result.delivered && result.status === null) {
      // Cut short by the shutdown: not an attempt of the receiver's; due again at once.
      await stores.webhooks.release(delivery.id, this.#node);
      return;
    }
    metrics?.webhookAttemptDuration.observe(result.durationMs / 1_000);
    const now = this.#now();
    const outcome: AttemptOutcome = result.delivered ? { state: 'delivered', nextAttemptAt: null } : nextAfterFailure(delivery.attempts + 1, this.#o.retryScheduleMs, now);
    const settled = await stores.webhooks.settle(
      delivery.id,
      this.#node,
      { at: new Date(startedAt).toISOString(), status: result.status, durationMs: result.durationMs, response: result.response, error: result.error },
      outcome,
      now,
      this.#o.disableAfterMs,
    );
    if (settled.recorded) metrics?.webhookDeliveries.inc({ outcome: outcome.state === 'pending' ? 'retry' : outcome.state });
  }
}
