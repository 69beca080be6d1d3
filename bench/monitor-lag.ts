// Monitors' lag: N monitors (default 1,000) due in the same second on one node of the embedded
// store, against the sandbox upstream with the platforms' pace lifted. Prints when each run
// started after its slot (the lag the metric api_monitor_run_lag_seconds counts): median, p99,
// the largest, and how long the node took to start them all. The goal: every run starts within
// the minute of its slot.
// Usage: npm run bench:monitors [-- --monitors 1000 --concurrency 16]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { startSandbox } from '../sandbox/server.ts';
import { loadConfig, UNPACED_ENV } from '../src/config.ts';
import { start } from '../src/main.ts';
import { generateKey } from '../src/server/keys.ts';
import { openStores } from '../src/store/open.ts';

const { values } = parseArgs({ options: { monitors: { type: 'string', default: '1000' }, concurrency: { type: 'string', default: '16' } } });
const count = Number(values.monitors);

const sandbox = await startSandbox({ seed: 'monitor-lag', portBase: 0, host: '127.0.0.1' });
const dir = mkdtempSync(join(tmpdir(), 'monitor-lag-'));
const config = loadConfig({ ...UNPACED_ENV, ...sandbox.env, DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', MONITOR_CONCURRENCY: values.concurrency, MONITOR_MAX_PER_TEAM: String(count) });
const stores = await openStores(config);
const running = await start(config, stores);
try {
  const team = await stores.accounts.createTeam({ name: 'lag', credits: count * 2, rateLimit: 1_000_000 });
  const key = generateKey();
  const record = await stores.accounts.createKey({ teamId: team.id, name: 'lag', hash: key.hash, prefix: key.prefix, last4: key.last4 });
  // Every monitor due at the same moment, a few seconds ahead: each its own profile (no single flight).
  const slot = Date.now() + 5_000;
  for (let i = 0; i < count; i++) {
    await stores.monitors.create(
      {
        teamId: team.id,
        test: false,
        keyId: record.id,
        endpoint: '/v1/snapmsg/profile',
        params: { username: `lag${String(i).padStart(5, '0')}` },
        schedule: { interval: 3_600, cron: null, timezone: 'UTC' },
        watch: [],
        label: null,
        createdAt: Date.now(),
        nextRunAt: slot,
      },
      count,
    );
  }
  const monitors = await stores.monitors.list(team.id, count);
  for (;;) {
    const done = (await Promise.all(monitors.map((m) => stores.monitors.get(team.id, m.id)))).filter((m) => (m?.runs ?? 0) >= 1).length;
    if (done === count) break;
    if (Date.now() - slot > 300_000) throw new Error(`only ${done} of ${count} runs after 5 minutes`);
    await sleep(500);
  }
  const runs = (await Promise.all(monitors.map((m) => stores.monitors.runs(team.id, m.id, 1)))).flat();
  const lags = runs.map((run) => run.startedAt - run.at).sort((a, b) => a - b);
  const at = (q: number) => lags[Math.min(lags.length - 1, Math.floor(q * lags.length))] as number;
  const outcomes = runs.reduce<Record<string, number>>((all, run) => ({ ...all, [run.status]: (all[run.status] ?? 0) + 1 }), {});
  const lastStart = Math.max(...runs.map((run) => run.startedAt)) - slot;
  const lastEnd = Math.max(...runs.map((run) => run.finishedAt)) - slot;
  console.log(`${count} monitors due at one slot, ${values.concurrency} runs at once: ${JSON.stringify(outcomes)}`);
  console.log(`lag slot→start: median ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${lags.at(-1)} ms; last run started ${lastStart} ms and ended ${lastEnd} ms after the slot`);
  console.log(lags.at(-1) as number < 60_000 ? 'every run started within the minute' : 'NOT every run started within the minute');
} finally {
  await running.stop();
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
}
