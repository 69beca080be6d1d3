// `node bench/job-store.ts`: the job store alone on PostgreSQL (DATABASE_URL; a database of its
// own, created and dropped here): items per second claimed, stored (one page each) and ended by
// BENCH_WORKERS (default 16) concurrent loops, nothing scraped. What a job engine costs per item.
import pg from 'pg';
import { openPostgresStores } from '../src/store/postgres/index.ts';

const ITEMS = Number(process.env.BENCH_ITEMS ?? 2_000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 16);
const PER_TEAM = Number(process.env.JOB_CONCURRENCY_PER_TEAM ?? WORKERS);
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `bench_store_${process.pid}`;
const admin = new pg.Client({ connectionString: url });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
const own = new URL(url);
own.pathname = `/${name}`;
const stores = await openPostgresStores({ url: own.toString(), schema: 'migrate' });
try {
  const team = await stores.accounts.createTeam({ name: 'bench', credits: 1_000_000, rateLimit: 1_000_000 });
  const items = Array.from({ length: ITEMS }, (_, i) => ({ endpoint: '/v1/snapmsg/profile', params: { username: `u${i}` } }));
  let t = performance.now();
  await stores.jobs.create({ teamId: team.id, keyId: 'k', test: false, label: null, cacheMaxAge: null, maxPages: 1, items }, 10, Date.now());
  console.log(`create ${ITEMS} items: ${(performance.now() - t).toFixed(0)} ms`);
  t = performance.now();
  let done = 0;
  await Promise.all(
    Array.from({ length: WORKERS }, async (_, w) => {
      for (;;) {
        const item = await stores.jobs.claim(`w${w}`, Date.now() + 60_000, Date.now(), PER_TEAM);
        if (!item) {
          if (done >= ITEMS) return;
          await new Promise((r) => setTimeout(r, 5));
          continue;
        }
        await stores.jobs.savePage(item, `w${w}`, '{}', null, Date.now());
        await stores.jobs.finish(item, `w${w}`, { status: 'succeeded' }, Date.now());
        done++;
      }
    }),
  );
  console.log(`${WORKERS} loops, ${PER_TEAM} per team: ${(ITEMS / ((performance.now() - t) / 1000)).toFixed(0)} items/s claimed, stored and ended`);
} finally {
  await stores.close();
  await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
  await admin.end();
}
