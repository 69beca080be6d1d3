// Migration 3 of the PostgreSQL schema (../schema.ts runs them in order). Released: never edited.

export const migration = {
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
};
