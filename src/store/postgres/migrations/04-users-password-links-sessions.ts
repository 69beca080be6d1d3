// Migration 4 of the PostgreSQL schema (../schema.ts runs them in order). Released: never edited.

export const migration = {
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
};
