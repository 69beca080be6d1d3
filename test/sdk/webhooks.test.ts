// The SDK's webhooks: `verifyWebhook` (node:crypto alone) against signatures the Standard
// Webhooks library makes, and `client.webhooks.*` against the service with a receiver on loopback.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { PageScrape, verifyWebhook, WebhookVerificationError, ConflictError, NotFoundError, ValidationError } from '../../sdk/src/index.ts';
import { startHarness, type Harness } from '../api/harness.ts';
import { until } from '../api/support.ts';
import { startReceiver, type Receiver } from '../support/webhook-receiver.ts';

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const other = `whsec_${randomBytes(32).toString('base64')}`;
const body = JSON.stringify({ type: 'credits.low', timestamp: '2026-11-27T10:00:00.000Z', data: { balance: 4, threshold: 5 } });

function signed(at: Date, secrets: string[] = [secret], id = 'msg_2ZkV8dT1qX0bN5mR7yW3cF6hJ') {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(id, at, body)).join(' '),
  };
}

describe('verifyWebhook', () => {
  test('accepts what the Standard Webhooks library signs, as a record or Headers, with one signature of several', () => {
    const now = new Date();
    assert.deepEqual(verifyWebhook(body, signed(now), secret), JSON.parse(body));
    assert.equal(verifyWebhook(Buffer.from(body), new Headers(signed(now)), secret).type, 'credits.low');
    const upper = Object.fromEntries(Object.entries(signed(now)).map(([name, value]) => [name.toUpperCase(), value]));
    assert.equal(verifyWebhook(body, upper, secret).type, 'credits.low');
    // During a rotation: two signatures; either secret verifies.
    const both = signed(now, [other, secret]);
    assert.equal(verifyWebhook(body, both, secret).type, 'credits.low');
    assert.equal(verifyWebhook(body, both, other).type, 'credits.low');
  });

  test('refuses another secret, a changed body or id, a missing header, and a timestamp over 5 minutes away', () => {
    const now = new Date();
    const refused = (fn: () => unknown, message: RegExp) => assert.throws(fn, (error: unknown) => error instanceof WebhookVerificationError && message.test(error.message));
    refused(() => verifyWebhook(body, signed(now), other), /signature/);
    refused(() => verifyWebhook(body.replace('4', '5'), signed(now), secret), /signature/);
    refused(() => verifyWebhook(body, { ...signed(now), 'webhook-id': 'msg_other' }, secret), /signature/);
    refused(() => verifyWebhook(body, { 'webhook-id': 'msg_x', 'webhook-timestamp': '1' }, secret), /Missing/);
    refused(() => verifyWebhook(body, signed(new Date(now.getTime() - 6 * 60_000)), secret), /too old/);
    refused(() => verifyWebhook(body, signed(new Date(now.getTime() + 6 * 60_000)), secret), /too new/);
    refused(() => verifyWebhook(body, { ...signed(now), 'webhook-signature': 'v2,abc' }, secret), /signature/);
    // The library agrees on each.
    assert.throws(() => new Webhook(secret).verify(body, signed(new Date(now.getTime() - 6 * 60_000))));
    assert.equal(verifyWebhook(body, signed(new Date(now.getTime() - 4 * 60_000)), secret).type, 'credits.low');
  });
});

describe('client.webhooks', () => {
  let h: Harness;
  let receiver: Receiver;
  let client: PageScrape;
  before(async () => {
    receiver = await startReceiver();
    h = await startHarness({ app: { webhooks: { guard: { allowPrivate: true, allowHttp: true }, delivery: { retryScheduleMs: [100], disableAfterMs: 86_400_000, timeoutMs: 2_000, pollMs: 50 } } } });
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    client = new PageScrape({ baseUrl: `http://127.0.0.1:${(h.app.server.address() as { port: number }).port}`, apiKey: h.key, maxRetries: 0 });
  });
  after(async () => {
    await h.close();
    await receiver.close();
  });

  test('create, list, get, test (verified with verifyWebhook), deliveries, redeliver, rotate, delete', async () => {
    const created = (await client.webhooks.create({ url: `${receiver.origin}/sdk`, events: ['*'], description: 'sdk' })).data;
    assert.match(created.secret, /^whsec_/);
    assert.deepEqual((await client.webhooks.list()).data.webhooks.map((w) => w.id), [created.id]);
    assert.equal((await client.webhooks.get(created.id)).data.url, `${receiver.origin}/sdk`);
    await client.webhooks.test(created.id);
    assert.ok(await until(() => receiver.received.length === 1, 5_000));
    const [arrived] = receiver.received;
    assert.ok(arrived);
    assert.equal(verifyWebhook(arrived.body, arrived.headers, created.secret).type, 'webhook.test');
    assert.ok(await until(async () => (await client.webhooks.deliveries(created.id)).data.deliveries[0]?.state === 'delivered', 3_000));
    const [delivery] = (await client.webhooks.deliveries(created.id)).data.deliveries;
    assert.equal(delivery?.id, arrived.headers['webhook-id']);
    await client.webhooks.redeliver(delivery?.id as string);
    assert.ok(await until(() => receiver.received.length === 2, 5_000));
    const rotated = (await client.webhooks.rotateSecret(created.id)).data;
    assert.notEqual(rotated.secret, created.secret);
    assert.ok(rotated.previousSecretExpiresAt);
    await assert.rejects(client.webhooks.create({ url: 'ftp://nope', events: ['*'] }), ValidationError);
    for (let i = 1; i < 10; i++) await client.webhooks.create({ url: `${receiver.origin}/more${i}`, events: ['credits.low'] });
    await assert.rejects(client.webhooks.create({ url: `${receiver.origin}/eleventh`, events: ['*'] }), ConflictError);
    assert.equal((await client.webhooks.delete(created.id)).data.deleted, true);
    await assert.rejects(client.webhooks.get(created.id), NotFoundError);
  });
});
