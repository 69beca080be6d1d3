// The dashboard's Monitors page: each monitor's last run, next run and last change with its patch
// shown operation by operation; pause, resume and delete by an owner; a member only sees them;
// another team's monitor is not found.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startHarness, type Harness } from '../api/harness.ts';
import { signedIn } from './support.ts';

describe('dashboard: Monitors', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ credits: 50 });
  });
  after(() => h.close());

  test('lists monitors with last run, next run and the last change readably; an owner pauses, resumes and deletes; a member may not', async () => {
    const base = Date.now();
    const made = await h.stores.monitors.create(
      {
        teamId: h.team.id,
        test: false,
        keyId: h.keyId,
        endpoint: '/v1/snapmsg/profile',
        params: { username: 'lunavoss' },
        schedule: { interval: 3600, cron: null, timezone: 'UTC' },
        watch: ['/profile/subscriberCount'],
        label: 'Luna <watch>',
        createdAt: base,
        nextRunAt: base + 3_600_000,
      },
      100,
    );
    assert.ok(made);
    const claim = await h.stores.monitors.claimNow(h.team.id, made.id, 'run_dash1', base, base + 60_000);
    assert.ok(claim && claim !== 'running');
    const patch = [{ op: 'replace', path: '/profile/subscriberCount', value: 2708401 }];
    await h.stores.monitors.finish(made.id, 'run_dash1', {
      run: { id: 'run_dash1', monitorId: made.id, at: base, startedAt: base, finishedAt: base + 5, status: 'succeeded', creditsCharged: 1, changed: true, patch, error: null, requestId: 'req_dash1' },
      nextRunAt: base + 3_600_000,
      data: '{}',
      failureThreshold: 3,
    });

    const { browser } = await signedIn(h, h.team.id, 'owner');
    const page = await browser.get('/dashboard/monitors');
    assert.equal(page.status, 200, page.body);
    assert.match(page.body, /aria-current="page"[^>]*>Monitors|>Monitors<\/a>/);
    assert.ok(page.body.includes('Luna &lt;watch&gt;'), 'the label, escaped');
    assert.ok(page.body.includes('every 1h'));
    assert.ok(page.body.includes('succeeded'));
    assert.match(page.body, /<code>\/profile\/subscriberCount<\/code> now <code>2708401<\/code>/);

    const paused = await browser.post(`/dashboard/monitors/${made.id}/pause`, {});
    assert.equal(paused.status, 200, paused.body);
    assert.equal((await h.stores.monitors.get(h.team.id, made.id))?.status, 'paused');
    assert.ok(paused.body.includes('Resume'));
    await browser.post(`/dashboard/monitors/${made.id}/resume`, {});
    assert.equal((await h.stores.monitors.get(h.team.id, made.id))?.status, 'active');

    const member = await signedIn(h, h.team.id, 'member');
    const seen = await member.browser.get('/dashboard/monitors');
    assert.ok(seen.body.includes('Luna &lt;watch&gt;'));
    assert.ok(!seen.body.includes(`/dashboard/monitors/${made.id}/delete`), 'no forms for a member');
    assert.equal((await member.browser.post(`/dashboard/monitors/${made.id}/delete`, {}, page)).status, 403);

    const stranger = await h.newTeam(10);
    const other = await signedIn(h, stranger.team.id, 'owner');
    await other.browser.get('/dashboard/monitors');
    assert.equal((await other.browser.post(`/dashboard/monitors/${made.id}/delete`, {})).status, 404);

    const deleted = await browser.post(`/dashboard/monitors/${made.id}/delete`, {});
    assert.equal(deleted.status, 200);
    assert.equal(await h.stores.monitors.get(h.team.id, made.id), null);
    assert.ok(deleted.body.includes('No monitors yet.'));
  });
});
