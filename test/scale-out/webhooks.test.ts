// Webhooks on a cluster: three nodes over the same PostgreSQL (and Redis), each delivering. Every
// event is delivered, and each attempt is made by one node only: a receiver that fails every
// first attempt sees each webhook-id exactly twice, never more.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { startReceiver, type Receiver } from '../support/webhook-receiver.ts';
import { startHarness, type Harness } from '../api/harness.ts';
import { until } from '../api/support.ts';

const delivery = { retryScheduleMs: [200, 200, 200], disableAfterMs: 5 * 86_400_000, timeoutMs: 2_000, pollMs: 20 };
const webhooks = { guard: { allowPrivate: true, allowHttp: true }, delivery };

describe('webhooks on three nodes sharing PostgreSQL', () => {
  let nodes: Harness[] = [];
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver();
    const a = await startHarness({ credits: 1000, set: 'scale-out', app: { webhooks } });
    nodes = [a, await startHarness({ nodeOf: a, app: { webhooks } }), await startHarness({ nodeOf: a, app: { webhooks } })];
  });
  after(async () => {
    for (const node of nodes.reverse()) await node.close();
    await receiver.close();
  });

  test('each event is delivered, each attempt made once', async () => {
    const [a] = nodes as [Harness];
    const created = await a.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: { 'x-api-key': a.key, 'content-type': 'application/json' },
      payload: JSON.stringify({ url: `${receiver.origin}/cluster`, events: ['*'] }),
    });
    assert.equal(created.statusCode, 201, created.body);
    const { secret, id } = (JSON.parse(created.body) as { data: { secret: string; id: string } }).data;
    const seen = new Map<string, number>();
    receiver.answer = (request, response) => {
      const key = request.headers['webhook-id'] as string;
      const count = (seen.get(key) ?? 0) + 1;
      seen.set(key, count);
      new Webhook(secret).verify(request.body, request.headers);
      response.statusCode = count === 1 ? 500 : 204;
      response.end();
    };
    const EVENTS = 40;
    // Recorded on every node, as requests anywhere in the cluster would.
    await Promise.all(Array.from({ length: EVENTS }, (_, n) => (nodes[n % 3] as Harness).stores.events.record(a.team.id, 'credits.low', { n })));
    assert.ok(await until(() => seen.size === EVENTS && [...seen.values()].every((count) => count >= 2), 30_000), `all delivered (${seen.size})`);
    // Time for any duplicate attempt to show.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.deepEqual([...new Set(seen.values())], [2], 'each webhook-id attempted exactly twice');
    assert.equal(receiver.received.filter((r) => r.path === '/cluster').length, EVENTS * 2);
    // Counted by the node that made each attempt: the attempts add up, and more than one node made some.
    const made = await Promise.all(nodes.map(async (node) => (await node.app.metrics.webhookDeliveries.get()).values.reduce((sum, value) => sum + value.value, 0)));
    assert.equal(made.reduce((sum, n) => sum + n, 0), EVENTS * 2, `attempts per node: ${made.join(', ')}`);
    assert.ok(made.filter((n) => n > 0).length >= 2, `shared between the nodes: ${made.join(', ')}`);
    const page = await a.stores.webhooks.listDeliveries(a.team.id, id, 100);
    assert.equal(page.deliveries.length, EVENTS);
    assert.ok(page.deliveries.every((d) => d.state === 'delivered' && d.attempts === 2 && d.attemptLog.length === 2));
  });
});
