// `npm run bench:jobs`: items per second through a batch job against the same number of
// synchronous requests made by 50 concurrent clients, on the same machine, the service and the
// sandbox upstream in this process (no pacing); then the service's memory with 10,000 items
// queued. Every scrape is live (distinct targets, no cache_max_age). The job runs 50 of the
// team's items at once on 64 workers (JOB_CONCURRENCY_PER_TEAM, JOB_WORKERS, unless they are
// set): as many as the synchronous clients; the service's default of 4 a team is a share, for
// teams to take turns, and caps one job at 4 items in flight.
//   Embedded store by default; with DATABASE_URL (a server where it may create databases), on
//   PostgreSQL and pg-boss, in a database of its own created and dropped here.
//   BENCH_ITEMS (default 2000) items per run; BENCH_ROUNDS (default 3) rounds of one synchronous
//   run and one job; BENCH_LATENCY_MS (default 20) sandbox latency.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { loadConfig, UNPACED_ENV } from '../src/config.ts';
import { start } from '../src/main.ts';
import { generateKey } from '../src/server/keys.ts';
import { openStores } from '../src/store/open.ts';
import { startSandbox } from '../sandbox/server.ts';

const ITEMS = Number(process.env.BENCH_ITEMS ?? 2_000);
const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 20);
const CLIENTS = 50;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/** A database of its own on DATABASE_URL's server, and how to drop it. */
async function ownDatabase(url: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `bench_jobs_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const own = new URL(url);
  own.pathname = `/${name}`;
  return {
    url: own.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

const database = process.env.DATABASE_URL ? await ownDatabase(process.env.DATABASE_URL) : null;
const sandbox = await startSandbox({ seed: 'bench-jobs', portBase: 0, host: '127.0.0.1', latencyMs: LATENCY_MS });
const dir = mkdtempSync(join(tmpdir(), 'bench-jobs-'));
const config = loadConfig({
  ...sandbox.env,
  ...UNPACED_ENV,
  DATA_DIR: dir,
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'silent',
  ...(database ? { DATABASE_URL: database.url, MIGRATE: 'auto' } : {}),
  JOB_CONCURRENCY_PER_TEAM: process.env.JOB_CONCURRENCY_PER_TEAM ?? '50',
  JOB_WORKERS: process.env.JOB_WORKERS ?? '64',
  JOB_MAX_ACTIVE_PER_TEAM: '100',
  // One address runs every client here.
  MAX_CONNECTIONS_PER_ADDRESS: '1000',
});
const stores = await openStores(config);
const running = await start(config, stores);
const base = running.address;
const team = await stores.accounts.createTeam({ name: 'bench', credits: 10_000_000, rateLimit: 100_000_000 });
const generated = generateKey();
await stores.accounts.createKey({ teamId: team.id, name: 'bench', hash: generated.hash, prefix: generated.prefix, last4: generated.last4 });
const headers = { 'x-api-key': generated.key };
const target = (tag: string, n: number) => ({ endpoint: '/v1/linkpage-a/profile', params: { url: `https://linkpage-a.example/${tag}${n}` } });

async function synchronous(tag: string): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < ITEMS) {
        const { endpoint, params } = target(tag, next++);
        const response = await fetch(`${base}${endpoint}?${new URLSearchParams(params)}`, { headers });
        const body = await response.text();
        if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${body.slice(0, 300)}`);
      }
    }),
  );
  return ITEMS / ((performance.now() - started) / 1000);
}

async function job(tag: string): Promise<number> {
  const started = performance.now();
  const created = await fetch(`${base}/v1/jobs`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ requests: Array.from({ length: ITEMS }, (_, n) => target(tag, n)) }),
  });
  const { data } = (await created.json()) as { data: { id: string } };
  for (;;) {
    const state = (await (await fetch(`${base}/v1/jobs/${data.id}`, { headers })).json()) as { data: { pending: number; succeeded: number } };
    if (state.data.pending === 0) {
      if (state.data.succeeded !== ITEMS) throw new Error(`${state.data.succeeded} of ${ITEMS} succeeded`);
      break;
    }
    if (sampler) inFlight.push(Number((await sampler.query("SELECT count(*) AS n FROM job_items WHERE status = 'running'")).rows[0].n));
    await sleep(20);
  }
  return ITEMS / ((performance.now() - started) / 1000);
}

// On PostgreSQL, the job's items in flight (claimed, not ended), sampled while it runs on a
// connection of its own (not counted in the service's round trips): how full the team's cap is kept.
const sampler = database ? new pg.Client({ connectionString: database.url }) : null;
await sampler?.connect();
let inFlight: number[] = [];

try {
  // A warm-up of each, then the measured runs.
  await synchronous('warm-sync');
  await job('warm-job');
  // Rounds of one of each, alternated: the machine's load changes between them, and each
  // round's ratio compares two runs made side by side. The median round is reported.
  const trips = () => Object.values(stores.roundTrips?.() ?? {}).reduce((sum, n) => sum + n, 0);
  const rounds: { sync: number; batch: number; syncTrips: number; jobTrips: number; inFlight: number }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    let at = trips();
    const sync = await synchronous(`sync${round}-`);
    const syncTrips = (trips() - at) / ITEMS;
    at = trips();
    inFlight = [];
    const batch = await job(`job${round}-`);
    const inFlightMean = inFlight.length > 0 ? inFlight.reduce((sum, n) => sum + n, 0) / inFlight.length : 0;
    rounds.push({ sync, batch, syncTrips, jobTrips: (trips() - at) / ITEMS, inFlight: inFlightMean });
  }
  console.log(`store: ${database ? 'PostgreSQL (pg-boss)' : 'embedded (SQLite)'}`);
  console.log(`items: ${ITEMS} per run, sandbox latency ${LATENCY_MS} ms, job concurrency ${config.jobs.concurrencyPerTeam} per team, ${config.jobs.workers} workers`);
  for (const r of rounds) console.log(`  synchronous, ${CLIENTS} concurrent clients: ${r.sync.toFixed(0)} items/s; batch job: ${r.batch.toFixed(0)} items/s (${(r.batch / r.sync).toFixed(2)}x)`);
  const median = [...rounds].sort((a, b) => a.batch / a.sync - b.batch / b.sync)[Math.floor(rounds.length / 2)] as (typeof rounds)[number];
  console.log(`median round: ${median.sync.toFixed(0)} items/s synchronous, ${median.batch.toFixed(0)} items/s in a job: ${(median.batch / median.sync).toFixed(2)}x`);
  if (database) {
    console.log(`PostgreSQL round trips per item: ${median.syncTrips.toFixed(1)} synchronous, ${median.jobTrips.toFixed(1)} in the job`);
    const means = rounds.map((r) => r.inFlight).sort((a, b) => a - b);
    console.log(`job items in flight (mean of each round, sampled): ${means.map((n) => n.toFixed(1)).join(', ')}; median ${(means[Math.floor(means.length / 2)] ?? 0).toFixed(1)} of ${config.jobs.concurrencyPerTeam}`);
  }

  // Memory with 10,000 items queued: a team whose items cannot run (no credits left to reserve
  // would still run them); a job created and measured before its items are claimed, then cancelled.
  globalThis.gc?.();
  const before = process.memoryUsage().rss;
  const big = await fetch(`${base}/v1/jobs`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ requests: Array.from({ length: 10_000 }, (_, n) => target('queued', n)) }),
  });
  const { data } = (await big.json()) as { data: { id: string } };
  await sleep(500);
  const queued = process.memoryUsage().rss;
  const depth = await stores.jobs.depth();
  console.log(`RSS: ${(before / 2 ** 20).toFixed(0)} MiB before, ${(queued / 2 ** 20).toFixed(0)} MiB with a job of 10,000 items (${depth.pending} queued, ${depth.running} running)`);
  await fetch(`${base}/v1/jobs/${data.id}/cancel`, { method: 'POST', headers });
} finally {
  await sampler?.end();
  await running.stop();
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
  await database?.drop();
}
