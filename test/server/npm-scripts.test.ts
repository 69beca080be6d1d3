// The README's long-running commands as a new user runs them: `npm run demo`, `npm run serve`
// and `npm run sandbox`, spawned through npm in their own process group. Signalling the npm
// process (alone, as `kill` does, or the whole group, as a terminal's Ctrl-C or hang-up does)
// stops every process it started and frees every port; a port in use is one line naming the
// variable to change; each demo start revokes the previous demo key and prints the new one.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { start } from '../../src/main.ts';
import { openSqliteStores } from '../../src/store/sqlite/index.ts';
import { startSandbox } from '../../sandbox/server.ts';
import { testBackends, type TestBackends } from '../support/backends.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);
const STACK = /^\s+at .+[:(]\d+/m;
// Node's compile cache, shared by the spawned commands: each loads the service's modules.
const COMPILE_CACHE = mkdtempSync(join(tmpdir(), 'npm-scripts-compile-cache-'));
after(() => rmSync(COMPILE_CACHE, { recursive: true, force: true }));
// Every group spawned, so that a failing test leaves nothing running behind it.
const spawned = new Set<number>();
after(() => {
  for (const pgid of spawned) if (groupAlive(pgid)) process.kill(-pgid, 'SIGKILL');
});

interface Script {
  npm: ChildProcess;
  /** Everything printed so far. */
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `npm run <script> [-- args]` in a new process group (so that the group can be signalled like a terminal does). */
function npmRun(script: string, env: Record<string, string>, silent = false, args: string[] = []): Script {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, NODE_COMPILE_CACHE: COMPILE_CACHE, ...env };
  const npm = spawn('npm', ['run', ...(silent ? ['-s'] : []), script, ...(args.length > 0 ? ['--', ...args] : [])], { cwd: ROOT, env: childEnv, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  if (npm.pid) spawned.add(npm.pid);
  let stdout = '';
  let stderr = '';
  npm.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  npm.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => npm.once('exit', (code, signal) => resolve({ code, signal })));
  return { npm, stdout: () => stdout, stderr: () => stderr, exited };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits (generously: a shared machine) until `text` shows `pattern`. */
async function waitFor(script: Script, pattern: RegExp, ms = 60_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + ms;
  for (;;) {
    const match = pattern.exec(script.stdout());
    if (match) return match;
    if (script.npm.exitCode !== null || script.npm.signalCode !== null) assert.fail(`exited before ${pattern}: ${script.stdout()}\n${script.stderr()}`);
    if (Date.now() > deadline) assert.fail(`no ${pattern} within ${ms} ms: ${script.stdout()}\n${script.stderr()}`);
    await sleep(50);
  }
}

/** True while any process of the group is alive. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === 'ESRCH') return false;
    throw error;
  }
}

/** Waits until every process of the group has gone; kills what is left if it does not. */
async function groupGone(pgid: number, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (groupAlive(pgid)) {
    if (Date.now() > deadline) {
      process.kill(-pgid, 'SIGKILL');
      assert.fail(`processes of group ${pgid} still running ${ms} ms after the signal`);
    }
    await sleep(50);
  }
}

/** Nothing listens on the port, and it can be bound again. */
async function assertFree(origin: string): Promise<void> {
  const { hostname, port } = new URL(origin);
  const refused = await new Promise<boolean>((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
  assert.ok(refused, `${origin} still accepts connections`);
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(port), hostname, () => resolve());
  });
  await new Promise((resolve) => server.close(resolve));
}

/** A listener on an ephemeral port, standing for "something else already uses this port". */
async function occupy(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { server, port: (server.address() as AddressInfo).port };
}

const PLATFORM_LINE = /^ {2}(socialnet|snapmsg|linkpage-a|linkpage-b|shopfront): (http:\/\/\S+)$/gm;

interface Demo extends Script {
  base: string;
  origins: string[];
  key: string;
}

async function startDemo(dataDir: string): Promise<Demo> {
  const script = npmRun('demo', { DATA_DIR: dataDir, PORT: '0', SANDBOX_PORT_BASE: '0', LOG_LEVEL: 'warn' });
  await waitFor(script, /The README lists the whole sandbox catalogue/);
  const base = (/^Service listening on (http:\/\/\S+), scraping/m.exec(script.stdout()) ?? [])[1] ?? '';
  const origins = [...script.stdout().matchAll(PLATFORM_LINE)].map((match) => match[2] ?? '');
  const key = (/^Demo key: (\S+)$/m.exec(script.stdout()) ?? [])[1] ?? '';
  assert.match(base, /^http:\/\/127\.0\.0\.1:\d+$/, script.stdout());
  assert.equal(origins.length, 5, 'the five sandbox origins are printed');
  for (const origin of origins) assert.match(origin, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.notEqual(new URL(base).port, '0', 'the real port, not the configured 0');
  return { ...script, base, origins, key };
}

/** A catalogue call with a key: 200 when the key is valid, 401 when not. */
async function callWith(base: string, key: string): Promise<number> {
  const response = await fetch(`${base}/v1/snapmsg/profile?username=lunavoss`, { headers: { 'x-api-key': key } });
  await response.arrayBuffer();
  return response.status;
}

/** The README's quick-start `curl` lines that send the demo key (`$(cat data/demo-key)`). */
function readmeCurlLines(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const quickStart = readme.slice(0, readme.indexOf('\n## ', readme.indexOf('## Quick start') + 1));
  const lines = quickStart.split('\n').filter((line) => line.startsWith('curl ') && line.includes('$(cat data/demo-key)'));
  assert.ok(lines.length >= 2, 'the quick start has curl lines with the demo key');
  return lines;
}

/** The `curl` lines a command printed that send a key. */
const printedCurlLines = (stdout: string): string[] =>
  stdout
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('curl ') && line.includes('x-api-key'));

/**
 * Runs a curl line as a shell does, in `cwd`, against `base` for the README's address; its answer
 * must be the API's success envelope (so the key it read was accepted).
 */
async function runCurl(line: string, cwd: string, base?: string): Promise<void> {
  const command = base ? line.replaceAll('http://127.0.0.1:3000', base) : line;
  const { stdout } = await run('sh', ['-c', command], { cwd, timeout: 30_000 });
  let body: { data?: unknown; error?: { code: string } };
  try {
    body = JSON.parse(stdout) as typeof body;
  } catch {
    return assert.fail(`not JSON from ${command}: ${stdout.slice(0, 300)}`);
  }
  assert.ok(body.data !== undefined && body.error === undefined, `${command}: ${stdout.slice(0, 300)}`);
}

/** Signals, then checks that every process has gone and every port is free. */
async function stopAndCheck(script: Script, origins: string[], signal: NodeJS.Signals, target: 'npm' | 'group'): Promise<void> {
  const pid = script.npm.pid ?? 0;
  process.kill(target === 'group' ? -pid : pid, signal);
  await groupGone(pid);
  for (const origin of origins) await assertFree(origin);
  assert.doesNotMatch(script.stderr(), STACK, script.stderr());
}

describe('npm run demo', () => {
  // DATA_DIR is a `data` folder, as in a checkout, so that the README's `cat data/demo-key` reads it.
  let checkout = '';
  let dir = '';
  before(() => {
    checkout = mkdtempSync(join(tmpdir(), 'demo-test-'));
    dir = join(checkout, 'data');
  });
  after(() => rmSync(checkout, { recursive: true, force: true }));

  test('each start revokes the previous demo key and prints the new one; SIGTERM to npm stops everything', async () => {
    const first = await startDemo(dir);
    assert.match(first.key, /^psk_live_[A-Za-z0-9_-]{32,}$/, 'the key itself is printed');
    assert.equal(readFileSync(join(dir, 'demo-key'), 'utf8'), `${first.key}\n`);
    assert.equal(await callWith(first.base, first.key), 200);
    // The README's curl lines, run where data/ is (DATA_DIR here), and the ones it prints, run anywhere.
    for (const line of readmeCurlLines()) await runCurl(line, checkout, first.base);
    const printed = printedCurlLines(first.stdout());
    assert.ok(printed.length >= 10, first.stdout());
    for (const line of printed) await runCurl(line, tmpdir());
    // The demo user's dashboard link opens the page that sets its password.
    const link = (/^Dashboard: open (\S+)$/m.exec(first.stdout()) ?? [])[1] ?? '';
    assert.ok(link.startsWith(`${first.base}/dashboard/set-password?token=`), first.stdout());
    const setPassword = await fetch(link);
    assert.equal(setPassword.status, 200);
    assert.match(await setPassword.text(), />Set password<\/button>/);
    await stopAndCheck(first, [first.base, ...first.origins], 'SIGTERM', 'npm');

    const second = await startDemo(dir);
    try {
      assert.notEqual(second.key, first.key);
      assert.equal(readFileSync(join(dir, 'demo-key'), 'utf8'), `${second.key}\n`, 'the file holds the printed key');
      assert.equal(await callWith(second.base, first.key), 401, 'the previous demo key is revoked');
      assert.equal(await callWith(second.base, second.key), 200);
      assert.doesNotMatch(second.stdout(), /^\s*open http/m, 'no `open` command (macOS only): "open … in a browser"');
      assert.match(second.stdout(), new RegExp(`open ${second.base}/docs in a browser`));
    } finally {
      await stopAndCheck(second, [second.base, ...second.origins], 'SIGTERM', 'npm');
    }
  });

  for (const [signal, target] of [
    ['SIGINT', 'npm'],
    ['SIGINT', 'group'], // Ctrl-C in a terminal
    ['SIGHUP', 'npm'], // npm does not forward it: npm dies, the demo must notice
    ['SIGHUP', 'group'], // the terminal closes
  ] as const) {
    test(`${signal} to the ${target === 'npm' ? 'npm process alone' : 'whole process group'} stops every process and frees every port`, async () => {
      const demo = await startDemo(dir);
      await stopAndCheck(demo, [demo.base, ...demo.origins], signal, target);
    });
  }
});

describe('npm run serve and npm run sandbox', () => {
  test('SIGTERM to npm stops `npm run serve` and frees its port', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'serve-test-'));
    try {
      const serve = npmRun('serve', { DATA_DIR: dir, PORT: '0' });
      const [, base] = await waitFor(serve, /"Server listening at (http:\/\/[^"]+)"/);
      assert.equal((await fetch(`${base}/healthz`)).status, 200);
      await stopAndCheck(serve, [base ?? ''], 'SIGTERM', 'npm');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('Ctrl-C stops `npm run sandbox` and frees its five ports', async () => {
    const sandbox = npmRun('sandbox', { SANDBOX_PORT_BASE: '0' });
    await waitFor(sandbox, /SHOPFRONT_ORIGIN=/);
    const origins = [...sandbox.stdout().matchAll(/export [A-Z_]+_ORIGIN=(\S+)/g)].map((match) => match[1] ?? '');
    assert.equal(origins.length, 5);
    await stopAndCheck(sandbox, origins, 'SIGINT', 'group');
  });
});

describe('npm run cluster', () => {
  // The machine's PostgreSQL and Redis, in a database and key prefix of this test's own; DATA_DIR
  // a `data` folder, as in a checkout.
  let backends: TestBackends;
  let env: Record<string, string>;
  let checkout = '';
  before(async () => {
    backends = await testBackends();
    checkout = mkdtempSync(join(tmpdir(), 'cluster-script-test-'));
    env = {
      DATA_DIR: join(checkout, 'data'),
      PORT: '0',
      SANDBOX_PORT_BASE: '0',
      DATABASE_URL: await backends.freshDatabaseUrl(),
      REDIS_URL: backends.redisUrl,
      REDIS_PREFIX: backends.freshPrefix(),
      LOG_LEVEL: 'warn',
    };
  });
  after(async () => {
    await backends?.drop();
    rmSync(checkout, { recursive: true, force: true });
  });

  test('its demo key is in data/demo-key, as the demo\'s: the README\'s curl lines work through it, and so do the ones it prints; Ctrl-C stops it all', async () => {
    const cluster = npmRun('cluster', env, false, ['--nodes', '1']);
    await waitFor(cluster, /^Ctrl-C stops HAProxy/m, 120_000);
    const address = (/^Cluster listening on (http:\/\/\S+) /m.exec(cluster.stdout()) ?? [])[1] ?? '';
    const nodes = [...cluster.stdout().matchAll(/^ {2}node \d+: (http:\/\/\S+)$/gm)].map((match) => match[1] ?? '');
    const key = (/demo key: (\S+)$/m.exec(cluster.stdout()) ?? [])[1] ?? '';
    assert.match(address, /^http:\/\/127\.0\.0\.1:\d+$/, cluster.stdout());
    assert.equal(nodes.length, 1, cluster.stdout());
    assert.match(key, /^psk_live_/, cluster.stdout());
    assert.equal(readFileSync(join(checkout, 'data', 'demo-key'), 'utf8'), `${key}\n`);
    for (const line of readmeCurlLines()) await runCurl(line, checkout, address);
    const printed = printedCurlLines(cluster.stdout());
    assert.ok(printed.length >= 1, cluster.stdout());
    for (const line of printed) await runCurl(line, tmpdir());
    await stopAndCheck(cluster, [address, ...nodes], 'SIGINT', 'group');

    // The cluster's key file does not make data/ look like a directory whose database was lost:
    // the demo starts there afterwards, and its key then works with the same README lines.
    const demo = await startDemo(join(checkout, 'data'));
    try {
      assert.equal(readFileSync(join(checkout, 'data', 'demo-key'), 'utf8'), `${demo.key}\n`);
      for (const line of readmeCurlLines()) await runCurl(line, checkout, demo.base);
    } finally {
      await stopAndCheck(demo, [demo.base, ...demo.origins], 'SIGTERM', 'npm');
    }
  });
});

describe('npm run cluster with its port in use', () => {
  test('says which option to change, and leaves nothing running', async () => {
    const backends = await testBackends();
    const checkout = mkdtempSync(join(tmpdir(), 'cluster-port-test-'));
    const taken = await occupy();
    try {
      const env = {
        DATA_DIR: join(checkout, 'data'),
        PORT: String(taken.port),
        SANDBOX_PORT_BASE: '0',
        DATABASE_URL: await backends.freshDatabaseUrl(),
        REDIS_URL: backends.redisUrl,
        REDIS_PREFIX: backends.freshPrefix(),
        LOG_LEVEL: 'warn',
      };
      const cluster = npmRun('cluster', env, true, ['--nodes', '1']);
      await groupGone(cluster.npm.pid ?? 0, 180_000);
      assert.notEqual((await cluster.exited).code, 0);
      const last = cluster.stderr().trim().split('\n').at(-1) ?? '';
      assert.match(last, new RegExp(`^--port ${taken.port}: 127\\.0\\.0\\.1:${taken.port} is already in use \\(EADDRINUSE\\); set --port to a free port`), cluster.stderr());
      assert.doesNotMatch(cluster.stderr(), STACK);
    } finally {
      taken.server.close();
      await backends.drop();
      rmSync(checkout, { recursive: true, force: true });
    }
  });
});

describe('a port in use is one line naming the variable to change', () => {
  let taken: { server: Server; port: number };
  let dir = '';
  before(async () => {
    taken = await occupy();
    dir = mkdtempSync(join(tmpdir(), 'port-in-use-test-'));
  });
  after(() => {
    taken.server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** What the script printed on stderr besides npm's own warnings. */
  const ownLines = (stderr: string) => stderr.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('npm '));

  const cases: { script: string; taken: string; env: () => Record<string, string>; message: () => RegExp }[] = [
    { script: 'serve', taken: 'PORT', env: () => ({ PORT: String(taken.port) }), message: () => new RegExp(`^PORT ${taken.port}: 127\\.0\\.0\\.1:${taken.port} is already in use \\(EADDRINUSE\\); set PORT to a free port`) },
    { script: 'demo', taken: 'PORT', env: () => ({ PORT: String(taken.port), SANDBOX_PORT_BASE: '0' }), message: () => new RegExp(`^PORT ${taken.port}: 127\\.0\\.0\\.1:${taken.port} is already in use`) },
    {
      script: 'demo',
      taken: 'SANDBOX_PORT_BASE',
      env: () => ({ PORT: '0', SANDBOX_PORT_BASE: String(taken.port) }),
      message: () => new RegExp(`^SANDBOX_PORT_BASE ${taken.port}: 127\\.0\\.0\\.1:${taken.port} \\(socialnet\\) is already in use \\(EADDRINUSE\\); set SANDBOX_PORT_BASE`),
    },
    { script: 'sandbox', taken: 'SANDBOX_PORT_BASE', env: () => ({ SANDBOX_PORT_BASE: String(taken.port) }), message: () => new RegExp(`^SANDBOX_PORT_BASE ${taken.port}: 127\\.0\\.0\\.1:${taken.port} \\(socialnet\\) is already in use`) },
  ];
  for (const { script, taken: variable, env, message } of cases) {
    test(`npm run ${script} with ${variable} in use`, async () => {
      const run = npmRun(script, { DATA_DIR: dir, ...env() }, true);
      await groupGone(run.npm.pid ?? 0);
      const { code } = await run.exited;
      assert.notEqual(code, 0);
      const lines = ownLines(run.stderr());
      assert.equal(lines.length, 1, run.stderr());
      assert.match(lines[0] ?? '', message());
      assert.doesNotMatch(run.stderr(), STACK);
    });
  }

  test('a demo that cannot start leaves the previous demo key as it was', async () => {
    const demo = await startDemo(dir);
    await stopAndCheck(demo, [demo.base, ...demo.origins], 'SIGTERM', 'npm');
    const failed = npmRun('demo', { DATA_DIR: dir, PORT: String(taken.port), SANDBOX_PORT_BASE: '0' }, true);
    await groupGone(failed.npm.pid ?? 0);
    assert.notEqual((await failed.exited).code, 0);
    assert.equal(readFileSync(join(dir, 'demo-key'), 'utf8'), `${demo.key}\n`);
    const stores = openSqliteStores({ path: join(dir, 'service.db') });
    try {
      const team = (await stores.accounts.listTeams()).find((candidate) => candidate.name === 'demo');
      const active = (await stores.accounts.listKeys(team?.id ?? '')).filter((key) => key.revokedAt === null);
      assert.deepEqual(
        active.map((key) => key.last4),
        [demo.key.slice(-4)],
        'the key of the last successful start is the only active one',
      );
    } finally {
      await stores.close();
    }
  });
});

describe('listen failures in process: the setting to change, and nothing left listening', () => {
  test('HOST that is not an address of this machine names HOST', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'host-test-'));
    try {
      // 192.0.2.0/24 is reserved for documentation: never an address of this machine.
      const config = loadConfig({ DATA_DIR: dir, HOST: '192.0.2.1', PORT: '0', LOG_LEVEL: 'silent' });
      await assert.rejects(start(config), { message: /^HOST 192\.0\.2\.1: cannot listen on 192\.0\.2\.1:0, the host is not an address of this machine \(EADDRNOTAVAIL\); set HOST/ });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('SANDBOX_HOST likewise', async () => {
    await assert.rejects(startSandbox({ host: '192.0.2.1', portBase: 0 }), { message: /^SANDBOX_HOST 192\.0\.2\.1: cannot listen on 192\.0\.2\.1:0 \(socialnet\)/ });
  });

  test('a sandbox port taken half-way: the platforms already listening release their ports', async () => {
    // socialnet and snapmsg on the two ports below the taken one, linkpage-a on it. Those two
    // are the system's: when something else on the machine holds one of them, the attempt
    // says so (socialnet or snapmsg in use) and is made again around another taken port.
    for (let attempt = 1; ; attempt++) {
      const { server, port } = await occupy();
      try {
        const failure = await startSandbox({ portBase: port - 2 }).then(
          async (sandbox) => {
            await sandbox.close();
            return assert.fail(`the sandbox started with ${port} (linkpage-a) taken`);
          },
          (error: unknown) => error as Error,
        );
        if (attempt < 10 && /\((socialnet|snapmsg)\) is already in use/.test(failure.message)) continue;
        assert.match(failure.message, new RegExp(`^SANDBOX_PORT_BASE ${port - 2}: 127\\.0\\.0\\.1:${port} \\(linkpage-a\\) is already in use`));
        for (const below of [port - 2, port - 1]) await assertFree(`http://127.0.0.1:${below}`);
        return;
      } finally {
        server.close();
      }
    }
  });
});
