// Migration 2 of the PostgreSQL schema (../schema.ts runs them in order). Released: never edited.

export const migration = {
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
};
