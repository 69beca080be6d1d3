// The PostgreSQL schema, one migration per version, and the runner that applies them.
//
// `schema_migrations` lists the versions applied. `npm run -s admin -- migrate` (or the server
// with MIGRATE=auto) applies the missing ones in order, each in its own transaction, under an
// advisory lock so that nodes starting together migrate once. Otherwise the server checks the
// version and refuses to start on a database behind or ahead of it. A new version appends a
// migration (migrations/); a released one is never edited.
import type pg from 'pg';
import { MIGRATIONS } from './migrations/index.ts';
import { toStoreError } from './pool.ts';

export { MIGRATIONS };

export const SCHEMA_VERSION = MIGRATIONS.length;

/** The command that brings a database to this program's schema. */
export const MIGRATE_COMMAND = 'npm run -s admin -- migrate';

/** Any 64-bit number unique to this service: nodes migrating at once wait for each other on it. */
export const MIGRATION_LOCK = 7_305_112_409;

export class SchemaMismatchError extends Error {
  readonly found: number;
  readonly expected: number;
  constructor(found: number, expected: number) {
    super(
      found < expected
        ? `The PostgreSQL database is at schema version ${found}; this program needs version ${expected}. Run: ${MIGRATE_COMMAND} (or start with MIGRATE=auto).`
        : `The PostgreSQL database is at schema version ${found}, newer than this program's ${expected}: it was migrated by a newer release. Run that release, or restore a backup taken before its migration.`,
    );
    this.name = 'SchemaMismatchError';
    this.found = found;
    this.expected = expected;
  }
}

async function appliedVersion(client: pg.Pool | pg.PoolClient): Promise<number> {
  const exists = await client.query<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t");
  if (!exists.rows[0]?.t) return 0;
  const row = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
  return row.rows[0]?.v ?? 0;
}

/** Throws SchemaMismatchError unless the database is at exactly this program's version. */
export async function checkSchema(pool: pg.Pool): Promise<void> {
  let found: number;
  try {
    found = await appliedVersion(pool);
  } catch (err) {
    throw toStoreError(err);
  }
  if (found !== SCHEMA_VERSION) throw new SchemaMismatchError(found, SCHEMA_VERSION);
}

/**
 * Applies the missing migrations in order; returns the versions applied (none when up to date).
 * `tell` hears what takes time: a wait for the lock another process migrating holds, and each
 * migration as it starts.
 */
export async function migrate(pool: pg.Pool, tell: (line: string) => void = () => {}): Promise<number[]> {
  const client = await pool.connect().catch((err: unknown) => {
    throw toStoreError(err);
  });
  const applied: number[] = [];
  try {
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [MIGRATION_LOCK]);
    if (!rows[0]?.locked) {
      tell('waiting for the migration lock: another process is migrating this database');
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    }
    try {
      await client.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      const from = await appliedVersion(client);
      if (from > SCHEMA_VERSION) throw new SchemaMismatchError(from, SCHEMA_VERSION);
      for (let v = from + 1; v <= SCHEMA_VERSION; v++) {
        const migration = MIGRATIONS[v - 1] as { name: string; sql: string };
        tell(`applying migration ${v} of ${SCHEMA_VERSION}: ${migration.name}`);
        await client.query('BEGIN');
        try {
          await client.query(migration.sql);
          await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [v, migration.name]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch(() => {});
          throw err;
        }
        applied.push(v);
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    }
  } catch (err) {
    throw toStoreError(err);
  } finally {
    client.release();
  }
  return applied;
}
