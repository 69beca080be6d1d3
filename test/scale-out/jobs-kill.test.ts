// Batch jobs on a cluster, from outside: three service processes (`node src/main.ts`) over one
// PostgreSQL database and a Redis server of the test's own. Mid-job, one node is SIGKILLed and
// Redis is stopped and started again empty. Every item must end, each page stored once and
// charged once (the job's credits equal its pages, and the team's balance and ledger agree), a
// listing followed across the kill must hold no page twice, and the surviving nodes must finish
// the job.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig, UNPACED_ENV } from '../../src/config.ts';
import { generateKey } from '../../src/server/keys.ts';
import { openStores } from '../../src/store/open.ts';
import type { Stores } from '../../src/store/types.ts';
import { startSandbox, type RunningSandbox } from '../../sandbox/server.ts';
import { testBackends, type TestBackends } from '../support/backends.ts';
import { spawnService, type ChildService } from '../support/child-service.ts';
import { OwnRedis } from '../support/outages.ts';

const PROFILES = 240;
/** A listing of 320 posts, 1 to 3 per page: followed for up to this many pages. */
const LISTING_PAGES = 25;
const LISTINGS = [{ url: 'https://www.socialnet.example/metrodailynews' }, { pageId: '1000003242969379' }];

// Answers are read as the API documents them; the test checks their fields one by one.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

describe('batch jobs on three service processes: one SIGKILLed and Redis restarted empty mid-job', () => {
  let backends: TestBackends;
  let redis: OwnRedis;
  let sandbox: RunningSandbox;
  let stores: Stores;
  const services: ChildService[] = [];
  const dirs: string[] = [];
  const dir = () => {
    const made = mkdtempSync(join(tmpdir(), 'jobs-kill-'));
    dirs.push(made);
    return made;
  };

  before(async () => {
    backends = await testBackends();
    redis = await OwnRedis.start();
    sandbox = await startSandbox({ seed: 'jobs-kill', latencyMs: 60, portBase: 0, host: '127.0.0.1' });
    const shared = {
      ...sandbox.env,
      ...UNPACED_ENV,
      DATABASE_URL: await backends.freshDatabaseUrl(),
      REDIS_URL: redis.url,
      REDIS_PREFIX: backends.freshPrefix(),
      CURSOR_SECRET: 'jobs-kill-cursor-secret-0123456789',
      JOB_CONCURRENCY_PER_TEAM: '6',
      JOB_LOCK_MS: '3000',
      REQUEST_BUDGET_MS: '3000',
      RESERVATION_MARGIN_MS: '0',
    };
    stores = await openStores(loadConfig({ ...shared, DATA_DIR: dir(), MIGRATE: 'auto' }));
    for (let n = 0; n < 3; n++) services.push(spawnService({ ...shared, DATA_DIR: dir(), MIGRATE: 'off' }));
    await Promise.all(services.map((service) => service.listening));
  });

  after(async () => {
    for (const service of services) service.child.kill('SIGKILL');
    await Promise.all(services.map((service) => service.exited));
    await stores?.close();
    await sandbox?.close();
    await redis?.stop();
    await backends?.drop();
    for (const made of dirs) rmSync(made, { recursive: true, force: true });
  });

  test('every item ends, each page stored and charged once, and the survivors finish the job', async () => {
    const credits = 10_000;
    const team = await stores.accounts.createTeam({ name: 'jobs-kill', credits, rateLimit: 1_000_000 });
    const generated = generateKey();
    await stores.accounts.createKey({ teamId: team.id, name: 'live', hash: generated.hash, prefix: generated.prefix, last4: generated.last4 });
    const [first, second, third] = await Promise.all(services.map((service) => service.listening));
    const call = async (base: string | undefined, method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> => {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { 'x-api-key': generated.key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: await response.json() };
    };

    const requests = [
      ...LISTINGS.map((params) => ({ endpoint: '/v1/socialnet/profile/posts', params })),
      ...Array.from({ length: PROFILES }, (_, i) => ({ endpoint: '/v1/linkpage-a/profile', params: { url: `https://linkpage-a.example/jobskill${i}` } })),
    ];
    const created = await call(first, 'POST', '/v1/jobs', { requests, max_pages: LISTING_PAGES });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    const id = created.body.data.id as string;

    /** The job as a node shows it; null while the node answers 503 (Redis away or reconnecting). */
    const progress = async (base: string | undefined): Promise<Json> => {
      const answer = await call(base, 'GET', `/v1/jobs/${id}`);
      if (answer.status === 503) return null;
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      return answer.body.data;
    };
    for (let job = await progress(second); job.succeeded < 30; job = await progress(second)) await sleep(50);
    services[0]?.child.kill('SIGKILL');
    await services[0]?.exited;
    await redis.stop();
    const midway = await stores.jobs.get(team.id, id);
    assert.ok(midway && midway.pending > 0, `killed mid-job: ${JSON.stringify(midway)}`);
    await sleep(500);
    await redis.restart();

    const deadline = Date.now() + 180_000;
    let job = await progress(second);
    while (job?.status !== 'completed') {
      assert.ok(Date.now() < deadline, `the job did not end: ${JSON.stringify(job)}`);
      await sleep(200);
      job = await progress(Math.random() < 0.5 ? second : third);
    }
    const failed = (await call(third, 'GET', `/v1/jobs/${id}/results?status=failed&limit=100`)).body.data?.results ?? [];
    assert.equal(job.total, requests.length);
    assert.equal(job.succeeded, requests.length, `${JSON.stringify(job)}\n${JSON.stringify(failed.map((item: Json) => [item.index, item.attempts, item.error]))}`);

    const items: Json[] = [];
    let cursor: string | null = null;
    do {
      const page = await call(third, 'GET', `/v1/jobs/${id}/results?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(page.status, 200);
      items.push(...page.body.data.results);
      cursor = page.body.data.paging.cursor;
    } while (cursor);
    assert.equal(items.length, requests.length);
    let pages = 0;
    for (const item of items) {
      assert.equal(item.status, 'succeeded', JSON.stringify(item).slice(0, 300));
      assert.equal(item.creditsCharged, item.pages.length, `item ${item.index}: one credit per page kept`);
      pages += item.pages.length;
      if (item.endpoint === '/v1/linkpage-a/profile') assert.equal(item.pages.length, 1, `item ${item.index}: one page, stored once`);
    }
    for (const listing of items.filter((item) => item.endpoint === '/v1/socialnet/profile/posts')) {
      assert.ok(listing.pages.length > 1 && listing.pages.length <= LISTING_PAGES, `listing ${listing.index}: ${listing.pages.length} pages`);
      const ids = listing.pages.flatMap((page: Json) => page.posts.map((post: Json) => post.postId));
      assert.equal(new Set(ids).size, ids.length, `listing ${listing.index}: no post twice (no page stored twice)`);
    }
    assert.equal(job.pages, pages);
    assert.equal(job.creditsCharged, pages);

    // The dead node's reservations are given back once their deadline has passed.
    const until = Date.now() + 60_000;
    while ((await stores.ledger.usage(team.id))?.pending !== 0) {
      assert.ok(Date.now() < until, 'reservations still pending');
      await sleep(200);
    }
    assert.equal(await stores.ledger.balance(team.id), credits - pages, 'charged once per page kept');
    const ledger = (await stores.ledger.entries(team.id, 1_000_000)).reduce((sum, entry) => sum + entry.amount, 0);
    assert.equal(ledger, credits - pages, 'ledger = balance');
  });
});
