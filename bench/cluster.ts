// npm run bench:cluster: cache-hit and live-scrape throughput, in one run, of one node on the
// embedded store, one node on PostgreSQL + Redis, and two nodes behind HAProxy; with the CPU
// time each request costs the nodes and the round trips it makes to PostgreSQL and Redis.
//
// Every node is a process of its own (src/main.ts), as in production; the sandbox upstream
// answers at once. PostgreSQL and Redis are the machine's (DATABASE_URL's server, default
// 127.0.0.1:5432; REDIS_URL, default 127.0.0.1:6379): the bench creates a database and a key
// prefix of its own and drops them at the end.
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { startSandbox } from '../sandbox/server.ts';
import { ensureDatabase, listening, startCluster } from '../src/cluster.ts';
import { UNPACED_ENV } from '../src/config.ts';
import { generateKey } from '../src/server/keys.ts';
import { migrateDatabase, openPostgresStores } from '../src/store/postgres/index.ts';
import { openSqliteStores } from '../src/store/sqlite/index.ts';
import type { Stores } from '../src/store/types.ts';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '5' }, connections: { type: 'string', default: '50' } } });
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const ROOT = join(import.meta.dirname, '..');
const tag = Math.random().toString(36).slice(2, 8);
const serverUrl = new URL(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
const databaseUrl = new URL(serverUrl.href);
databaseUrl.pathname = `/bench_cluster_${tag}`;
const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const redisPrefix = `bench-cluster-${tag}:`;
const dir = mkdtempSync(join(tmpdir(), 'bench-cluster-'));

async function teamKey(stores: Stores): Promise<string> {
  const team = await stores.accounts.createTeam({ name: 'bench', credits: 1_000_000_000, rateLimit: 10_000_000 });
  const key = generateKey();
  await stores.accounts.createKey({ teamId: team.id, name: 'bench', hash: key.hash, prefix: key.prefix, last4: key.last4 });
  return key.key;
}

/** CPU seconds (user + system) a process has used, from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The nodes serve /metrics behind this token (METRICS_TOKEN). */
const metricsToken = `bench-metrics-${tag}-0123456789`;

async function roundTrips(address: string): Promise<number> {
  const text = await (await fetch(`${address}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('store_backend_round_trips_total{'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

interface Figures {
  rps: number;
  cpuMsPerRequest: number;
  roundTripsPerRequest: number;
}

/** Drives `target` for `seconds`; the nodes' CPU and round trips are read before and after. */
async function drive(target: string, key: string, nodes: { pid: number; address: string }[], live: boolean): Promise<Figures> {
  let n = 0;
  const path = live ? () => `/v1/snapmsg/profile?username=live${tag}${n++}` : () => `/v1/snapmsg/profile?username=hit${tag}&cache_max_age=1d`;
  if (!live) await fetch(`${target}${path()}`, { headers: { 'x-api-key': key } });
  const cpuBefore = nodes.map((node) => cpuSeconds(node.pid));
  const tripsBefore = await Promise.all(nodes.map((node) => roundTrips(node.address)));
  const result = await autocannon({
    url: target,
    connections,
    duration: seconds,
    headers: { 'x-api-key': key },
    requests: [
      {
        setupRequest: (request) => ({ ...request, path: path() }),
      },
    ],
  });
  const cpuAfter = nodes.map((node) => cpuSeconds(node.pid));
  const tripsAfter = await Promise.all(nodes.map((node) => roundTrips(node.address)));
  const requests = result.requests.total;
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0) console.log(`   (${bad} of ${requests} answers were not 2xx)`);
  const cpu = cpuAfter.reduce((sum, after, i) => sum + after - (cpuBefore[i] ?? 0), 0);
  const trips = tripsAfter.reduce((sum, after, i) => sum + after - (tripsBefore[i] ?? 0), 0);
  return { rps: requests / seconds, cpuMsPerRequest: (cpu * 1000) / requests, roundTripsPerRequest: trips / requests };
}

const processes: ChildProcess[] = [];
const sandbox = await startSandbox({});
let cluster: Awaited<ReturnType<typeof startCluster>> | undefined;
try {
  // One node on the embedded store.
  const embeddedDir = join(dir, 'embedded');
  mkdirSync(embeddedDir, { mode: 0o700 });
  const sqlite = openSqliteStores({ path: join(embeddedDir, 'service.db') });
  const embeddedKey = await teamKey(sqlite);
  await sqlite.close();
  const embedded = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', join(ROOT, 'src', 'main.ts')], {
    env: { ...process.env, ...sandbox.env, ...UNPACED_ENV, PORT: '0', DATA_DIR: embeddedDir, LOG_LEVEL: 'error', METRICS_TOKEN: metricsToken, DATABASE_URL: '', REDIS_URL: '', TRUST_PROXY: '127.0.0.1' },
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
  });
  processes.push(embedded);
  const embeddedAddress = await listening(embedded, 'the embedded node');
  for (let i = 0; i < 300 && (await fetch(`${embeddedAddress}/readyz`).catch(() => null))?.status !== 200; i++) await new Promise((r) => setTimeout(r, 100));

  // Two nodes on PostgreSQL + Redis behind HAProxy; node 1 alone for the one-node figures.
  await ensureDatabase(databaseUrl.href);
  await migrateDatabase({ url: databaseUrl.href });
  const pgStores = await openPostgresStores({ url: databaseUrl.href });
  const scaleKey = await teamKey(pgStores);
  await pgStores.close();
  cluster = await startCluster({
    nodes: 2,
    host: '127.0.0.1',
    port: 0,
    databaseUrl: databaseUrl.href,
    redisUrl,
    redisPrefix,
    dataDir: join(dir, 'cluster'),
    cursorSecret: 'bench-cluster-cursor-secret-0123456789',
    env: { ...sandbox.env, ...UNPACED_ENV, LOG_LEVEL: 'error', METRICS_TOKEN: metricsToken },
  });
  const [first, second] = cluster.nodes.map((node) => ({ pid: node.process.pid as number, address: node.address }));
  if (!first || !second) throw new Error('two nodes expected');

  console.log(`bench:cluster on ${availableParallelism()} cores, ${connections} connections, ${seconds} s per measure`);
  const rows: [string, Figures, Figures][] = [];
  for (const [name, target, key, nodes] of [
    ['1 node, embedded (SQLite)', embeddedAddress, embeddedKey, [{ pid: embedded.pid as number, address: embeddedAddress }]],
    ['1 node, PostgreSQL + Redis', first.address, scaleKey, [first]],
    ['2 nodes behind HAProxy', cluster.address, scaleKey, [first, second]],
  ] as const) {
    const hits = await drive(target, key, [...nodes], false);
    const live = await drive(target, key, [...nodes], true);
    rows.push([name, hits, live]);
    console.log(
      `${name.padEnd(28)} cache hits ${hits.rps.toFixed(0).padStart(6)} req/s, ${hits.cpuMsPerRequest.toFixed(3)} ms CPU/req, ${hits.roundTripsPerRequest.toFixed(2)} round trips/req | ` +
        `live ${live.rps.toFixed(0).padStart(5)} req/s, ${live.cpuMsPerRequest.toFixed(3)} ms CPU/req, ${live.roundTripsPerRequest.toFixed(2)} round trips/req`,
    );
  }
  const [embeddedRow, scaleRow, twoRow] = rows;
  if (embeddedRow && scaleRow && twoRow) {
    console.log(`ratios (${availableParallelism()} cores):`);
    console.log(`  1 node PostgreSQL + Redis / embedded: cache hits ${(scaleRow[1].rps / embeddedRow[1].rps).toFixed(2)}x (target >= 0.6x), live ${(scaleRow[2].rps / embeddedRow[2].rps).toFixed(2)}x`);
    console.log(`  2 nodes / 1 node on PostgreSQL + Redis: cache hits ${(twoRow[1].rps / scaleRow[1].rps).toFixed(2)}x, live ${(twoRow[2].rps / scaleRow[2].rps).toFixed(2)}x`);
    console.log(
      `  cost PostgreSQL + Redis add per request: cache hit +${(scaleRow[1].cpuMsPerRequest - embeddedRow[1].cpuMsPerRequest).toFixed(3)} ms CPU and ${scaleRow[1].roundTripsPerRequest.toFixed(2)} round trips (target <= 3); ` +
        `live scrape +${(scaleRow[2].cpuMsPerRequest - embeddedRow[2].cpuMsPerRequest).toFixed(3)} ms CPU and ${scaleRow[2].roundTripsPerRequest.toFixed(2)} round trips`,
    );
  }
} finally {
  await cluster?.stop();
  for (const child of processes) {
    child.kill('SIGTERM');
    if (child.exitCode === null) await once(child, 'exit');
  }
  await sandbox.close();
  const admin = new pg.Client({ connectionString: serverUrl.href });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS bench_cluster_${tag} WITH (FORCE)`);
  await admin.end();
  const redis = new Redis(redisUrl);
  const keys = await redis.keys(`${redisPrefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
  rmSync(dir, { recursive: true, force: true });
}
