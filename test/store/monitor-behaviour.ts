// Behaviour of MonitorStore (src/store/types.ts) that every implementation passes: creation
// under the team's bound, team scoping, the one-statement claim of a due run (one taker among
// racing claims, never a run of a monitor whose lock is held, taken again once the lock expires),
// a run's end written only by the lock's owner, once per slot, with its events, and pruning.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { MonitorOutcome, MonitorRun, NewMonitor, Stores } from '../../src/store/types.ts';

/** Stores over a fresh, empty backend, and a way to open more over the same one (another process or node). */
export type OpenMonitorStores = () => Promise<{ stores: Stores; another: () => Promise<Stores> }>;

const T0 = Date.UTC(2026, 10, 27, 12, 0, 0);

let runs = 0;
const run = (monitorId: string, at: number, status: MonitorRun['status'], extra: Partial<MonitorRun> = {}): MonitorRun => ({
  id: `run_test${++runs}`,
  monitorId,
  at,
  startedAt: at + 10,
  finishedAt: at + 20,
  status,
  creditsCharged: status === 'succeeded' ? 1 : 0,
  changed: false,
  patch: null,
  error: status === 'failed' ? { code: 'UPSTREAM_BLOCKED', message: 'down' } : null,
  requestId: `req_test${runs}`,
  ...extra,
});

const outcome = (r: MonitorRun, nextRunAt: number, more: Partial<MonitorOutcome> = {}): MonitorOutcome => ({ run: r, nextRunAt, failureThreshold: 3, ...more });

export function monitorBehaviour(name: string, open: OpenMonitorStores): void {
  describe(`${name}: monitor store`, () => {
    const withStores = async (fn: (s: Stores, teamId: string, fresh: (over?: Partial<NewMonitor>) => NewMonitor, another: () => Promise<Stores>) => Promise<void>) => {
      const { stores: s, another } = await open();
      try {
        const team = await s.accounts.createTeam({ name: 'monitors', credits: 10, rateLimit: 100 });
        const fresh = (over: Partial<NewMonitor> = {}): NewMonitor => ({
          teamId: team.id,
          test: false,
          keyId: 'key_x',
          endpoint: '/v1/snapmsg/profile',
          params: { username: 'lunavoss' },
          schedule: { interval: 60, cron: null, timezone: 'UTC' },
          watch: ['/profile/followers'],
          label: 'luna',
          createdAt: T0,
          nextRunAt: T0,
          ...over,
        });
        await fn(s, team.id, fresh, another);
      } finally {
        await s.close();
      }
    };

    test('create, get, list newest first with a cursor, update, delete; scoped to the team; bounded per team', () =>
      withStores(async (s, teamId, fresh) => {
        const a = await s.monitors.create(fresh(), 3);
        assert.ok(a);
        assert.match(a.id, /^mon_[A-Za-z0-9_-]{20}$/);
        assert.deepEqual(
          { ...a, id: '' },
          {
            id: '',
            teamId,
            test: false,
            keyId: 'key_x',
            endpoint: '/v1/snapmsg/profile',
            params: { username: 'lunavoss' },
            interval: 60,
            cron: null,
            timezone: 'UTC',
            watch: ['/profile/followers'],
            label: 'luna',
            status: 'active',
            createdAt: T0,
            lastRunAt: null,
            nextRunAt: T0,
            lastChangeAt: null,
            runs: 0,
            consecutiveFailures: 0,
            failureAlerted: false,
          },
        );
        const b = await s.monitors.create(fresh({ schedule: { interval: null, cron: '0 9 * * *', timezone: 'Europe/Paris' }, label: null, watch: [] }), 3);
        const c = await s.monitors.create(fresh(), 3);
        assert.ok(b && c);
        assert.equal(await s.monitors.create(fresh(), 3), null, 'the fourth is refused at a bound of 3');
        assert.deepEqual(
          (await s.monitors.list(teamId, 100)).map((m) => m.id),
          [c.id, b.id, a.id],
        );
        assert.deepEqual(
          (await s.monitors.list(teamId, 2)).map((m) => m.id),
          [c.id, b.id],
        );
        assert.deepEqual(
          (await s.monitors.list(teamId, 2, b.id)).map((m) => m.id),
          [a.id],
        );
        assert.equal((await s.monitors.get(teamId, b.id))?.cron, '0 9 * * *');
        assert.equal((await s.monitors.get(teamId, b.id))?.timezone, 'Europe/Paris');

        const other = await s.accounts.createTeam({ name: 'other', credits: 0, rateLimit: 1 });
        assert.equal(await s.monitors.get(other.id, a.id), null);
        assert.deepEqual(await s.monitors.list(other.id, 10), []);
        assert.equal(await s.monitors.update(other.id, a.id, { label: 'x' }), null);
        assert.equal(await s.monitors.delete(other.id, a.id), false);
        assert.equal(await s.monitors.claimNow(other.id, a.id, 'n', T0, T0 + 1000), null);
        assert.ok(await s.monitors.create(fresh({ teamId: other.id }), 3), 'the bound is per team');

        const updated = await s.monitors.update(teamId, a.id, { status: 'paused', label: null, watch: ['/a', '/b'], schedule: { interval: null, cron: '*/5 * * * *', timezone: 'UTC' }, nextRunAt: T0 + 5 });
        assert.deepEqual(
          updated && { status: updated.status, label: updated.label, watch: updated.watch, interval: updated.interval, cron: updated.cron, nextRunAt: updated.nextRunAt },
          { status: 'paused', label: null, watch: ['/a', '/b'], interval: null, cron: '*/5 * * * *', nextRunAt: T0 + 5 },
        );
        assert.equal((await s.monitors.update(teamId, a.id, { label: 'kept' }))?.cron, '*/5 * * * *', 'unchanged fields stay');
        assert.equal(await s.monitors.delete(teamId, a.id), true);
        assert.equal(await s.monitors.get(teamId, a.id), null);
        assert.equal(await s.monitors.delete(teamId, a.id), false);
        assert.ok(await s.monitors.create(fresh(), 3), 'a deleted monitor frees its place');
      }));

    test('claimDue takes the most overdue active monitor whose lock is free, once; paused and future ones wait; an expired lock is taken again', () =>
      withStores(async (s, teamId, fresh) => {
        const late = await s.monitors.create(fresh({ nextRunAt: T0 - 5_000 }), 10);
        const due = await s.monitors.create(fresh({ nextRunAt: T0 }), 10);
        const future = await s.monitors.create(fresh({ nextRunAt: T0 + 60_000 }), 10);
        const paused = await s.monitors.create(fresh({ nextRunAt: T0 - 9_000 }), 10);
        assert.ok(late && due && future && paused);
        await s.monitors.update(teamId, paused.id, { status: 'paused' });

        const first = await s.monitors.claimDue('node-a', T0, T0 + 30_000);
        assert.equal(first?.monitor.id, late.id);
        assert.equal(first?.slot, T0 - 5_000);
        assert.equal(first?.lastData, null);
        const second = await s.monitors.claimDue('node-b', T0, T0 + 30_000);
        assert.equal(second?.monitor.id, due.id);
        assert.equal(await s.monitors.claimDue('node-c', T0, T0 + 30_000), null, 'nothing else is due; held ones are not taken');
        assert.equal(await s.monitors.claimNow(teamId, late.id, 'node-c', T0, T0 + 30_000), 'running', 'run now waits for the run in progress');

        // node-a dies: its lock expires, and another node takes the same slot.
        const again = await s.monitors.claimDue('node-c', T0 + 30_001, T0 + 60_000);
        assert.equal(again?.monitor.id, late.id);
        assert.equal(again?.slot, T0 - 5_000);
        // node-a's late end is refused: the lock is node-c's now.
        assert.equal(await s.monitors.finish(late.id, 'node-a', outcome(run(late.id, T0 - 5_000, 'succeeded'), T0 + 55_000, { data: '{"a":1}' })), null);
        assert.ok(await s.monitors.finish(late.id, 'node-c', outcome(run(late.id, T0 - 5_000, 'succeeded'), T0 + 55_000, { data: '{"a":1}' })));
        const after = await s.monitors.get(teamId, late.id);
        assert.equal(after?.nextRunAt, T0 + 55_000);
        assert.equal(after?.runs, 1);
        assert.equal(after?.lastRunAt, T0 - 5_000 + 10);
        assert.equal((await s.monitors.runs(teamId, late.id, 10)).length, 1, 'one run recorded for the slot');
        // node-b's lock expired but nobody took its run: its end still counts.
        assert.ok(await s.monitors.finish(due.id, 'node-b', outcome(run(due.id, T0, 'failed'), T0 + 120_000)));
        const next = await s.monitors.claimDue('node-a', T0 + 55_000, T0 + 90_000);
        assert.equal(next?.monitor.id, late.id);
        assert.equal(next?.lastData, '{"a":1}');
        assert.equal(next?.lastGoodAt, T0 - 5_000);
      }));

    test("renew moves a run's lock deadline, for the lock's owner only: a renewed run is not taken by another node; a lapsed one is, and its renewal then fails", () =>
      withStores(async (s, teamId, fresh) => {
        const m = await s.monitors.create(fresh({ nextRunAt: T0 }), 10);
        assert.ok(m);
        const claim = await s.monitors.claimDue('node-a', T0, T0 + 15_000);
        assert.equal(claim?.monitor.id, m.id);
        assert.equal(await s.monitors.renew(m.id, 'node-a', T0 + 25_000), true);
        assert.equal(await s.monitors.renew(m.id, 'node-b', T0 + 99_000), false, 'only the owner renews');
        assert.equal(await s.monitors.claimDue('node-b', T0 + 20_000, T0 + 35_000), null, 'held past its first deadline');
        assert.equal(await s.monitors.claimNow(teamId, m.id, 'node-b', T0 + 20_000, T0 + 35_000), 'running');
        const taken = await s.monitors.claimDue('node-b', T0 + 25_001, T0 + 40_000);
        assert.equal(taken?.monitor.id, m.id, 'taken once the renewed deadline has passed');
        assert.equal(await s.monitors.renew(m.id, 'node-a', T0 + 50_000), false, 'the lapsed owner renews nothing');
        assert.equal(await s.monitors.renew('mon_unknown', 'node-b', T0 + 50_000), false);
      }));

    test("finish keeps the run's credit in the same transaction; a reservation already refunded records the run uncharged; an unrecorded run keeps nothing", () =>
      withStores(async (s, teamId, fresh) => {
        const m = await s.monitors.create(fresh(), 10);
        assert.ok(m);
        const reserve = async (id: string) => {
          const reserved = await s.ledger.reserve(teamId, 1, id, T0 + 60_000);
          assert.ok(reserved.ok);
          return reserved.reservationId;
        };
        const kept = await reserve('req_kept');
        assert.ok(await s.monitors.claimNow(teamId, m.id, 'node', T0, T0 + 30_000));
        const recorded = await s.monitors.finish(m.id, 'node', outcome(run(m.id, T0, 'succeeded'), T0 + 60_000, { data: '{}', reservationId: kept }));
        assert.equal(recorded?.creditsCharged, 1);
        assert.equal((await s.ledger.refund(kept)).refunded, false, 'committed with the run');

        const late = await reserve('req_late');
        assert.equal(await s.ledger.refundExpired(T0 + 120_000), 1, 'its deadline passed');
        assert.ok(await s.monitors.claimNow(teamId, m.id, 'node', T0 + 1, T0 + 30_000));
        const uncharged = await s.monitors.finish(m.id, 'node', outcome(run(m.id, T0 + 1, 'succeeded'), T0 + 60_000, { data: '{}', reservationId: late }));
        assert.equal(uncharged?.creditsCharged, 0);
        assert.equal((await s.monitors.runs(teamId, m.id, 10)).find((r) => r.at === T0 + 1)?.creditsCharged, 0);

        const lost = await reserve('req_lost');
        assert.equal(await s.monitors.finish(m.id, 'someone-else', outcome(run(m.id, T0 + 2, 'succeeded'), T0 + 60_000, { reservationId: lost })), null);
        assert.equal((await s.ledger.refund(lost)).refunded, true, 'still pending: its caller gives it back');
        assert.equal(await s.ledger.balance(teamId), 9);
      }));

    test('a change of schedule made during a run keeps its own next slot', () =>
      withStores(async (s, teamId, fresh) => {
        const m = await s.monitors.create(fresh({ nextRunAt: T0 }), 10);
        assert.ok(m);
        const claim = await s.monitors.claimDue('node', T0, T0 + 30_000);
        assert.equal(claim?.monitor.nextRunAt, T0);
        await s.monitors.update(teamId, m.id, { schedule: { interval: 7200, cron: null, timezone: 'UTC' }, nextRunAt: T0 + 7_200_000 });
        assert.ok(await s.monitors.finish(m.id, 'node', outcome(run(m.id, T0, 'succeeded'), T0 + 60_000, { claimedNextRunAt: T0 })));
        assert.equal((await s.monitors.get(teamId, m.id))?.nextRunAt, T0 + 7_200_000);
        const next = await s.monitors.claimNow(teamId, m.id, 'node', T0 + 1, T0 + 30_000);
        assert.ok(next && next !== 'running');
        assert.ok(await s.monitors.finish(m.id, 'node', outcome(run(m.id, T0 + 1, 'succeeded'), T0 + 7_200_001, { claimedNextRunAt: next.monitor.nextRunAt })));
        assert.equal((await s.monitors.get(teamId, m.id))?.nextRunAt, T0 + 7_200_001, 'unchanged meanwhile: the run sets it');
      }));

    test('racing claims of one due monitor: exactly one takes it', () =>
      withStores(async (s, _teamId, fresh, another) => {
        const m = await s.monitors.create(fresh({ nextRunAt: T0 }), 10);
        assert.ok(m);
        const others = await Promise.all(Array.from({ length: 3 }, () => another()));
        try {
          const claims = await Promise.all([s, ...others].flatMap((store, i) => Array.from({ length: 5 }, (_, j) => store.monitors.claimDue(`node-${i}-${j}`, T0, T0 + 30_000))));
          assert.equal(claims.filter((claim) => claim !== null).length, 1);
        } finally {
          await Promise.all(others.map((other) => other.close()));
        }
      }));

    test('finish: runs newest first with their patch and error; a slot is recorded once; events in the same transaction; monitor.failed once per streak', () =>
      withStores(async (s, teamId, fresh) => {
        const m = await s.monitors.create(fresh(), 10);
        assert.ok(m);
        const take = async (at: number) => {
          const claim = await s.monitors.claimNow(teamId, m.id, 'node', at, at + 30_000);
          assert.ok(claim && claim !== 'running');
          return claim;
        };
        const changed = run(m.id, T0, 'succeeded', { changed: true, patch: [{ op: 'replace', path: '/profile/followers', value: 2 }] });
        await take(T0);
        assert.ok(
          await s.monitors.finish(m.id, 'node', outcome(changed, T0 + 60_000, { data: '{"b":2}', event: { type: 'monitor.changed', data: { monitor: m.id, run: changed.id } } })),
        );
        const fail = async (at: number) => {
          await take(at);
          const failed = run(m.id, at, 'failed');
          assert.ok(await s.monitors.finish(m.id, 'node', outcome(failed, at + 60_000, { failedEvent: { monitor: m.id, run: failed.id } })));
        };
        for (let i = 1; i <= 4; i++) await fail(T0 + i * 1000);
        let now = await s.monitors.get(teamId, m.id);
        assert.equal(now?.consecutiveFailures, 4);
        assert.equal(now?.failureAlerted, true);
        assert.equal(now?.lastChangeAt, T0 + 20);
        // A skipped run neither ends nor extends the streak.
        await take(T0 + 5000);
        assert.ok(await s.monitors.finish(m.id, 'node', outcome(run(m.id, T0 + 5000, 'skipped', { error: { code: 'INSUFFICIENT_CREDITS', message: 'no credits' } }), T0 + 65_000)));
        assert.equal((await s.monitors.get(teamId, m.id))?.consecutiveFailures, 4);
        // A success ends the streak; three more failures alert again.
        await take(T0 + 6000);
        assert.ok(await s.monitors.finish(m.id, 'node', outcome(run(m.id, T0 + 6000, 'succeeded'), T0 + 66_000, { data: '{"c":3}' })));
        for (let i = 7; i <= 9; i++) await fail(T0 + i * 1000);
        now = await s.monitors.get(teamId, m.id);
        assert.equal(now?.consecutiveFailures, 3);
        assert.equal(now?.runs, 10);

        const events = await s.events.list(teamId);
        assert.deepEqual(
          events.map((e) => e.type),
          ['monitor.changed', 'monitor.failed', 'monitor.failed'],
        );
        assert.deepEqual(events[0]?.data, { monitor: m.id, run: changed.id });
        assert.equal(events[1]?.data.consecutiveFailures, 3);
        assert.equal(events[1]?.data.monitor, m.id);

        const listed = await s.monitors.runs(teamId, m.id, 100);
        assert.equal(listed.length, 10);
        assert.deepEqual(
          listed.map((r) => r.at),
          [...listed.map((r) => r.at)].sort((x, y) => y - x),
        );
        const first = listed.at(-1);
        assert.deepEqual(first, changed);
        assert.deepEqual(listed.find((r) => r.status === 'skipped')?.error, { code: 'INSUFFICIENT_CREDITS', message: 'no credits' });
        assert.deepEqual(
          (await s.monitors.runs(teamId, m.id, 2, T0 + 5000)).map((r) => r.at),
          [T0 + 4000, T0 + 3000],
        );
        const other = await s.accounts.createTeam({ name: 'other', credits: 0, rateLimit: 1 });
        assert.deepEqual(await s.monitors.runs(other.id, m.id, 10), [], "another team sees none of the monitor's runs");

        // The same slot twice (a second node finishing a slot already recorded): refused, nothing written.
        await take(T0 + 9000);
        assert.equal(await s.monitors.finish(m.id, 'node', outcome(run(m.id, T0 + 9000, 'succeeded'), T0 + 99_000)), null);
        assert.equal((await s.monitors.get(teamId, m.id))?.runs, 10);

        assert.equal(await s.monitors.pruneRuns(T0 + 3000), 3, 'runs finished before the bound go');
        assert.equal((await s.monitors.runs(teamId, m.id, 100)).length, 7);
        assert.equal(await s.monitors.delete(teamId, m.id), true);
        assert.deepEqual(await s.monitors.runs(teamId, m.id, 100), [], 'its runs go with it');
      }));
  });
}
