// Operator commands against the service's store: `npm run -s admin -- <command>`.
// Same environment variables as the server; `--json` prints JSON, otherwise tables. Errors go to
// stderr, as `error: <message>` or, under `--json`, as `{"error": {"code"?, "message"}}`; so does
// what a command that takes time is doing (`migrate`), but not under `--json`. The
// exit code is 2 for a malformed command, 1 for any other failure.
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { pathToFileURL } from 'node:url';
import { configuredBaseUrl, loadConfig } from '../config.ts';
import { initialiseDatabase, migrateStores, openStores, type Initialised } from '../store/open.ts';
import { issuePasswordLink } from '../account/users.ts';
import { generateKey } from '../server/keys.ts';
import { MAX_DAILY_CREDITS, MAX_LOW_BALANCE_ALERT, ROLES } from '../store/rules.ts';
import { spentOn, utcDay, type Role, type Stores, type User } from '../store/types.ts';

type Row = Record<string, unknown>;

const DAY_MS = 24 * 60 * 60 * 1000;
const startOfUtcDay = (ms: number): number => ms - (ms % DAY_MS);
const AGE_UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: DAY_MS };

/** An ISO date or time, or an age back from now (`30m`, `12h`, `7d`), as epoch ms. */
const timeOrAge = (what: string) => (raw: string) => {
  const age = /^(\d{1,6})([mhd])$/.exec(raw);
  if (age) return Date.now() - Number(age[1]) * (AGE_UNITS[age[2] as string] as number);
  const at = /^\d{4}-\d\d-\d\d(T[\d:.]+(Z|[+-]\d\d:\d\d)?)?$/.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(at)) throw new InvalidArgumentError(`${what} must be an ISO date or time (2026-11-20, 2026-11-20T10:00:00Z) or an age (30m, 12h, 7d).`);
  return at;
};

function table(rows: Row[]): string {
  if (rows.length === 0) return '(none)';
  const columns = Object.keys(rows[0] ?? {});
  const cell = (value: unknown) => (value === null || value === undefined ? '-' : String(value));
  const widths = columns.map((column) => Math.max(column.length, ...rows.map((row) => cell(row[column]).length)));
  const line = (values: string[]) => values.map((value, index) => value.padEnd(widths[index] ?? 0)).join('  ').trimEnd();
  return [line(columns), line(widths.map((width) => '-'.repeat(width))), ...rows.map((row) => line(columns.map((column) => cell(row[column]))))].join('\n');
}

const positiveInteger = (what: string) => (raw: string) => {
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < 1) throw new InvalidArgumentError(`${what} must be a positive integer.`);
  return value;
};
/** `--daily-credits`: a whole number from 0 to MAX_DAILY_CREDITS, or `none` (commander takes a parser's null for no value). */
const dailyCredits = (raw: string): number | 'none' => {
  if (raw === 'none') return 'none';
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value > MAX_DAILY_CREDITS) throw new InvalidArgumentError(`--daily-credits must be a whole number from 0 to ${MAX_DAILY_CREDITS}, or none.`);
  return value;
};
/** `--low-balance-alert`: a whole number from 0 to MAX_LOW_BALANCE_ALERT, or `none`. */
const lowBalanceAlert = (raw: string): number | 'none' => {
  if (raw === 'none') return 'none';
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value > MAX_LOW_BALANCE_ALERT) throw new InvalidArgumentError(`--low-balance-alert must be a whole number from 0 to ${MAX_LOW_BALANCE_ALERT}, or none.`);
  return value;
};
const nonNegativeInteger = (what: string) => (raw: string) => {
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value)) throw new InvalidArgumentError(`${what} must be a whole number of at least 0.`);
  return value;
};

/** The `code` of a JSON error: the API's codes for the same kinds of failure. */
type CliErrorCode = 'NOT_FOUND' | 'VALIDATION_ERROR';

class CliError extends Error {
  readonly code: CliErrorCode;
  constructor(message: string, code: CliErrorCode) {
    super(message);
    this.code = code;
  }
}

/** Shown with every new key: only its hash is stored. */
export const KEY_SHOWN_ONCE = 'This is the only time the full key is shown: store it now (only its hash is kept; a lost key is revoked and replaced).';
/** Shown with key listings: the server writes key use in batches. */
export const LAST_USE_NOTE = 'lastUsedAt is recorded by the server within seconds of a request (written in batches, and when it stops).';

/** `--json` among the options, before any `--`. */
const jsonRequested = (argv: string[]) => {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).includes('--json');
};

export interface CliOptions {
  json?: boolean;
  /** Where a command that takes time says what it does (standard error); not under --json. */
  tell?: (text: string) => void;
  /** Where set-password links point: PUBLIC_BASE_URL, else the address the server listens on. */
  baseUrl?: string;
  /** Creates the new, empty database of `init`; replaceable in tests. */
  initialise?: () => Promise<Initialised>;
}

export function buildCli(stores: () => Promise<Stores>, print: (text: string) => void, options: CliOptions = {}): Command {
  const initialise = options.initialise ?? (() => initialiseDatabase(loadConfig()));
  const program = new Command('admin').description('Operator commands for teams, keys and credits').option('--json', 'print JSON (errors too, on stderr)');
  program.exitOverride();
  // Subcommands copy these settings when they are created. Under --json, runCli prints
  // commander's errors as JSON instead.
  if (options.json) program.configureOutput({ writeErr: () => undefined, outputError: () => undefined });
  else program.showHelpAfterError();
  const out = (value: Row | Row[]) => {
    const json = Boolean(program.opts().json);
    print(json ? JSON.stringify(value, null, 2) : table(Array.isArray(value) ? value : [value]));
  };
  const requireTeam = async (id: string) => {
    const team = await (await stores()).accounts.getTeam(id);
    if (!team) throw new CliError(`No team ${id}.`, 'NOT_FOUND');
    return team;
  };
  const teamView = (team: { id: string; name: string; credits: number; rateLimit: number; lowBalanceAlert: number | null }) => ({
    id: team.id,
    name: team.name,
    credits: team.credits,
    rateLimit: team.rateLimit,
    lowBalanceAlert: team.lowBalanceAlert,
  });

  program
    .command('init')
    .description('create a new, empty database in DATA_DIR on purpose (never replaces one that exists)')
    .action(async () => {
      const done = await initialise();
      out({ database: done.database, orphanedWal: done.orphanedWal });
    });

  program
    .command('migrate')
    .description('bring the PostgreSQL database (DATABASE_URL) to this release\'s schema; prints the versions applied (each as it starts, on stderr)')
    .action(async () => {
      const { applied } = await migrateStores(loadConfig(), (line) => options.tell?.(`migrate: ${line}`));
      out({ applied: applied.join(',') || 'none: already up to date' });
    });

  const team = program.command('team').description('create, update and list teams');
  team
    .command('create')
    .description('create a team; prints it with its id')
    .requiredOption('--name <name>', 'team name')
    .option('--credits <n>', 'initial credits', nonNegativeInteger('--credits'), 0)
    .option('--rate-limit <n>', 'requests per rolling 60 seconds', positiveInteger('--rate-limit'), 100)
    .action(async (options: { name: string; credits: number; rateLimit: number }) => {
      if (options.name.trim() === '') throw new CliError('--name must not be empty.', 'VALIDATION_ERROR');
      out(teamView(await (await stores()).accounts.createTeam({ name: options.name.trim(), credits: options.credits, rateLimit: options.rateLimit })));
    });
  team
    .command('update')
    .description("change a team's rate limit, name or low-balance alert")
    .requiredOption('--team <id>', 'team id')
    .option('--rate-limit <n>', 'requests per rolling 60 seconds', positiveInteger('--rate-limit'))
    .option('--name <name>', 'new name')
    .option('--low-balance-alert <n|none>', `the balance under which the team is warned (credits.low; a banner in the dashboard), 0 to ${MAX_LOW_BALANCE_ALERT}, or none`, lowBalanceAlert)
    .action(async (options: { team: string; rateLimit?: number; name?: string; lowBalanceAlert?: number | 'none' }) => {
      await requireTeam(options.team);
      const changes: { rateLimit?: number; name?: string; lowBalanceAlert?: number | null } = {};
      if (options.rateLimit !== undefined) changes.rateLimit = options.rateLimit;
      if (options.name !== undefined) changes.name = options.name;
      if (options.lowBalanceAlert !== undefined) changes.lowBalanceAlert = options.lowBalanceAlert === 'none' ? null : options.lowBalanceAlert;
      if (Object.keys(changes).length === 0) throw new CliError('Nothing to update: give --rate-limit, --name and/or --low-balance-alert.', 'VALIDATION_ERROR');
      const updated = await (await stores()).accounts.updateTeam(options.team, changes);
      if (!updated) throw new CliError(`No team ${options.team}.`, 'NOT_FOUND');
      out(teamView(updated));
    });
  team
    .command('list')
    .description('list every team')
    .action(async () => out((await (await stores()).accounts.listTeams()).map(teamView)));

  program
    .command('credits')
    .description("add to a team's credits")
    .command('add')
    .description('add credits to a team (a top-up in its ledger); prints the new balance')
    .requiredOption('--team <id>', 'team id')
    .requiredOption('--amount <n>', 'credits to add', positiveInteger('--amount'))
    .action(async (options: { team: string; amount: number }) => {
      await requireTeam(options.team);
      const balance = await (await stores()).ledger.addCredits(options.team, options.amount, null);
      out({ team: options.team, added: options.amount, balance });
    });

  const key = program.command('key').description("create, list, limit and revoke API keys");
  key
    .command('create')
    .description('create an API key for a team; the full key is shown only this once')
    .requiredOption('--team <id>', 'team id')
    .option('--name <name>', 'key name', 'default')
    .option('--test', 'a test-mode key (psk_test_): its requests go to the built-in sandbox, cost nothing and skip the cache (needs TEST_MODE=on)')
    .option('--daily-credits <n>', `credits the key may spend on live scrapes per UTC day (0 to ${MAX_DAILY_CREDITS}); by default none`, dailyCredits)
    .action(async (options: { team: string; name: string; test?: boolean; dailyCredits?: number | 'none' }) => {
      await requireTeam(options.team);
      const generated = generateKey(options.test ? 'test' : 'live');
      const record = await (await stores()).accounts.createKey({
        teamId: options.team,
        name: options.name,
        hash: generated.hash,
        prefix: generated.prefix,
        last4: generated.last4,
        dailyCreditLimit: options.dailyCredits === 'none' ? null : (options.dailyCredits ?? null),
      });
      const created = { id: record.id, key: generated.key, name: record.name, dailyCreditLimit: record.dailyCreditLimit };
      if (program.opts().json) out({ ...created, warning: KEY_SHOWN_ONCE });
      else print(`${table([created])}\n\n${KEY_SHOWN_ONCE}`);
    });
  key
    .command('list')
    .description("list a team's keys, never in full; lastUsedAt shows a use within seconds")
    .requiredOption('--team <id>', 'team id')
    .action(async (options: { team: string }) => {
      await requireTeam(options.team);
      const keys = await (await stores()).accounts.listKeys(options.team);
      const today = utcDay(Date.now());
      const rows = keys.map((k) => ({
        id: k.id,
        name: k.name,
        key: `${k.prefix}…${k.last4}`,
        createdAt: k.createdAt,
        lastUsedAt: k.lastUsedAt,
        revokedAt: k.revokedAt,
        dailyCreditLimit: k.dailyCreditLimit,
        spentToday: spentOn(k, today),
      }));
      // JSON stays the bare array that scripts read; the note is for people.
      if (program.opts().json) out(rows);
      else print(`${table(rows)}\n\n${LAST_USE_NOTE}`);
    });
  key
    .command('update')
    .description("change a key's daily credit limit (its live scrapes past it get 402 KEY_CREDIT_LIMIT until midnight UTC)")
    .argument('<keyId>', 'key id (key list)')
    .requiredOption('--daily-credits <n|none>', `credits per UTC day, 0 to ${MAX_DAILY_CREDITS}, or none to remove the limit`, dailyCredits)
    .action(async (id: string, options: { dailyCredits: number | 'none' }) => {
      const updated = await (await stores()).accounts.updateKey(id, { dailyCreditLimit: options.dailyCredits === 'none' ? null : options.dailyCredits });
      if (!updated) throw new CliError(`No key ${id}.`, 'NOT_FOUND');
      out({ id: updated.id, name: updated.name, dailyCreditLimit: updated.dailyCreditLimit, spentToday: spentOn(updated, utcDay(Date.now())) });
    });
  key
    .command('revoke')
    .description('revoke a key; requests with it fail with 401 from the next one on')
    .requiredOption('--id <keyId>', 'key id')
    .action(async (options: { id: string }) => {
      if (!(await (await stores()).accounts.revokeKey(options.id))) throw new CliError(`No active key ${options.id}.`, 'NOT_FOUND');
      out({ id: options.id, revoked: true });
    });

  const linkFor = async (user: User) => issuePasswordLink((await stores()).users, user.id, options.baseUrl ?? configuredBaseUrl(loadConfig()), Date.now());
  const userView = (user: User) => ({ id: user.id, email: user.email, teamId: user.teamId, role: user.role, createdAt: user.createdAt, disabledAt: user.disabledAt, hasPassword: user.hasPassword });
  const role = (raw: string): Role => {
    if (!(ROLES as readonly string[]).includes(raw)) throw new InvalidArgumentError(`--role must be one of ${ROLES.join(', ')}.`);
    return raw as Role;
  };
  const user = program.command('user').description("create, list and disable the dashboard's account holders");
  user
    .command('create')
    .description('create an account holder; prints a one-time link (24 hours) where they set their password')
    .requiredOption('--team <id>', 'team id')
    .requiredOption('--email <email>', 'email address, used to sign in')
    .option('--role <role>', `${ROLES.join(', ')}: owner manages the team's keys and users; member uses its own keys; operator sees every team and adds credits`, role, 'owner' as Role)
    .action(async (options: { team: string; email: string; role: Role }) => {
      await requireTeam(options.team);
      let created: User;
      try {
        created = await (await stores()).users.createUser({ teamId: options.team, email: options.email, role: options.role });
      } catch (error) {
        if (error instanceof RangeError) throw new CliError(error.message, 'VALIDATION_ERROR');
        throw error;
      }
      out({ id: created.id, email: created.email, teamId: created.teamId, role: created.role, setPasswordUrl: await linkFor(created) });
    });
  user
    .command('link')
    .description('a new one-time link (24 hours) where the user sets a new password: how a forgotten one is reset')
    .requiredOption('--id <userId>', 'user id')
    .action(async (options: { id: string }) => {
      const found = await (await stores()).users.getUser(options.id);
      if (!found || found.disabledAt) throw new CliError(`No enabled user ${options.id}.`, 'NOT_FOUND');
      out({ id: found.id, email: found.email, setPasswordUrl: await linkFor(found) });
    });
  user
    .command('list')
    .description('list account holders, of one team or all')
    .option('--team <id>', 'team id')
    .action(async (options: { team?: string }) => {
      if (options.team !== undefined) await requireTeam(options.team);
      out((await (await stores()).users.listUsers(options.team)).map(userView));
    });
  user
    .command('disable')
    .description('disable an account holder: signed out everywhere, unable to sign in or use a link')
    .requiredOption('--id <userId>', 'user id')
    .action(async (options: { id: string }) => {
      if (!(await (await stores()).users.disableUser(options.id))) throw new CliError(`No enabled user ${options.id}.`, 'NOT_FOUND');
      out({ id: options.id, disabled: true });
    });

  const drift = program.command('drift').description('upstream pages a platform mapping did not recognise (UPSTREAM_UNRECOGNISED), kept 14 days');
  drift
    .command('list')
    .description('the samples kept, newest first, without their bodies')
    .option('--platform <name>', 'only this platform')
    .option('--limit <n>', 'rows', positiveInteger('--limit'), 50)
    .action(async (options: { platform?: string; limit: number }) => {
      if (options.limit > 1000) throw new CliError('--limit must be at most 1000.', 'VALIDATION_ERROR');
      out((await (await stores()).drift.list(options)).map((sample) => ({ ...sample })));
    });
  drift
    .command('show')
    .description('one sample whole: reason, request id, the answer\'s status, headers and body')
    .argument('<id>', 'sample id (drift list)')
    .action(async (id: string) => {
      const sample = await (await stores()).drift.get(id);
      if (!sample) throw new CliError(`No drift sample ${id}.`, 'NOT_FOUND');
      if (program.opts().json) out({ ...sample });
      else {
        const { body, headers, ...rest } = sample;
        print(`${table([rest])}\n\n${Object.entries(headers).map(([name, value]) => `${name}: ${value}`).join('\n')}\n\n${body}${sample.truncated ? '\n[cut at the size cap]' : ''}`);
      }
    });

  program
    .command('ledger')
    .description("a team's ledger, newest first")
    .requiredOption('--team <id>', 'team id')
    .option('--limit <n>', 'rows', positiveInteger('--limit'), 100)
    .action(async (options: { team: string; limit: number }) => {
      await requireTeam(options.team);
      const entries = await (await stores()).ledger.entries(options.team, options.limit);
      out(entries.map((entry) => ({ id: entry.id, amount: entry.amount, reason: entry.reason, requestId: entry.requestId, createdAt: entry.createdAt })));
    });
  program
    .command('usage')
    .description("a team's credits charged, refunded and added, and its requests per day and per endpoint")
    .requiredOption('--team <id>', 'team id')
    .option('--days <n>', 'days of request records totalled', positiveInteger('--days'), 30)
    .action(async (options: { team: string; days: number }) => {
      const opened = await stores();
      const usage = await opened.ledger.usage(options.team);
      if (!usage) throw new CliError(`No team ${options.team}.`, 'NOT_FOUND');
      const totals = await opened.requests.totals(options.team, startOfUtcDay(Date.now()) - (options.days - 1) * DAY_MS);
      if (program.opts().json) out({ ...usage, days: totals.days, endpoints: totals.endpoints });
      else print([table([{ ...usage }]), `Requests per day (last ${options.days} days, UTC)`, table(totals.days), 'Requests per endpoint', table(totals.endpoints)].join('\n\n'));
    });
  program
    .command('requests')
    .description("a team's request records, newest first")
    .requiredOption('--team <id>', 'team id')
    .option('--since <time>', 'from this time: an ISO date or time, or an age such as 30m, 12h, 7d', timeOrAge('--since'))
    .option('--until <time>', 'before this time: an ISO date or time, or an age such as 1h', timeOrAge('--until'))
    .option('--status <code>', 'only answers with this HTTP status', positiveInteger('--status'))
    .option('--endpoint <path>', 'only this endpoint, e.g. /v1/shopfront/shop')
    .option('--limit <n>', 'records per page (at most 1000)', positiveInteger('--limit'), 50)
    .option('--cursor <cursor>', 'the next page: the cursor printed with the previous one')
    .action(async (options: { team: string; since?: number; until?: number; status?: number; endpoint?: string; limit: number; cursor?: string }) => {
      await requireTeam(options.team);
      if (options.limit > 1000) throw new CliError('--limit must be at most 1000.', 'VALIDATION_ERROR');
      let page;
      try {
        page = await (await stores()).requests.list({ teamId: options.team, ...options });
      } catch (error) {
        if (error instanceof RangeError) throw new CliError(`--cursor is not one this command printed.`, 'VALIDATION_ERROR');
        throw error;
      }
      const records = page.records.map((record) => ({ ...record, at: new Date(record.at).toISOString() }));
      if (program.opts().json) out({ records, next: page.next });
      else print(`${table(records)}${page.next ? `\n\nnext page: --cursor ${page.next}` : ''}`);
    });
  return program;
}

export async function runCli(argv: string[], print: (text: string) => void = console.log, fail: (text: string) => void = console.error): Promise<number> {
  let stores: Promise<Stores> | null = null;
  const open = () => (stores ??= openStores(loadConfig()));
  const json = jsonRequested(argv);
  const report = (message: string, code?: CliErrorCode) => fail(json ? JSON.stringify({ error: code ? { code, message } : { message } }) : `error: ${message}`);
  try {
    await buildCli(open, print, { json, tell: json ? undefined : fail }).parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode === 0) return 0; // --help, `help`, --version
      // A malformed command. Without --json commander has already printed why (or the help, when
      // no command was given).
      if (json) report(error.code === 'commander.help' ? 'A command is required: see --help.' : error.message.replace(/^error: /, ''), 'VALIDATION_ERROR');
      return 2;
    }
    report(error instanceof Error ? error.message : String(error), error instanceof CliError ? error.code : undefined);
    return 1;
  } finally {
    const opened = await (stores as Promise<Stores> | null)?.catch(() => null);
    await opened?.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await runCli(process.argv.slice(2));
}
