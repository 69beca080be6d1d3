// Migration 13 of the PostgreSQL schema (../schema.ts runs them in order). Released: never edited.

export const migration = {
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
};
