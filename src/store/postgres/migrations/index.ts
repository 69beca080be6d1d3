// The PostgreSQL schema's migrations, in the order they are applied: migration N is version N.
// A new version is a new file here, added at the end of the list; a released one is never edited
// (a deployed database has run it).
import { migration as m01 } from './01-accounts-ledger-reservations-cache.ts';
import { migration as m02 } from './02-request-records.ts';
import { migration as m03 } from './03-team-versions.ts';
import { migration as m04 } from './04-users-password-links-sessions.ts';
import { migration as m05 } from './05-drift-samples.ts';
import { migration as m06 } from './06-one-outstanding-password-link-per-user.ts';
import { migration as m07 } from './07-emails-unique-within-a-team.ts';
import { migration as m08 } from './08-idempotency-keys.ts';
import { migration as m09 } from './09-daily-credit-limits-of-keys.ts';
import { migration as m10 } from './10-low-balance-alerts-and-account-events.ts';
import { migration as m11 } from './11-webhooks.ts';
import { migration as m12 } from './12-batch-jobs.ts';
import { migration as m13 } from './13-monitors-and-their-runs.ts';
import { migration as m14 } from './14-settled-reservations-by-deadline.ts';

export interface Migration {
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [m01, m02, m03, m04, m05, m06, m07, m08, m09, m10, m11, m12, m13, m14];
