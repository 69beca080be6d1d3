// Migration 14 of the PostgreSQL schema (../schema.ts runs them in order). Released: never edited.

export const migration = {
  name: 'settled reservations by deadline',
  // Settled (committed or refunded) reservations are deleted some days after their deadline
  // (ledger.ts, pruneReservations); this index finds them without reading the whole table.
  sql: `
    CREATE INDEX reservations_settled ON reservations (deadline) WHERE state <> 'pending';
    `,
};
