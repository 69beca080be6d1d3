// Migration 5 of the PostgreSQL schema (../schema.ts runs them in order). Released: never edited.

export const migration = {
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
};
