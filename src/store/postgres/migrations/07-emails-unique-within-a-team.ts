// Migration 7 of the PostgreSQL schema (../schema.ts runs them in order). Released: never edited.

export const migration = {
  name: 'emails unique within a team',
  // Each team's account under an email is its own, so that adding a user never tells whether
  // the email has an account elsewhere. (team_id, email) serves the team's lists too.
  sql: `
    ALTER TABLE users DROP CONSTRAINT users_email_key;
    ALTER TABLE users ADD CONSTRAINT users_team_email UNIQUE (team_id, email);
    DROP INDEX users_team;
    CREATE INDEX users_email ON users (email);
    `,
};
