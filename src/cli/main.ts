// Operator commands against the service's store: `npm run -s admin -- <command>`.
// Same environment variables as the server; `--json` prints JSON, otherwise tables.
import { Command, InvalidArgumentError } from 'commander';
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../config.ts';
import { initialiseDatabase, openStores, type Initialised } from '../store/open.ts';
import { generateKey } from '../server/keys.ts';
import type { Stores } from '../store/types.ts';

type Row = Record<string, unknown>;

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
const nonNegativeInteger = (what: string) => (raw: string) => {
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value)) throw new InvalidArgumentError(`${what} must be a whole number of at least 0.`);
  return value;
};

class CliError extends Error {}

export function buildCli(
  stores: () => Stores,
  print: (text: string) => void,
  initialise: () => Promise<Initialised> = () => initialiseDatabase(loadConfig()),
): Command {
  const program = new Command('admin').description('Operator commands for teams, keys and credits').option('--json', 'print JSON').showHelpAfterError();
  program.exitOverride();
  const out = (value: Row | Row[]) => {
    const json = Boolean(program.opts().json);
    print(json ? JSON.stringify(value, null, 2) : table(Array.isArray(value) ? value : [value]));
  };
  const requireTeam = async (id: string) => {
    const team = await stores().accounts.getTeam(id);
    if (!team) throw new CliError(`No team ${id}.`);
    return team;
  };
  const teamView = (team: { id: string; name: string; credits: number; rateLimit: number }) => ({ id: team.id, name: team.name, credits: team.credits, rateLimit: team.rateLimit });

  program
    .command('init')
    .description('create a new, empty database in DATA_DIR on purpose (never replaces one that exists)')
    .action(async () => {
      const done = await initialise();
      out({ database: done.database, orphanedWal: done.orphanedWal });
    });

  const team = program.command('team').description('create, update and list teams');
  team
    .command('create')
    .requiredOption('--name <name>', 'team name')
    .option('--credits <n>', 'initial credits', nonNegativeInteger('--credits'), 0)
    .option('--rate-limit <n>', 'requests per rolling 60 seconds', positiveInteger('--rate-limit'), 100)
    .action(async (options: { name: string; credits: number; rateLimit: number }) => {
      if (options.name.trim() === '') throw new CliError('--name must not be empty.');
      out(teamView(await stores().accounts.createTeam({ name: options.name.trim(), credits: options.credits, rateLimit: options.rateLimit })));
    });
  team
    .command('update')
    .requiredOption('--team <id>', 'team id')
    .option('--rate-limit <n>', 'requests per rolling 60 seconds', positiveInteger('--rate-limit'))
    .option('--name <name>', 'new name')
    .action(async (options: { team: string; rateLimit?: number; name?: string }) => {
      await requireTeam(options.team);
      const changes: { rateLimit?: number; name?: string } = {};
      if (options.rateLimit !== undefined) changes.rateLimit = options.rateLimit;
      if (options.name !== undefined) changes.name = options.name;
      if (Object.keys(changes).length === 0) throw new CliError('Nothing to update: give --rate-limit and/or --name.');
      const updated = await stores().accounts.updateTeam(options.team, changes);
      if (!updated) throw new CliError(`No team ${options.team}.`);
      out(teamView(updated));
    });
  team.command('list').action(async () => out((await stores().accounts.listTeams()).map(teamView)));

  program
    .command('credits')
    .description('add credits to a team')
    .command('add')
    .requiredOption('--team <id>', 'team id')
    .requiredOption('--amount <n>', 'credits to add', positiveInteger('--amount'))
    .action(async (options: { team: string; amount: number }) => {
      await requireTeam(options.team);
      const balance = await stores().ledger.addCredits(options.team, options.amount, null);
      out({ team: options.team, added: options.amount, balance });
    });

  const key = program.command('key').description('create, list and revoke API keys');
  key
    .command('create')
    .requiredOption('--team <id>', 'team id')
    .option('--name <name>', 'key name', 'default')
    .action(async (options: { team: string; name: string }) => {
      await requireTeam(options.team);
      const generated = generateKey();
      const record = await stores().accounts.createKey({ teamId: options.team, name: options.name, hash: generated.hash, prefix: generated.prefix, last4: generated.last4 });
      out({ id: record.id, key: generated.key, name: record.name });
    });
  key
    .command('list')
    .requiredOption('--team <id>', 'team id')
    .action(async (options: { team: string }) => {
      await requireTeam(options.team);
      const keys = await stores().accounts.listKeys(options.team);
      out(keys.map((k) => ({ id: k.id, name: k.name, key: `${k.prefix}…${k.last4}`, createdAt: k.createdAt, lastUsedAt: k.lastUsedAt, revokedAt: k.revokedAt })));
    });
  key
    .command('revoke')
    .requiredOption('--id <keyId>', 'key id')
    .action(async (options: { id: string }) => {
      if (!(await stores().accounts.revokeKey(options.id))) throw new CliError(`No active key ${options.id}.`);
      out({ id: options.id, revoked: true });
    });

  program
    .command('ledger')
    .description("a team's ledger, newest first")
    .requiredOption('--team <id>', 'team id')
    .option('--limit <n>', 'rows', positiveInteger('--limit'), 100)
    .action(async (options: { team: string; limit: number }) => {
      await requireTeam(options.team);
      const entries = await stores().ledger.entries(options.team, options.limit);
      out(entries.map((entry) => ({ id: entry.id, amount: entry.amount, reason: entry.reason, requestId: entry.requestId, createdAt: entry.createdAt })));
    });
  program
    .command('usage')
    .description("a team's credits charged, refunded and added")
    .requiredOption('--team <id>', 'team id')
    .action(async (options: { team: string }) => {
      const usage = await stores().ledger.usage(options.team);
      if (!usage) throw new CliError(`No team ${options.team}.`);
      out({ ...usage });
    });
  return program;
}

export async function runCli(argv: string[], print: (text: string) => void = console.log, fail: (text: string) => void = console.error): Promise<number> {
  let stores: Stores | null = null;
  const open = () => (stores ??= openStores(loadConfig()));
  try {
    await buildCli(open, print).parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'commander.helpDisplayed' || code === 'commander.version' || code === 'commander.help') return 0;
    if (typeof code === 'string' && code.startsWith('commander.')) return 2; // commander already printed why
    fail(`error: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  } finally {
    await (stores as Stores | null)?.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await runCli(process.argv.slice(2));
}
