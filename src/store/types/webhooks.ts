// Webhooks: a team's endpoints, and the deliveries of its events to them with every attempt.

/** A team's webhook endpoint (`wh_…`), with what signs its deliveries. */
export interface WebhookEndpoint {
  id: string;
  teamId: string;
  url: string;
  /** Event types it is sent, or `['*']` for every type. */
  events: string[];
  description: string | null;
  enabled: boolean;
  /** Why it was disabled (it failed every delivery for days); null while enabled. */
  disabledReason: string | null;
  disabledAt: string | null;
  createdAt: string;
  /** The signing secret (`whsec_…`), kept as it is: it must sign. */
  secret: string;
  /** The secret before the last rotation, which signs beside `secret` until `previousSecretUntil` (epoch ms). */
  previousSecret: string | null;
  previousSecretUntil: number | null;
  /** Epoch ms of the first failed attempt since its last delivered one; null when the last attempt was delivered. */
  failingSince: number | null;
}

export type DeliveryState = 'pending' | 'delivered' | 'failed';

/** One attempt of a delivery, as it went. */
export interface WebhookAttempt {
  at: string;
  /** The receiver's HTTP status; null when no answer came (timeout, refused address, connection error). */
  status: number | null;
  durationMs: number;
  /** The first 1 KB of the answer's body. */
  response: string;
  error: string | null;
}

/** One event to one endpoint: its id (`msg_…`) is the `webhook-id` of every attempt. */
export interface WebhookDelivery {
  id: string;
  endpointId: string;
  teamId: string;
  eventId: string;
  eventType: string;
  /** The body sent, `{ type, timestamp, data }` serialised. */
  payload: string;
  state: DeliveryState;
  attempts: number;
  /** Epoch ms of the next attempt; null once delivered or failed. */
  nextAttemptAt: number | null;
  createdAt: string;
}

export interface ClaimedDelivery extends WebhookDelivery {
  endpoint: WebhookEndpoint;
}

/** What an attempt leads to: `delivered`, `failed` for good, or `pending` until `nextAttemptAt`. */
export interface AttemptOutcome {
  state: DeliveryState;
  nextAttemptAt: number | null;
}

/**
 * Webhook endpoints and their deliveries. Every row of `events` becomes one delivery per
 * matching enabled endpoint of its team that existed when it happened (`fanOut`; a
 * `webhook.test` event goes to the one endpoint its `data.webhookId` names). Each attempt is
 * claimed by one caller (one conditional statement, so one node of a cluster) and locked until a
 * deadline: a caller that dies leaves a lock that expires, and the delivery is claimed again.
 */
export interface WebhookStore {
  /** Null when the team already has `max` endpoints. */
  createEndpoint(endpoint: { teamId: string; url: string; events: string[]; description: string | null; secret: string }, max: number): Promise<WebhookEndpoint | null>;
  getEndpoint(teamId: string, id: string): Promise<WebhookEndpoint | null>;
  /** Oldest first. */
  listEndpoints(teamId: string): Promise<WebhookEndpoint[]>;
  /** Deletes it with its deliveries; false when the team has none of this id. */
  deleteEndpoint(teamId: string, id: string): Promise<boolean>;
  /** Replaces the secret; the one it replaces signs beside it until `previousUntil` (epoch ms). */
  rotateSecret(teamId: string, id: string, secret: string, previousUntil: number): Promise<WebhookEndpoint | null>;
  /** Turns up to `limit` events not yet fanned out into deliveries due at `now`; returns how many events. */
  fanOut(limit: number, now: number): Promise<number>;
  /**
   * Claims up to `limit` pending deliveries due at `now` and not locked, for `owner` until
   * `lockedUntil`; at most `perEndpoint` locked at once per endpoint (counting those locked by
   * anyone), so that a receiver is sent few attempts at once.
   */
  claim(owner: string, now: number, lockedUntil: number, limit: number, perEndpoint: number): Promise<ClaimedDelivery[]>;
  /**
   * Records an attempt of a delivery `owner` holds and its outcome, and frees it. A failed
   * attempt of an endpoint failing since `disableAfterMs` ago or more disables it (and fails its
   * pending deliveries); a delivered one clears its failing time and enables it again. False
   * (nothing recorded) when the delivery is no longer `owner`'s.
   */
  settle(id: string, owner: string, attempt: WebhookAttempt, outcome: AttemptOutcome, now: number, disableAfterMs: number): Promise<{ recorded: boolean; disabled: boolean }>;
  /** Frees a delivery `owner` holds without recording an attempt (an attempt cut short by a shutdown): due again at once. */
  release(id: string, owner: string): Promise<void>;
  /**
   * An endpoint's deliveries, newest first, `limit` at most, older than the one at `before` (a
   * position from `next`); each with its last `MAX_LISTED_ATTEMPTS` attempts, newest first.
   */
  listDeliveries(teamId: string, endpointId: string, limit: number, before?: number): Promise<{ deliveries: (WebhookDelivery & { attemptLog: WebhookAttempt[] })[]; next: number | null }>;
  /** Makes a delivery of the team due again at `now` (whatever its state); null when the team has none of this id. */
  redeliver(teamId: string, id: string, now: number): Promise<WebhookDelivery | null>;
  /** Pending deliveries, and events not yet fanned out. */
  queueDepth(): Promise<number>;
  /** Deletes the delivered and failed deliveries made before `before` (epoch ms), with their attempts; returns how many. */
  prune(before: number): Promise<number>;
}

/** Attempts listed per delivery. */
export const MAX_LISTED_ATTEMPTS = 20;
