// Migration 10 of the PostgreSQL schema (../schema.ts runs them in order). Released: never edited.

export const migration = {
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
};
