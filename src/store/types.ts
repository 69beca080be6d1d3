// Storage interfaces. The embedded default (SQLite, in-process) and the scale-out
// implementations (PostgreSQL, Redis) implement these and pass the same behaviour suite.
// Nothing here may assume a particular engine.

import type { PaceLimits, Pacer } from '../upstream/pacing.ts';

export interface Team {
  id: string;
  name: string;
  /** Current balance in credits (reservations in flight already deducted). */
  credits: number;
  /** Requests admitted per rolling 60 seconds. */
  rateLimit: number;
  createdAt: string;
  /**
   * The balance under which the team is warned: crossing below it records `credits.low` once,
   * reaching 0 records `credits.exhausted` once, and a top-up to it or above re-arms both (see
   * EventLog); null: no warning of `credits.low` (`credits.exhausted` is recorded all the same).
   */
  lowBalanceAlert: number | null;
}

export interface ApiKeyRecord {
  id: string;
  teamId: string;
  name: string;
  /** Recognisable start of the key, shown in listings. */
  prefix: string;
  /** Last four characters of the key, shown in listings. */
  last4: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  /** The user who created it in the dashboard; null when the operator CLI did. */
  createdBy: string | null;
  /** Credits the key may spend on live scrapes per UTC day; null: no limit of its own. */
  dailyCreditLimit: number | null;
  /**
   * The last UTC day (`YYYY-MM-DD`) the key spent credits on and how many that day (reservations
   * in flight included, refunds taken off); null before its first. See `spentOn`.
   */
  spent: { day: string; credits: number } | null;
}

/** The credits `key` spent on the UTC day `day` (`YYYY-MM-DD`), as far as its record knows. */
export const spentOn = (key: Pick<ApiKeyRecord, 'spent'>, day: string): number => (key.spent?.day === day ? key.spent.credits : 0);

/** The UTC day (`YYYY-MM-DD`) of epoch ms `at`. */
export const utcDay = (at: number): string => new Date(at).toISOString().slice(0, 10);

export interface NewTeam {
  name: string;
  credits: number;
  rateLimit: number;
}

export interface AccountStore {
  createTeam(team: NewTeam): Promise<Team>;
  getTeam(id: string): Promise<Team | null>;
  listTeams(): Promise<Team[]>;
  /** `lowBalanceAlert`: a number of credits, or null for none; RangeError outside 0 to MAX_LOW_BALANCE_ALERT. */
  updateTeam(id: string, changes: { rateLimit?: number; name?: string; lowBalanceAlert?: number | null }): Promise<Team | null>;
  /** Stores a key by its hash only. RangeError for a daily credit limit that is not a whole number from 0 to MAX_DAILY_CREDITS. */
  createKey(key: { teamId: string; name: string; hash: string; prefix: string; last4: string; createdBy?: string | null; dailyCreditLimit?: number | null }): Promise<ApiKeyRecord>;
  /** The key with this id, active or revoked; null when none. */
  getKey(id: string): Promise<ApiKeyRecord | null>;
  /** Sets a key's daily credit limit (null: none); the key, or null when unknown. RangeError as for createKey. */
  updateKey(id: string, changes: { dailyCreditLimit: number | null }): Promise<ApiKeyRecord | null>;
  /** The stored hash of an active key, to admit a request made for it by the dashboard; null when none. */
  activeKeyHash(id: string): Promise<string | null>;
  /** The active (not revoked) key with this hash, with its team; null when none. */
  findActiveKey(hash: string): Promise<{ key: ApiKeyRecord; hash: string; team: Team } | null>;
  listKeys(teamId: string): Promise<ApiKeyRecord[]>;
  /** True when the key existed and was active. */
  revokeKey(id: string): Promise<boolean>;
  /** Records last use of several keys at once (called in batches, never per request). */
  recordKeyUse(lastUsed: ReadonlyMap<string, string>): Promise<void>;
}

export interface LedgerEntry {
  id: number;
  teamId: string;
  /** Positive for top-ups and refunds, negative for charges. */
  amount: number;
  reason: 'topup' | 'charge' | 'refund';
  requestId: string | null;
  createdAt: string;
}

export type ReserveResult =
  | { ok: true; reservationId: string; balance: number }
  /** `balance`: the team's balance is short; `key-limit`: the key's daily credit limit would be passed (`limit`, `spent` that day). */
  | { ok: false; reason: 'balance'; balance: number }
  | { ok: false; reason: 'key-limit'; balance: number; limit: number; spent: number };

/** The key a reservation is made for and the UTC day it counts on (its daily credit limit's). */
export interface ReservingKey {
  id: string;
  /** `YYYY-MM-DD`. */
  day: string;
}

/** The team's balance right after a commit or refund. */
export interface Settlement {
  balance: number;
}

export interface Usage {
  teamId: string;
  charged: number;
  refunded: number;
  toppedUp: number;
  balance: number;
  pending: number;
}

export interface Ledger {
  /** Adds a positive amount; returns the new balance. Throws when the team does not exist. */
  addCredits(teamId: string, amount: number, requestId?: string | null): Promise<number>;
  /**
   * Atomically takes `amount` from the balance for a live scrape, recording a durable
   * reservation that expires at `deadline` (epoch ms). Never lets the balance go below zero.
   * With `key`, the amount also counts against the key's spending on `key.day`, in the same
   * atomic step: refused (`key-limit`, nothing taken) when it would pass the key's daily credit
   * limit. A refund of the reservation gives it back to that day's spending.
   */
  reserve(teamId: string, amount: number, requestId: string, deadline: number, key?: ReservingKey): Promise<ReserveResult>;
  /**
   * Keeps a pending reservation's charge. `charged` says whether the charge stands: true when
   * this call committed it (or an earlier commit did), false when the reservation had already
   * been refunded (e.g. by `refundExpired` racing a slow request), in which case nothing is
   * charged and the caller must not report a charge. Throws for an unknown reservation.
   */
  commit(reservationId: string): Promise<Settlement & { charged: boolean }>;
  /**
   * Gives a pending reservation back exactly once. `refunded` is true only for the call that
   * gave it back: false when it was already refunded or committed (a committed charge stays).
   * Throws for an unknown reservation.
   */
  refund(reservationId: string): Promise<Settlement & { refunded: boolean }>;
  /** Refunds every pending reservation whose deadline is before `now`; returns how many. */
  refundExpired(now: number): Promise<number>;
  balance(teamId: string): Promise<number | null>;
  /** Newest first; only entries older than the entry `beforeId` when given (the next page). */
  entries(teamId: string, limit?: number, beforeId?: number): Promise<LedgerEntry[]>;
  usage(teamId: string): Promise<Usage | null>;
}

export interface CacheEntry {
  /** Serialised `data` object. */
  value: string;
  /** Epoch ms of the live scrape that produced it. */
  storedAt: number;
}

/**
 * An entry as the cache hands it out: the serialised `data` as UTF-8 bytes, ready to be sent.
 * A store that keeps entries in memory encodes each once; sending bytes rather than encoding a
 * string per hit is most of what a cache hit costs (`npm run bench`: 0.71x the bare route with
 * bytes held in memory, 0.56x when each hit encodes the string).
 */
export interface CachedEntry {
  bytes: Buffer;
  /** Epoch ms of the live scrape that produced it. */
  storedAt: number;
}

export interface CacheStore {
  get(key: string): Promise<CachedEntry | null>;
  /** `target` groups every entry of one scraped target so that they can be dropped together. */
  set(key: string, target: string, entry: CacheEntry): Promise<void>;
  deleteTarget(target: string): Promise<void>;
  /** Drops entries older than `maxAgeMs` and evicts least recently used ones beyond the size bound. */
  prune(now: number): Promise<void>;
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the window admits one more request; 0 when requests remain. */
  resetSeconds: number;
}

export interface RateLimiter {
  /** Counts one request against `key` if it is admitted under `limit` per `windowMs` (rolling). */
  hit(key: string, limit: number, windowMs: number, now?: number): Promise<RateDecision>;
  /** What a hit on `key` under `limit` would get now, without counting anything. */
  peek(key: string, limit: number, windowMs: number, now?: number): Promise<RateDecision>;
}

/** `owner` manages the team's keys and users; `member` uses its own keys; `operator` sees every team and adds credits. */
export type Role = 'owner' | 'member' | 'operator';

/** An account holder: a user of a team's dashboard. */
export interface User {
  id: string;
  teamId: string;
  /** Lower case; unique within its team (another team may have an account of its own under it). */
  email: string;
  role: Role;
  createdAt: string;
  disabledAt: string | null;
  /** False until the user has set a password from a link. */
  hasPassword: boolean;
}

/** A signed-in user's session, stored by the hash of the token its cookie carries. */
export interface Session {
  userId: string;
  /** The session's CSRF token, given to its pages and required with every change. */
  csrf: string;
  createdAt: string;
  /** Epoch ms. */
  expiresAt: number;
}

export interface UserStore {
  /** Throws RangeError for an email already in the team, or an unknown team. */
  createUser(user: { teamId: string; email: string; role: Role }): Promise<User>;
  getUser(id: string): Promise<User | null>;
  /** The users with this email (any case), one per team at most, oldest first, with their password hashes (null until set). */
  findUsersByEmail(email: string): Promise<{ user: User; passwordHash: string | null }[]>;
  /** Every user, or a team's; oldest first. */
  listUsers(teamId?: string): Promise<User[]>;
  /** Disables the user and ends its sessions; false when unknown or already disabled. */
  disableUser(id: string): Promise<boolean>;
  /** Stores a one-time link's hash: it sets the user's password once, until `expiresAt` (epoch ms). It replaces the user's unused link: a user has one outstanding link at most. */
  createPasswordLink(link: { hash: string; userId: string; expiresAt: number }): Promise<void>;
  /**
   * Uses a link: sets the password hash of its user (enabled, link unused and unexpired) and
   * ends that user's sessions, at once; the user, or null when the link cannot be used.
   */
  usePasswordLink(hash: string, passwordHash: string, now: number): Promise<User | null>;
  /** Whether a link could be used now (for the page that asks for the new password). */
  passwordLinkValid(hash: string, now: number): Promise<boolean>;
  createSession(hash: string, session: Session): Promise<void>;
  /** The session and its user, when the session is unexpired and the user enabled. */
  findSession(hash: string, now: number): Promise<{ session: Session; user: User } | null>;
  deleteSession(hash: string): Promise<void>;
  /** Ends every session of the user; returns how many. */
  deleteUserSessions(userId: string): Promise<number>;
  /** Deletes expired sessions and links; returns how many. */
  pruneSessions(now: number): Promise<number>;
}

/** A request let in: its caller, and its place under the team's rate limit. */
export interface Admission {
  key: ApiKeyRecord;
  hash: string;
  team: Team;
  decision: RateDecision;
}

/**
 * The door of every API request: the active key with this hash and its team (balance and rate
 * limit current), with the request counted against the team's rolling limit (limiter key
 * `team:<id>`, `team.rateLimit` per `windowMs`). Null, with nothing counted, when no active
 * key has this hash.
 */
export interface Gate {
  admit(hash: string, windowMs: number, now: number): Promise<Admission | null>;
}

/** One API request of a known caller, as it was answered. */
export interface RequestRecord {
  requestId: string;
  /** When the request arrived (ISO 8601, ms). */
  at: string;
  teamId: string;
  keyId: string;
  /** The endpoint's path, e.g. `/v1/shopfront/shop`. */
  endpoint: string;
  status: number;
  /** The error's code; null for a 200. */
  errorCode: string | null;
  credits: number;
  cached: boolean;
  durationMs: number;
  /** The batch job (`job_…`) whose item made the request; absent for a request of the API. */
  jobId?: string;
}

export interface RequestQuery {
  teamId: string;
  /** Epoch ms, inclusive. */
  since?: number;
  /** Epoch ms, exclusive. */
  until?: number;
  endpoint?: string;
  status?: number;
  /** At most this many records (default 50, at most 1,000). */
  limit?: number;
  /** `next` of the page before. */
  cursor?: string | null;
}

/** Newest first; `next` is null on the last page. */
export interface RequestPage {
  records: RequestRecord[];
  next: string | null;
}

export interface RequestTotals {
  /** Per UTC day (`YYYY-MM-DD`), oldest first. */
  days: { day: string; requests: number; credits: number; cached: number }[];
  /** Per endpoint, by path. */
  endpoints: { endpoint: string; requests: number; credits: number; cached: number }[];
}

/** The request records: written in batches off the request path, kept for a number of days. */
export interface RequestLog {
  append(records: readonly RequestRecord[]): Promise<void>;
  /** Throws RangeError for a malformed cursor or limit. */
  list(query: RequestQuery): Promise<RequestPage>;
  /** Totals of the team's records from `since` (inclusive) to `until` (exclusive; default: no bound), epoch ms. */
  totals(teamId: string, since: number, until?: number): Promise<RequestTotals>;
  /** Deletes the records older than `before` (epoch ms); returns how many. */
  prune(before: number): Promise<number>;
}

/** An upstream answer a platform's mapping did not recognise, kept for its operator (drift capture). */
export interface DriftSample {
  id: string;
  /** When it was captured (ISO 8601, ms). */
  at: string;
  platform: string;
  /** The endpoint's id, e.g. `shopfront.shop`. */
  endpoint: string;
  requestId: string;
  /** What the mapping found wrong. */
  reason: string;
  /** Path and query of the answer on the platform's origin. */
  path: string;
  status: number;
  /** The answer's headers without cookies. */
  headers: Record<string, string>;
  /** The decoded body, cut at the size cap when `truncated`. */
  body: string;
  truncated: boolean;
}

export type DriftSummary = Omit<DriftSample, 'headers' | 'body'>;

export interface DriftLog {
  /**
   * Keeps a sample; when `perHour` samples of the same platform and endpoint were kept in the
   * hour before it, the oldest of them goes.
   */
  add(sample: Omit<DriftSample, 'id'>, perHour: number): Promise<string>;
  /** Newest first, without headers and bodies. */
  list(query: { platform?: string; limit?: number }): Promise<DriftSummary[]>;
  get(id: string): Promise<DriftSample | null>;
  /** Deletes the samples captured before `before` (epoch ms); returns how many. */
  prune(before: number): Promise<number>;
}

/** Small values shared by every node, each with a time to live (the platforms' shared state). */
export interface KeyValue {
  get(key: string): Promise<string | null>;
  /** `value` null deletes the key. */
  set(key: string, value: string | null, ttlMs: number): Promise<void>;
}

/**
 * Single-flight across nodes. `join` runs `run` when no identical scrape (same `key`) is in
 * flight on any node, and otherwise waits for that scrape's outcome, as `run` would have
 * returned it. `run` resolves with the outcome, serialised, and does not reject.
 */
export interface Flights {
  join(key: string, deadline: number, run: () => Promise<string>): Promise<string>;
}

/** The kinds of event a team may be sent (webhooks). */
export const EVENT_TYPES = ['job.completed', 'monitor.changed', 'monitor.failed', 'credits.low', 'credits.exhausted', 'webhook.test'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * Something that happened to a team, recorded to be sent later (webhooks). A row of `events` is
 * an event to send: whatever raises one only records it, in the same transaction as the change
 * it reports when it can, and the webhooks deliver it from there.
 */
export interface AccountEvent {
  /** `evt_…`. */
  id: string;
  teamId: string;
  type: EventType;
  /** `credits.low`: `{ balance, threshold }`; `credits.exhausted`: `{ balance }` (0); others: their own. */
  data: Record<string, unknown>;
  createdAt: string;
}

/**
 * The events recorded for teams, in the order they happened. A balance crossing is recorded by
 * the very change of balance that makes it (in the same statement or transaction), so each is
 * recorded exactly once however many requests race: `credits.low` when a charge takes the
 * balance from `lowBalanceAlert` or above to below it, `credits.exhausted` when a charge takes
 * it to 0; each once, until a top-up takes the balance to `lowBalanceAlert` or above (above 0
 * when none is set), which re-arms both. Refunds neither record nor re-arm.
 */
export interface EventLog {
  /** A team's events, oldest first; at most `limit` (default 100). */
  list(teamId: string, limit?: number): Promise<AccountEvent[]>;
  /** Records an event for a team, now; returns it. */
  record(teamId: string, type: EventType, data: Record<string, unknown>): Promise<AccountEvent>;
}

/** Where an `Idempotency-Key` holds: one team, one key mode (live or test), the key itself. */
export interface IdempotencyScope {
  teamId: string;
  test: boolean;
  key: string;
}

/** A 2xx answer kept for an `Idempotency-Key`, replayed byte for byte. */
export interface KeptAnswer {
  status: number;
  /** Kept and given back as it is (the service keeps its answers compressed). */
  body: Buffer;
  /** The `location` header it carried; null when none. */
  location: string | null;
}

/**
 * What a claim of a key found: `claimed` (the caller runs the request), `kept` (an answer of
 * the same request is kept), `running` (the same request is still being answered) or `reused`
 * (the key belongs to a different request, kept or running).
 */
export type IdempotencyClaim = { outcome: 'claimed' } | { outcome: 'kept'; answer: KeptAnswer } | { outcome: 'running' } | { outcome: 'reused' };

/**
 * The records of `Idempotency-Key`s. A key is held by one request at a time: claimed while it
 * runs (until a lock deadline, after which a node that died is assumed gone and the key may be
 * claimed again), then either kept with its answer until an expiry or released. Exact under
 * races, across nodes.
 */
export interface IdempotencyStore {
  /**
   * Claims the key for a request with `fingerprint`, run by `owner` (its request id), locked
   * until `lockedUntil` (epoch ms); unless a record holds it at `now`: a kept answer before its
   * expiry, or a claim before its lock deadline.
   */
  claim(scope: IdempotencyScope, fingerprint: string, owner: string, lockedUntil: number, now: number): Promise<IdempotencyClaim>;
  /** Keeps the answer of the claim `owner` holds, until `expiresAt` (epoch ms); false when the claim is no longer its own. */
  keep(scope: IdempotencyScope, owner: string, answer: KeptAnswer, expiresAt: number): Promise<boolean>;
  /** Frees the key of the claim `owner` holds (its request ended without a 2xx); no-op when the claim is not its own. */
  release(scope: IdempotencyScope, owner: string): Promise<void>;
  /** Deletes the records that no longer hold their key at `now` (expired answers, claims past their deadline); returns how many. */
  prune(now: number): Promise<number>;
}

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

/** How a monitor runs: every `interval` seconds, or at the times of a cron expression in a time zone. */
export type MonitorSchedule = { interval: number; cron: null; timezone: string } | { interval: null; cron: string; timezone: string };

/** A monitor: a page scraped on a schedule, each run compared with the last good one (monitors). */
export interface MonitorRecord {
  /** `mon_…`. */
  id: string;
  teamId: string;
  /** Made with a test-mode key (its runs scrape the built-in sandbox, free). */
  test: boolean;
  /** The key that made it. */
  keyId: string;
  /** The endpoint's path, e.g. `/v1/snapmsg/profile`. */
  endpoint: string;
  /** The endpoint's own query parameters. */
  params: Record<string, string>;
  /** Seconds between runs; null with a cron expression. */
  interval: number | null;
  cron: string | null;
  /** IANA time zone of the cron expression (UTC by default). */
  timezone: string;
  /** JSON Pointers: only changes at or under one of them count; empty: every change counts. */
  watch: string[];
  label: string | null;
  status: 'active' | 'paused';
  /** Epoch ms, as every time of a monitor. */
  createdAt: number;
  lastRunAt: number | null;
  /** The slot of the next run. */
  nextRunAt: number;
  lastChangeAt: number | null;
  runs: number;
  consecutiveFailures: number;
  /** `monitor.failed` was recorded for the current streak of failures. */
  failureAlerted: boolean;
}

export interface NewMonitor {
  teamId: string;
  test: boolean;
  keyId: string;
  endpoint: string;
  params: Record<string, string>;
  schedule: MonitorSchedule;
  watch: string[];
  label: string | null;
  /** Epoch ms. */
  createdAt: number;
  nextRunAt: number;
}

export interface MonitorChanges {
  schedule?: MonitorSchedule;
  watch?: string[];
  label?: string | null;
  status?: 'active' | 'paused';
  nextRunAt?: number;
}

/** A monitor taken for one run: its lock is held by `owner` until `lockedUntil`. */
export interface ClaimedMonitor {
  monitor: MonitorRecord;
  /** The slot this run is for (epoch ms). */
  slot: number;
  owner: string;
  /** The last successful run's data as compared (serialised), null before the first. */
  lastData: string | null;
  /** When the last successful run was (its slot, epoch ms). */
  lastGoodAt: number | null;
}

export type MonitorRunStatus = 'succeeded' | 'failed' | 'skipped';

export interface MonitorRun {
  /** `run_…`. */
  id: string;
  monitorId: string;
  /** The slot (epoch ms). */
  at: number;
  startedAt: number;
  finishedAt: number;
  status: MonitorRunStatus;
  creditsCharged: number;
  changed: boolean;
  /** RFC 6902 operations (watched ones only); null unless the run succeeded after an earlier success. */
  patch: unknown[] | null;
  error: { code: string; message: string } | null;
  /** The request id of the run's scrape (request records, logs). */
  requestId: string;
}

/** How a finished run leaves its monitor. */
export interface MonitorOutcome {
  run: MonitorRun;
  /** The next slot (epoch ms). */
  nextRunAt: number;
  /**
   * The monitor's next slot when the run took it: `nextRunAt` is set only if it is still that
   * (a change of schedule or a resume made meanwhile keeps its own); absent: set regardless.
   */
  claimedNextRunAt?: number;
  /** A succeeded run's data as compared, to become the last good data. */
  data?: string;
  /**
   * The run's credit reservation, kept (committed) in the same transaction as the run is
   * recorded: a run is charged exactly when it is stored. A reservation already refunded (its
   * deadline passed) is not charged, and the run is recorded with 0 credits.
   */
  reservationId?: string | null;
  /** Recorded in the same transaction (`monitor.changed`). */
  event?: { type: EventType; data: Record<string, unknown> } | null;
  /** `monitor.failed`'s data, recorded in the same transaction when this failure is the streak's `failureThreshold`th or later and none was recorded for it yet. */
  failedEvent?: Record<string, unknown>;
  failureThreshold: number;
}

/**
 * Monitors and their runs. Scheduling is a claim in the store: `claimDue` takes one due monitor
 * in one conditional statement (its lock set to the caller until a deadline), so that on a
 * cluster exactly one node takes each run and a node that died lets the others take it once
 * the lock expires; `finish` records the run and sets the next slot, only for the lock's owner.
 */
export interface MonitorStore {
  /** Creates a monitor unless the team has `maxPerTeam` already (null then), checked in the same transaction. */
  create(monitor: NewMonitor, maxPerTeam: number): Promise<MonitorRecord | null>;
  get(teamId: string, id: string): Promise<MonitorRecord | null>;
  /** Newest first; after the monitor `after` (its id) when given. */
  list(teamId: string, limit: number, after?: string): Promise<MonitorRecord[]>;
  update(teamId: string, id: string, changes: MonitorChanges): Promise<MonitorRecord | null>;
  /** Deletes the monitor and its runs; false when unknown. */
  delete(teamId: string, id: string): Promise<boolean>;
  /** Takes the active monitor most overdue at `now` whose lock is free or expired; null when none is due. */
  claimDue(owner: string, now: number, lockedUntil: number): Promise<ClaimedMonitor | null>;
  /** Takes this monitor now (a run asked for), due or not: `running` when a run holds it, null when unknown. */
  claimNow(teamId: string, id: string, owner: string, now: number, lockedUntil: number): Promise<ClaimedMonitor | 'running' | null>;
  /** Moves the lock's deadline of a run in progress to `lockedUntil`; false when the lock is no longer `owner`'s. */
  renew(monitorId: string, owner: string, lockedUntil: number): Promise<boolean>;
  /**
   * Records the run and its effect on the monitor, keeps its credit, frees the lock, in one
   * transaction: the run as recorded, or null (nothing written) when the lock is no longer
   * `owner`'s, the monitor is gone, or its slot was recorded already.
   */
  finish(monitorId: string, owner: string, outcome: MonitorOutcome): Promise<MonitorRun | null>;
  /** Newest first (by slot); before the slot `before` when given. */
  runs(teamId: string, monitorId: string, limit: number, before?: number): Promise<MonitorRun[]>;
  /** Deletes the runs finished before `before` (epoch ms); returns how many. */
  pruneRuns(before: number): Promise<number>;
}

export interface Stores {
  accounts: AccountStore;
  users: UserStore;
  ledger: Ledger;
  cache: CacheStore;
  requests: RequestLog;
  drift: DriftLog;
  idempotency: IdempotencyStore;
  events: EventLog;
  webhooks: WebhookStore;
  monitors: MonitorStore;
  jobs: JobStore;
  limiter: RateLimiter;
  /**
   * Admits in fewer round trips than a key lookup followed by a limiter call (a cluster: keys a
   * node has seen, checked by the limiter's own Redis call); absent: `lookupGate`.
   */
  gate?: Gate;
  /** Shares identical scrapes across nodes; absent on a single node (they are shared in-process). */
  flights?: Flights;
  /**
   * The platforms' pace and concurrency caps held across nodes (Redis); absent on a single node
   * (each paces itself, upstream/pacing.ts).
   */
  pacer?(limits: (platform: string) => PaceLimits, queueMax: number): Pacer;
  /** The platforms' shared state across nodes; absent on a single node (kept in-process). */
  kv?: KeyValue;
  /** Cheap reachability check (a read). */
  ping(): Promise<void>;
  /**
   * Readiness check for `/readyz`: commits a small write that needs fresh storage (a full disk,
   * a read-only file or a held write lock make it fail as live scrapes would), and leaves no
   * data behind. Rejects with StoreUnavailableError when the store cannot write now.
   */
  probeWrite(): Promise<void>;
  /**
   * Each backend by name (`sqlite`; or `postgres` and `redis`) and whether it serves now:
   * reads and writes for a database, a command for Redis. Never rejects.
   */
  backends(): Promise<Record<string, BackendState>>;
  /** Round trips made to each networked backend so far (none for the embedded store). */
  roundTrips?(): Record<string, number>;
  close(): Promise<void>;
}

export type BackendState = 'up' | 'down';

/** Up when the database answers a read and commits a write. */
export async function databaseState(stores: Pick<Stores, 'ping' | 'probeWrite'>): Promise<BackendState> {
  try {
    await stores.ping();
    await stores.probeWrite();
    return 'up';
  } catch {
    return 'down';
  }
}

/** Thrown by a store whose backend cannot be reached; answered with 503. */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/**
 * Thrown when opening a store that must already hold the service's data (teams, keys, credits,
 * ledger) finds none: the file is missing or empty, or holds no schema. Starting over with an
 * empty database would lose that data silently, so it is only done on purpose.
 */
export class MissingDatabaseError extends Error {
  readonly location: string;
  readonly problem: 'missing' | 'empty' | 'no-schema';

  constructor(location: string, problem: 'missing' | 'empty' | 'no-schema') {
    const what = { missing: 'is missing', empty: 'is empty (0 bytes)', 'no-schema': "holds none of the service's tables" }[problem];
    super(`The database ${location} ${what}`);
    this.name = 'MissingDatabaseError';
    this.location = location;
    this.problem = problem;
  }
}

// ---- batch jobs ---------------------------------------------------------------------------

export type JobStatus = 'queued' | 'running' | 'completed' | 'cancelled';
/** `running`: claimed by a node now (the API shows it as `pending`). */
export type JobItemStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface Job {
  /** `job_…`. */
  id: string;
  teamId: string;
  /** The key that created it: its items are charged to it (daily credit limit) and run in its mode. */
  keyId: string;
  test: boolean;
  label: string | null;
  status: JobStatus;
  /** Epoch ms. */
  createdAt: number;
  startedAt: number | null;
  completedAt: number | null;
  total: number;
  /** Items not ended yet (waiting or running). */
  pending: number;
  succeeded: number;
  failed: number;
  cancelled: number;
  /** Pages stored, every item's. */
  pages: number;
  creditsCharged: number;
  /** `1d`…`30d`, or null: every page live unless the item says otherwise. */
  cacheMaxAge: string | null;
  maxPages: number;
}

export interface NewJobItem {
  /** The endpoint's path. */
  endpoint: string;
  /** The endpoint's query parameters, as given (strings). */
  params: Record<string, string>;
}

export interface NewJob {
  teamId: string;
  keyId: string;
  test: boolean;
  label: string | null;
  cacheMaxAge: string | null;
  maxPages: number;
  items: readonly NewJobItem[];
}

/** Where one item is: its job and its place in the job's requests. */
export interface ItemRef {
  jobId: string;
  index: number;
}

export interface JobItem extends ItemRef {
  endpoint: string;
  params: Record<string, string>;
  status: JobItemStatus;
  /** Each stored page's `data`, serialised, in order. */
  pages: string[];
  creditsCharged: number;
  error: { code: string; message: string } | null;
  attempts: number;
  /** Epoch ms; null until it ends. */
  finishedAt: number | null;
}

/** An item a node has claimed to run, with what it needs of its job. */
export interface ClaimedItem extends ItemRef {
  teamId: string;
  keyId: string;
  test: boolean;
  endpoint: string;
  params: Record<string, string>;
  /** Claims so far, this one included. */
  attempts: number;
  maxPages: number;
  /** The job's `cache_max_age` (an item's own, in `params`, wins). */
  cacheMaxAge: string | null;
  /** Pages stored by earlier runs (a run that died or failed part way), and the last of them, to go on from. */
  storedPages: number;
  lastPage: string | null;
}

export interface JobPage {
  jobs: Job[];
  /** Null on the last page. */
  next: string | null;
}

/**
 * Batch jobs and their items: a queue in the database that any node claims from. An item is
 * claimed by one node at a time until a lock deadline (renewed while it runs); one whose node
 * died is taken up by another once that deadline has passed (`rescue`; on PostgreSQL pg-boss's
 * heartbeat, store/postgres/queue.ts). Claims let each team run
 * at most `perTeam` items at once across all nodes, and let teams take turns (the team with the
 * fewest running, then the one served longest ago). A page of an item is stored in the same
 * transaction that commits its credit's reservation: stored and charged together, or neither.
 */
export interface JobStore {
  /** Creates a job with its items, unless the team already has `maxActive` queued or running jobs (null). */
  create(job: NewJob, maxActive: number, now: number): Promise<Job | null>;
  get(teamId: string, id: string): Promise<Job | null>;
  /** Newest first. RangeError for a malformed cursor. */
  list(teamId: string, limit: number, cursor?: string | null): Promise<JobPage>;
  /** Items not started never run: cancelled. Null for an unknown job. */
  cancel(teamId: string, id: string, now: number): Promise<Job | null>;
  /** Queues the failed items again; `running` while the job is queued or running. */
  retry(teamId: string, id: string, now: number): Promise<Job | 'running' | null>;
  claim(owner: string, lockUntil: number, now: number, perTeam: number): Promise<ClaimedItem | null>;
  /** Up to `max` claims at once (PostgreSQL: in one transaction, one fetch of the queue). */
  claimUpTo(owner: string, lockUntil: number, now: number, perTeam: number, max: number): Promise<ClaimedItem[]>;
  /** Extends the claim `owner` holds; false when it is no longer its own. */
  renew(item: ItemRef, owner: string, lockUntil: number): Promise<boolean>;
  /**
   * Stores one page of the item `owner` holds and commits its reservation (null: a cached page,
   * free) in the same transaction. `saved` false (nothing done): the claim is no longer its own,
   * and the caller refunds. `charged` false: the reservation had been refunded as abandoned.
   */
  savePage(item: ItemRef, owner: string, data: string, reservationId: string | null, now: number): Promise<{ saved: boolean; charged: boolean }>;
  /** Ends the item `owner` holds; the job ends with its last item (recording `job.completed`). Its job as it is then; null when the claim is not its own. */
  finish(item: ItemRef, owner: string, outcome: { status: 'succeeded' } | { status: 'failed'; error: { code: string; message: string } }, now: number): Promise<Job | null>;
  /** Puts the item `owner` holds back in the queue, to run again from `at` (epoch ms); `error`: why (kept until it ends). `refund`: the claim is given back (shutdown), not counted as an attempt. */
  requeue(item: ItemRef, owner: string, at: number, error: { code: string; message: string } | null, giveBack?: boolean): Promise<boolean>;
  /** Queues again the items whose claim passed its deadline (their node died); returns how many. */
  rescue(now: number): Promise<number>;
  /** A job's items in order from `after` (exclusive), with their pages; `status` `pending` includes running ones. */
  items(jobId: string, options: { after?: number; limit: number; status?: 'pending' | 'succeeded' | 'failed' | 'cancelled' }): Promise<JobItem[]>;
  /** Items waiting and running, every team's. */
  depth(): Promise<{ pending: number; running: number }>;
  /** Deletes the jobs (with their items) that ended before `before` (epoch ms); returns how many. */
  prune(before: number): Promise<number>;
}
