// The PostgreSQL schema, one migration per version, and the runner that applies them.
//
// `schema_migrations` lists the versions applied. `npm run -s admin -- migrate` (or the server
// with MIGRATE=auto) applies the missing ones in order, each in its own transaction, under an
// advisory lock so that nodes starting together migrate once. Otherwise the server checks the
// version and refuses to start on a database behind or ahead of it. A new version appends a
// migration; a released one is never edited.
import type pg from 'pg';
import { toStoreError } from './pool.ts';

export const MIGRATIONS: readonly { name: string; sql: string }[] = [
  {
    name: 'accounts, ledger, reservations, cache',
    sql: `
    CREATE TABLE teams (
      id          text PRIMARY KEY,
      name        text NOT NULL,
      credits     bigint NOT NULL CHECK (credits >= 0),
      rate_limit  integer NOT NULL CHECK (rate_limit >= 1),
      created_at  timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE api_keys (
      id            text PRIMARY KEY,
      team_id       text NOT NULL REFERENCES teams (id),
      name          text NOT NULL,
      hash          text NOT NULL UNIQUE,
      prefix        text NOT NULL,
      last4         text NOT NULL,
      created_at    timestamptz NOT NULL DEFAULT now(),
      last_used_at  timestamptz,
      revoked_at    timestamptz
    );
    CREATE INDEX api_keys_team ON api_keys (team_id);

    CREATE TABLE ledger (
      id          bigserial PRIMARY KEY,
      team_id     text NOT NULL REFERENCES teams (id),
      amount      bigint NOT NULL,
      reason      text NOT NULL CHECK (reason IN ('topup', 'charge', 'refund')),
      request_id  text,
      created_at  timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX ledger_team ON ledger (team_id, id);
    CREATE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'ledger is append-only'; END $$;
    CREATE TRIGGER ledger_no_change BEFORE UPDATE OR DELETE ON ledger
      FOR EACH ROW EXECUTE FUNCTION ledger_append_only();

    CREATE TABLE reservations (
      id          text PRIMARY KEY,
      team_id     text NOT NULL REFERENCES teams (id),
      request_id  text NOT NULL,
      amount      bigint NOT NULL CHECK (amount > 0),
      deadline    bigint NOT NULL,
      state       text NOT NULL CHECK (state IN ('pending', 'committed', 'refunded')),
      created_at  timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX reservations_pending ON reservations (deadline) WHERE state = 'pending';
    CREATE INDEX reservations_team_pending ON reservations (team_id) WHERE state = 'pending';

    CREATE TABLE cache (
      key          text PRIMARY KEY,
      target       text NOT NULL,
      value        text NOT NULL,
      stored_at    bigint NOT NULL,
      accessed_at  bigint NOT NULL,
      size         bigint NOT NULL
    );
    CREATE INDEX cache_target ON cache (target);
    CREATE INDEX cache_accessed ON cache (accessed_at);
    CREATE INDEX cache_stored ON cache (stored_at);

    -- Written and emptied again by the readiness probe; never holds a row.
    CREATE TABLE write_probe (id integer PRIMARY KEY);
    `,
  },
  {
    name: 'request records',
    sql: `
    CREATE TABLE requests (
      request_id   text PRIMARY KEY,
      at           bigint NOT NULL,
      team_id      text NOT NULL,
      key_id       text NOT NULL,
      endpoint     text NOT NULL,
      status       integer NOT NULL,
      error_code   text,
      credits      integer NOT NULL,
      cached       boolean NOT NULL,
      duration_ms  double precision NOT NULL
    );
    CREATE INDEX requests_team_at ON requests (team_id, at DESC, request_id DESC);
    CREATE INDEX requests_at ON requests (at);
    `,
  },
  {
    name: 'team versions',
    // keys_version grows with every revocation and change of a team's settings, and
    // balance_version with every change of its credits, in the same statement: nodes keep a copy
    // of a team's keys and balance in Redis and trust it only while these versions match.
    sql: `
    ALTER TABLE teams
      ADD COLUMN keys_version bigint NOT NULL DEFAULT 0,
      ADD COLUMN balance_version bigint NOT NULL DEFAULT 0;

    -- The Redis key prefixes under which nodes keep those copies: a change of keys made without
    -- Redis (the CLI without REDIS_URL) is refused while any is listed.
    CREATE TABLE redis_copies (
      prefix         text PRIMARY KEY,
      registered_at  timestamptz NOT NULL DEFAULT now()
    );
    `,
  },
  {
    name: 'users, password links, sessions',
    // Account holders of the dashboard; links and sessions by the hash of their token only.
    sql: `
    CREATE TABLE users (
      id             text PRIMARY KEY,
      team_id        text NOT NULL REFERENCES teams (id),
      email          text NOT NULL UNIQUE,
      role           text NOT NULL CHECK (role IN ('owner', 'member', 'operator')),
      password_hash  text,
      created_at     timestamptz NOT NULL DEFAULT now(),
      disabled_at    timestamptz
    );
    CREATE INDEX users_team ON users (team_id);

    CREATE TABLE password_links (
      hash        text PRIMARY KEY,
      user_id     text NOT NULL REFERENCES users (id),
      expires_at  bigint NOT NULL,
      used_at     timestamptz
    );

    CREATE TABLE sessions (
      hash        text PRIMARY KEY,
      user_id     text NOT NULL REFERENCES users (id),
      csrf        text NOT NULL,
      created_at  timestamptz NOT NULL DEFAULT now(),
      expires_at  bigint NOT NULL
    );
    CREATE INDEX sessions_user ON sessions (user_id);
    CREATE INDEX sessions_expires ON sessions (expires_at);

    -- The user who created a key in the dashboard (null: the operator CLI).
    ALTER TABLE api_keys ADD COLUMN created_by text REFERENCES users (id);
    `,
  },
  {
    name: 'drift samples',
    // Upstream answers the mappings did not recognise (drift capture), a few per hour and endpoint.
    sql: `
    CREATE TABLE drift (
      id          text PRIMARY KEY,
      at          bigint NOT NULL,
      platform    text NOT NULL,
      endpoint    text NOT NULL,
      request_id  text NOT NULL,
      reason      text NOT NULL,
      path        text NOT NULL,
      status      integer NOT NULL,
      headers     jsonb NOT NULL,
      body        text NOT NULL,
      truncated   boolean NOT NULL
    );
    CREATE INDEX drift_endpoint_at ON drift (platform, endpoint, at);
    CREATE INDEX drift_at ON drift (at);
    `,
  },
  {
    name: 'one outstanding password link per user',
    // Issuing a link replaces the user's unused one (users.ts), so that no older link outlives a
    // newer one or a password set since. Of the links outstanding now, the latest to expire is kept.
    sql: `
    DELETE FROM password_links l
     WHERE used_at IS NULL
       AND EXISTS (SELECT 1 FROM password_links n
                    WHERE n.user_id = l.user_id AND n.used_at IS NULL
                      AND (n.expires_at > l.expires_at OR (n.expires_at = l.expires_at AND n.hash > l.hash)));
    CREATE UNIQUE INDEX password_links_outstanding ON password_links (user_id) WHERE used_at IS NULL;
    `,
  },
  {
    name: 'emails unique within a team',
    // Each team's account under an email is its own, so that adding a user never tells whether
    // the email has an account elsewhere. (team_id, email) serves the team's lists too.
    sql: `
    ALTER TABLE users DROP CONSTRAINT users_email_key;
    ALTER TABLE users ADD CONSTRAINT users_team_email UNIQUE (team_id, email);
    DROP INDEX users_team;
    CREATE INDEX users_email ON users (email);
    `,
  },
  {
    name: 'idempotency keys',
    // A claim while its request runs (until its lock deadline), then the 2xx answer kept until
    // it expires; `until` is whichever of the two the state has.
    sql: `
    CREATE TABLE idempotency (
      team_id      text NOT NULL,
      test         boolean NOT NULL,
      key          text NOT NULL,
      fingerprint  text NOT NULL,
      owner        text NOT NULL,
      state        text NOT NULL CHECK (state IN ('running', 'kept')),
      until        bigint NOT NULL,
      status       integer,
      location     text,
      body         bytea,
      PRIMARY KEY (team_id, test, key)
    );
    CREATE INDEX idempotency_until ON idempotency (until);
    `,
  },
  {
    name: 'daily credit limits of keys',
    // A key's spending is counted on the day of its last spend (`spent_day`, UTC), and a
    // reservation remembers its key and day, so that a refund gives the credit back to that day.
    sql: `
    ALTER TABLE api_keys
      ADD COLUMN daily_credit_limit bigint CHECK (daily_credit_limit >= 0),
      ADD COLUMN spent_day text,
      ADD COLUMN spent bigint NOT NULL DEFAULT 0 CHECK (spent >= 0);
    ALTER TABLE reservations
      ADD COLUMN key_id text,
      ADD COLUMN day text;
    `,
  },
  {
    name: 'low-balance alerts and account events',
    // Each flag says whether its event may be recorded (armed). `alerts_due` is written by
    // every change of credits with the crossings that change made (1: low, 2: exhausted), from
    // the row as it was, so that the same statement records them. The events wait in `events`
    // to be sent (webhooks).
    sql: `
    ALTER TABLE teams
      ADD COLUMN low_balance_alert bigint CHECK (low_balance_alert >= 0),
      ADD COLUMN low_armed boolean NOT NULL DEFAULT true,
      ADD COLUMN exhausted_armed boolean NOT NULL DEFAULT true,
      ADD COLUMN alerts_due smallint NOT NULL DEFAULT 0;
    CREATE TABLE events (
      seq         bigserial PRIMARY KEY,
      id          text NOT NULL UNIQUE,
      team_id     text NOT NULL REFERENCES teams (id),
      type        text NOT NULL,
      data        jsonb NOT NULL,
      created_at  timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX events_team ON events (team_id, seq);
    `,
  },
  {
    name: 'webhooks',
    // Endpoints with their signing secrets (kept as they are: they must sign), one delivery per
    // event and endpoint (its id the `webhook-id` of every attempt), each attempt as it went.
    // `events.fanned` says an event was turned into its deliveries (those recorded before this
    // version had no endpoint to go to). Times of the queue are epoch ms.
    sql: `
    ALTER TABLE events ADD COLUMN fanned boolean NOT NULL DEFAULT false;
    UPDATE events SET fanned = true;
    CREATE INDEX events_unfanned ON events (seq) WHERE NOT fanned;
    CREATE TABLE webhook_endpoints (
      id                     text PRIMARY KEY,
      team_id                text NOT NULL REFERENCES teams (id),
      url                    text NOT NULL,
      events                 jsonb NOT NULL,
      description            text,
      enabled                boolean NOT NULL DEFAULT true,
      disabled_reason        text,
      disabled_at            timestamptz,
      created_at             timestamptz NOT NULL DEFAULT now(),
      secret                 text NOT NULL,
      previous_secret        text,
      previous_secret_until  bigint,
      failing_since          bigint
    );
    CREATE INDEX webhook_endpoints_team ON webhook_endpoints (team_id, created_at);
    CREATE TABLE webhook_deliveries (
      seq              bigserial PRIMARY KEY,
      id               text NOT NULL UNIQUE,
      endpoint_id      text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
      team_id          text NOT NULL,
      event_id         text NOT NULL,
      event_type       text NOT NULL,
      payload          text NOT NULL,
      state            text NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
      attempts         integer NOT NULL DEFAULT 0,
      next_attempt_at  bigint,
      lock_owner       text,
      lock_until       bigint,
      created_at       timestamptz NOT NULL DEFAULT now(),
      UNIQUE (event_id, endpoint_id)
    );
    CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
    CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, seq);
    CREATE INDEX webhook_deliveries_locked ON webhook_deliveries (endpoint_id) WHERE lock_until IS NOT NULL;
    CREATE TABLE webhook_attempts (
      id            bigserial PRIMARY KEY,
      delivery_seq  bigint NOT NULL REFERENCES webhook_deliveries (seq) ON DELETE CASCADE,
      at            timestamptz NOT NULL,
      status        integer,
      duration_ms   double precision NOT NULL,
      response      text NOT NULL,
      error         text
    );
    CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_seq, id);
    `,
  },
  {
    name: 'batch jobs',
    // A job's items are a queue every node claims from (FOR UPDATE SKIP LOCKED): `running` with
    // a lock owner and deadline while one runs. `job_teams` holds each team's running count (its
    // cap across nodes: a claim locks the team's row, so racing claims are serialised there) and
    // when it was last served (teams take turns). Pages are stored as text (the bytes the
    // endpoint answers with), each with the commit of its credit.
    sql: `
    CREATE TABLE jobs (
      id             text PRIMARY KEY,
      team_id        text NOT NULL REFERENCES teams (id),
      key_id         text NOT NULL,
      test           boolean NOT NULL,
      label          text,
      status         text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'cancelled')),
      created_at     bigint NOT NULL,
      started_at     bigint,
      completed_at   bigint,
      total          integer NOT NULL,
      pending        integer NOT NULL CHECK (pending >= 0),
      succeeded      integer NOT NULL DEFAULT 0,
      failed         integer NOT NULL DEFAULT 0,
      cancelled      integer NOT NULL DEFAULT 0,
      pages          integer NOT NULL DEFAULT 0,
      credits        bigint NOT NULL DEFAULT 0,
      cache_max_age  text,
      max_pages      integer NOT NULL
    );
    CREATE INDEX jobs_team ON jobs (team_id, created_at DESC, id DESC);
    CREATE INDEX jobs_ended ON jobs (completed_at) WHERE completed_at IS NOT NULL;

    CREATE TABLE job_items (
      job_id           text NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
      idx              integer NOT NULL,
      team_id          text NOT NULL,
      queued_at        bigint NOT NULL,
      endpoint         text NOT NULL,
      params           text NOT NULL,
      status           text NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed', 'cancelled')),
      page_count       integer NOT NULL DEFAULT 0,
      credits          integer NOT NULL DEFAULT 0,
      error_code       text,
      error_message    text,
      attempts         integer NOT NULL DEFAULT 0,
      lock_owner       text,
      lock_until       bigint,
      next_attempt_at  bigint NOT NULL DEFAULT 0,
      finished_at      bigint,
      PRIMARY KEY (job_id, idx)
    );
    CREATE INDEX job_items_ready ON job_items (team_id, queued_at, job_id, idx) WHERE status = 'pending';
    CREATE INDEX job_items_running ON job_items (lock_until) WHERE status = 'running';

    CREATE TABLE job_pages (
      job_id  text NOT NULL,
      idx     integer NOT NULL,
      n       integer NOT NULL,
      data    text NOT NULL,
      PRIMARY KEY (job_id, idx, n),
      FOREIGN KEY (job_id, idx) REFERENCES job_items (job_id, idx) ON DELETE CASCADE
    );

    CREATE TABLE job_teams (
      team_id    text PRIMARY KEY,
      running    integer NOT NULL DEFAULT 0 CHECK (running >= 0),
      served_at  bigint NOT NULL DEFAULT 0
    );

    ALTER TABLE requests ADD COLUMN job_id text;
    `,
  },
  {
    name: 'monitors and their runs',
    // A monitor's `next_run_at` is the slot of its next run; a run takes the monitor by setting
    // `lock_owner` and `locked_until` in one statement (claimDue, FOR UPDATE SKIP LOCKED), and an
    // expired lock lets another node take it. `last_data` is the last successful run's data as
    // compared. Times are epoch ms; structured values are JSON text (key order kept).
    sql: `
    CREATE TABLE monitors (
      seq                   bigserial PRIMARY KEY,
      id                    text NOT NULL UNIQUE,
      team_id               text NOT NULL REFERENCES teams (id),
      test                  boolean NOT NULL,
      key_id                text NOT NULL,
      endpoint              text NOT NULL,
      params                text NOT NULL,
      interval_s            integer CHECK (interval_s >= 1),
      cron                  text,
      timezone              text NOT NULL,
      watch                 text NOT NULL,
      label                 text,
      status                text NOT NULL CHECK (status IN ('active', 'paused')),
      created_at            bigint NOT NULL,
      last_run_at           bigint,
      next_run_at           bigint NOT NULL,
      last_change_at        bigint,
      runs                  bigint NOT NULL DEFAULT 0,
      consecutive_failures  integer NOT NULL DEFAULT 0,
      failure_alerted       boolean NOT NULL DEFAULT false,
      last_data             text,
      last_good_at          bigint,
      lock_owner            text,
      locked_until          bigint,
      CHECK ((interval_s IS NULL) <> (cron IS NULL))
    );
    CREATE INDEX monitors_team ON monitors (team_id, seq);
    CREATE INDEX monitors_due ON monitors (next_run_at) WHERE status = 'active';

    CREATE TABLE monitor_runs (
      seq            bigserial PRIMARY KEY,
      id             text NOT NULL UNIQUE,
      monitor_id     text NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
      at             bigint NOT NULL,
      started_at     bigint NOT NULL,
      finished_at    bigint NOT NULL,
      status         text NOT NULL CHECK (status IN ('succeeded', 'failed', 'skipped')),
      credits        integer NOT NULL,
      changed        boolean NOT NULL,
      patch          text,
      error_code     text,
      error_message  text,
      request_id     text NOT NULL,
      UNIQUE (monitor_id, at)
    );
    CREATE INDEX monitor_runs_finished ON monitor_runs (finished_at);
    `,
  },
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** The command that brings a database to this program's schema. */
export const MIGRATE_COMMAND = 'npm run -s admin -- migrate';

/** Any 64-bit number unique to this service: nodes migrating at once wait for each other on it. */
export const MIGRATION_LOCK = 7_305_112_409;

export class SchemaMismatchError extends Error {
  readonly found: number;
  readonly expected: number;
  constructor(found: number, expected: number) {
    super(
      found < expected
        ? `The PostgreSQL database is at schema version ${found}; this program needs version ${expected}. Run: ${MIGRATE_COMMAND} (or start with MIGRATE=auto).`
        : `The PostgreSQL database is at schema version ${found}, newer than this program's ${expected}: it was migrated by a newer release. Run that release, or restore a backup taken before its migration.`,
    );
    this.name = 'SchemaMismatchError';
    this.found = found;
    this.expected = expected;
  }
}

async function appliedVersion(client: pg.Pool | pg.PoolClient): Promise<number> {
  const exists = await client.query<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t");
  if (!exists.rows[0]?.t) return 0;
  const row = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
  return row.rows[0]?.v ?? 0;
}

/** Throws SchemaMismatchError unless the database is at exactly this program's version. */
export async function checkSchema(pool: pg.Pool): Promise<void> {
  let found: number;
  try {
    found = await appliedVersion(pool);
  } catch (err) {
    throw toStoreError(err);
  }
  if (found !== SCHEMA_VERSION) throw new SchemaMismatchError(found, SCHEMA_VERSION);
}

/**
 * Applies the missing migrations in order; returns the versions applied (none when up to date).
 * `tell` hears what takes time: a wait for the lock another process migrating holds, and each
 * migration as it starts.
 */
export async function migrate(pool: pg.Pool, tell: (line: string) => void = () => {}): Promise<number[]> {
  const client = await pool.connect().catch((err: unknown) => {
    throw toStoreError(err);
  });
  const applied: number[] = [];
  try {
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [MIGRATION_LOCK]);
    if (!rows[0]?.locked) {
      tell('waiting for the migration lock: another process is migrating this database');
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    }
    try {
      await client.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      const from = await appliedVersion(client);
      if (from > SCHEMA_VERSION) throw new SchemaMismatchError(from, SCHEMA_VERSION);
      for (let v = from + 1; v <= SCHEMA_VERSION; v++) {
        const migration = MIGRATIONS[v - 1] as { name: string; sql: string };
        tell(`applying migration ${v} of ${SCHEMA_VERSION}: ${migration.name}`);
        await client.query('BEGIN');
        try {
          await client.query(migration.sql);
          await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [v, migration.name]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch(() => {});
          throw err;
        }
        applied.push(v);
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    }
  } catch (err) {
    throw toStoreError(err);
  } finally {
    client.release();
  }
  return applied;
}
