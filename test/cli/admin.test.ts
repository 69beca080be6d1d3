// The operator CLI, spawned as operators run it (`npm run -s admin -- …`, or the same script
// with the same Node), on the same data as the server: JSON and table output, exit codes and
// messages for bad input, and its effect on a running server over real HTTP.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig, PLATFORM_ORIGINS, UNPACED_ENV } from '../../src/config.ts';
import { endpoints } from '../../src/endpoints/index.ts';
import { buildCli, runCli } from '../../src/cli/main.ts';
import type { Command } from 'commander';
import { start, type Running } from '../../src/main.ts';
import { openSqliteStores } from '../../src/store/sqlite/index.ts';
import { byId, exampleQuery, startHarness, type Harness } from '../api/harness.ts';
import { until, variantQuery } from '../api/support.ts';
import { refusedPort, type RefusedPort } from '../support/ports.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const STACK = /^\s+at .+[:(]\d+/m;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

// Node's compile cache, shared by the spawned commands: each loads the service's modules.
const COMPILE_CACHE = mkdtempSync(join(tmpdir(), 'admin-cli-compile-cache-'));
after(() => rmSync(COMPILE_CACHE, { recursive: true, force: true }));

const run = (file: string, args: string[], dataDir: string) =>
  new Promise<Run>((resolve) => {
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, NODE_COMPILE_CACHE: COMPILE_CACHE };
    delete env.CURSOR_SECRET;
    execFile(file, args, { cwd: ROOT, env, timeout: 20_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });

/** `node src/cli/main.ts …` with the Node running the tests (what `npm run admin` runs). */
const admin = (dataDir: string, ...args: string[]) => run(process.execPath, ['--disable-warning=ExperimentalWarning', 'src/cli/main.ts', ...args], dataDir);

/** The documented way: `npm run -s admin -- …`. */
const npmAdmin = (dataDir: string, ...args: string[]) => run('npm', ['run', '-s', 'admin', '--', ...args], dataDir);

/** `runCli` in this process with DATA_DIR set, capturing what it and commander print. */
async function adminInProcess(dataDir: string, ...args: string[]): Promise<Run> {
  const previous = process.env.DATA_DIR;
  const writeErr = process.stderr.write;
  const stdout: string[] = [];
  const stderr: string[] = [];
  process.env.DATA_DIR = dataDir;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    stderr.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  try {
    const code = await runCli(
      args,
      (text) => stdout.push(`${text}\n`),
      (text) => stderr.push(`${text}\n`),
    );
    return { code, stdout: stdout.join(''), stderr: stderr.join('') };
  } finally {
    process.stderr.write = writeErr;
    if (previous === undefined) delete process.env.DATA_DIR;
    else process.env.DATA_DIR = previous;
  }
}

/** What commander prints on stdout for `--help` (it writes there directly). */
async function adminInProcessOut(...args: string[]): Promise<string> {
  const writeOut = process.stdout.write;
  const out: string[] = [];
  process.stdout.write = ((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  try {
    assert.equal(await runCli(args), 0);
  } finally {
    process.stdout.write = writeOut;
  }
  return out.join('');
}

/** Runs a command that must succeed and print JSON. */
async function adminJson<T>(dataDir: string, ...args: string[]): Promise<T> {
  const result = await admin(dataDir, '--json', ...args);
  assert.equal(result.code, 0, `admin ${args.join(' ')}: ${result.stderr}`);
  assert.equal(result.stderr, '');
  return JSON.parse(result.stdout) as T;
}

interface TeamView {
  id: string;
  name: string;
  credits: number;
  rateLimit: number;
}
interface KeyView {
  id: string;
  name: string;
  key: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}
interface LedgerRow {
  id: number;
  amount: number;
  reason: string;
  requestId: string | null;
  createdAt: string;
}

/** Parses a table: header line, dashes, rows (columns separated by two or more spaces), up to a blank line. */
function parseTable(text: string): { headers: string[]; rows: string[][] } {
  const lines = text.trimEnd().split('\n\n')[0]?.split('\n') ?? [];
  assert.ok(lines.length >= 2, `a table: ${text}`);
  const headers = (lines[0] as string).trim().split(/\s{2,}/);
  assert.match(lines[1] as string, /^-+(\s+-+)*$/, 'a rule under the headers');
  return { headers, rows: lines.slice(2).map((line) => line.trim().split(/\s{2,}/)) };
}

const tempDir = () => mkdtempSync(join(tmpdir(), 'admin-cli-test-'));

describe('operator CLI: output', () => {
  let dir = '';
  let team: TeamView;
  before(() => {
    dir = tempDir();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('`npm run -s admin -- --json team create` prints the team as JSON', async () => {
    const result = await npmAdmin(dir, '--json', 'team', 'create', '--name', 'acme', '--credits', '500', '--rate-limit', '100');
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '');
    team = JSON.parse(result.stdout) as TeamView;
    assert.deepEqual(Object.keys(team), ['id', 'name', 'credits', 'rateLimit', 'lowBalanceAlert']);
    assert.match(team.id, /^team_[A-Za-z0-9_-]+$/);
    assert.deepEqual({ ...team, id: '' }, { id: '', name: 'acme', credits: 500, rateLimit: 100, lowBalanceAlert: null });
  });

  test('defaults: 0 credits and a rate limit of 100; --json may follow the command', async () => {
    const created = JSON.parse((await admin(dir, 'team', 'create', '--name', 'defaults', '--json')).stdout) as TeamView;
    assert.equal(created.credits, 0);
    assert.equal(created.rateLimit, 100);
  });

  test('without --json: human-readable tables with headers', async () => {
    const created = await admin(dir, 'team', 'create', '--name', 'beta', '--credits', '7', '--rate-limit', '9');
    assert.equal(created.code, 0, created.stderr);
    assert.doesNotMatch(created.stdout, /^\s*[{[]/, 'not JSON');
    const one = parseTable(created.stdout);
    assert.deepEqual(one.headers, ['id', 'name', 'credits', 'rateLimit', 'lowBalanceAlert']);
    assert.equal(one.rows.length, 1);
    assert.deepEqual(one.rows[0]?.slice(1, 4), ['beta', '7', '9']);
    assert.match(one.rows[0]?.[0] ?? '', /^team_/);

    const list = await admin(dir, 'team', 'list');
    assert.equal(list.code, 0);
    const all = parseTable(list.stdout);
    assert.deepEqual(all.headers, ['id', 'name', 'credits', 'rateLimit', 'lowBalanceAlert']);
    assert.deepEqual(all.rows.map((row) => row[1]).sort(), ['acme', 'beta', 'defaults']);
    assert.ok(all.rows.some((row) => row[0] === team.id && row[2] === '500'));
  });

  test('team update --rate-limit changes the limit and prints the team', async () => {
    const updated = await adminJson<TeamView>(dir, 'team', 'update', '--team', team.id, '--rate-limit', '300');
    assert.deepEqual(updated, { ...team, rateLimit: 300 });
    const listed = await adminJson<TeamView[]>(dir, 'team', 'list');
    assert.equal(listed.find((candidate) => candidate.id === team.id)?.rateLimit, 300);
  });

  test('team update --low-balance-alert N|none sets the alert the API and the dashboard show', async () => {
    assert.equal((await adminJson<TeamView & { lowBalanceAlert: number | null }>(dir, 'team', 'update', '--team', team.id, '--low-balance-alert', '40')).lowBalanceAlert, 40);
    assert.equal((await adminJson<(TeamView & { lowBalanceAlert: number | null })[]>(dir, 'team', 'list')).find((candidate) => candidate.id === team.id)?.lowBalanceAlert, 40);
    assert.equal((await adminJson<TeamView & { lowBalanceAlert: number | null }>(dir, 'team', 'update', '--team', team.id, '--low-balance-alert', 'none')).lowBalanceAlert, null);
    for (const bad of ['-1', 'low', '1000000000001']) {
      const refused = await admin(dir, 'team', 'update', '--team', team.id, '--low-balance-alert', bad);
      assert.equal(refused.code, 2, bad);
      assert.match(refused.stderr, /--low-balance-alert must be a whole number from 0 to 1000000000000, or none/);
    }
  });

  test('credits add prints the new balance; ledger and usage show it', async () => {
    const added = await adminJson<{ team: string; added: number; balance: number }>(dir, 'credits', 'add', '--team', team.id, '--amount', '250');
    assert.deepEqual(added, { team: team.id, added: 250, balance: 750 });
    const [ledger, ledgerTable, usage, usageTable] = await Promise.all([
      adminJson<LedgerRow[]>(dir, 'ledger', '--team', team.id),
      admin(dir, 'ledger', '--team', team.id),
      adminJson<Record<string, unknown>>(dir, 'usage', '--team', team.id),
      admin(dir, 'usage', '--team', team.id),
    ]);
    assert.deepEqual(
      ledger.map((row) => [row.reason, row.amount, row.requestId]),
      [
        ['topup', 250, null],
        ['topup', 500, null],
      ],
      'newest first',
    );
    for (const row of ledger) assert.match(row.createdAt, ISO);
    const table = parseTable(ledgerTable.stdout);
    assert.deepEqual(table.headers, ['id', 'amount', 'reason', 'requestId', 'createdAt']);
    assert.equal(table.rows.length, 2);
    assert.deepEqual(usage, { teamId: team.id, charged: 0, refunded: 0, toppedUp: 750, balance: 750, pending: 0, days: [], endpoints: [] });
    const usageRows = parseTable(usageTable.stdout);
    assert.ok(usageRows.headers.includes('balance'));
    assert.ok(usageRows.rows[0]?.includes('750'));
  });

  test('key create shows the key once; key list shows prefix and last four only; key revoke', async () => {
    const created = await adminJson<{ id: string; key: string; name: string; warning: string }>(dir, 'key', 'create', '--team', team.id, '--name', 'production');
    assert.deepEqual(Object.keys(created), ['id', 'key', 'name', 'dailyCreditLimit', 'warning']);
    assert.match(created.warning, /only time the full key is shown/, 'stdout stays one JSON document, the warning inside it');
    assert.equal(created.name, 'production');
    assert.match(created.id, /^key_/);
    assert.match(created.key, /^psk_live_[A-Za-z0-9_-]{32,}$/, 'a recognisable prefix and at least 160 random bits');
    const unnamed = await adminJson<{ id: string; key: string; name: string }>(dir, 'key', 'create', '--team', team.id);
    assert.equal(unnamed.name, 'default');
    assert.notEqual(unnamed.key, created.key);

    const secretPart = (key: string) => key.slice('psk_live_'.length, -4);
    const [listJson, tableText] = await Promise.all([admin(dir, '--json', 'key', 'list', '--team', team.id), admin(dir, 'key', 'list', '--team', team.id)]);
    for (const output of [listJson.stdout, tableText.stdout]) {
      for (const key of [created.key, unnamed.key]) {
        assert.ok(!output.includes(key), 'the full key is never listed');
        assert.ok(!output.includes(secretPart(key)), 'nor its secret part');
      }
    }
    const keys = JSON.parse(listJson.stdout) as KeyView[];
    assert.deepEqual(
      keys.map((key) => [key.id, key.name]),
      [
        [created.id, 'production'],
        [unnamed.id, 'default'],
      ],
    );
    const production = keys[0] as KeyView;
    assert.equal(production.key, `psk_live_…${created.key.slice(-4)}`);
    assert.match(production.createdAt, ISO);
    assert.equal(production.lastUsedAt, null);
    assert.equal(production.revokedAt, null);
    const table = parseTable(tableText.stdout);
    for (const header of ['id', 'name', 'key', 'createdAt', 'lastUsedAt']) assert.ok(table.headers.includes(header), `column ${header}`);
    assert.ok(table.rows.some((row) => row.includes(`psk_live_…${created.key.slice(-4)}`)));

    const revoked = await adminJson<{ id: string; revoked: boolean }>(dir, 'key', 'revoke', '--id', created.id);
    assert.deepEqual(revoked, { id: created.id, revoked: true });
    const after = await adminJson<KeyView[]>(dir, 'key', 'list', '--team', team.id);
    assert.match(after.find((key) => key.id === created.id)?.revokedAt ?? '', ISO);
    assert.equal(after.find((key) => key.id === unnamed.id)?.revokedAt, null);
    const again = await admin(dir, 'key', 'revoke', '--id', created.id);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, new RegExp(`No active key ${created.id}`));
  });

  test('key create --daily-credits and key update KEY --daily-credits N|none set the daily credit limit; key list shows it and today\'s spending', async () => {
    const created = await adminJson<{ id: string; dailyCreditLimit: number | null }>(dir, 'key', 'create', '--team', team.id, '--name', 'limited', '--daily-credits', '5');
    assert.equal(created.dailyCreditLimit, 5);
    const listed = async () => (await adminJson<(KeyView & { dailyCreditLimit: number | null; spentToday: number })[]>(dir, 'key', 'list', '--team', team.id)).find((key) => key.id === created.id);
    assert.deepEqual([(await listed())?.dailyCreditLimit, (await listed())?.spentToday], [5, 0]);
    assert.deepEqual(await adminJson(dir, 'key', 'update', created.id, '--daily-credits', '0'), { id: created.id, name: 'limited', dailyCreditLimit: 0, spentToday: 0 });
    assert.deepEqual(await adminJson(dir, 'key', 'update', created.id, '--daily-credits', 'none'), { id: created.id, name: 'limited', dailyCreditLimit: null, spentToday: 0 });
    assert.equal((await listed())?.dailyCreditLimit, null);
    const table = parseTable((await admin(dir, 'key', 'list', '--team', team.id)).stdout);
    for (const header of ['dailyCreditLimit', 'spentToday']) assert.ok(table.headers.includes(header), header);
    for (const bad of ['-1', '1.5', 'lots', '1000000001', '']) {
      const refused = await admin(dir, 'key', 'update', created.id, '--daily-credits', bad);
      assert.equal(refused.code, 2, bad);
      assert.match(refused.stderr, /--daily-credits must be a whole number from 0 to 1000000000, or none/);
    }
    const unknown = await admin(dir, '--json', 'key', 'update', 'key_doesnotexist', '--daily-credits', '3');
    assert.equal(unknown.code, 1);
    assert.deepEqual(JSON.parse(unknown.stderr), { error: { code: 'NOT_FOUND', message: 'No key key_doesnotexist.' } });
    assert.match((await admin(dir, 'key', 'update', created.id)).stderr, /required option '--daily-credits <n\|none>' not specified/);
    assert.equal((await listed())?.dailyCreditLimit, null, 'nothing changed');
  });

  test('bad input exits non-zero with a clear message on stderr, no stack trace, and changes nothing', async () => {
    // The state the bad commands must leave alone, read directly from the database.
    const snapshot = async () => {
      const stores = openSqliteStores({ path: join(dir, 'service.db') });
      try {
        return {
          teams: await stores.accounts.listTeams(),
          keys: await stores.accounts.listKeys(team.id),
          ledger: await stores.ledger.entries(team.id, 1000),
        };
      } finally {
        await stores.close();
      }
    };
    const before = await snapshot();
    // `spawned` cases run as their own process; the others through runCli in this process
    // (the same code, minus the process start-up that dominates a command's cost).
    const cases: { args: string[]; message: RegExp; spawned?: true }[] = [
      { args: ['credits', 'add', '--team', 'team_doesnotexist', '--amount', '5'], message: /No team team_doesnotexist/, spawned: true },
      { args: ['credits', 'add', '--team', team.id, '--amount', '0'], message: /--amount must be a positive integer/, spawned: true },
      { args: ['credits', 'add', '--team', team.id, '--amount', '-5'], message: /--amount must be a positive integer/, spawned: true },
      { args: ['credits', 'add', '--team', team.id, '--amount', 'abc'], message: /--amount must be a positive integer/, spawned: true },
      { args: ['team', 'create', '--name', 'x', '--rate-limit', '0'], message: /--rate-limit must be a positive integer/, spawned: true },
      { args: ['credits', 'add', '--team', team.id], message: /required option '--amount <n>' not specified/, spawned: true },
      { args: ['key', 'revoke', '--id', 'key_doesnotexist'], message: /No active key key_doesnotexist/, spawned: true },
      { args: ['frobnicate'], message: /unknown command 'frobnicate'/, spawned: true },
      { args: ['credits', 'add', '--team', team.id, '--amount', '2.5'], message: /--amount must be a positive integer/ },
      { args: ['team', 'create', '--name', 'x', '--credits', '-1'], message: /--credits must be a whole number/ },
      { args: ['team', 'create', '--name', '   '], message: /--name must not be empty/ },
      { args: ['team', 'create'], message: /required option '--name <name>' not specified/ },
      { args: ['team', 'update', '--team', team.id, '--rate-limit', '0'], message: /--rate-limit must be a positive integer/ },
      { args: ['team', 'update', '--team', 'team_doesnotexist', '--rate-limit', '5'], message: /No team team_doesnotexist/ },
      { args: ['key', 'create', '--team', 'team_doesnotexist'], message: /No team team_doesnotexist/ },
      { args: ['key', 'list', '--team', 'team_doesnotexist'], message: /No team team_doesnotexist/ },
      { args: ['key', 'revoke'], message: /required option '--id <keyId>' not specified/ },
      { args: ['ledger', '--team', 'team_doesnotexist'], message: /No team team_doesnotexist/ },
      { args: ['usage', '--team', 'team_doesnotexist'], message: /No team team_doesnotexist/ },
      { args: ['team', 'delete', '--team', team.id], message: /unknown command 'delete'/ },
      { args: ['credits', 'add', '--team', team.id, '--amount', '5', '--bogus'], message: /unknown option '--bogus'/ },
    ];
    const results = new Map<(typeof cases)[number], Run>();
    const spawned = cases.filter((entry) => entry.spawned);
    for (let index = 0; index < spawned.length; index += 4) {
      const batch = spawned.slice(index, index + 4);
      const ran = await Promise.all(batch.map(({ args }) => admin(dir, ...args)));
      for (const [at, entry] of batch.entries()) results.set(entry, ran[at] as Run);
    }
    // One at a time: each swaps DATA_DIR and stderr while it runs.
    for (const entry of cases.filter((candidate) => !candidate.spawned)) results.set(entry, await adminInProcess(dir, ...entry.args));
    assert.equal(results.size, cases.length);
    for (const [{ args, message, spawned: own }, result] of results) {
      const label = `admin ${args.join(' ')}${own ? '' : ' (in process)'}`;
      assert.notEqual(result.code, 0, `${label} exits non-zero`);
      assert.match(result.stderr, /^error: /, `${label}: ${result.stderr}`);
      assert.match(result.stderr, message, label);
      assert.doesNotMatch(result.stderr, STACK, `${label} prints no stack trace`);
      assert.doesNotMatch(result.stderr, /node:internal|\.ts:\d+/, label);
      assert.equal(result.stdout, '', `${label} prints nothing on stdout`);
    }
    assert.deepEqual(await snapshot(), before, 'no team, key or ledger row created or changed');
  });

  test('bad input through npm run also fails cleanly', async () => {
    const result = await npmAdmin(dir, 'credits', 'add', '--team', team.id, '--amount', 'abc');
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /--amount must be a positive integer/);
    assert.doesNotMatch(result.stderr, STACK);
    assert.equal(result.stdout, '');
  });

  test('under --json an error is one JSON line on stderr, {"error": {"code"?, "message"}}; exit 2 for a malformed command, 1 otherwise', async () => {
    const cases: { args: string[]; code?: string; message: RegExp; exit: number }[] = [
      { args: ['--json', 'frobnicate'], code: 'VALIDATION_ERROR', message: /^unknown command 'frobnicate'$/, exit: 2 },
      { args: ['--json', 'credits', 'add', '--team', team.id, '--amount', 'abc'], code: 'VALIDATION_ERROR', message: /--amount must be a positive integer/, exit: 2 },
      { args: ['--json', 'credits', 'add', '--team', team.id], code: 'VALIDATION_ERROR', message: /^required option '--amount <n>' not specified$/, exit: 2 },
      { args: ['--json', 'credits', 'add', '--team', team.id, '--amount', '5', '--bogus'], code: 'VALIDATION_ERROR', message: /unknown option '--bogus'/, exit: 2 },
      { args: ['--json'], code: 'VALIDATION_ERROR', message: /A command is required/, exit: 2 },
      { args: ['--json', 'key'], code: 'VALIDATION_ERROR', message: /A command is required/, exit: 2 },
      { args: ['--json', 'team', 'create', '--name', '   '], code: 'VALIDATION_ERROR', message: /^--name must not be empty\.$/, exit: 1 },
      { args: ['--json', 'team', 'update', '--team', team.id], code: 'VALIDATION_ERROR', message: /^Nothing to update/, exit: 1 },
      { args: ['--json', 'usage', '--team', 'team_doesnotexist'], code: 'NOT_FOUND', message: /^No team team_doesnotexist\.$/, exit: 1 },
      { args: ['--json', 'key', 'revoke', '--id', 'key_doesnotexist'], code: 'NOT_FOUND', message: /^No active key key_doesnotexist\.$/, exit: 1 },
      { args: ['ledger', '--team', 'team_doesnotexist', '--json'], code: 'NOT_FOUND', message: /^No team team_doesnotexist\.$/, exit: 1 },
    ];
    for (const { args, code, message, exit } of cases) {
      const label = `admin ${args.join(' ')}`;
      const result = await adminInProcess(dir, ...args);
      assert.equal(result.code, exit, `${label}: ${result.stderr}`);
      assert.equal(result.stdout, '', label);
      assert.equal(result.stderr.trimEnd().split('\n').length, 1, `${label}: one line`);
      const { error } = JSON.parse(result.stderr) as { error: { code?: string; message: string } };
      assert.deepEqual(Object.keys(error), code ? ['code', 'message'] : ['message'], label);
      assert.equal(error.code, code, label);
      assert.match(error.message, message, label);
    }
    // Spawned through npm: an error that is not the CLI's own (a bad setting) has no code.
    const env = { ...process.env, DATA_DIR: dir, PORT: 'abc', NODE_COMPILE_CACHE: COMPILE_CACHE };
    const spawned = await new Promise<Run>((resolve) => {
      execFile('npm', ['run', '-s', 'admin', '--', '--json', 'team', 'list'], { cwd: ROOT, env, timeout: 20_000 }, (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
      });
    });
    assert.equal(spawned.code, 1, spawned.stderr);
    assert.equal(spawned.stdout, '');
    const ownLines = spawned.stderr.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('npm '));
    assert.equal(ownLines.length, 1, spawned.stderr);
    const { error } = JSON.parse(ownLines[0] ?? '') as { error: { code?: string; message: string } };
    assert.deepEqual(Object.keys(error), ['message']);
    assert.match(error.message, /PORT/);
  });

  test('key create warns, in table mode too, that the key is shown only once; key list notes when last use is recorded', async () => {
    const created = await admin(dir, 'key', 'create', '--team', team.id, '--name', 'table');
    assert.equal(created.code, 0, created.stderr);
    const [, warning] = created.stdout.trimEnd().split('\n\n');
    assert.match(warning ?? '', /^This is the only time the full key is shown: store it now/);
    const row = parseTable(created.stdout).rows[0] ?? [];
    assert.match(row[1] ?? '', /^psk_live_/);

    const listed = await admin(dir, 'key', 'list', '--team', team.id);
    assert.equal(listed.code, 0, listed.stderr);
    const [, note] = listed.stdout.trimEnd().split('\n\n');
    assert.match(note ?? '', /^lastUsedAt is recorded by the server within seconds of a request/);
    assert.ok(parseTable(listed.stdout).rows.some((cells) => cells[1] === 'table'));
  });
});

describe('operator CLI: users', () => {
  let dir = '';
  let team: TeamView;
  before(async () => {
    dir = tempDir();
    team = await adminJson<TeamView>(dir, 'team', 'create', '--name', 'users');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('user create prints the user and a one-time set-password link on the configured address; list and disable', async () => {
    const created = await adminJson<Record<string, string>>(dir, 'user', 'create', '--team', team.id, '--email', 'Owner@Example.com');
    assert.deepEqual(Object.keys(created), ['id', 'email', 'teamId', 'role', 'setPasswordUrl']);
    assert.match(created.id ?? '', /^user_[A-Za-z0-9_-]+$/);
    assert.deepEqual([created.email, created.teamId, created.role], ['owner@example.com', team.id, 'owner']);
    assert.match(created.setPasswordUrl ?? '', /^http:\/\/127\.0\.0\.1:3000\/dashboard\/set-password\?token=[A-Za-z0-9_-]{43}$/);
    const member = await adminJson<Record<string, string>>(dir, 'user', 'create', '--team', team.id, '--email', 'member@example.com', '--role', 'member');
    assert.equal(member.role, 'member');

    const listed = await adminJson<Record<string, unknown>[]>(dir, 'user', 'list', '--team', team.id);
    assert.deepEqual(
      listed.map((u) => [u.email, u.role, u.hasPassword, u.disabledAt]),
      [
        ['owner@example.com', 'owner', false, null],
        ['member@example.com', 'member', false, null],
      ],
    );
    const link = await adminJson<Record<string, string>>(dir, 'user', 'link', '--id', member.id as string);
    assert.notEqual(link.setPasswordUrl, member.setPasswordUrl, 'a new link each time');
    assert.deepEqual(await adminJson(dir, 'user', 'disable', '--id', member.id as string), { id: member.id, disabled: true });
    const after = await adminJson<Record<string, unknown>[]>(dir, 'user', 'list');
    assert.match(String(after.find((u) => u.id === member.id)?.disabledAt), ISO);
    const again = await admin(dir, 'user', 'disable', '--id', member.id as string);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /No enabled user/);
    assert.equal((await admin(dir, 'user', 'link', '--id', member.id as string)).code, 1, 'no link for a disabled user');
  });

  test('PUBLIC_BASE_URL names the link; a taken email, a bad email, role or team are refused with a clear message', async () => {
    const previous = process.env.PUBLIC_BASE_URL;
    process.env.PUBLIC_BASE_URL = 'https://api.example.com/base/';
    try {
      const made = await adminInProcess(dir, '--json', 'user', 'create', '--team', team.id, '--email', 'third@example.com', '--role', 'operator');
      assert.equal(made.code, 0, made.stderr);
      assert.match((JSON.parse(made.stdout) as { setPasswordUrl: string }).setPasswordUrl, /^https:\/\/api\.example\.com\/base\/dashboard\/set-password\?token=/);
    } finally {
      if (previous === undefined) delete process.env.PUBLIC_BASE_URL;
      else process.env.PUBLIC_BASE_URL = previous;
    }
    const taken = await admin(dir, 'user', 'create', '--team', team.id, '--email', 'THIRD@example.com');
    assert.equal(taken.code, 1);
    assert.match(taken.stderr, /exists already/);
    const badEmail = await admin(dir, 'user', 'create', '--team', team.id, '--email', 'nobody');
    assert.match(badEmail.stderr, /not an email address/);
    const badRole = await admin(dir, 'user', 'create', '--team', team.id, '--email', 'x@example.com', '--role', 'admin');
    assert.equal(badRole.code, 2);
    assert.match(badRole.stderr, /--role must be one of owner, member, operator/);
    const noTeam = await admin(dir, 'user', 'create', '--team', 'team_nope', '--email', 'y@example.com');
    assert.match(noTeam.stderr, /No team team_nope/);
    for (const run of [taken, badEmail, badRole, noTeam]) assert.doesNotMatch(run.stderr, STACK);
  });
});

describe('operator CLI: drift', () => {
  let dir = '';
  before(() => {
    dir = tempDir();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('drift list shows the samples newest first, per platform; drift show prints one whole', async () => {
    const stores = openSqliteStores({ path: join(dir, 'service.db') });
    const base = { requestId: 'req_1', reason: 'card gone', path: '/add/x', status: 200, headers: { 'content-type': 'text/html' }, body: '<html>new</html>', truncated: false };
    const older = await stores.drift.add({ ...base, at: '2026-11-20T10:00:00.000Z', platform: 'snapmsg', endpoint: 'snapmsg.profile' }, 10);
    const newer = await stores.drift.add({ ...base, at: '2026-11-20T11:00:00.000Z', platform: 'shopfront', endpoint: 'shopfront.shop' }, 10);
    await stores.close();
    const listed = await adminJson<{ id: string; platform: string }[]>(dir, 'drift', 'list');
    assert.deepEqual(listed.map((row) => row.id), [newer, older]);
    assert.deepEqual((await adminJson<{ id: string }[]>(dir, 'drift', 'list', '--platform', 'snapmsg')).map((row) => row.id), [older]);
    const shown = await adminJson<{ body: string; headers: Record<string, string> }>(dir, 'drift', 'show', older);
    assert.equal(shown.body, '<html>new</html>');
    const text = await admin(dir, 'drift', 'show', older);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /content-type: text\/html\n\n<html>new<\/html>/);
    const missing = await admin(dir, 'drift', 'show', 'drift_nope');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /No drift sample drift_nope/);
  });
});

describe('operator CLI: help', () => {
  test('every command and option has a description', () => {
    const program = buildCli(
      () => assert.fail('help opens no store'),
      () => undefined,
    );
    const missing: string[] = [];
    const visit = (command: Command, path: string) => {
      if (command.description().trim() === '') missing.push(path);
      for (const option of command.options) if (option.description.trim() === '') missing.push(`${path} ${option.flags}`);
      for (const sub of command.commands) visit(sub, `${path} ${sub.name()}`);
    };
    visit(program, 'admin');
    assert.deepEqual(missing, []);
    const names = (command: Command): string[] => command.commands.flatMap((sub) => [sub.name(), ...names(sub).map((name) => `${sub.name()} ${name}`)]);
    for (const command of ['team create', 'team update', 'team list', 'credits add', 'key create', 'key list', 'key update', 'key revoke', 'ledger', 'usage', 'requests', 'migrate']) {
      assert.ok(names(program).includes(command), command);
    }
  });

  test('--help lists the subcommands with their descriptions; key create and key list say what they warn', async () => {
    // Commander wraps descriptions to the terminal's width.
    const help = (await adminInProcessOut('key', '--help')).replace(/\s+/g, ' ');
    assert.match(help, /create \[options\] create an API key for a team; the full key is shown only this once/);
    assert.match(help, /list \[options\] list a team's keys, never in full; lastUsedAt shows a use within seconds/);
    assert.match(help, /revoke \[options\] revoke a key/);
    assert.match((await adminInProcessOut('team', '--help')).replace(/\s+/g, ' '), /list list every team/);
  });
});

describe('operator CLI: init', () => {
  let dir = '';
  before(() => {
    dir = tempDir();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('`init` is listed with its description', async () => {
    const help = await admin(dir, '--help');
    assert.equal(help.code, 0, help.stderr);
    // Commander wraps the description to the terminal's width.
    assert.ok(
      help.stdout.replace(/\s+/g, ' ').includes(' init create a new, empty database in DATA_DIR on purpose (never replaces one that exists) '),
      help.stdout,
    );
  });

  test('`npm run -s admin -- --json init` creates the database; a second init refuses and changes nothing', async () => {
    const created = await npmAdmin(dir, '--json', 'init');
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.stderr, '');
    assert.deepEqual(JSON.parse(created.stdout), { database: join(dir, 'service.db'), orphanedWal: null });
    const team = await adminJson<TeamView>(dir, 'team', 'create', '--name', 'kept', '--credits', '5');

    const again = await adminInProcess(dir, '--json', 'init');
    assert.equal(again.code, 1);
    assert.match((JSON.parse(again.stderr) as { error: { message: string } }).error.message, /service\.db already holds a database; init never replaces one/);
    assert.equal(again.stdout, '');
    assert.deepEqual((await adminJson<TeamView[]>(dir, 'team', 'list')).map((t) => t.id), [team.id]);
  });

  test('every command refuses a used DATA_DIR whose service.db is gone, naming the file and `init`; init starts over', async () => {
    rmSync(join(dir, 'service.db'));
    const refused = await admin(dir, '--json', 'team', 'list');
    assert.equal(refused.code, 1);
    const { message } = (JSON.parse(refused.stderr) as { error: { message: string } }).error;
    assert.match(message, new RegExp(`^The database ${join(dir, 'service.db').replaceAll('.', '\\.')} is missing, but DATA_DIR`));
    assert.match(message, /npm run -s admin -- init/);
    assert.doesNotMatch(refused.stderr, STACK);
    assert.equal(refused.stdout, '');
    assert.equal(existsSync(join(dir, 'service.db')), false, 'no empty database was created');

    const init = await adminInProcess(dir, 'init');
    assert.equal(init.code, 0, init.stderr);
    const { headers, rows } = parseTable(init.stdout);
    assert.deepEqual(headers, ['database', 'orphanedWal']);
    assert.equal(rows[0]?.[0], join(dir, 'service.db'));
    assert.deepEqual(await adminJson<TeamView[]>(dir, 'team', 'list'), [], 'a new, empty database');
  });
});

describe('operator CLI against a running server (start() on the same DATA_DIR, real HTTP)', () => {
  let dir = '';
  let running: Running;
  let base = '';
  // Every origin: a port that refuses connections, so that no upstream request leaves the machine.
  let closed: RefusedPort;
  // An endpoint request that gets past authentication and the rate limit but cannot scrape:
  // 501 while the endpoint has no extractor, else 502 (every origin is a closed port).
  const endpoint = endpoints.find((candidate) => !candidate.extractor) ?? byId('linkpage-a.profile');
  const admitted = endpoint.extractor ? 502 : 501;
  const call = (key: string | null, header: 'x-api-key' | 'bearer' = 'x-api-key') =>
    fetch(`${base}${endpoint.path}?${exampleQuery(endpoint)}`, {
      headers: key === null ? {} : header === 'bearer' ? { authorization: `Bearer ${key}` } : { 'x-api-key': key },
    });

  before(async () => {
    dir = tempDir();
    closed = await refusedPort();
    const origins = Object.fromEntries(Object.values(PLATFORM_ORIGINS).map(({ variable }) => [variable, closed.origin]));
    // No pace: each retry against the closed port would otherwise wait its turn and the second
    // request be refused as overloaded (503) rather than failing upstream (502).
    running = await start(loadConfig({ DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', REQUEST_BUDGET_MS: '1000', ...UNPACED_ENV, ...origins }));
    base = running.address;
  });
  after(async () => {
    await running.stop();
    await closed.release();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a key created by the CLI authenticates; revoking it fails the very next request with 401', async () => {
    const team = await adminJson<TeamView>(dir, 'team', 'create', '--name', 'served', '--credits', '3');
    const [first, second] = await Promise.all([
      adminJson<{ id: string; key: string }>(dir, 'key', 'create', '--team', team.id, '--name', 'first'),
      adminJson<{ id: string; key: string }>(dir, 'key', 'create', '--team', team.id, '--name', 'second'),
    ]);

    assert.equal((await call(null)).status, 401, 'a key is required');
    for (const header of ['x-api-key', 'bearer'] as const) {
      const response = await call(first.key, header);
      assert.equal(response.status, admitted, await response.text());
      assert.equal(response.headers.get('x-ratelimit-limit'), '100', 'authenticated and counted');
    }
    await adminJson(dir, 'key', 'revoke', '--id', first.id);
    const revoked = await call(first.key);
    assert.equal(revoked.status, 401);
    assert.equal(((await revoked.json()) as { error: { code: string } }).error.code, 'UNAUTHORIZED');
    assert.equal((await call(first.key, 'bearer')).status, 401);
    assert.equal((await call(second.key)).status, admitted, "the team's other key still works");
    assert.equal((await adminJson<{ balance: number }>(dir, 'usage', '--team', team.id)).balance, 3, 'nothing was charged');
  });

  test('team update --rate-limit takes effect on the next request', async () => {
    const team = await adminJson<TeamView>(dir, 'team', 'create', '--name', 'limited', '--credits', '10', '--rate-limit', '100');
    const { key } = await adminJson<{ key: string }>(dir, 'key', 'create', '--team', team.id);
    const first = await call(key);
    assert.equal(first.status, admitted);
    assert.equal(first.headers.get('x-ratelimit-limit'), '100');
    await adminJson(dir, 'team', 'update', '--team', team.id, '--rate-limit', '1');
    const second = await call(key);
    assert.equal(second.status, 429);
    assert.equal(second.headers.get('x-ratelimit-limit'), '1');
    assert.match(second.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    assert.equal(((await second.json()) as { error: { code: string } }).error.code, 'RATE_LIMITED');
    await adminJson(dir, 'team', 'update', '--team', team.id, '--rate-limit', '5');
    const third = await call(key);
    assert.equal(third.status, admitted, 'raised again, admitted again');
    assert.equal(third.headers.get('x-ratelimit-limit'), '5');
  });

  test('key list shows lastUsedAt once the server has flushed key use (at the latest when it stops)', async () => {
    const team = await adminJson<TeamView>(dir, 'team', 'create', '--name', 'usage', '--credits', '10');
    const [used, idle] = await Promise.all([
      adminJson<{ id: string; key: string }>(dir, 'key', 'create', '--team', team.id, '--name', 'used'),
      adminJson<{ id: string; key: string }>(dir, 'key', 'create', '--team', team.id, '--name', 'idle'),
    ]);
    const before = Date.now();
    assert.equal((await call(used.key)).status, admitted);
    await running.stop();
    const keys = await adminJson<KeyView[]>(dir, 'key', 'list', '--team', team.id);
    const usedAt = keys.find((key) => key.id === used.id)?.lastUsedAt ?? '';
    assert.match(usedAt, ISO);
    assert.ok(Date.parse(usedAt) >= before - 1 && Date.parse(usedAt) <= Date.now());
    assert.equal(keys.find((key) => key.id === idle.id)?.lastUsedAt, null);
  });
});

describe('operator CLI on the database of an app with test extractors (200s)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ app: { keyUseFlushMs: 20 } });
  });
  after(() => h.close());

  test('credits add is reflected in meta.creditsRemaining, the ledger and usage; key list shows lastUsedAt', async () => {
    const endpoint = byId('linkpage-b.page');
    const url = (tag: string) => `${endpoint.path}?${new URLSearchParams(variantQuery(endpoint, tag))}`;
    const team = await adminJson<TeamView>(h.dir, 'team', 'create', '--name', 'paying', '--credits', '1');
    const { id: keyId, key } = await adminJson<{ id: string; key: string }>(h.dir, 'key', 'create', '--team', team.id);
    const as = { 'x-api-key': key };

    const first = await h.get(url('one'), as);
    assert.equal(first.statusCode, 200, first.body);
    const firstMeta = (first.json() as { meta: { requestId: string; creditsRemaining: number } }).meta;
    assert.equal(firstMeta.creditsRemaining, 0);
    assert.equal((await h.get(url('two'), as)).statusCode, 402);

    const added = await adminJson<{ balance: number }>(h.dir, 'credits', 'add', '--team', team.id, '--amount', '5');
    assert.equal(added.balance, 5);
    const third = await h.get(url('three'), as);
    assert.equal(third.statusCode, 200, third.body);
    const thirdMeta = (third.json() as { meta: { requestId: string; creditsRemaining: number } }).meta;
    assert.equal(thirdMeta.creditsRemaining, 4);

    await h.app.writeRecords();
    const [ledger, usage, requests, failed, requestsTable] = await Promise.all([
      adminJson<LedgerRow[]>(h.dir, 'ledger', '--team', team.id),
      adminJson<Record<string, unknown>>(h.dir, 'usage', '--team', team.id),
      adminJson<{ records: { requestId: string; at: string; status: number; credits: number }[]; next: string | null }>(h.dir, 'requests', '--team', team.id, '--since', '1h'),
      adminJson<{ records: { requestId: string; errorCode: string }[]; next: string | null }>(h.dir, 'requests', '--team', team.id, '--status', '402'),
      admin(h.dir, 'requests', '--team', team.id, '--limit', '2'),
    ]);
    for (const record of requests.records) assert.match(record.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, 'times printed as ISO 8601');
    assert.deepEqual(
      requests.records.map((r) => [r.status, r.credits]).sort(),
      [
        [200, 1],
        [200, 1],
        [402, 0],
      ],
    );
    assert.equal(requests.next, null);
    assert.deepEqual(
      failed.records.map((r) => r.errorCode),
      ['INSUFFICIENT_CREDITS'],
    );
    assert.deepEqual(parseTable(requestsTable.stdout).rows.length, 2);
    const cursor = /next page: --cursor (\S+)/.exec(requestsTable.stdout)?.[1] ?? '';
    const rest = await adminJson<{ records: unknown[]; next: string | null }>(h.dir, 'requests', '--team', team.id, '--limit', '2', '--cursor', cursor);
    assert.deepEqual([rest.records.length, rest.next], [1, null]);
    const badCursor = await admin(h.dir, 'requests', '--team', team.id, '--cursor', 'nonsense');
    assert.equal(badCursor.code, 1);
    assert.match(badCursor.stderr, /--cursor is not one this command printed/);
    const badSince = await admin(h.dir, 'requests', '--team', team.id, '--since', 'yesterday');
    assert.equal(badSince.code, 2);
    assert.match(badSince.stderr, /--since must be an ISO date or time/);
    assert.deepEqual(
      ledger.map((row) => [row.reason, row.amount, row.requestId]),
      [
        ['charge', -1, thirdMeta.requestId],
        ['topup', 5, null],
        ['charge', -1, firstMeta.requestId],
        ['topup', 1, null],
      ],
    );
    assert.equal(
      ledger.reduce((sum, row) => sum + row.amount, 0),
      4,
    );
    const today = new Date().toISOString().slice(0, 10);
    assert.deepEqual(usage, {
      teamId: team.id,
      charged: 2,
      refunded: 0,
      toppedUp: 6,
      balance: 4,
      pending: 0,
      days: [{ day: today, requests: 3, credits: 2, cached: 0 }],
      endpoints: [{ endpoint: endpoint.path, requests: 3, credits: 2, cached: 0 }],
    });

    // The app writes key use every keyUseFlushMs; the CLI then lists it.
    const usedAt = new Date(h.clock.now).toISOString();
    assert.ok(await until(async () => (await h.stores.accounts.listKeys(team.id))[0]?.lastUsedAt === usedAt), 'key use flushed');
    const keys = await adminJson<KeyView[]>(h.dir, 'key', 'list', '--team', team.id);
    assert.deepEqual(
      keys.map((listed) => [listed.id, listed.lastUsedAt]),
      [[keyId, usedAt]],
    );
  });
});
