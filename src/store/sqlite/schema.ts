// The embedded store's schema: one migration per version, applied in order under the write lock
// (connection.ts). A new version appends a migration; a released one is never edited.

export const SCHEMA_VERSION = 15;

export const MIGRATIONS: readonly string[] = [
  // v1
  `
  CREATE TABLE teams (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    credits     INTEGER NOT NULL CHECK (credits >= 0),
    rate_limit  INTEGER NOT NULL CHECK (rate_limit >= 1),
    created_at  TEXT NOT NULL
  ) STRICT;

  CREATE TABLE api_keys (
    id            TEXT PRIMARY KEY,
    team_id       TEXT NOT NULL REFERENCES teams (id),
    name          TEXT NOT NULL,
    hash          TEXT NOT NULL UNIQUE,
    prefix        TEXT NOT NULL,
    last4         TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    last_used_at  TEXT,
    revoked_at    TEXT
  ) STRICT;
  CREATE INDEX api_keys_team ON api_keys (team_id);

  CREATE TABLE ledger (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id     TEXT NOT NULL REFERENCES teams (id),
    amount      INTEGER NOT NULL,
    reason      TEXT NOT NULL CHECK (reason IN ('topup', 'charge', 'refund')),
    request_id  TEXT,
    created_at  TEXT NOT NULL
  ) STRICT;
  CREATE INDEX ledger_team ON ledger (team_id, id);
  CREATE TRIGGER ledger_no_update BEFORE UPDATE ON ledger
    BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
  CREATE TRIGGER ledger_no_delete BEFORE DELETE ON ledger
    BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;

  CREATE TABLE reservations (
    id          TEXT PRIMARY KEY,
    team_id     TEXT NOT NULL REFERENCES teams (id),
    request_id  TEXT NOT NULL,
    amount      INTEGER NOT NULL CHECK (amount > 0),
    deadline    INTEGER NOT NULL,
    state       TEXT NOT NULL CHECK (state IN ('pending', 'committed', 'refunded')),
    created_at  TEXT NOT NULL
  ) STRICT;
  CREATE INDEX reservations_pending ON reservations (deadline) WHERE state = 'pending';
  CREATE INDEX reservations_team_pending ON reservations (team_id) WHERE state = 'pending';

  CREATE TABLE cache (
    key          TEXT PRIMARY KEY,
    target       TEXT NOT NULL,
    value        TEXT NOT NULL,
    stored_at    INTEGER NOT NULL,
    accessed_at  INTEGER NOT NULL,
    size         INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX cache_target ON cache (target);
  CREATE INDEX cache_accessed ON cache (accessed_at);
  CREATE INDEX cache_stored ON cache (stored_at);
  `,
  // v2: written and emptied again by the readiness probe (probeWrite); never holds a row.
  `
  CREATE TABLE write_probe (
    id      INTEGER PRIMARY KEY,
    filler  BLOB NOT NULL
  ) STRICT;
  `,
  // v3: request records (one per API request of a known caller; pruned after some days).
  `
  CREATE TABLE requests (
    request_id   TEXT PRIMARY KEY,
    at           INTEGER NOT NULL,
    team_id      TEXT NOT NULL,
    key_id       TEXT NOT NULL,
    endpoint     TEXT NOT NULL,
    status       INTEGER NOT NULL,
    error_code   TEXT,
    credits      INTEGER NOT NULL,
    cached       INTEGER NOT NULL,
    duration_ms  REAL NOT NULL
  ) STRICT;
  CREATE INDEX requests_team_at ON requests (team_id, at DESC, request_id DESC);
  CREATE INDEX requests_at ON requests (at);
  `,
  // v4: account holders, the one-time links that set their passwords, and their sessions
  // (links and sessions by the hash of their token only).
  `
  CREATE TABLE users (
    id             TEXT PRIMARY KEY,
    team_id        TEXT NOT NULL REFERENCES teams (id),
    email          TEXT NOT NULL UNIQUE,
    role           TEXT NOT NULL CHECK (role IN ('owner', 'member', 'operator')),
    password_hash  TEXT,
    created_at     TEXT NOT NULL,
    disabled_at    TEXT
  ) STRICT;
  CREATE INDEX users_team ON users (team_id);

  CREATE TABLE password_links (
    hash        TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL REFERENCES users (id),
    expires_at  INTEGER NOT NULL,
    used_at     TEXT
  ) STRICT;

  CREATE TABLE sessions (
    hash        TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL REFERENCES users (id),
    csrf        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    expires_at  INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX sessions_user ON sessions (user_id);
  CREATE INDEX sessions_expires ON sessions (expires_at);

  -- The user who created a key in the dashboard (null: the operator CLI).
  ALTER TABLE api_keys ADD COLUMN created_by TEXT REFERENCES users (id);
  `,
  // v5: upstream answers the mappings did not recognise (drift capture), a few per hour and endpoint.
  `
  CREATE TABLE drift (
    id          TEXT PRIMARY KEY,
    at          INTEGER NOT NULL,
    platform    TEXT NOT NULL,
    endpoint    TEXT NOT NULL,
    request_id  TEXT NOT NULL,
    reason      TEXT NOT NULL,
    path        TEXT NOT NULL,
    status      INTEGER NOT NULL,
    headers     TEXT NOT NULL,
    body        TEXT NOT NULL,
    truncated   INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX drift_endpoint_at ON drift (platform, endpoint, at);
  CREATE INDEX drift_at ON drift (at);
  `,
  // v6: a user has one outstanding (unused) set-password link at most: issuing one replaces the
  // earlier one (users.ts), so that no older link outlives a newer one or a password set since.
  // Of the links outstanding now, the latest to expire is kept.
  `
  DELETE FROM password_links
   WHERE used_at IS NULL
     AND EXISTS (SELECT 1 FROM password_links n
                  WHERE n.user_id = password_links.user_id AND n.used_at IS NULL
                    AND (n.expires_at > password_links.expires_at OR (n.expires_at = password_links.expires_at AND n.hash > password_links.hash)));
  CREATE UNIQUE INDEX password_links_outstanding ON password_links (user_id) WHERE used_at IS NULL;
  `,
  // v7: an email is unique within a team, no longer across teams: each team's account under an
  // email is its own, so that adding a user never tells whether the email has an account
  // elsewhere. The table is rebuilt (a column's UNIQUE cannot be dropped). Foreign keys stay on:
  // deferred, and the rows go back into the new table after the old one is dropped, which
  // settles the sessions, links and keys that refer to them.
  `
  PRAGMA defer_foreign_keys = ON;
  CREATE TEMP TABLE users_v6 AS SELECT id, team_id, email, role, password_hash, created_at, disabled_at FROM users ORDER BY rowid;
  CREATE TABLE users_v7 (
    id             TEXT PRIMARY KEY,
    team_id        TEXT NOT NULL REFERENCES teams (id),
    email          TEXT NOT NULL,
    role           TEXT NOT NULL CHECK (role IN ('owner', 'member', 'operator')),
    password_hash  TEXT,
    created_at     TEXT NOT NULL,
    disabled_at    TEXT,
    UNIQUE (team_id, email)
  ) STRICT;
  DROP TABLE users;
  ALTER TABLE users_v7 RENAME TO users;
  INSERT INTO users (id, team_id, email, role, password_hash, created_at, disabled_at)
    SELECT id, team_id, email, role, password_hash, created_at, disabled_at FROM users_v6 ORDER BY rowid;
  DROP TABLE users_v6;
  CREATE INDEX users_email ON users (email);
  `,
  // v8: Idempotency-Key records: a claim while its request runs (until its lock deadline), then
  // the 2xx answer kept until it expires; `until` is whichever of the two the state has.
  `
  CREATE TABLE idempotency (
    team_id      TEXT NOT NULL,
    test         INTEGER NOT NULL,
    key          TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    owner        TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('running', 'kept')),
    until        INTEGER NOT NULL,
    status       INTEGER,
    location     TEXT,
    body         BLOB,
    PRIMARY KEY (team_id, test, key)
  ) STRICT;
  CREATE INDEX idempotency_until ON idempotency (until);
  `,
  // v9: per-key daily credit limits. A key's spending is counted on the day of its last spend
  // (`spent_day`, UTC `YYYY-MM-DD`), and a reservation remembers its key and day, so that a
  // refund gives the credit back to that day's count.
  `
  ALTER TABLE api_keys ADD COLUMN daily_credit_limit INTEGER CHECK (daily_credit_limit >= 0);
  ALTER TABLE api_keys ADD COLUMN spent_day TEXT;
  ALTER TABLE api_keys ADD COLUMN spent INTEGER NOT NULL DEFAULT 0 CHECK (spent >= 0);
  ALTER TABLE reservations ADD COLUMN key_id TEXT;
  ALTER TABLE reservations ADD COLUMN day TEXT;
  `,
  // v10: low-balance alerts. Each flag says whether its event may be recorded (armed); the
  // events wait in `events` to be sent (webhooks).
  `
  ALTER TABLE teams ADD COLUMN low_balance_alert INTEGER CHECK (low_balance_alert >= 0);
  ALTER TABLE teams ADD COLUMN low_armed INTEGER NOT NULL DEFAULT 1;
  ALTER TABLE teams ADD COLUMN exhausted_armed INTEGER NOT NULL DEFAULT 1;
  CREATE TABLE events (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    id          TEXT NOT NULL UNIQUE,
    team_id     TEXT NOT NULL REFERENCES teams (id),
    type        TEXT NOT NULL,
    data        TEXT NOT NULL,
    created_at  TEXT NOT NULL
  ) STRICT;
  CREATE INDEX events_team ON events (team_id, seq);
  `,
  // v11: webhooks. Endpoints with their signing secrets (kept as they are: they must sign), one
  // delivery per event and endpoint (its id the `webhook-id` of every attempt), each attempt as it
  // went. `events.fanned` says an event was turned into its deliveries (those recorded before
  // this version had no endpoint to go to).
  `
  ALTER TABLE events ADD COLUMN fanned INTEGER NOT NULL DEFAULT 0;
  UPDATE events SET fanned = 1;
  CREATE INDEX events_unfanned ON events (seq) WHERE fanned = 0;
  CREATE TABLE webhook_endpoints (
    id                     TEXT PRIMARY KEY,
    team_id                TEXT NOT NULL REFERENCES teams (id),
    url                    TEXT NOT NULL,
    events                 TEXT NOT NULL,
    description            TEXT,
    enabled                INTEGER NOT NULL DEFAULT 1,
    disabled_reason        TEXT,
    disabled_at            TEXT,
    created_at             TEXT NOT NULL,
    secret                 TEXT NOT NULL,
    previous_secret        TEXT,
    previous_secret_until  INTEGER,
    failing_since          INTEGER
  ) STRICT;
  CREATE INDEX webhook_endpoints_team ON webhook_endpoints (team_id, created_at);
  CREATE TABLE webhook_deliveries (
    seq              INTEGER PRIMARY KEY AUTOINCREMENT,
    id               TEXT NOT NULL UNIQUE,
    endpoint_id      TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    team_id          TEXT NOT NULL,
    event_id         TEXT NOT NULL,
    event_type       TEXT NOT NULL,
    payload          TEXT NOT NULL,
    state            TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  INTEGER,
    lock_owner       TEXT,
    lock_until       INTEGER,
    created_at       TEXT NOT NULL,
    UNIQUE (event_id, endpoint_id)
  ) STRICT;
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
  CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, seq);
  CREATE INDEX webhook_deliveries_locked ON webhook_deliveries (endpoint_id) WHERE lock_until IS NOT NULL;
  CREATE TABLE webhook_attempts (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_seq  INTEGER NOT NULL REFERENCES webhook_deliveries (seq) ON DELETE CASCADE,
    at            TEXT NOT NULL,
    status        INTEGER,
    duration_ms   REAL NOT NULL,
    response      TEXT NOT NULL,
    error         TEXT
  ) STRICT;
  CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_seq, id);
  `,
  // v12: batch jobs. A job's items are a queue that the service's workers claim from: `running`
  // with a lock owner and deadline while one runs, `job_teams` counting each team's running
  // items (its concurrency cap) and when it was last served (teams take turns). An item's pages
  // are stored one by one, each with the commit of its credit. Request records name the job
  // whose item made them.
  `
  CREATE TABLE jobs (
    id             TEXT PRIMARY KEY,
    team_id        TEXT NOT NULL REFERENCES teams (id),
    key_id         TEXT NOT NULL,
    test           INTEGER NOT NULL,
    label          TEXT,
    status         TEXT NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'cancelled')),
    created_at     INTEGER NOT NULL,
    started_at     INTEGER,
    completed_at   INTEGER,
    total          INTEGER NOT NULL,
    pending        INTEGER NOT NULL CHECK (pending >= 0),
    succeeded      INTEGER NOT NULL DEFAULT 0,
    failed         INTEGER NOT NULL DEFAULT 0,
    cancelled      INTEGER NOT NULL DEFAULT 0,
    pages          INTEGER NOT NULL DEFAULT 0,
    credits        INTEGER NOT NULL DEFAULT 0,
    cache_max_age  TEXT,
    max_pages      INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX jobs_team ON jobs (team_id, created_at DESC, id DESC);
  CREATE INDEX jobs_ended ON jobs (completed_at) WHERE completed_at IS NOT NULL;

  CREATE TABLE job_items (
    job_id           TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    idx              INTEGER NOT NULL,
    team_id          TEXT NOT NULL,
    queued_at        INTEGER NOT NULL,
    endpoint         TEXT NOT NULL,
    params           TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed', 'cancelled')),
    page_count       INTEGER NOT NULL DEFAULT 0,
    credits          INTEGER NOT NULL DEFAULT 0,
    error_code       TEXT,
    error_message    TEXT,
    attempts         INTEGER NOT NULL DEFAULT 0,
    lock_owner       TEXT,
    lock_until       INTEGER,
    next_attempt_at  INTEGER NOT NULL DEFAULT 0,
    finished_at      INTEGER,
    PRIMARY KEY (job_id, idx)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX job_items_ready ON job_items (team_id, queued_at, job_id, idx) WHERE status = 'pending';
  CREATE INDEX job_items_running ON job_items (lock_until) WHERE status = 'running';

  CREATE TABLE job_pages (
    job_id  TEXT NOT NULL,
    idx     INTEGER NOT NULL,
    n       INTEGER NOT NULL,
    data    TEXT NOT NULL,
    PRIMARY KEY (job_id, idx, n),
    FOREIGN KEY (job_id, idx) REFERENCES job_items (job_id, idx) ON DELETE CASCADE
  ) STRICT, WITHOUT ROWID;

  CREATE TABLE job_teams (
    team_id    TEXT PRIMARY KEY,
    running    INTEGER NOT NULL DEFAULT 0 CHECK (running >= 0),
    served_at  INTEGER NOT NULL DEFAULT 0
  ) STRICT;

  ALTER TABLE requests ADD COLUMN job_id TEXT;
  `,
  // v13: monitors and their runs. A monitor's `next_run_at` is the slot of its next run; a run
  // takes the monitor by setting `lock_owner` and `locked_until` in one statement (claimDue), and
  // an expired lock lets another process take it. `last_data` is the last successful run's data
  // as compared (the next run's patch is computed against it). Times are epoch ms.
  `
  CREATE TABLE monitors (
    seq                   INTEGER PRIMARY KEY AUTOINCREMENT,
    id                    TEXT NOT NULL UNIQUE,
    team_id               TEXT NOT NULL REFERENCES teams (id),
    test                  INTEGER NOT NULL,
    key_id                TEXT NOT NULL,
    endpoint              TEXT NOT NULL,
    params                TEXT NOT NULL,
    interval_s            INTEGER CHECK (interval_s >= 1),
    cron                  TEXT,
    timezone              TEXT NOT NULL,
    watch                 TEXT NOT NULL,
    label                 TEXT,
    status                TEXT NOT NULL CHECK (status IN ('active', 'paused')),
    created_at            INTEGER NOT NULL,
    last_run_at           INTEGER,
    next_run_at           INTEGER NOT NULL,
    last_change_at        INTEGER,
    runs                  INTEGER NOT NULL DEFAULT 0,
    consecutive_failures  INTEGER NOT NULL DEFAULT 0,
    failure_alerted       INTEGER NOT NULL DEFAULT 0,
    last_data             TEXT,
    last_good_at          INTEGER,
    lock_owner            TEXT,
    locked_until          INTEGER,
    CHECK ((interval_s IS NULL) <> (cron IS NULL))
  ) STRICT;
  CREATE INDEX monitors_team ON monitors (team_id, seq);
  CREATE INDEX monitors_due ON monitors (next_run_at) WHERE status = 'active';

  CREATE TABLE monitor_runs (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    id             TEXT NOT NULL UNIQUE,
    monitor_id     TEXT NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
    at             INTEGER NOT NULL,
    started_at     INTEGER NOT NULL,
    finished_at    INTEGER NOT NULL,
    status         TEXT NOT NULL CHECK (status IN ('succeeded', 'failed', 'skipped')),
    credits        INTEGER NOT NULL,
    changed        INTEGER NOT NULL,
    patch          TEXT,
    error_code     TEXT,
    error_message  TEXT,
    request_id     TEXT NOT NULL,
    UNIQUE (monitor_id, at)
  ) STRICT;
  CREATE INDEX monitor_runs_finished ON monitor_runs (finished_at);
  `,
  // v14: settled (committed or refunded) reservations are deleted some days after their deadline
  // (ledger.ts, pruneReservations); this index finds them without reading the whole table.
  `
  CREATE INDEX reservations_settled ON reservations (deadline) WHERE state <> 'pending';
  `,
  // v15: a team's pending reservations are counted through reservations_pending, which holds
  // only the reservations in flight. Their index by team was written at each reservation and
  // again at its settlement, on every live scrape, for a count that only usage reads
  // (`npm run bench:live-steps`: a reservation and its settlement 48.0 -> 44.4 µs, alternated).
  `
  DROP INDEX reservations_team_pending;
  `,
];
