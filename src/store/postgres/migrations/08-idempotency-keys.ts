// Migration 8 of the PostgreSQL schema (../schema.ts runs them in order). Released: never edited.

export const migration = {
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
};
