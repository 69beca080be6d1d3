// `npm run cluster -- --nodes N`: a real cluster on this machine. The sandbox upstream, N
// service nodes (each its own process, on PostgreSQL and Redis) and HAProxy in front of them
// with cluster/haproxy.cfg; it prints the one address to use and a demo key, written to
// DATA_DIR/demo-key as `npm run demo` does (the README's curl lines read it). Ctrl-C stops all.
//
// PostgreSQL and Redis are the machine's: DATABASE_URL (default
// postgres://postgres@127.0.0.1:5432/pagescrape_cluster, created when missing) and REDIS_URL
// (default redis://127.0.0.1:6379, keys under REDIS_PREFIX, default `pagescrape-cluster:`).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startSandbox } from '../sandbox/server.ts';
import { sandboxOptionsFromEnv } from '../sandbox/main.ts';
import { loadConfig, UNPACED_ENV } from './config.ts';
import { DEMO_EMAIL, demoTeam, demoUserLink, rotateDemoKey } from './demo-team.ts';
import { listenFailure, stopOnSignals } from './lifecycle.ts';
import { migrateDatabase } from './store/postgres/index.ts';
import { CLUSTER_DEMO_KEY_FILE, DEMO_KEY_FILE, openStores } from './store/open.ts';

const ROOT = resolve(import.meta.dirname, '..');
const HAPROXY_CONFIG = join(ROOT, 'cluster', 'haproxy.cfg');
// How long a node or HAProxy may take to start: a node loads its modules and opens its stores,
// which on a busy machine (several nodes starting at once among other work) has taken over 30 s.
const READY_TIMEOUT_MS = 120_000;

export interface ClusterOptions {
  nodes: number;
  /** Where HAProxy listens; port 0 picks a free one. */
  host: string;
  port: number;
  databaseUrl: string;
  redisUrl: string;
  redisPrefix: string;
  /** Each node's DATA_DIR is `node-<i>` in it; HAProxy's configuration is written there too. */
  dataDir: string;
  cursorSecret: string;
  /** More environment for every node: the upstream origins, budgets, log level. */
  env: Record<string, string>;
  /** Where the nodes' and HAProxy's output goes, a line at a time. */
  output?: (line: string) => void;
}

export interface ClusterNode {
  index: number;
  address: string;
  process: ChildProcess;
  /** Starts the node again after it stopped (same port and data directory). */
  restart(): Promise<void>;
}

export interface Cluster {
  /** HAProxy's address: the one to use. */
  address: string;
  nodes: ClusterNode[];
  stop(): Promise<void>;
}

/**
 * A port nothing listened on a moment ago. Anything else on the machine may take it before it is
 * listened on again, so whoever listens on it next retries with another when it is taken.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const server = createServer();
  server.listen(0, host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/** How many ports a start tries when something else on the machine takes the one it picked. */
const PORT_ATTEMPTS = 5;

const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

/**
 * The address a node process (src/main.ts) listens on, as it reports it over its IPC channel once
 * it listens; rejects when the node exits first or does not listen within READY_TIMEOUT_MS.
 */
export function listening(child: ChildProcess, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    const onMessage = (message: unknown) => {
      const address = (message as { listening?: unknown } | null)?.listening;
      if (typeof address !== 'string') return;
      done();
      resolve(address);
    };
    const onExit = () => {
      done();
      reject(new Error(`${what} exited before it was ready`));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`${what} did not listen within ${READY_TIMEOUT_MS / 1000} s`));
    }, READY_TIMEOUT_MS);
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** Polls `url` until it answers 200; throws after READY_TIMEOUT_MS or when `alive()` turns false. */
async function whenReady(url: string, what: string, alive: () => boolean): Promise<void> {
  const end = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (!alive()) throw new Error(`${what} exited before it was ready`);
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(1_000) })).status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > end) throw new Error(`${what} was not ready within ${READY_TIMEOUT_MS / 1000} s (${url})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Passes the child's output to `output` a line at a time; returns a check of whether it said its
 * port was in use (the node's "… is already in use (EADDRINUSE) …", HAProxy's "cannot bind
 * socket (Address already in use)").
 */
function pipeLines(child: ChildProcess, label: string, output: ((line: string) => void) | undefined): () => boolean {
  let portTaken = false;
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream?.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        if (/EADDRINUSE|Address already in use/.test(line)) portTaken = true;
        output?.(`[${label}] ${line}`);
      }
    });
  }
  return () => portTaken;
}

async function stopProcess(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

function haproxyBinary(): string {
  for (const candidate of [process.env.HAPROXY, '/usr/sbin/haproxy', '/usr/local/sbin/haproxy', '/usr/bin/haproxy']) {
    if (candidate && existsSync(candidate)) return candidate;
  }
  throw new Error('HAProxy is not installed (Debian: apt-get install -y haproxy), or set HAPROXY to its path.');
}

/** cluster/haproxy.cfg with one `server` line per node where its `# NODES` marker stands. */
export function haproxyConfig(nodes: { address: string }[]): string {
  const servers = nodes.map((node, i) => `    server node${i + 1} ${new URL(node.address).host} check`).join('\n');
  const template = readFileSync(HAPROXY_CONFIG, 'utf8');
  if (!template.includes('    # NODES')) throw new Error(`${HAPROXY_CONFIG} lacks its "# NODES" marker`);
  return template.replace('    # NODES', servers);
}

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const nodes: ClusterNode[] = [];
  const starting = new Set<ChildProcess>();
  let haproxy: ChildProcess | null = null;
  const stop = async () => {
    if (haproxy) await stopProcess(haproxy, 5_000);
    await Promise.all([...nodes.map((node) => node.process), ...starting].map((child) => stopProcess(child, 20_000)));
  };
  try {
    const startNode = async (index: number): Promise<ClusterNode> => {
      const env = {
        ...process.env,
        ...options.env,
        HOST: '127.0.0.1',
        DATA_DIR: join(options.dataDir, `node-${index}`),
        DATABASE_URL: options.databaseUrl,
        REDIS_URL: options.redisUrl,
        REDIS_PREFIX: options.redisPrefix,
        CURSOR_SECRET: options.cursorSecret,
        PUBLIC_BASE_URL: '',
        // HAProxy's X-Forwarded-For is believed, so per-address limits see the clients.
        TRUST_PROXY: '127.0.0.1',
      };
      /** Spawns the node on `port` (0: one the system picks) and waits until it is ready. */
      const spawnNode = async (port: number) => {
        const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', join(ROOT, 'src', 'main.ts')], {
          cwd: ROOT,
          env: { ...env, PORT: String(port) },
          stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
        });
        starting.add(child);
        const portTaken = pipeLines(child, `node ${index}`, options.output);
        try {
          const address = await listening(child, `node ${index}`);
          await whenReady(`${address}/readyz`, `node ${index}`, () => alive(child));
          return { child, address };
        } catch (error) {
          await stopProcess(child, 5_000);
          throw Object.assign(error as Error, { portTaken: portTaken() });
        } finally {
          starting.delete(child);
        }
      };
      const first = await spawnNode(0);
      const port = Number(new URL(first.address).port);
      const node: ClusterNode = {
        index,
        address: first.address,
        process: first.child,
        async restart() {
          if (alive(node.process)) throw new Error(`node ${index} is still running`);
          // HAProxy knows the node by its port: it comes back on the same one, once whatever
          // took it meanwhile lets it go.
          const end = Date.now() + READY_TIMEOUT_MS;
          for (;;) {
            try {
              node.process = (await spawnNode(port)).child;
              return;
            } catch (error) {
              if (!(error as { portTaken?: boolean }).portTaken || Date.now() > end) throw error;
              await new Promise((resolve) => setTimeout(resolve, 500));
            }
          }
        },
      };
      return node;
    };
    const started = await Promise.allSettled(Array.from({ length: options.nodes }, (_, i) => startNode(i + 1)));
    for (const outcome of started) if (outcome.status === 'fulfilled') nodes.push(outcome.value);
    const failed = started.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;

    const configFile = join(options.dataDir, 'haproxy.cfg');
    writeFileSync(configFile, haproxyConfig(nodes));
    const host = options.host === '0.0.0.0' ? '127.0.0.1' : options.host;
    for (let attempt = 1; ; attempt++) {
      const port = options.port === 0 ? await freePort(options.host) : options.port;
      const proxy = spawn(haproxyBinary(), ['-db', '-f', configFile], {
        env: { ...process.env, CLUSTER_BIND: `${options.host}:${port}` },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      haproxy = proxy;
      const portTaken = pipeLines(proxy, 'haproxy', options.output);
      const address = `http://${host}:${port}`;
      try {
        await whenReady(`${address}/readyz`, 'HAProxy', () => alive(proxy));
        // A port picked here and taken by something else meanwhile: HAProxy exits at once, and
        // what answered was that something else.
        await new Promise((resolve) => setTimeout(resolve, 100));
        if (!alive(proxy)) throw new Error('HAProxy exited before it was ready');
        return { address, nodes, stop };
      } catch (error) {
        await stopProcess(proxy, 5_000);
        if (!portTaken()) throw error;
        if (options.port !== 0) throw listenFailure(Object.assign(new Error('in use'), { code: 'EADDRINUSE' }), { host: options.host, port, hostVariable: 'HOST', portVariable: '--port' });
        if (attempt === PORT_ATTEMPTS) throw error;
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Creates the database named in `url` when it does not exist yet (on the same server). */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`DATABASE_URL names the database "${name}"; use letters, digits and _`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.href, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      nodes: { type: 'string', default: '3' },
      port: { type: 'string', default: process.env.PORT || '3000' },
      host: { type: 'string', default: process.env.HOST || '127.0.0.1' },
    },
  });
  const nodes = Number(values.nodes);
  const port = Number(values.port);
  if (!Number.isSafeInteger(nodes) || nodes < 1 || nodes > 32) throw new Error('--nodes must be an integer from 1 to 32');
  if (!Number.isSafeInteger(port) || port < 0 || port > 65535) throw new Error('--port must be a port number');

  const databaseUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/pagescrape_cluster';
  const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
  const redisPrefix = process.env.REDIS_PREFIX || 'pagescrape-cluster:';
  const rootDataDir = resolve(process.env.DATA_DIR || './data');
  const dataDir = join(rootDataDir, 'cluster');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });

  await ensureDatabase(databaseUrl);
  const applied = await migrateDatabase({ url: databaseUrl });
  if (applied.length > 0) console.log(`Migrated ${databaseUrl.replace(/\/\/[^@]*@/, '//…@')} to schema version ${applied.at(-1)}.`);

  // Every node must sign and open the same cursors: one secret for the cluster.
  const secretFile = join(dataDir, 'cursor-secret');
  if (!process.env.CURSOR_SECRET && !existsSync(secretFile)) writeFileSync(secretFile, randomBytes(32).toString('base64url'), { mode: 0o600 });
  const cursorSecret = process.env.CURSOR_SECRET || readFileSync(secretFile, 'utf8').trim();

  const sandbox = await startSandbox(sandboxOptionsFromEnv());
  const config = loadConfig({ ...process.env, DATA_DIR: dataDir, DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, REDIS_PREFIX: redisPrefix, CURSOR_SECRET: cursorSecret });
  const stores = await openStores(config);
  let cluster: Cluster;
  let key: string;
  let teamId: string;
  let passwordLink: string;
  try {
    const team = await demoTeam(stores);
    teamId = team.id;
    cluster = await startCluster({
      nodes,
      host: values.host,
      port,
      databaseUrl,
      redisUrl,
      redisPrefix,
      dataDir,
      cursorSecret,
      env: {
        ...Object.fromEntries(Object.entries({ ...sandbox.env, ...UNPACED_ENV }).map(([name, value]) => [name, process.env[name] || value])),
        LOG_LEVEL: process.env.LOG_LEVEL || 'warn',
      },
      output: (line) => console.error(line),
    });
    key = await rotateDemoKey(stores, team);
    passwordLink = await demoUserLink(stores, team, cluster.address);
  } catch (error) {
    await stores.close();
    await sandbox.close();
    throw error;
  }
  await stores.close();
  // Where the demo writes its key, which the README's curl lines read; the cluster's own copy
  // tells the embedded store that this key file is not its own.
  const keyFile = join(rootDataDir, DEMO_KEY_FILE);
  writeFileSync(join(rootDataDir, CLUSTER_DEMO_KEY_FILE), `${key}\n`, { mode: 0o600 });
  writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
  console.log(`
Cluster listening on ${cluster.address} (HAProxy in front of ${nodes} nodes):
${cluster.nodes.map((node) => `  node ${node.index}: ${node.address}`).join('\n')}
PostgreSQL ${databaseUrl.replace(/\/\/[^@]*@/, '//…@')}, Redis ${redisUrl.replace(/\/\/[^@]*@/, '//…@')} (keys under ${redisPrefix})
Demo team ${teamId}; demo key: ${key}
  (new at every start, the previous one revoked; also written to ${keyFile}, as npm run demo does)
Dashboard: open ${passwordLink}
  to set a password for ${DEMO_EMAIL}, then sign in at ${cluster.address}/dashboard.
Try:
  curl -s -H "x-api-key: $(cat ${keyFile})" "${cluster.address}/v1/snapmsg/profile?username=lunavoss"
  curl -s ${cluster.address}/readyz
Ctrl-C stops HAProxy, the nodes and the sandbox.
`);
  stopOnSignals(() => {
    void cluster
      .stop()
      .then(() => sandbox.close())
      .then(() => process.exit(0));
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
