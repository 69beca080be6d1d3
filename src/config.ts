// Configuration from the environment. Every value has a production default; the demo and the
// tests override them.
import { DEFAULT_BREAKER, type BreakerSettings } from './server/breakers.ts';
import type { PaceLimits } from './upstream/pacing.ts';
import { parseProxies, type ProxySpec } from './upstream/proxies.ts';
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isIP } from 'node:net';
import { describeFsError } from './fs-errors.ts';
import { DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from './server/connections.ts';

/** Each platform's origin variable, canonical host and the other hosts it answers on (its README.md, "URLs"). */
export const PLATFORM_ORIGINS = {
  socialnet: { variable: 'SOCIALNET_ORIGIN', host: 'www.socialnet.example', aliases: ['socialnet.example', 'm.socialnet.example', 'web.socialnet.example'] },
  snapmsg: { variable: 'SNAPMSG_ORIGIN', host: 'www.snapmsg.example', aliases: ['snapmsg.example'] },
  'linkpage-a': { variable: 'LINKPAGE_A_ORIGIN', host: 'linkpage-a.example', aliases: ['www.linkpage-a.example'] },
  'linkpage-b': { variable: 'LINKPAGE_B_ORIGIN', host: 'linkpage-b.example', aliases: ['www.linkpage-b.example'] },
  shopfront: { variable: 'SHOPFRONT_ORIGIN', host: 'www.shopfront.example', aliases: ['shopfront.example'] },
} as const;

export type Platform = keyof typeof PLATFORM_ORIGINS;

export interface Config {
  port: number;
  host: string;
  /** Where clients reach the service, named in the OpenAPI document's `servers`; unset: the listening address. */
  publicBaseUrl: string | undefined;
  dataDir: string;
  /** Where each platform's upstream requests go: scheme, host and optional port. */
  origins: Record<Platform, string>;
  cursorSecret: string;
  /** When set, `/metrics` is served on the service's listener, behind this bearer token. */
  metricsToken: string | undefined;
  /** When set, `/metrics` is also served, without a token, on a listener of its own bound to 127.0.0.1 (0 picks a free port). */
  metricsPort: number | undefined;
  /** Time budget of one API request's upstream work. */
  requestBudgetMs: number;
  /** Largest upstream response body accepted (decoded), in bytes. */
  upstreamMaxBytes: number;
  /** Decoded upstream bytes all requests together may hold at once (at least upstreamMaxBytes). */
  upstreamMemoryBytes: number;
  /** Margin past the budget before a pending reservation counts as abandoned. */
  reservationMarginMs: number;
  cacheMaxBytes: number;
  logLevel: string;
  /** Timeouts and connection caps of the HTTP server. */
  connections: ConnectionLimits;
  /** Load balancers' addresses or CIDR networks whose X-Forwarded-For is believed. */
  trustProxy: string[];
  /**
   * PostgreSQL for accounts, keys, credits, request records and the cache (`DATABASE_URL`);
   * unset: the embedded SQLite store in DATA_DIR.
   */
  databaseUrl: string | undefined;
  /** Redis for the rate limiters, single-flight, revocation notices and sessions (`REDIS_URL`); unset: in-process. */
  redisUrl: string | undefined;
  /** Prefix of every Redis key the service writes (`REDIS_PREFIX`, default `pagescrape:`). */
  redisPrefix: string;
  /** TEST_MODE=on: test-mode keys (`psk_test_`) are served from the built-in sandbox; off (the default): refused with 403. */
  testMode: boolean;
  /** Each platform's pace per egress (each proxy, and the own address): concurrent upstream requests and starts per second (0: no bound). */
  pace: Record<Platform, PaceLimits>;
  /** Each platform's proxies: `<PLATFORM>_PROXIES`, else UPSTREAM_PROXIES; none: this machine's address. */
  proxies: Record<Platform, ProxySpec[]>;
  /** Requests that may wait for their turn per platform (UPSTREAM_QUEUE). */
  paceQueue: number;
  /** The platforms' circuit breakers (BREAKER_MIN_REQUESTS, _WINDOW_MS, _FAILURE_PERCENT, _COOLDOWN_MS, _MAX_COOLDOWN_MS). */
  breaker: BreakerSettings;
  /** Bound on the cache entries Redis holds in front of PostgreSQL (`REDIS_CACHE_MAX_BYTES`, default 256 MiB). */
  redisCacheMaxBytes: number;
  /** `MIGRATE=auto`: apply missing PostgreSQL migrations at start instead of refusing to start. */
  migrateOnStart: boolean;
  /** Days request records are kept (`REQUEST_RECORDS_DAYS`, default 90). */
  requestRecordsDays: number;
  /** Webhook deliveries: the address guard's switches, the retry schedule and the rest (WEBHOOK_*). */
  webhooks: WebhookConfig;
  /**
   * Monitors: the shortest interval (`MONITOR_MIN_INTERVAL_S`, default 900), monitors per team
   * (`MONITOR_MAX_PER_TEAM`, 100), days runs are kept (`MONITOR_RUN_RETENTION_DAYS`, 30), and runs
   * at once per node (`MONITOR_CONCURRENCY`, 16), how long a run's claim holds without renewal
   * (`MONITOR_LOCK_MS`, 15 s).
   */
  monitors: { minIntervalS: number; maxPerTeam: number; runRetentionDays: number; concurrency: number; lockMs: number };
  /** Batch jobs (src/work/jobs.ts): JOB_CONCURRENCY_PER_TEAM, JOB_MAX_ACTIVE_PER_TEAM, JOB_RETENTION_DAYS, JOB_WORKERS, JOB_LOCK_MS. */
  jobs: JobSettings;
}

export interface WebhookConfig {
  /** WEBHOOK_ALLOW_PRIVATE=on: loopback and private addresses too (development only). */
  allowPrivate: boolean;
  /** WEBHOOK_ALLOW_HTTP=on: http:// URLs too (development only). */
  allowHttp: boolean;
  /** Waits before each retry, ms (WEBHOOK_RETRY_SCHEDULE, comma-separated seconds). */
  retryScheduleMs: number[];
  /** An endpoint failing every delivery this long is disabled (WEBHOOK_DISABLE_AFTER_SECONDS, default 5 days). */
  disableAfterMs: number;
  /** Time allowed one attempt (WEBHOOK_TIMEOUT_MS, default 10 s). */
  timeoutMs: number;
  /** How often each node looks for due deliveries (WEBHOOK_POLL_MS, default 1 s). */
  pollMs: number;
}

/** 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: eight attempts over about 27.6 hours. */
export const DEFAULT_RETRY_SCHEDULE_SECONDS = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000];

function retrySchedule(env: Env): number[] {
  const raw = env.WEBHOOK_RETRY_SCHEDULE;
  if (raw === undefined || raw.trim() === '') return DEFAULT_RETRY_SCHEDULE_SECONDS.map((seconds) => seconds * 1_000);
  const parts = raw.split(',').map((part) => part.trim());
  const seconds = parts.map(Number);
  if (parts.length > 20 || seconds.some((value, i) => parts[i] === '' || !Number.isFinite(value) || value < 0 || value > 7 * 86_400)) {
    throw new Error(`WEBHOOK_RETRY_SCHEDULE must be up to 20 comma-separated waits in seconds (0 to 604800), got "${raw}"`);
  }
  return seconds.map((value) => Math.round(value * 1_000));
}

export function webhookConfig(env: Env): WebhookConfig {
  return {
    allowPrivate: onOff(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    allowHttp: onOff(env, 'WEBHOOK_ALLOW_HTTP', false),
    retryScheduleMs: retrySchedule(env),
    disableAfterMs: integer(env, 'WEBHOOK_DISABLE_AFTER_SECONDS', 5 * 86_400, 1) * 1_000,
    timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100),
    pollMs: integer(env, 'WEBHOOK_POLL_MS', 1_000, 10),
  };
}

type Env = Record<string, string | undefined>;

/** What a real platform tolerates from one node, unless UPSTREAM_* or <PLATFORM>_* say otherwise. */
export const DEFAULT_PACE: Readonly<PaceLimits> = { maxConcurrency: 8, maxRps: 5 };

/** For an upstream on this machine (the sandbox): no pace, no bound on concurrency. */
export const UNPACED_ENV: Readonly<Record<string, string>> = { UPSTREAM_MAX_CONCURRENCY: '0', UPSTREAM_MAX_RPS: '0' };

/** `<PLATFORM>_MAX_CONCURRENCY` and `<PLATFORM>_MAX_RPS`, else UPSTREAM_MAX_CONCURRENCY and UPSTREAM_MAX_RPS. */
function paceLimits(env: Env): Record<Platform, PaceLimits> {
  const all = { maxConcurrency: integer(env, 'UPSTREAM_MAX_CONCURRENCY', DEFAULT_PACE.maxConcurrency, 0), maxRps: integer(env, 'UPSTREAM_MAX_RPS', DEFAULT_PACE.maxRps, 0) };
  const limits = {} as Record<Platform, PaceLimits>;
  for (const [platform, { variable }] of Object.entries(PLATFORM_ORIGINS) as [Platform, { variable: string }][]) {
    const prefix = variable.replace(/_ORIGIN$/, '');
    limits[platform] = { maxConcurrency: integer(env, `${prefix}_MAX_CONCURRENCY`, all.maxConcurrency, 0), maxRps: integer(env, `${prefix}_MAX_RPS`, all.maxRps, 0) };
  }
  return limits;
}

function proxyLists(env: Env): Record<Platform, ProxySpec[]> {
  const all = env.UPSTREAM_PROXIES ? parseProxies('UPSTREAM_PROXIES', env.UPSTREAM_PROXIES) : [];
  const lists = {} as Record<Platform, ProxySpec[]>;
  for (const [platform, { variable }] of Object.entries(PLATFORM_ORIGINS) as [Platform, { variable: string }][]) {
    const name = variable.replace(/_ORIGIN$/, '_PROXIES');
    lists[platform] = env[name] ? parseProxies(name, env[name] as string) : all;
  }
  return lists;
}

function onOff(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'on') return true;
  if (raw === 'off') return false;
  throw new Error(`${name} must be "on" or "off", got "${raw}"`);
}

function breakerSettings(env: Env): BreakerSettings {
  const percent = integer(env, 'BREAKER_FAILURE_PERCENT', DEFAULT_BREAKER.failureRatio * 100, 1);
  if (percent > 100) throw new Error(`BREAKER_FAILURE_PERCENT must be at most 100, got "${percent}"`);
  const coolDownMs = integer(env, 'BREAKER_COOLDOWN_MS', DEFAULT_BREAKER.coolDownMs, 100);
  return {
    minRequests: integer(env, 'BREAKER_MIN_REQUESTS', DEFAULT_BREAKER.minRequests, 1),
    windowMs: integer(env, 'BREAKER_WINDOW_MS', DEFAULT_BREAKER.windowMs, 1_000),
    failureRatio: percent / 100,
    coolDownMs,
    maxCoolDownMs: integer(env, 'BREAKER_MAX_COOLDOWN_MS', Math.max(DEFAULT_BREAKER.maxCoolDownMs, coolDownMs), coolDownMs),
  };
}

function integer(env: Env, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`${name} must be an integer of at least ${min}, got "${raw}"`);
  return value;
}

/** A TCP port to listen on, 0 (any free one) to 65535; undefined when the variable is unset. */
function port(env: Env, name: string): number | undefined {
  if (!env[name]) return undefined;
  const value = integer(env, name, 0, 0);
  if (value > 65_535) throw new Error(`${name} must be at most 65535, got "${value}"`);
  return value;
}

/** An origin is a scheme, host and optional port with no path. */
export function parseOrigin(name: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${name} must be an origin such as http://127.0.0.1:4101, got "${raw}"`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) {
    throw new Error(`${name} must be an origin (scheme, host, optional port; no path), got "${raw}"`);
  }
  return url.origin;
}

/** TRUST_PROXY: addresses or CIDR networks, separated by commas or spaces. */
export function parseTrustProxy(raw: string | undefined): string[] {
  const entries = (raw ?? '').split(/[\s,]+/).filter((entry) => entry !== '');
  for (const entry of entries) {
    const [address = '', prefix, extra] = entry.split('/');
    const family = isIP(address);
    const bits = family === 6 ? 128 : 32;
    const validPrefix = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (family === 0 || !validPrefix || extra !== undefined) {
      throw new Error(`TRUST_PROXY must list the load balancers' addresses or networks, such as 10.0.0.0/8,192.0.2.7; got "${entry}"`);
    }
  }
  return entries;
}

/**
 * The service's public address: an absolute http(s) URL, optionally with a path prefix (behind
 * a proxy), without credentials, query or fragment; a trailing slash is dropped.
 */
/** Where clients reach the service: PUBLIC_BASE_URL, else the address it is configured to listen on. */
export const configuredBaseUrl = (config: Pick<Config, 'publicBaseUrl' | 'host' | 'port'>): string =>
  config.publicBaseUrl ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;

export function parsePublicBaseUrl(name: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${name} must be an absolute URL such as https://api.example.com, got "${raw}"`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.search || url.hash) {
    throw new Error(`${name} must be an http or https URL without credentials, query or fragment, got "${raw}"`);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** The cursor secret: from CURSOR_SECRET, else generated once and kept in the data directory. */
function cursorSecret(env: Env, dataDir: string): string {
  const configured = env.CURSOR_SECRET;
  if (configured) {
    if (configured.length < 16) throw new Error('CURSOR_SECRET must be at least 16 characters');
    return configured;
  }
  const file = join(dataDir, 'cursor-secret');
  const read = (): string | null => {
    let secret: string;
    try {
      secret = readFileSync(file, 'utf8').trim();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw describeFsError(error, `cannot read the cursor secret ${file}`);
    }
    // An emptied file must not quietly become an empty signing key.
    if (secret.length < 16) throw new Error(`${file} is empty or shorter than 16 characters; delete it to generate a new one (cursors issued so far stop working)`);
    return secret;
  };
  const existing = read();
  if (existing !== null) return existing;
  // Written whole under a temporary name, then linked into place: link fails if another process
  // created the file meanwhile (then theirs is read), and nobody ever reads a half-written one.
  const secret = randomBytes(32).toString('base64url');
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, `${secret}\n`, { mode: 0o600 });
    linkSync(temporary, file);
    return secret;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return read() as string;
    throw describeFsError(error, `cannot write the cursor secret into DATA_DIR ${dataDir}`);
  } finally {
    rmSync(temporary, { force: true });
  }
}

export function loadConfig(env: Env = process.env): Config {
  const dataDir = resolve(env.DATA_DIR || './data');
  try {
    // Private: it holds the database, the cursor secret and the demo key.
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw describeFsError(error, `cannot create DATA_DIR ${dataDir}`);
  }
  const origins = {} as Record<Platform, string>;
  for (const [platform, { variable, host }] of Object.entries(PLATFORM_ORIGINS) as [Platform, (typeof PLATFORM_ORIGINS)[Platform]][]) {
    origins[platform] = parseOrigin(variable, env[variable] || `https://${host}`);
  }
  const upstreamMaxBytes = integer(env, 'UPSTREAM_MAX_BYTES', 10 * 1024 * 1024, 1024);
  return {
    port: port(env, 'PORT') ?? 3000,
    host: env.HOST || '127.0.0.1',
    publicBaseUrl: env.PUBLIC_BASE_URL ? parsePublicBaseUrl('PUBLIC_BASE_URL', env.PUBLIC_BASE_URL) : undefined,
    dataDir,
    origins,
    cursorSecret: cursorSecret(env, dataDir),
    metricsToken: env.METRICS_TOKEN || undefined,
    metricsPort: port(env, 'METRICS_PORT'),
    requestBudgetMs: integer(env, 'REQUEST_BUDGET_MS', 15_000, 100),
    upstreamMaxBytes,
    upstreamMemoryBytes: integer(env, 'UPSTREAM_MEMORY_BYTES', Math.max(256 * 1024 * 1024, upstreamMaxBytes), upstreamMaxBytes),
    reservationMarginMs: integer(env, 'RESERVATION_MARGIN_MS', 60_000, 0),
    cacheMaxBytes: integer(env, 'CACHE_MAX_BYTES', 1024 * 1024 * 1024, 1024),
    logLevel: env.LOG_LEVEL || 'info',
    connections: connectionLimits(env),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    databaseUrl: backendUrl(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    redisUrl: backendUrl(env, 'REDIS_URL', ['redis:', 'rediss:']),
    redisPrefix: env.REDIS_PREFIX || 'pagescrape:',
    redisCacheMaxBytes: integer(env, 'REDIS_CACHE_MAX_BYTES', 256 * 1024 * 1024, 1024),
    breaker: breakerSettings(env),
    pace: paceLimits(env),
    testMode: onOff(env, 'TEST_MODE', false),
    webhooks: webhookConfig(env),
    proxies: proxyLists(env),
    paceQueue: integer(env, 'UPSTREAM_QUEUE', 100, 1),
    migrateOnStart: migrateSetting(env.MIGRATE),
    requestRecordsDays: integer(env, 'REQUEST_RECORDS_DAYS', 90, 1),
    monitors: {
      minIntervalS: integer(env, 'MONITOR_MIN_INTERVAL_S', 900, 1),
      maxPerTeam: integer(env, 'MONITOR_MAX_PER_TEAM', 100, 0),
      runRetentionDays: integer(env, 'MONITOR_RUN_RETENTION_DAYS', 30, 1),
      concurrency: integer(env, 'MONITOR_CONCURRENCY', 16, 1),
      lockMs: integer(env, 'MONITOR_LOCK_MS', 15_000, 1_000),
    },
    jobs: {
      concurrencyPerTeam: integer(env, 'JOB_CONCURRENCY_PER_TEAM', DEFAULT_JOB_CONCURRENCY_PER_TEAM, 1),
      maxActivePerTeam: integer(env, 'JOB_MAX_ACTIVE_PER_TEAM', 10, 1),
      retentionDays: integer(env, 'JOB_RETENTION_DAYS', 7, 1),
      workers: integer(env, 'JOB_WORKERS', DEFAULT_JOB_WORKERS, 1),
      ...(env.JOB_LOCK_MS ? { lockMs: integer(env, 'JOB_LOCK_MS', 75_000, 1_000) } : {}),
    },
  };
}

/** A team's items at once across every node (api-async.md's default: a team's share, so that teams take turns). */
export const DEFAULT_JOB_CONCURRENCY_PER_TEAM = 4;
/** A node's items at once, every team's: four teams at their cap. */
export const DEFAULT_JOB_WORKERS = 16;

/** How batch jobs run on this node. */
export interface JobSettings {
  /** Items of one team running at once across every node. */
  concurrencyPerTeam: number;
  /** Queued or running jobs a team may have (more: 429). */
  maxActivePerTeam: number;
  /** Days a job and its results are kept after it ends. */
  retentionDays: number;
  /** Items this node runs at once, every team's. */
  workers: number;
  /** How long a claim holds its item without being renewed (a dead node's items wait this long); default: the request budget and the reservation margin. */
  lockMs?: number;
}

/** A backend's URL, checked for its scheme; never echoed back (it may hold a password). */
function backendUrl(env: Env, name: string, schemes: string[]): string | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${name} must be a URL (${schemes.map((s) => `${s}//…`).join(' or ')})`);
  }
  if (!schemes.includes(url.protocol)) throw new Error(`${name} must start with ${schemes.map((s) => `${s}//`).join(' or ')}, got ${url.protocol}//…`);
  return raw;
}

function migrateSetting(raw: string | undefined): boolean {
  if (raw === undefined || raw === '' || raw === 'off') return false;
  if (raw === 'auto') return true;
  throw new Error(`MIGRATE must be "auto" or "off", got "${raw}"`);
}

function connectionLimits(env: Env): ConnectionLimits {
  const defaults = DEFAULT_CONNECTION_LIMITS;
  const requestTimeoutMs = integer(env, 'REQUEST_TIMEOUT_MS', defaults.requestTimeoutMs, 100);
  const headersTimeoutMs = integer(env, 'HEADERS_TIMEOUT_MS', Math.min(defaults.headersTimeoutMs, requestTimeoutMs), 100);
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new Error(`HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not exceed REQUEST_TIMEOUT_MS (${requestTimeoutMs})`);
  }
  return {
    requestTimeoutMs,
    headersTimeoutMs,
    keepAliveTimeoutMs: integer(env, 'KEEP_ALIVE_TIMEOUT_MS', defaults.keepAliveTimeoutMs, 1),
    maxConnections: integer(env, 'MAX_CONNECTIONS', defaults.maxConnections, 1),
    maxConnectionsPerAddress: integer(env, 'MAX_CONNECTIONS_PER_ADDRESS', defaults.maxConnectionsPerAddress, 1),
  };
}
