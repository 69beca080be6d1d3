// Behaviour of the webhook store (src/store/types.ts, WebhookStore) on every implementation:
// endpoints per team, the fan-out of events into deliveries, claims made once however many
// callers race, locks that expire, attempts recorded, endpoints disabled after failing long.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Stores, WebhookAttempt } from '../../src/store/types.ts';
import type { OpenStores } from './behaviour.ts';

const attempt = (status: number | null, error: string | null = null): WebhookAttempt => ({ at: new Date().toISOString(), status, durationMs: 12.5, response: status === null ? '' : `answer ${status}`, error });

export function webhookStoreBehaviour(name: string, open: OpenStores): void {
  const it = (title: string, fn: (s: Stores) => Promise<void>): void => {
    test(title, async () => {
      const s = await open();
      try {
        await fn(s);
      } finally {
        await s.close();
      }
    });
  };
  const newTeam = (s: Stores) => s.accounts.createTeam({ name: `team-${randomUUID()}`, credits: 10, rateLimit: 100 });
  const endpoint = (s: Stores, teamId: string, events: string[] = ['*'], max = 10) =>
    s.webhooks.createEndpoint({ teamId, url: 'https://hooks.example/in', events, description: null, secret: `whsec_${randomUUID()}` }, max);

  describe(`${name}: webhook store`, () => {
    it('keeps endpoints per team, at most the number given, each team seeing only its own', async (s) => {
      const a = await newTeam(s);
      const b = await newTeam(s);
      const first = await s.webhooks.createEndpoint({ teamId: a.id, url: 'https://a.example/hook', events: ['credits.low'], description: 'ops', secret: 'whsec_one' }, 2);
      assert.ok(first);
      assert.match(first.id, /^wh_/);
      assert.deepEqual([first.url, first.events, first.description, first.enabled, first.secret, first.previousSecret], ['https://a.example/hook', ['credits.low'], 'ops', true, 'whsec_one', null]);
      assert.ok(await endpoint(s, a.id, ['*'], 2));
      assert.equal(await endpoint(s, a.id, ['*'], 2), null, 'the third of at most two');
      assert.equal((await s.webhooks.listEndpoints(a.id)).length, 2);
      assert.deepEqual(await s.webhooks.getEndpoint(a.id, first.id), first);
      assert.equal(await s.webhooks.getEndpoint(b.id, first.id), null);
      assert.equal(await s.webhooks.deleteEndpoint(b.id, first.id), false);
      assert.equal(await s.webhooks.rotateSecret(b.id, first.id, 'whsec_x', Date.now()), null);
      assert.equal(await s.webhooks.deleteEndpoint(a.id, first.id), true);
      assert.equal(await s.webhooks.getEndpoint(a.id, first.id), null);
      assert.equal((await s.webhooks.listEndpoints(a.id)).length, 1);
    });

    it('a rotation keeps the previous secret, and until when it signs', async (s) => {
      const team = await newTeam(s);
      const created = await endpoint(s, team.id);
      assert.ok(created);
      const until = Date.now() + 86_400_000;
      const rotated = await s.webhooks.rotateSecret(team.id, created.id, 'whsec_new', until);
      assert.deepEqual([rotated?.secret, rotated?.previousSecret, rotated?.previousSecretUntil], ['whsec_new', created.secret, until]);
    });

    it('fans each event out once to the matching enabled endpoints that existed when it happened', async (s) => {
      const team = await newTeam(s);
      const other = await newTeam(s);
      const early = await s.events.record(team.id, 'credits.low', { balance: 1, threshold: 5 });
      await sleep(5);
      const all = await endpoint(s, team.id, ['*']);
      const low = await endpoint(s, team.id, ['credits.low']);
      const jobs = await endpoint(s, team.id, ['job.completed']);
      const elsewhere = await endpoint(s, other.id, ['*']);
      assert.ok(all && low && jobs && elsewhere);
      await sleep(5);
      const event = await s.events.record(team.id, 'credits.low', { balance: 2, threshold: 5 });
      const now = Date.now();
      assert.ok((await s.webhooks.fanOut(100, now)) >= 2);
      assert.equal(await s.webhooks.fanOut(100, now), 0, 'each event once');
      const of = async (id: string) => (await s.webhooks.listDeliveries(team.id, id, 10)).deliveries;
      const [toAll] = await of(all.id);
      assert.equal((await of(all.id)).length, 1, 'not the event from before it existed');
      assert.ok(toAll);
      assert.match(toAll.id, /^msg_/);
      assert.deepEqual([toAll.eventId, toAll.eventType, toAll.state, toAll.attempts, toAll.nextAttemptAt], [event.id, 'credits.low', 'pending', 0, now]);
      assert.deepEqual(JSON.parse(toAll.payload), { type: 'credits.low', timestamp: event.createdAt, data: { balance: 2, threshold: 5 } });
      assert.equal((await of(low.id)).length, 1);
      assert.equal((await of(jobs.id)).length, 0);
      assert.equal((await s.webhooks.listDeliveries(other.id, elsewhere.id, 10)).deliveries.length, 0);
      assert.notEqual((await of(low.id))[0]?.id, toAll.id, 'a webhook-id per event and endpoint');
      assert.ok(early);
      // A test event goes to the one endpoint it names, whatever it subscribes to.
      await s.events.record(team.id, 'webhook.test', { webhookId: jobs.id });
      await s.webhooks.fanOut(100, now);
      assert.deepEqual((await of(jobs.id)).map((d) => d.eventType), ['webhook.test']);
      assert.equal((await of(all.id)).length, 1);
    });

    it('claims each due delivery once however many callers race, and again once its lock has passed', async (s) => {
      const team = await newTeam(s);
      const hooks = await Promise.all([endpoint(s, team.id), endpoint(s, team.id), endpoint(s, team.id)]);
      for (let i = 0; i < 4; i++) await s.events.record(team.id, 'credits.low', { i });
      const now = Date.now();
      await s.webhooks.fanOut(100, now);
      const claims = await Promise.all(Array.from({ length: 6 }, (_, i) => s.webhooks.claim(`node-${i}`, now, now + 30_000, 100, 10)));
      const ids = claims.flat().map((d) => d.id);
      assert.equal(ids.length, 12);
      assert.equal(new Set(ids).size, 12, 'each claimed once');
      const claimed = claims.flat()[0];
      assert.ok(claimed);
      assert.ok(hooks.some((hook) => hook?.id === claimed.endpoint.id && hook.secret === claimed.endpoint.secret), 'with its endpoint and secret');
      assert.equal((await s.webhooks.claim('late', now + 1_000, now + 31_000, 100, 10)).length, 0, 'locked');
      // Released by its holder (a shutdown): due again at once; by another: still held.
      const held = claims.flat().find((d) => d.id === claimed.id);
      assert.ok(held);
      const holder = `node-${claims.findIndex((list) => list.some((d) => d.id === claimed.id))}`;
      await s.webhooks.release(claimed.id, 'someone-else');
      assert.equal((await s.webhooks.claim('late', now + 1_000, now + 31_000, 100, 10)).length, 0);
      await s.webhooks.release(claimed.id, holder);
      const [freed] = await s.webhooks.claim('late', now + 1_000, now + 31_000, 100, 10);
      assert.equal(freed?.id, claimed.id);
      // Every claimer died: the locks pass and the deliveries are due again.
      const again = await s.webhooks.claim('survivor', now + 31_001, now + 60_000, 100, 10);
      assert.equal(again.length, 12);
      assert.equal(await s.webhooks.queueDepth(), 12);
    });

    it('claims at most the per-endpoint share at once, counting those locked by others', async (s) => {
      const team = await newTeam(s);
      const hook = await endpoint(s, team.id);
      assert.ok(hook);
      for (let i = 0; i < 5; i++) await s.events.record(team.id, 'credits.low', { i });
      const now = Date.now();
      await s.webhooks.fanOut(100, now);
      assert.equal((await s.webhooks.claim('a', now, now + 30_000, 100, 2)).length, 2);
      assert.equal((await s.webhooks.claim('b', now, now + 30_000, 100, 2)).length, 0);
      assert.equal((await s.webhooks.claim('b', now, now + 30_000, 100, 3)).length, 1);
    });

    it('records attempts of the holder only, reschedules, delivers, fails for good', async (s) => {
      const team = await newTeam(s);
      const hook = await endpoint(s, team.id);
      assert.ok(hook);
      await s.events.record(team.id, 'credits.exhausted', { balance: 0 });
      const now = Date.now();
      await s.webhooks.fanOut(100, now);
      const [delivery] = await s.webhooks.claim('a', now, now + 30_000, 10, 5);
      assert.ok(delivery);
      assert.deepEqual(await s.webhooks.settle(delivery.id, 'b', attempt(500), { state: 'pending', nextAttemptAt: now + 5_000 }, now, 1e12), { recorded: false, disabled: false });
      assert.deepEqual(await s.webhooks.settle(delivery.id, 'a', attempt(500), { state: 'pending', nextAttemptAt: now + 5_000 }, now, 1e12), { recorded: true, disabled: false });
      assert.equal((await s.webhooks.claim('a', now + 4_999, now + 40_000, 10, 5)).length, 0, 'not due yet');
      const [second] = await s.webhooks.claim('c', now + 5_000, now + 40_000, 10, 5);
      assert.equal(second?.id, delivery.id);
      assert.equal(second?.attempts, 1);
      await s.webhooks.settle(delivery.id, 'c', attempt(200), { state: 'delivered', nextAttemptAt: null }, now + 5_100, 1e12);
      const [listed] = (await s.webhooks.listDeliveries(team.id, hook.id, 10)).deliveries;
      assert.deepEqual([listed?.state, listed?.attempts, listed?.nextAttemptAt], ['delivered', 2, null]);
      assert.deepEqual(
        listed?.attemptLog.map((a) => [a.status, a.response, a.durationMs]),
        [
          [200, 'answer 200', 12.5],
          [500, 'answer 500', 12.5],
        ],
        'newest first',
      );
      assert.equal(await s.webhooks.queueDepth(), 0);
      // Redelivered: due again now, whatever its state; another team's id is unknown.
      const other = await newTeam(s);
      assert.equal(await s.webhooks.redeliver(other.id, delivery.id, now), null);
      const again = await s.webhooks.redeliver(team.id, delivery.id, now + 6_000);
      assert.deepEqual([again?.state, again?.nextAttemptAt], ['pending', now + 6_000]);
      const [third] = await s.webhooks.claim('d', now + 6_000, now + 50_000, 10, 5);
      assert.equal(third?.id, delivery.id);
      await s.webhooks.settle(delivery.id, 'd', attempt(null, 'timed out'), { state: 'failed', nextAttemptAt: null }, now + 6_100, 1e12);
      const [failed] = (await s.webhooks.listDeliveries(team.id, hook.id, 10)).deliveries;
      assert.deepEqual([failed?.state, failed?.attempts, failed?.attemptLog[0]?.status, failed?.attemptLog[0]?.error], ['failed', 3, null, 'timed out']);
    });

    it('disables an endpoint that has failed for the span given, failing its pending deliveries; a delivery enables it again', async (s) => {
      const team = await newTeam(s);
      const hook = await endpoint(s, team.id);
      assert.ok(hook);
      await s.events.record(team.id, 'credits.low', { n: 1 });
      await s.events.record(team.id, 'credits.low', { n: 2 });
      const t0 = Date.now();
      await s.webhooks.fanOut(100, t0);
      const [one] = await s.webhooks.claim('a', t0, t0 + 1_000, 1, 5);
      assert.ok(one);
      assert.equal((await s.webhooks.settle(one.id, 'a', attempt(500), { state: 'pending', nextAttemptAt: t0 + 10 }, t0, 60_000)).disabled, false);
      assert.equal((await s.webhooks.getEndpoint(team.id, hook.id))?.failingSince, t0);
      const [two] = await s.webhooks.claim('a', t0 + 10, t0 + 70_000, 1, 5);
      assert.ok(two);
      assert.equal((await s.webhooks.settle(two.id, 'a', attempt(500), { state: 'pending', nextAttemptAt: t0 + 60_000 }, t0 + 60_000, 60_000)).disabled, true);
      const disabled = await s.webhooks.getEndpoint(team.id, hook.id);
      assert.equal(disabled?.enabled, false);
      assert.ok(disabled?.disabledReason && disabled.disabledAt);
      const states = (await s.webhooks.listDeliveries(team.id, hook.id, 10)).deliveries.map((d) => d.state);
      assert.deepEqual(states, ['failed', 'failed']);
      // No new deliveries while disabled; a delivered redelivery enables it again.
      await s.events.record(team.id, 'credits.low', { n: 3 });
      await s.webhooks.fanOut(100, t0 + 60_000);
      assert.equal((await s.webhooks.listDeliveries(team.id, hook.id, 10)).deliveries.length, 2);
      await s.webhooks.redeliver(team.id, two.id, t0 + 61_000);
      const [redelivered] = await s.webhooks.claim('a', t0 + 61_000, t0 + 90_000, 1, 5);
      assert.equal(redelivered?.id, two.id);
      await s.webhooks.settle(two.id, 'a', attempt(204), { state: 'delivered', nextAttemptAt: null }, t0 + 61_000, 60_000);
      const enabled = await s.webhooks.getEndpoint(team.id, hook.id);
      assert.deepEqual([enabled?.enabled, enabled?.disabledReason, enabled?.failingSince], [true, null, null]);
    });

    it('prunes delivered and failed deliveries made before a time, with their attempts; never pending ones', async (s) => {
      const team = await newTeam(s);
      const hook = await endpoint(s, team.id);
      assert.ok(hook);
      for (let i = 0; i < 3; i++) await s.events.record(team.id, 'credits.low', { i });
      const now = Date.now();
      await s.webhooks.fanOut(100, now);
      const claimed = await s.webhooks.claim('a', now, now + 10_000, 2, 5);
      assert.equal(claimed.length, 2);
      await s.webhooks.settle((claimed[0] as { id: string }).id, 'a', attempt(200), { state: 'delivered', nextAttemptAt: null }, now, 1e12);
      await s.webhooks.settle((claimed[1] as { id: string }).id, 'a', attempt(500), { state: 'failed', nextAttemptAt: null }, now, 1e12);
      assert.equal(await s.webhooks.prune(now - 60_000), 0, 'none made before then');
      assert.equal(await s.webhooks.prune(Date.now() + 1_000), 2);
      const left = (await s.webhooks.listDeliveries(team.id, hook.id, 10)).deliveries;
      assert.deepEqual(left.map((d) => d.state), ['pending']);
    });

    it('lists deliveries newest first in pages, and deletes them with their endpoint', async (s) => {
      const team = await newTeam(s);
      const hook = await endpoint(s, team.id);
      assert.ok(hook);
      for (let i = 0; i < 5; i++) await s.events.record(team.id, 'credits.low', { i });
      await s.webhooks.fanOut(100, Date.now());
      const first = await s.webhooks.listDeliveries(team.id, hook.id, 2);
      assert.equal(first.deliveries.length, 2);
      assert.ok(first.next !== null);
      const second = await s.webhooks.listDeliveries(team.id, hook.id, 2, first.next);
      const third = await s.webhooks.listDeliveries(team.id, hook.id, 2, second.next ?? undefined);
      assert.equal(third.next, null);
      const order = [...first.deliveries, ...second.deliveries, ...third.deliveries].map((d) => (JSON.parse(d.payload) as { data: { i: number } }).data.i);
      assert.deepEqual(order, [4, 3, 2, 1, 0]);
      assert.equal(await s.webhooks.deleteEndpoint(team.id, hook.id), true);
      assert.equal(await s.webhooks.queueDepth(), 0);
      assert.equal((await s.webhooks.listDeliveries(team.id, hook.id, 10)).deliveries.length, 0);
    });
  });
}
