// Migration 1 of the PostgreSQL schema (../schema.ts runs them in order). Released: never edited.

export const migration = {
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
};
