// Migration 9 of the PostgreSQL schema (../schema.ts runs them in order). Released: never edited.

export const migration = {
  name: 'daily credit limits of keys',
  // A key's spending is counted on the day of its last spend (`spent_day`, UTC), and a
  // reservation remembers its key and day, so that a refund gives the credit back to that day.
  sql: `
    ALTER TABLE api_keys
      ADD COLUMN daily_credit_limit bigint CHECK (daily_credit_limit >= 0),
      ADD COLUMN spent_day text,
      ADD COLUMN spent bigint NOT NULL DEFAULT 0 CHECK (spent >= 0);
    ALTER TABLE reservations
      ADD COLUMN key_id text,
      ADD COLUMN day text;
    `,
};
