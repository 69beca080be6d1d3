// The dashboard's Webhooks page over HTTP: an owner adds one (the secret shown once, with a Copy
// button), sends a test that a loopback receiver gets, sees the delivery log with status and
// timing, redelivers, rotates, deletes; a refused URL is refused; a member only reads; another
// team's webhook is not found.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { startHarness, type Harness } from '../api/harness.ts';
import { until } from '../api/support.ts';
import { startReceiver, type Receiver } from '../support/webhook-receiver.ts';
import { signedIn } from './support.ts';

describe('dashboard: Webhooks', () => {
  let h: Harness;
  let strict: Harness;
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver();
    h = await startHarness({
      credits: 100,
      app: { webhooks: { guard: { allowPrivate: true, allowHttp: true }, delivery: { retryScheduleMs: [100], disableAfterMs: 86_400_000, timeoutMs: 2_000, pollMs: 50 } } },
    });
    strict = await startHarness({ credits: 1 });
  });
  after(async () => {
    await h.close();
    await strict.close();
    await receiver.close();
  });

  test('an owner adds one (secret shown once), tests it, reads the log, redelivers, rotates and deletes', async () => {
    const owner = await signedIn(h, h.team.id, 'owner');
    const list = await owner.browser.get('/dashboard/webhooks');
    assert.equal(list.status, 200);
    assert.match(list.body, /aria-current="page"[^>]*>Webhooks|href="\/dashboard\/webhooks" aria-current="page"/);
    const added = await owner.browser.post('/dashboard/webhooks', { url: `${receiver.origin}/dash`, events: '*', description: 'from the dashboard' });
    assert.equal(added.status, 200, added.body);
    const secret = /id="new-secret" type="text" readonly value="(whsec_[^"]+)"/.exec(added.body)?.[1];
    assert.ok(secret, 'the secret is shown');
    assert.match(added.body, /data-copy="new-secret"/);
    const [endpoint] = await h.stores.webhooks.listEndpoints(h.team.id);
    assert.ok(endpoint);
    const detail = await owner.browser.get(`/dashboard/webhooks/${endpoint.id}`);
    assert.doesNotMatch(detail.body, new RegExp(secret.replace(/[+/=]/g, '.')), 'shown once only');
    await owner.browser.post(`/dashboard/webhooks/${endpoint.id}/test`, {});
    assert.ok(await until(() => receiver.received.some((r) => r.path === '/dash'), 5_000));
    const arrived = receiver.received.find((r) => r.path === '/dash');
    assert.equal((new Webhook(secret).verify(arrived?.body ?? '', arrived?.headers ?? {}) as { type: string }).type, 'webhook.test');
    assert.ok(await until(async () => /HTTP 200 in \d+ ms/.test((await owner.browser.get(`/dashboard/webhooks/${endpoint.id}`)).body), 3_000), 'the log shows the status and timing');
    const log = await owner.browser.get(`/dashboard/webhooks/${endpoint.id}`);
    assert.match(log.body, /<code>webhook\.test<\/code>/);
    assert.match(log.body, /delivered/);
    const deliveryId = arrived?.headers['webhook-id'] as string;
    const redelivered = await owner.browser.post(`/dashboard/webhooks/deliveries/${deliveryId}/redeliver`, {}, log);
    assert.equal(redelivered.status, 303);
    assert.ok(await until(() => receiver.of(deliveryId).length === 2, 5_000), 'redelivered');
    const page = await owner.browser.get(`/dashboard/webhooks/${endpoint.id}`);
    const rotated = await owner.browser.post(`/dashboard/webhooks/${endpoint.id}/rotate`, {}, page);
    const next = /id="new-secret" type="text" readonly value="(whsec_[^"]+)"/.exec(rotated.body)?.[1];
    assert.ok(next && next !== secret);
    assert.match(rotated.body, /previous secret signs beside the new one/);
    const confirm = await owner.browser.get(`/dashboard/webhooks/${endpoint.id}/delete`);
    assert.equal(confirm.status, 200);
    const deleted = await owner.browser.post(`/dashboard/webhooks/${endpoint.id}/delete`, {}, confirm);
    assert.equal(deleted.status, 200);
    assert.equal(await h.stores.webhooks.getEndpoint(h.team.id, endpoint.id), null);
  });

  test('a URL into the network is refused with the reason; a member only reads; another team gets 404', async () => {
    const team = await strict.newTeam(1);
    const owner = await signedIn(strict, team.team.id, 'owner');
    await owner.browser.get('/dashboard/webhooks');
    const refused = await owner.browser.post('/dashboard/webhooks', { url: 'http://169.254.169.254/latest/meta-data/', events: '*' });
    assert.equal(refused.status, 422);
    assert.match(refused.body, /https:\/\//);
    await owner.browser.get('/dashboard/webhooks');
    const inner = await owner.browser.post('/dashboard/webhooks', { url: 'https://10.0.0.1/hook', events: '*' });
    assert.equal(inner.status, 422);
    assert.match(inner.body, /private address/);
    assert.deepEqual(await strict.stores.webhooks.listEndpoints(team.team.id), []);
    const created = await strict.stores.webhooks.createEndpoint({ teamId: team.team.id, url: 'https://hooks.example/x', events: ['*'], description: null, secret: 'whsec_c2VjcmV0' }, 10);
    assert.ok(created);
    const member = await signedIn(strict, team.team.id, 'member');
    const seen = await member.browser.get('/dashboard/webhooks');
    assert.equal(seen.status, 200);
    assert.match(seen.body, /hooks\.example/);
    assert.doesNotMatch(seen.body, /Add webhook/);
    assert.equal((await member.browser.post(`/dashboard/webhooks/${created.id}/test`, {}, seen)).status, 403);
    const stranger = await signedIn(strict, (await strict.newTeam(1)).team.id, 'owner');
    assert.equal((await stranger.browser.get(`/dashboard/webhooks/${created.id}`)).status, 404);
  });
});
