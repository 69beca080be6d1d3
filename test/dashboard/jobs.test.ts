// The dashboard's Jobs page: the team's batch jobs with their progress, counts and credits, their
// results to download, and cancel; nothing of another team's.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startHarness, type Harness } from '../api/harness.ts';
import { signedIn } from './support.ts';

describe('dashboard: Jobs', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ credits: 1_000, app: { jobs: { concurrencyPerTeam: 1, pollMs: 10 } } });
  });
  after(() => h.close());

  const create = async (key: string, n: number, tag: string): Promise<string> => {
    const requests = Array.from({ length: n }, (_, i) => ({ endpoint: '/v1/linkpage-a/profile', params: { url: `https://linkpage-a.example/${tag}${i}` } }));
    const response = await h.app.inject({ method: 'POST', url: '/v1/jobs', headers: { 'x-api-key': key }, payload: { requests, label: `label-${tag}` } });
    assert.equal(response.statusCode, 202, response.body);
    return response.json().data.id as string;
  };

  test('lists the jobs with progress, counts and credits; downloads results; cancels; another team\'s job is 404', async () => {
    const small = await create(h.key, 3, 'small');
    for (let n = 0; (await h.stores.jobs.get(h.team.id, small))?.pending !== 0; n++) {
      assert.ok(n < 500);
      await sleep(10);
    }
    const big = await create(h.key, 500, 'big');
    const { browser } = await signedIn(h, h.team.id, 'owner');
    const page = await browser.get('/dashboard/jobs');
    assert.equal(page.status, 200);
    for (const text of [small, big, 'label-small', '3 ok · 0 failed · 0 cancelled', `/dashboard/jobs/${small}/results.ndjson`]) assert.ok(page.body.includes(text), text);
    assert.match(page.body, /<progress max="3" value="3"/);
    const download = await browser.get(`/dashboard/jobs/${small}/results.ndjson`);
    assert.equal(download.status, 200);
    const lines = download.body.trim().split('\n').map((line) => JSON.parse(line) as { index: number; status: string; creditsCharged: number });
    assert.deepEqual(lines.map((l) => [l.index, l.status, l.creditsCharged]), [[0, 'succeeded', 1], [1, 'succeeded', 1], [2, 'succeeded', 1]]);
    await browser.get('/dashboard/jobs');
    const cancelled = await browser.post(`/dashboard/jobs/${big}/cancel`, {});
    assert.equal(cancelled.status, 303);
    assert.equal((await h.stores.jobs.get(h.team.id, big))?.status, 'cancelled');

    const other = await h.newTeam(100, 100);
    const theirs = await create(other.key, 1, 'theirs');
    assert.equal((await browser.get(`/dashboard/jobs/${theirs}/results.ndjson`)).status, 404);
    await browser.get('/dashboard/jobs');
    assert.equal((await browser.post(`/dashboard/jobs/${theirs}/cancel`, {})).status, 404);
    assert.ok(!(await browser.get('/dashboard/jobs')).body.includes(theirs));
  });
});
