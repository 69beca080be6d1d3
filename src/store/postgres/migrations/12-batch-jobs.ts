// Migration 12 of the PostgreSQL schema (../schema.ts runs them in order). Released: never edited.

export const migration = {
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
};
