// Behaviour suite for every implementation of the storage interfaces (src/store/types.ts).
// It uses nothing but those interfaces, so the SQLite default, PostgreSQL and Redis
// implementations all run exactly the same checks.
//
// Contract for `open`:
// - every call returns stores over an EMPTY backend (a fresh file, schema, database or key
//   prefix): `refundExpired` counts are asserted exactly;
// - it honours `cacheMaxBytes` and `cacheMaxAgeMs` when given (the cache tests set small
//   bounds). Sizes are counted roughly as the bytes of value, key and target.
// Conventions fixed here (the interfaces leave them open): `entries` lists newest first;
// unknown reservations and teams are errors; `recordKeyUse` ignores unknown key ids and never
// moves a key's last use backwards; after `close` every call rejects with StoreUnavailableError;
// `commit` reports `charged: false` for a reservation already refunded (the sweep of abandoned
// ones racing a slow request) and `charged: true` again for one already committed; `refund`
// reports `refunded: true` only to the call that gave the credit back; `probeWrite` commits a
// write and leaves no data behind.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { StoreUnavailableError } from '../../src/store/types.ts';
import type { RequestPage, RequestRecord, Stores, Team } from '../../src/store/types.ts';
import { cachedEntry } from '../support/cached-entry.ts';

export interface StoreBehaviourConfig {
  cacheMaxBytes?: number;
  cacheMaxAgeMs?: number;
}

export type OpenStores = (config?: StoreBehaviourConfig) => Promise<Stores>;

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const MINUTE = 60_000;

const uid = (what: string): string => `${what}-${randomUUID()}`;
const reqId = (): string => `req_${randomUUID().replaceAll('-', '')}`;

async function ledgerSum(s: Stores, teamId: string): Promise<number> {
  const entries = await s.ledger.entries(teamId, 100_000);
  return entries.reduce((sum, e) => sum + e.amount, 0);
}

async function assertConsistent(s: Stores, teamId: string): Promise<number> {
  const balance = await s.ledger.balance(teamId);
  assert.ok(balance !== null);
  assert.ok(balance >= 0, `balance ${balance} is negative`);
  assert.equal(await ledgerSum(s, teamId), balance, 'ledger sum equals balance');
  const usage = await s.ledger.usage(teamId);
  assert.ok(usage);
  assert.equal(usage.balance, balance);
  assert.equal(usage.toppedUp - usage.charged + usage.refunded, balance, 'usage adds up to the balance');
  return balance;
}

/**
 * `clockedClaims`: the job store's claims lapse on the store's clock (`rescue`) and a requeued
 * item waits for the time given, as on SQLite. On PostgreSQL pg-boss's heartbeat and the
 * database's clock decide both: test/store/pg-jobs.test.ts checks the same there.
 */
export function storeBehaviour(name: string, open: OpenStores, { clockedClaims = true }: { clockedClaims?: boolean } = {}): void {
  async function withStores(config: StoreBehaviourConfig | undefined, fn: (s: Stores) => Promise<void>): Promise<void> {
    const s = await open(config);
    try {
      await fn(s);
    } finally {
      await s.close();
    }
  }
  const it = (title: string, fn: (s: Stores) => Promise<void>, config?: StoreBehaviourConfig): void => {
    test(title, () => withStores(config, fn));
  };
  const clocked = (title: string, fn: (s: Stores) => Promise<void>): void => {
    if (clockedClaims) it(title, fn);
  };
  const newTeam = (s: Stores, credits = 0, rateLimit = 100): Promise<Team> =>
    s.accounts.createTeam({ name: uid('team'), credits, rateLimit });
  const newKey = (s: Stores, teamId: string) => {
    const hash = uid('hash');
    return s.accounts
      .createKey({ teamId, name: uid('key'), hash, prefix: 'ps_live_', last4: hash.slice(-4) })
      .then((key) => ({ key, hash }));
  };

  describe(`${name}: store behaviour`, () => {
    describe('lifecycle', () => {
      it('ping resolves while open', async (s) => {
        await s.ping();
      });

      it('probeWrite resolves while the store can write, and leaves nothing behind', async (s) => {
        const team = await newTeam(s, 2);
        for (let i = 0; i < 20; i++) await s.probeWrite();
        assert.equal(await assertConsistent(s, team.id), 2);
        assert.deepEqual(await s.ledger.entries(team.id), (await s.ledger.entries(team.id)).slice(0, 1));
        assert.deepEqual((await s.accounts.listTeams()).map((t) => t.id), [team.id]);
      });

      test('every call rejects with StoreUnavailableError after close', async () => {
        const s = await open();
        const team = await newTeam(s, 1);
        await s.close();
        await assert.rejects(s.ping(), StoreUnavailableError);
        await assert.rejects(s.probeWrite(), StoreUnavailableError);
        await assert.rejects(s.accounts.getTeam(team.id), StoreUnavailableError);
        await assert.rejects(s.ledger.balance(team.id), StoreUnavailableError);
        await assert.rejects(s.cache.get('k'), StoreUnavailableError);
        await s.close(); // closing twice is harmless
      });
    });

    describe('accounts', () => {
      it('creates, reads and lists teams', async (s) => {
        const name = uid('team');
        const team = await s.accounts.createTeam({ name, credits: 7, rateLimit: 100 });
        assert.match(team.id, /^team_/);
        assert.equal(team.name, name);
        assert.equal(team.credits, 7);
        assert.equal(team.rateLimit, 100);
        assert.match(team.createdAt, ISO_MS);
        assert.deepEqual(await s.accounts.getTeam(team.id), team);
        assert.equal(await s.accounts.getTeam('team_nope'), null);
        const other = await newTeam(s);
        const listed = await s.accounts.listTeams();
        assert.deepEqual(
          listed.filter((t) => t.id === team.id || t.id === other.id).map((t) => t.id).sort(),
          [team.id, other.id].sort(),
        );
        assert.deepEqual(listed.find((t) => t.id === team.id), team);
      });

      it('records initial credits as a top-up so that the ledger sums to the balance', async (s) => {
        const team = await newTeam(s, 25);
        const entries = await s.ledger.entries(team.id);
        assert.equal(entries.length, 1);
        assert.equal(entries[0]?.reason, 'topup');
        assert.equal(entries[0]?.amount, 25);
        assert.equal(await assertConsistent(s, team.id), 25);
        const empty = await newTeam(s, 0);
        assert.deepEqual(await s.ledger.entries(empty.id), []);
        assert.equal(await assertConsistent(s, empty.id), 0);
      });

      it('rejects invalid teams', async (s) => {
        for (const rateLimit of [0, -1, 1.5, Number.NaN]) {
          await assert.rejects(s.accounts.createTeam({ name: uid('t'), credits: 0, rateLimit }), `rateLimit ${rateLimit}`);
        }
        for (const credits of [-1, 1.5, Number.NaN]) {
          await assert.rejects(s.accounts.createTeam({ name: uid('t'), credits, rateLimit: 1 }), `credits ${credits}`);
        }
        const t = await s.accounts.createTeam({ name: uid('t'), credits: 0, rateLimit: 1 });
        assert.equal(t.rateLimit, 1);
      });

      it('updates a team', async (s) => {
        const team = await newTeam(s, 3, 100);
        const renamed = await s.accounts.updateTeam(team.id, { name: 'Renamed' });
        assert.deepEqual(renamed, { ...team, name: 'Renamed' });
        const limited = await s.accounts.updateTeam(team.id, { rateLimit: 5 });
        assert.deepEqual(limited, { ...team, name: 'Renamed', rateLimit: 5 });
        assert.deepEqual(await s.accounts.getTeam(team.id), limited);
        assert.equal(await s.accounts.updateTeam('team_nope', { rateLimit: 5 }), null);
        await assert.rejects(s.accounts.updateTeam(team.id, { rateLimit: 0 }));
        await assert.rejects(s.accounts.updateTeam(team.id, { rateLimit: 2.5 }));
        assert.equal((await s.accounts.getTeam(team.id))?.rateLimit, 5);
      });

      it('creates, finds, lists and revokes keys', async (s) => {
        const team = await newTeam(s, 2, 30);
        const { key, hash } = await newKey(s, team.id);
        assert.match(key.id, /^key_/);
        assert.equal(key.teamId, team.id);
        assert.equal(key.prefix, 'ps_live_');
        assert.equal(key.last4, hash.slice(-4));
        assert.match(key.createdAt, ISO_MS);
        assert.equal(key.lastUsedAt, null);
        assert.equal(key.revokedAt, null);
        assert.ok(!Object.values(key).includes(hash), 'the key record does not expose the hash');

        const found = await s.accounts.findActiveKey(hash);
        assert.ok(found);
        assert.deepEqual(found.key, key);
        assert.equal(found.hash, hash);
        assert.deepEqual(found.team, team);
        assert.equal(await s.accounts.findActiveKey(uid('unknown')), null);

        const second = await newKey(s, team.id);
        assert.deepEqual((await s.accounts.listKeys(team.id)).map((k) => k.id).sort(), [key.id, second.key.id].sort());

        assert.equal(await s.accounts.revokeKey(key.id), true);
        assert.equal(await s.accounts.findActiveKey(hash), null, 'revoked key is not found from the next call on');
        assert.equal(await s.accounts.revokeKey(key.id), false, 'revoking twice');
        assert.equal(await s.accounts.revokeKey('key_nope'), false);
        const listed = await s.accounts.listKeys(team.id);
        const revoked = listed.find((k) => k.id === key.id);
        assert.ok(revoked?.revokedAt);
        assert.match(revoked.revokedAt, ISO_MS);
        assert.equal(listed.find((k) => k.id === second.key.id)?.revokedAt, null);
        assert.ok(await s.accounts.findActiveKey(second.hash), "the team's other key still works");
        assert.deepEqual(await s.accounts.listKeys((await newTeam(s)).id), []);
      });

      it('finds a key with its team as it is now', async (s) => {
        const team = await newTeam(s, 1, 100);
        const { hash } = await newKey(s, team.id);
        await s.ledger.addCredits(team.id, 9);
        await s.accounts.updateTeam(team.id, { rateLimit: 7 });
        const found = await s.accounts.findActiveKey(hash);
        assert.equal(found?.team.credits, 10);
        assert.equal(found?.team.rateLimit, 7);
      });

      it('rejects a key for an unknown team and a duplicate hash', async (s) => {
        await assert.rejects(
          s.accounts.createKey({ teamId: 'team_nope', name: 'k', hash: uid('h'), prefix: 'p', last4: 'abcd' }),
        );
        const team = await newTeam(s);
        const { hash } = await newKey(s, team.id);
        await assert.rejects(s.accounts.createKey({ teamId: team.id, name: 'k', hash, prefix: 'p', last4: 'abcd' }));
      });

      it('records key use in batches', async (s) => {
        const team = await newTeam(s);
        const a = await newKey(s, team.id);
        const b = await newKey(s, team.id);
        const c = await newKey(s, team.id);
        await s.accounts.recordKeyUse(new Map());
        const t1 = '2030-01-01T00:00:01.000Z';
        const t2 = '2030-01-01T00:00:02.500Z';
        await s.accounts.recordKeyUse(
          new Map([
            [a.key.id, t1],
            [b.key.id, t2],
            ['key_nope', t2],
          ]),
        );
        let keys = await s.accounts.listKeys(team.id);
        const lastUsed = (id: string) => keys.find((k) => k.id === id)?.lastUsedAt;
        assert.equal(lastUsed(a.key.id), t1);
        assert.equal(lastUsed(b.key.id), t2);
        assert.equal(lastUsed(c.key.id), null);
        // A late batch from another instance does not move a last use backwards.
        await s.accounts.recordKeyUse(new Map([[b.key.id, t1], [a.key.id, t2]]));
        keys = await s.accounts.listKeys(team.id);
        assert.equal(lastUsed(a.key.id), t2);
        assert.equal(lastUsed(b.key.id), t2);
        assert.equal((await s.accounts.findActiveKey(a.hash))?.key.lastUsedAt, t2);
      });
    });

    describe('keys made in the dashboard, and the ledger in pages', () => {
      it('a key records who created it; activeKeyHash answers for active keys only', async (s) => {
        const team = await newTeam(s);
        const user = await s.users.createUser({ teamId: team.id, email: `${uid('k')}@example.com`, role: 'member' });
        const made = await s.accounts.createKey({ teamId: team.id, name: 'mine', hash: 'hash-by-user', prefix: 'ps_live_', last4: 'user', createdBy: user.id });
        assert.equal(made.createdBy, user.id);
        const { key: cli } = await newKey(s, team.id);
        assert.equal(cli.createdBy, null);
        assert.deepEqual(new Map((await s.accounts.listKeys(team.id)).map((k) => [k.id, k.createdBy])), new Map([[made.id, user.id], [cli.id, null]]));
        assert.equal((await s.accounts.findActiveKey('hash-by-user'))?.key.createdBy, user.id);
        assert.equal(await s.accounts.activeKeyHash(made.id), 'hash-by-user');
        await s.accounts.revokeKey(made.id);
        assert.equal(await s.accounts.activeKeyHash(made.id), null);
        assert.equal(await s.accounts.activeKeyHash('key_nope'), null);
      });

      it('ledger entries page by id, newest first', async (s) => {
        const team = await newTeam(s);
        for (let i = 1; i <= 5; i++) await s.ledger.addCredits(team.id, i);
        const first = await s.ledger.entries(team.id, 2);
        assert.deepEqual(first.map((e) => e.amount), [5, 4]);
        const second = await s.ledger.entries(team.id, 2, first.at(-1)?.id);
        assert.deepEqual(second.map((e) => e.amount), [3, 2]);
        assert.deepEqual((await s.ledger.entries(team.id, 10, second.at(-1)?.id)).map((e) => e.amount), [1]);
      });
    });

    describe('drift samples', () => {
      const sample = (platform: string, endpoint: string, at: number, extra: Record<string, unknown> = {}) => ({
        at: new Date(at).toISOString(),
        platform,
        endpoint,
        requestId: reqId(),
        reason: 'a card is gone',
        path: '/p?q=1',
        status: 200,
        headers: { 'content-type': 'text/html' },
        body: '<html>é</html>',
        truncated: false,
        ...extra,
      });

      it('keeps samples whole, lists them newest first without bodies, per platform, and prunes by age', async (s) => {
        const t0 = Date.UTC(2026, 10, 20, 10, 0, 0);
        const first = await s.drift.add(sample('snapmsg', 'snapmsg.profile', t0), 10);
        const second = await s.drift.add(sample('shopfront', 'shopfront.shop', t0 + MINUTE, { truncated: true }), 10);
        const all = await s.drift.list({});
        assert.deepEqual(all.map((d) => d.id), [second, first]);
        assert.ok(!('body' in (all[0] ?? {})) && !('headers' in (all[0] ?? {})));
        assert.equal(all[0]?.truncated, true);
        assert.deepEqual((await s.drift.list({ platform: 'snapmsg' })).map((d) => d.id), [first]);
        const full = await s.drift.get(first);
        assert.deepEqual({ ...full, id: '', requestId: '' }, { ...sample('snapmsg', 'snapmsg.profile', t0), id: '', requestId: '', at: new Date(t0).toISOString() });
        assert.equal(await s.drift.get('drift_nope'), null);
        assert.equal(await s.drift.prune(t0 + 1), 1);
        assert.deepEqual((await s.drift.list({})).map((d) => d.id), [second]);
      });

      it('keeps at most the given number per platform and endpoint in any hour, dropping the oldest', async (s) => {
        const t0 = Date.UTC(2026, 10, 20, 10, 0, 0);
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) ids.push(await s.drift.add(sample('snapmsg', 'snapmsg.profile', t0 + i * MINUTE), 3));
        const other = await s.drift.add(sample('snapmsg', 'snapmsg.spotlight.comments', t0), 3);
        assert.deepEqual((await s.drift.list({ platform: 'snapmsg', limit: 100 })).map((d) => d.id), [ids[4], ids[3], ids[2], other]);
        const later = await s.drift.add(sample('snapmsg', 'snapmsg.profile', t0 + 2 * 60 * MINUTE), 3);
        assert.equal((await s.drift.list({ platform: 'snapmsg', limit: 100 })).length, 5, 'an hour later, a new one is kept beside them');
        assert.equal((await s.drift.list({ limit: 1 }))[0]?.id, later);
      });
    });

    describe('users, password links and sessions', () => {
      const HOUR = 60 * MINUTE;
      const session = (userId: string, expiresAt: number) => ({ userId, csrf: uid('csrf'), createdAt: new Date().toISOString(), expiresAt });

      it('creates users with a lower-case email unique within a team, finds and lists them', async (s) => {
        const team = await newTeam(s);
        const other = await newTeam(s);
        const email = `${uid('Ann')}@Example.COM`;
        const user = await s.users.createUser({ teamId: team.id, email: ` ${email} `, role: 'owner' });
        assert.equal(user.email, email.toLowerCase());
        assert.deepEqual([user.role, user.teamId, user.disabledAt, user.hasPassword], ['owner', team.id, null, false]);
        assert.match(user.createdAt, ISO_MS);
        assert.deepEqual(await s.users.getUser(user.id), user);
        assert.deepEqual(await s.users.findUsersByEmail(email.toUpperCase()), [{ user, passwordHash: null }]);
        assert.deepEqual(await s.users.findUsersByEmail('not an email'), []);
        await assert.rejects(s.users.createUser({ teamId: team.id, email: email.toUpperCase(), role: 'member' }), RangeError, 'once per team');
        // Another team has an account of its own under the same email.
        const theirs = await s.users.createUser({ teamId: other.id, email, role: 'member' });
        assert.notEqual(theirs.id, user.id);
        assert.deepEqual((await s.users.findUsersByEmail(email)).map((found) => found.user.id), [user.id, theirs.id], 'oldest first');
        await assert.rejects(s.users.createUser({ teamId: 'team_nope', email: `${uid('b')}@example.com`, role: 'member' }), RangeError);
        await assert.rejects(s.users.createUser({ teamId: team.id, email: 'nope', role: 'member' }), RangeError);
        await assert.rejects(s.users.createUser({ teamId: team.id, email: `${uid('c')}@example.com`, role: 'admin' as 'owner' }), RangeError);
        const member = await s.users.createUser({ teamId: other.id, email: `${uid('d')}@example.com`, role: 'member' });
        assert.deepEqual((await s.users.listUsers(other.id)).map((u) => u.id), [theirs.id, member.id]);
        assert.deepEqual((await s.users.listUsers()).map((u) => u.id).sort(), [user.id, theirs.id, member.id].sort());
      });

      it('a password link sets the password once, before it expires, and ends the sessions then open', async (s) => {
        const team = await newTeam(s);
        const user = await s.users.createUser({ teamId: team.id, email: `${uid('e')}@example.com`, role: 'member' });
        const now = Date.now();
        const late = await s.users.createUser({ teamId: team.id, email: `${uid('e')}@example.com`, role: 'member' });
        await s.users.createPasswordLink({ hash: 'link-1', userId: user.id, expiresAt: now + HOUR });
        await s.users.createPasswordLink({ hash: 'link-old', userId: late.id, expiresAt: now - 1 });
        await s.users.createSession('session-before', session(user.id, now + HOUR));
        assert.equal(await s.users.passwordLinkValid('link-1', now), true);
        assert.equal(await s.users.passwordLinkValid('link-old', now), false);
        assert.equal(await s.users.usePasswordLink('link-old', 'hash-x', now), null, 'expired');
        const [first, second] = await Promise.all([s.users.usePasswordLink('link-1', 'hash-1', now), s.users.usePasswordLink('link-1', 'hash-2', now)]);
        assert.equal([first, second].filter((u) => u !== null).length, 1, 'used once, however many race for it');
        assert.equal((first ?? second)?.hasPassword, true);
        assert.equal(await s.users.passwordLinkValid('link-1', now), false);
        const [found] = await s.users.findUsersByEmail(user.email);
        assert.ok(found?.passwordHash === 'hash-1' || found?.passwordHash === 'hash-2');
        assert.equal(await s.users.findSession('session-before', now), null, 'sessions opened before the change are ended');
        assert.equal(await s.users.usePasswordLink('unknown', 'hash', now), null);
      });

      it('a user has one outstanding link at most: a new one ends the earlier ones, and using one leaves none', async (s) => {
        const team = await newTeam(s);
        const user = await s.users.createUser({ teamId: team.id, email: `${uid('l')}@example.com`, role: 'owner' });
        const other = await s.users.createUser({ teamId: team.id, email: `${uid('m')}@example.com`, role: 'member' });
        const now = Date.now();
        const first = uid('link');
        const second = uid('link');
        const third = uid('link');
        const others = uid('link');
        await s.users.createPasswordLink({ hash: first, userId: user.id, expiresAt: now + HOUR });
        await s.users.createPasswordLink({ hash: others, userId: other.id, expiresAt: now + HOUR });
        await s.users.createPasswordLink({ hash: second, userId: user.id, expiresAt: now + HOUR });
        assert.equal(await s.users.passwordLinkValid(first, now), false, 'a new link ends the earlier one');
        assert.equal(await s.users.usePasswordLink(first, 'hash-early', now), null);
        assert.equal(await s.users.passwordLinkValid(second, now), true);
        assert.equal(await s.users.passwordLinkValid(others, now), true, "another user's link is untouched");
        assert.equal((await s.users.usePasswordLink(second, 'hash-2', now))?.id, user.id);
        assert.equal(await s.users.passwordLinkValid(second, now), false);
        // Issued at once, only one survives, whichever it is.
        const racing = [uid('link'), uid('link'), uid('link')];
        await Promise.all(racing.map((hash) => s.users.createPasswordLink({ hash, userId: user.id, expiresAt: now + HOUR })));
        const alive = [];
        for (const hash of racing) if (await s.users.passwordLinkValid(hash, now)) alive.push(hash);
        assert.equal(alive.length, 1, 'one outstanding link, however many were issued at once');
        await s.users.createPasswordLink({ hash: third, userId: user.id, expiresAt: now + HOUR });
        assert.equal((await s.users.usePasswordLink(third, 'hash-3', now))?.id, user.id);
        assert.equal((await s.users.findUsersByEmail(user.email))[0]?.passwordHash, 'hash-3');
        for (const hash of racing) assert.equal(await s.users.usePasswordLink(hash, 'hash-late', now), null, 'an earlier link cannot undo the password set since');
        assert.equal((await s.users.findUsersByEmail(user.email))[0]?.passwordHash, 'hash-3');
      });

      it('sessions: found with their user until they expire, ended one by one or all of a user, pruned', async (s) => {
        const team = await newTeam(s);
        const user = await s.users.createUser({ teamId: team.id, email: `${uid('f')}@example.com`, role: 'owner' });
        const now = Date.now();
        const open = session(user.id, now + HOUR);
        await s.users.createSession('s1', open);
        await s.users.createSession('s2', session(user.id, now + HOUR));
        await s.users.createSession('s-old', session(user.id, now - 1));
        const found = await s.users.findSession('s1', now);
        assert.deepEqual(found?.session, open);
        assert.equal(found?.user.id, user.id);
        assert.equal(await s.users.findSession('s-old', now), null, 'expired');
        assert.equal(await s.users.findSession('s1', now + HOUR), null, 'expires at expiresAt');
        await s.users.deleteSession('s1');
        assert.equal(await s.users.findSession('s1', now), null);
        assert.ok(await s.users.findSession('s2', now));
        assert.equal(await s.users.pruneSessions(now), 1);
        assert.equal(await s.users.deleteUserSessions(user.id), 1);
        assert.equal(await s.users.findSession('s2', now), null);
      });

      it('a disabled user has no sessions and cannot use a link', async (s) => {
        const team = await newTeam(s);
        const user = await s.users.createUser({ teamId: team.id, email: `${uid('g')}@example.com`, role: 'member' });
        const now = Date.now();
        await s.users.createSession('s-dis', session(user.id, now + HOUR));
        await s.users.createPasswordLink({ hash: 'link-dis', userId: user.id, expiresAt: now + HOUR });
        assert.equal(await s.users.disableUser(user.id), true);
        assert.equal(await s.users.disableUser(user.id), false, 'already disabled');
        assert.equal(await s.users.disableUser('user_nope'), false);
        assert.equal(await s.users.findSession('s-dis', now), null);
        assert.equal(await s.users.passwordLinkValid('link-dis', now), false);
        assert.equal(await s.users.usePasswordLink('link-dis', 'h', now), null);
        assert.match((await s.users.getUser(user.id))?.disabledAt ?? '', ISO_MS);
      });
    });

    describe('ledger', () => {
      it('adds credits and rejects bad amounts and unknown teams', async (s) => {
        const team = await newTeam(s, 0);
        assert.equal(await s.ledger.addCredits(team.id, 5, 'req_topup_1'), 5);
        assert.equal(await s.ledger.addCredits(team.id, 3), 8);
        for (const amount of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
          await assert.rejects(s.ledger.addCredits(team.id, amount), `amount ${amount}`);
        }
        await assert.rejects(s.ledger.addCredits('team_nope', 5));
        assert.equal(await s.ledger.balance('team_nope'), null);
        assert.equal(await s.ledger.usage('team_nope'), null);
        const entries = await s.ledger.entries(team.id);
        assert.deepEqual(
          entries.map((e) => [e.amount, e.reason, e.requestId]),
          [
            [3, 'topup', null],
            [5, 'topup', 'req_topup_1'],
          ],
        );
        for (const e of entries) {
          assert.equal(e.teamId, team.id);
          assert.match(e.createdAt, ISO_MS);
        }
        assert.ok(entries[0] && entries[1] && entries[0].id > entries[1].id, 'newest first');
        assert.equal(await assertConsistent(s, team.id), 8);
      });

      it('keeps the balance equal to the ledger sum through mixed operations', async (s) => {
        const team = await newTeam(s, 10);
        const other = await newTeam(s, 4);
        const base = Date.now();
        await s.ledger.addCredits(team.id, 5);
        const r1 = await s.ledger.reserve(team.id, 1, reqId(), base + MINUTE);
        const r2 = await s.ledger.reserve(team.id, 2, reqId(), base + MINUTE);
        const r3 = await s.ledger.reserve(team.id, 1, reqId(), base + MINUTE);
        const r4 = await s.ledger.reserve(other.id, 4, reqId(), base + MINUTE);
        assert.ok(r1.ok && r2.ok && r3.ok && r4.ok);
        assert.equal(r1.balance, 14);
        assert.equal(r2.balance, 12);
        assert.equal(r3.balance, 11);
        assert.equal(r4.balance, 0);
        assert.deepEqual(await s.ledger.commit(r1.reservationId), { charged: true, balance: 11 });
        assert.deepEqual(await s.ledger.refund(r2.reservationId), { refunded: true, balance: 13 });
        const tooMuch = await s.ledger.reserve(team.id, 14, reqId(), base + MINUTE);
        assert.deepEqual(tooMuch, { ok: false, reason: 'balance', balance: 13 });
        const all = await s.ledger.reserve(team.id, 13, reqId(), base + MINUTE);
        assert.ok(all.ok);
        assert.equal(all.balance, 0);
        await s.ledger.refund(all.reservationId);
        await s.ledger.addCredits(team.id, 2);

        assert.equal(await assertConsistent(s, team.id), 15);
        assert.equal(await assertConsistent(s, other.id), 0);
        assert.deepEqual(await s.ledger.usage(team.id), {
          teamId: team.id,
          charged: 1 + 2 + 1 + 13,
          refunded: 2 + 13,
          toppedUp: 10 + 5 + 2,
          balance: 15,
          pending: 1, // r3
        });
        assert.equal((await s.ledger.usage(other.id))?.pending, 1);
        const charges = (await s.ledger.entries(team.id, 100)).filter((e) => e.reason === 'charge');
        assert.equal(charges.length, 4);
        assert.equal((await s.ledger.entries(team.id, 2)).length, 2);
        const refundRow = (await s.ledger.entries(team.id, 100)).find((e) => e.reason === 'refund' && e.amount === 2);
        const chargeRow = charges.find((e) => e.amount === -2);
        assert.ok(refundRow?.requestId && refundRow.requestId === chargeRow?.requestId, 'refund names the request');
      });

      it('lets exactly one of 200 concurrent reservations take the last credit', async (s) => {
        const team = await newTeam(s, 1);
        const deadline = Date.now() + MINUTE;
        const results = await Promise.all(
          Array.from({ length: 200 }, () => s.ledger.reserve(team.id, 1, reqId(), deadline)),
        );
        assert.equal(results.filter((r) => r.ok).length, 1);
        for (const r of results) assert.equal(r.balance, 0);
        assert.equal(await assertConsistent(s, team.id), 0);
        assert.equal((await s.ledger.usage(team.id))?.pending, 1);
        assert.equal((await s.ledger.entries(team.id, 1000)).filter((e) => e.reason === 'charge').length, 1);
      });

      it('never lets concurrent reservations overdraw a larger balance', async (s) => {
        const team = await newTeam(s, 50);
        const deadline = Date.now() + MINUTE;
        const results = await Promise.all(
          Array.from({ length: 120 }, (_, i) => s.ledger.reserve(team.id, 1 + (i % 3), reqId(), deadline)),
        );
        const taken = results.reduce((sum, r, i) => sum + (r.ok ? 1 + (i % 3) : 0), 0);
        const balance = await assertConsistent(s, team.id);
        assert.equal(balance, 50 - taken);
        assert.ok(balance < 3 && balance >= 0, `at most a partial amount is left, got ${balance}`);
      });

      it('rejects bad reservations', async (s) => {
        const team = await newTeam(s, 5);
        for (const amount of [0, -1, 1.5]) {
          await assert.rejects(s.ledger.reserve(team.id, amount, reqId(), Date.now() + MINUTE), `amount ${amount}`);
        }
        await assert.rejects(s.ledger.reserve('team_nope', 1, reqId(), Date.now() + MINUTE));
        await assert.rejects(s.ledger.commit('res_nope'));
        await assert.rejects(s.ledger.refund('res_nope'));
        assert.equal(await assertConsistent(s, team.id), 5);
      });

      it('refunds a reservation exactly once', async (s) => {
        const team = await newTeam(s, 3);
        const r = await s.ledger.reserve(team.id, 2, reqId(), Date.now() + MINUTE);
        assert.ok(r.ok);
        assert.equal(r.balance, 1);
        assert.deepEqual(await s.ledger.refund(r.reservationId), { refunded: true, balance: 3 });
        assert.deepEqual(await s.ledger.refund(r.reservationId), { refunded: false, balance: 3 }, 'second refund changes nothing');
        assert.deepEqual(await s.ledger.commit(r.reservationId), { charged: false, balance: 3 }, 'commit after refund charges nothing and says so');
        assert.equal(await assertConsistent(s, team.id), 3);

        const r2 = await s.ledger.reserve(team.id, 1, reqId(), Date.now() - 1);
        assert.ok(r2.ok);
        const [a, b, n] = await Promise.all([
          s.ledger.refund(r2.reservationId),
          s.ledger.refund(r2.reservationId),
          s.ledger.refundExpired(Date.now() + 1),
        ]);
        assert.equal(a.balance, 3);
        assert.equal(b.balance, 3);
        assert.equal([a.refunded, b.refunded].filter(Boolean).length + n, 1, 'exactly one of the three gave it back, and only that one says so');
        const refunds = (await s.ledger.entries(team.id, 100)).filter((e) => e.reason === 'refund');
        assert.equal(refunds.length, 2);
        assert.equal(await assertConsistent(s, team.id), 3);
        assert.equal((await s.ledger.usage(team.id))?.pending, 0);
      });

      it('commit keeps the charge', async (s) => {
        const team = await newTeam(s, 2);
        const deadline = Date.now() + 1000;
        const r = await s.ledger.reserve(team.id, 1, reqId(), deadline);
        assert.ok(r.ok);
        assert.deepEqual(await s.ledger.commit(r.reservationId), { charged: true, balance: 1 });
        assert.deepEqual(await s.ledger.commit(r.reservationId), { charged: true, balance: 1 }, 'committing twice: the one charge stands');
        assert.deepEqual(await s.ledger.refund(r.reservationId), { refunded: false, balance: 1 }, 'a committed reservation is not refunded');
        assert.equal(await s.ledger.refundExpired(deadline + MINUTE), 0);
        assert.equal(await assertConsistent(s, team.id), 1);
        const usage = await s.ledger.usage(team.id);
        assert.equal(usage?.charged, 1);
        assert.equal(usage?.refunded, 0);
        assert.equal(usage?.pending, 0);
      });

      it('refundExpired refunds each expired pending reservation exactly once', async (s) => {
        const team = await newTeam(s, 10);
        const other = await newTeam(s, 10);
        const t = Date.now();
        const early = await s.ledger.reserve(team.id, 1, reqId(), t + 1_000);
        const early2 = await s.ledger.reserve(other.id, 3, reqId(), t + 1_500);
        const late = await s.ledger.reserve(team.id, 2, reqId(), t + 5_000);
        const committed = await s.ledger.reserve(team.id, 1, reqId(), t + 1_000);
        const refunded = await s.ledger.reserve(team.id, 1, reqId(), t + 1_000);
        assert.ok(early.ok && early2.ok && late.ok && committed.ok && refunded.ok);
        await s.ledger.commit(committed.reservationId);
        await s.ledger.refund(refunded.reservationId);
        assert.equal(await s.ledger.balance(team.id), 6);

        assert.equal(await s.ledger.refundExpired(t + 1_000), 0, 'a deadline equal to now has not passed');
        assert.equal(await s.ledger.refundExpired(t + 2_000), 2);
        assert.equal(await s.ledger.refundExpired(t + 2_000), 0);
        assert.equal(await s.ledger.balance(team.id), 7);
        assert.equal(await s.ledger.balance(other.id), 10);
        assert.deepEqual(await s.ledger.refund(early.reservationId), { refunded: false, balance: 7 }, 'refund after refundExpired changes nothing');

        const counts = await Promise.all(Array.from({ length: 5 }, () => s.ledger.refundExpired(t + 10_000)));
        assert.equal(
          counts.reduce((a, b) => a + b, 0),
          1,
          'concurrent sweeps refund the late one once',
        );
        assert.equal(await s.ledger.refundExpired(t + 10_000), 0);
        assert.equal(await assertConsistent(s, team.id), 9);
        assert.equal(await assertConsistent(s, other.id), 10);
        const usage = await s.ledger.usage(team.id);
        assert.equal(usage?.pending, 0);
        assert.equal(usage?.charged, 5);
        assert.equal(usage?.refunded, 4);
        assert.deepEqual(await s.ledger.commit(late.reservationId), { charged: false, balance: 9 }, 'a late commit charges nothing and says so');
      });

      it('a commit racing the sweep of abandoned reservations reports a charge only if it stands', async (s) => {
        // A slow request commits while refundExpired gives its reservation back: whichever
        // wins, the balance, the ledger and what commit reports agree.
        const team = await newTeam(s, 20);
        const t = Date.now();
        const reservations = await Promise.all(Array.from({ length: 10 }, () => s.ledger.reserve(team.id, 1, reqId(), t + 1_000)));
        const ids = reservations.map((r) => (r.ok ? r.reservationId : assert.fail('reserved')));
        const [commits, swept] = await Promise.all([Promise.all(ids.map((id) => s.ledger.commit(id))), s.ledger.refundExpired(t + 2_000)]);
        const charged = commits.filter((result) => result.charged).length;
        assert.equal(charged + swept, 10, 'each reservation is either charged or refunded, never both');
        assert.equal(await assertConsistent(s, team.id), 20 - charged);
        const usage = await s.ledger.usage(team.id);
        assert.equal(usage?.charged, 10);
        assert.equal(usage?.refunded, swept);
        assert.equal(usage?.pending, 0);
        // Settling again changes nothing and reports the same.
        for (const [index, id] of ids.entries()) {
          const again = await s.ledger.commit(id);
          assert.equal(again.charged, commits[index]?.charged, 'a second commit reports what the first one did');
          assert.equal((await s.ledger.refund(id)).refunded, false);
        }
        assert.equal(await assertConsistent(s, team.id), 20 - charged);
      });

      it('pruneReservations deletes settled reservations whose deadline is before the bound, in batches; pending and recent ones stay', async (s) => {
        const team = await newTeam(s, 1_000);
        const other = await newTeam(s, 10);
        const t = Date.now();
        const reserve = async (teamId: string, deadline: number): Promise<string> => {
          const r = await s.ledger.reserve(teamId, 1, reqId(), deadline);
          return r.ok ? r.reservationId : assert.fail('reserved');
        };
        // More than one batch of old settled ones: committed, refunded, and refunded as abandoned.
        const committed = await reserve(team.id, t - 3 * MINUTE);
        await s.ledger.commit(committed);
        const refunded = await reserve(other.id, t - 3 * MINUTE);
        await s.ledger.refund(refunded);
        await Promise.all(Array.from({ length: 600 }, () => reserve(team.id, t - 2 * MINUTE)));
        assert.equal(await s.ledger.refundExpired(t - MINUTE), 600);
        // Kept: pending ones (even past their deadline, not swept yet) and settled ones after the bound.
        const stale = await reserve(team.id, t - 2 * MINUTE);
        const recent = await reserve(team.id, t + MINUTE);
        await s.ledger.commit(recent);
        const pending = await reserve(team.id, t + MINUTE);
        const balances = [await assertConsistent(s, team.id), await assertConsistent(s, other.id)];
        const entries = [await s.ledger.entries(team.id, 10_000), await s.ledger.entries(other.id, 10_000)];
        const usage = [await s.ledger.usage(team.id), await s.ledger.usage(other.id)];
        assert.equal(usage[0]?.pending, 2);

        assert.equal(await s.ledger.pruneReservations(t), 602);
        assert.equal(await s.ledger.pruneReservations(t), 0, 'a second prune finds nothing');
        assert.deepEqual([await assertConsistent(s, team.id), await assertConsistent(s, other.id)], balances, 'balances unchanged');
        assert.deepEqual([await s.ledger.entries(team.id, 10_000), await s.ledger.entries(other.id, 10_000)], entries, 'the ledger is untouched');
        assert.deepEqual([await s.ledger.usage(team.id), await s.ledger.usage(other.id)], usage);

        // What was kept still settles as before.
        assert.deepEqual(await s.ledger.commit(recent), { charged: true, balance: balances[0] });
        assert.deepEqual(await s.ledger.refund(recent), { refunded: false, balance: balances[0] });
        assert.equal(await s.ledger.refundExpired(t - MINUTE), 1, 'the stale pending one is still swept');
        assert.equal((await s.ledger.refund(stale)).refunded, false, 'that one');
        assert.deepEqual(await s.ledger.refund(pending), { refunded: true, balance: (balances[0] as number) + 2 });
        // A late settle of a pruned one is refused: it neither charges nor refunds again.
        await assert.rejects(s.ledger.commit(committed), /unknown reservation/);
        await assert.rejects(s.ledger.refund(committed), /unknown reservation/);
        await assert.rejects(s.ledger.refund(refunded), /unknown reservation/);
        await assert.rejects(s.ledger.commit(refunded), /unknown reservation/);
        assert.equal(await assertConsistent(s, team.id), (balances[0] as number) + 2);
        assert.equal(await assertConsistent(s, other.id), balances[1]);
        assert.equal((await s.ledger.usage(team.id))?.pending, 0);
        assert.equal(await s.ledger.pruneReservations(t + 2 * MINUTE), 3, 'once settled and past the bound, those go too');
        assert.equal(await s.ledger.pruneReservations(t + 2 * MINUTE), 0);
      });
    });

    describe('cache', () => {
      it('gets, sets, overwrites and deletes by target', async (s) => {
        const k = uid('key');
        assert.equal(await s.cache.get(k), null);
        const storedAt = Date.now() - 5_000;
        const value = JSON.stringify({ name: 'Zoë ✓', n: 1 });
        await s.cache.set(k, 'target-a', { value, storedAt });
        assert.deepEqual(await s.cache.get(k), cachedEntry(value, storedAt));
        await s.cache.set(k, 'target-a', { value: '{"n":2}', storedAt: storedAt + 1 });
        assert.deepEqual(await s.cache.get(k), cachedEntry('{"n":2}', storedAt + 1));

        const k2 = uid('key');
        const k3 = uid('key');
        await s.cache.set(k2, 'target-a', { value: '{}', storedAt });
        await s.cache.set(k3, 'target-b', { value: '{}', storedAt });
        await s.cache.deleteTarget('target-a');
        assert.equal(await s.cache.get(k), null);
        assert.equal(await s.cache.get(k2), null);
        assert.deepEqual(await s.cache.get(k3), cachedEntry('{}', storedAt));
        await s.cache.deleteTarget('target-none');
      });

      it("takes an entry as its UTF-8 bytes alone (a live scrape's) and hands back the same", async (s) => {
        const k = uid('key');
        const storedAt = Date.now() - 5_000;
        const value = JSON.stringify({ name: 'Zoë ✓ 東京 🎉', quote: 'a "b" \\ c', n: 1 });
        await s.cache.set(k, 'target-bytes', { bytes: Buffer.from(value), storedAt });
        assert.deepEqual(await s.cache.get(k), cachedEntry(value, storedAt));
        // Overwritten from bytes again, then dropped with its target like any entry.
        await s.cache.set(k, 'target-bytes', { bytes: Buffer.from('{"n":2}'), storedAt: storedAt + 1 });
        assert.deepEqual(await s.cache.get(k), cachedEntry('{"n":2}', storedAt + 1));
        await s.cache.deleteTarget('target-bytes');
        assert.equal(await s.cache.get(k), null);
      });

      it(
        'prune drops entries older than the maximum age',
        async (s) => {
          const now = Date.now();
          const old = uid('old');
          const fresh = uid('fresh');
          await s.cache.set(old, 't', { value: '"old"', storedAt: now - 2 * MINUTE });
          await s.cache.set(fresh, 't', { value: '"fresh"', storedAt: now - 1_000 });
          await s.cache.get(old); // being read does not keep an entry beyond its age
          await s.cache.prune(now);
          assert.equal(await s.cache.get(old), null);
          assert.deepEqual(await s.cache.get(fresh), cachedEntry('"fresh"', now - 1_000));
          await s.cache.prune(now + 2 * MINUTE);
          assert.equal(await s.cache.get(fresh), null);
        },
        { cacheMaxAgeMs: MINUTE },
      );

      it(
        'prune evicts least recently used entries beyond the size bound',
        async (s) => {
          const big = (c: string) => JSON.stringify(c.repeat(3_000 - 2));
          const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((x) => uid(`lru-${x}`)) as [string, string, string, string];
          const now = Date.now();
          for (const k of [a, b, c]) {
            await s.cache.set(k, `t-${k}`, { value: big(k.slice(4, 5)), storedAt: now });
            await sleep(5);
          }
          await s.cache.prune(Date.now());
          // Under the bound nothing goes. Reading them makes b the least recently used, a the most.
          for (const k of [b, c, a]) {
            assert.ok(await s.cache.get(k), `${k} kept under the bound`);
            await sleep(5);
          }
          await s.cache.set(d, `t-${d}`, { value: big('d'), storedAt: now });
          await s.cache.prune(Date.now());
          assert.equal(await s.cache.get(b), null, 'least recently used is evicted');
          assert.ok(await s.cache.get(a), 'recently read survives');
          assert.ok(await s.cache.get(d), 'newest survives');
        },
        { cacheMaxBytes: 10_000, cacheMaxAgeMs: MINUTE * 60 },
      );
    });

    describe('request records', () => {
      const DAY = 24 * 60 * MINUTE;
      const t0 = Date.UTC(2026, 10, 20, 23, 59, 0);
      const record = (teamId: string, i: number, extra: Partial<RequestRecord> = {}): RequestRecord => ({
        requestId: `req_${String(i).padStart(4, '0')}${uid('r').replaceAll('-', '')}`,
        at: t0 + i * MINUTE,
        teamId,
        keyId: 'key_1',
        endpoint: i % 2 ? '/v1/shopfront/shop' : '/v1/snapmsg/profile',
        status: i % 3 ? 200 : 502,
        errorCode: i % 3 ? null : 'UPSTREAM_BLOCKED',
        credits: i % 3 ? 1 : 0,
        cached: i % 4 === 0,
        durationMs: 12.5 + i,
        ...extra,
      });

      it('lists a team\'s records newest first, filtered and paginated without overlap', async (s) => {
        const team = uid('team');
        const records = Array.from({ length: 7 }, (_, i) => record(team, i));
        await s.requests.append([...records.slice(0, 4), record(uid('other'), 0)]);
        await s.requests.append(records.slice(4));
        await s.requests.append([records[2] as RequestRecord]); // appended twice: kept once
        const all = await s.requests.list({ teamId: team });
        assert.deepEqual(all, { records: [...records].reverse(), next: null });

        const seen: RequestRecord[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const page: RequestPage = await s.requests.list({ teamId: team, limit: 3, cursor });
          seen.push(...page.records);
          cursor = page.next;
          pages++;
        } while (cursor !== null);
        assert.equal(pages, 3);
        assert.deepEqual(seen, [...records].reverse());

        const shop = await s.requests.list({ teamId: team, endpoint: '/v1/shopfront/shop' });
        assert.deepEqual(shop.records.map((r) => r.requestId), [records[5], records[3], records[1]].map((r) => r?.requestId));
        const failed = await s.requests.list({ teamId: team, status: 502 });
        assert.deepEqual(failed.records.map((r) => r.requestId), [records[6], records[3], records[0]].map((r) => r?.requestId));
        const window = await s.requests.list({ teamId: team, since: t0 + 2 * MINUTE, until: t0 + 4 * MINUTE });
        assert.deepEqual(window.records.map((r) => r.requestId), [records[3], records[2]].map((r) => r?.requestId));

        await assert.rejects(s.requests.list({ teamId: team, cursor: 'not-a-cursor' }), RangeError);
        await assert.rejects(s.requests.list({ teamId: team, limit: 0 }), RangeError);
        await assert.rejects(s.requests.list({ teamId: team, limit: 1001 }), RangeError);
      });

      it('totals per UTC day and per endpoint, and prunes by age', async (s) => {
        const team = uid('team');
        // t0 is 23:59 UTC: the first record falls on the 20th, the rest on the 21st.
        await s.requests.append(Array.from({ length: 6 }, (_, i) => record(team, i)));
        assert.deepEqual(await s.requests.totals(team, t0 - DAY), {
          days: [
            { day: '2026-11-20', requests: 1, credits: 0, cached: 1 },
            { day: '2026-11-21', requests: 5, credits: 4, cached: 1 },
          ],
          endpoints: [
            { endpoint: '/v1/shopfront/shop', requests: 3, credits: 2, cached: 0 },
            { endpoint: '/v1/snapmsg/profile', requests: 3, credits: 2, cached: 2 },
          ],
        });
        assert.deepEqual((await s.requests.totals(team, t0 + 3 * MINUTE)).days, [{ day: '2026-11-21', requests: 3, credits: 2, cached: 1 }]);
        assert.deepEqual(await s.requests.totals(team, t0 + MINUTE, t0 + 3 * MINUTE), {
          days: [{ day: '2026-11-21', requests: 2, credits: 2, cached: 0 }],
          endpoints: [
            { endpoint: '/v1/shopfront/shop', requests: 1, credits: 1, cached: 0 },
            { endpoint: '/v1/snapmsg/profile', requests: 1, credits: 1, cached: 0 },
          ],
        }, 'until is exclusive');
        assert.equal(await s.requests.prune(t0 + 2 * MINUTE), 2);
        assert.equal((await s.requests.list({ teamId: team })).records.length, 4);
      });
    });

    describe('daily credit limits of keys', () => {
      const DAY = '2026-11-27';
      const NEXT = '2026-11-28';
      const far = () => Date.now() + 60 * MINUTE;
      const limitedKey = async (s: Stores, teamId: string, dailyCreditLimit: number | null) => {
        const hash = uid('hash');
        return s.accounts.createKey({ teamId, name: uid('key'), hash, prefix: 'ps_live_', last4: hash.slice(-4), dailyCreditLimit });
      };

      it('a key carries its limit and its spending from creation, lookup, listing and update', async (s) => {
        const team = await newTeam(s, 10);
        const hash = uid('hash');
        const key = await s.accounts.createKey({ teamId: team.id, name: 'limited', hash, prefix: 'ps_live_', last4: hash.slice(-4), dailyCreditLimit: 5 });
        assert.equal(key.dailyCreditLimit, 5);
        assert.equal(key.spent, null);
        assert.deepEqual(await s.accounts.getKey(key.id), key);
        assert.deepEqual((await s.accounts.findActiveKey(hash))?.key, key);
        assert.deepEqual((await s.accounts.listKeys(team.id)).find((k) => k.id === key.id), key);
        assert.equal((await newKey(s, team.id)).key.dailyCreditLimit, null, 'none by default');
        const raised = await s.accounts.updateKey(key.id, { dailyCreditLimit: 7 });
        assert.deepEqual(raised, { ...key, dailyCreditLimit: 7 });
        assert.deepEqual(await s.accounts.updateKey(key.id, { dailyCreditLimit: null }), { ...key, dailyCreditLimit: null });
        assert.equal(await s.accounts.updateKey('key_nope', { dailyCreditLimit: 1 }), null);
        assert.equal(await s.accounts.getKey('key_nope'), null);
        for (const bad of [-1, 1.5, Number.NaN, 1e10]) {
          await assert.rejects(s.accounts.updateKey(key.id, { dailyCreditLimit: bad }), RangeError, String(bad));
          await assert.rejects(limitedKey(s, team.id, bad), RangeError, String(bad));
        }
        assert.equal((await s.accounts.updateKey(key.id, { dailyCreditLimit: 0 }))?.dailyCreditLimit, 0, '0: cache hits only');
      });

      it('reservations count against the key on their day; past the limit nothing is taken; refunds give back to that day', async (s) => {
        const team = await newTeam(s, 20);
        const key = await limitedKey(s, team.id, 3);
        const on = (day: string) => ({ id: key.id, day });
        const held: string[] = [];
        for (let i = 0; i < 3; i++) {
          const r = await s.ledger.reserve(team.id, 1, reqId(), far(), on(DAY));
          assert.ok(r.ok);
          held.push(r.reservationId);
        }
        assert.deepEqual((await s.accounts.getKey(key.id))?.spent, { day: DAY, credits: 3 });
        const refused = await s.ledger.reserve(team.id, 1, reqId(), far(), on(DAY));
        assert.deepEqual(refused, { ok: false, reason: 'key-limit', balance: 17, limit: 3, spent: 3 });
        assert.equal(await assertConsistent(s, team.id), 17, 'nothing taken');
        assert.equal((await s.ledger.entries(team.id)).length, 4);
        // Another key of the team, or none, is not held back by it.
        assert.ok((await s.ledger.reserve(team.id, 1, reqId(), far(), { id: (await newKey(s, team.id)).key.id, day: DAY })).ok);
        assert.ok((await s.ledger.reserve(team.id, 1, reqId(), far())).ok);
        // A refund gives the credit back to the key's day; a commit keeps it spent.
        await s.ledger.refund(held[0] as string);
        await s.ledger.commit(held[1] as string);
        assert.deepEqual((await s.accounts.getKey(key.id))?.spent, { day: DAY, credits: 2 });
        assert.ok((await s.ledger.reserve(team.id, 1, reqId(), far(), on(DAY))).ok);
        assert.equal((await s.ledger.reserve(team.id, 1, reqId(), far(), on(DAY))).ok, false);
        // The next day starts from nothing; a refund of the day before leaves it so.
        const next = await s.ledger.reserve(team.id, 2, reqId(), far(), on(NEXT));
        assert.ok(next.ok);
        await s.ledger.refund(held[2] as string);
        assert.deepEqual((await s.accounts.getKey(key.id))?.spent, { day: NEXT, credits: 2 });
        assert.deepEqual(await s.ledger.reserve(team.id, 2, reqId(), far(), on(NEXT)), { ok: false, reason: 'key-limit', balance: 14, limit: 3, spent: 2 });
        // A balance too low is said as such, the key's count untouched.
        const poor = await newTeam(s, 0);
        const poorKey = await limitedKey(s, poor.id, 3);
        assert.deepEqual(await s.ledger.reserve(poor.id, 1, reqId(), far(), { id: poorKey.id, day: DAY }), { ok: false, reason: 'balance', balance: 0 });
        assert.equal((await s.accounts.getKey(poorKey.id))?.spent, null);
        assert.equal(await assertConsistent(s, team.id), 14);
      });

      it('an abandoned reservation refunded by the sweep gives the credit back to its key', async (s) => {
        const team = await newTeam(s, 10);
        const key = await limitedKey(s, team.id, 2);
        await s.ledger.reserve(team.id, 1, reqId(), Date.now() - 1_000, { id: key.id, day: DAY });
        await s.ledger.reserve(team.id, 1, reqId(), far(), { id: key.id, day: DAY });
        assert.equal(await s.ledger.refundExpired(Date.now()), 1);
        assert.deepEqual((await s.accounts.getKey(key.id))?.spent, { day: DAY, credits: 1 });
        assert.equal(await assertConsistent(s, team.id), 9);
      });

      it('exactly the limit of 100 concurrent reservations of one key is taken', async (s) => {
        const team = await newTeam(s, 1_000);
        const key = await limitedKey(s, team.id, 5);
        const results = await Promise.all(Array.from({ length: 100 }, () => s.ledger.reserve(team.id, 1, reqId(), far(), { id: key.id, day: DAY })));
        assert.equal(results.filter((r) => r.ok).length, 5);
        assert.equal(results.filter((r) => !r.ok && r.reason === 'key-limit').length, 95);
        assert.equal(await assertConsistent(s, team.id), 995);
        assert.deepEqual((await s.accounts.getKey(key.id))?.spent, { day: DAY, credits: 5 });
        // And under a balance lower than the limit, the balance holds.
        const poor = await newTeam(s, 3);
        const wide = await limitedKey(s, poor.id, 50);
        const racing = await Promise.all(Array.from({ length: 60 }, () => s.ledger.reserve(poor.id, 1, reqId(), far(), { id: wide.id, day: DAY })));
        assert.equal(racing.filter((r) => r.ok).length, 3);
        assert.equal(await assertConsistent(s, poor.id), 0);
        assert.deepEqual((await s.accounts.getKey(wide.id))?.spent, { day: DAY, credits: 3 });
      });
    });

    describe('low-balance alerts and account events', () => {
      const far = () => Date.now() + 60 * MINUTE;
      const spend = async (s: Stores, teamId: string, times: number) => {
        const held: string[] = [];
        for (let i = 0; i < times; i++) {
          const r = await s.ledger.reserve(teamId, 1, reqId(), far());
          assert.ok(r.ok, `charge ${i}`);
          held.push(r.reservationId);
        }
        return held;
      };
      const kinds = async (s: Stores, teamId: string) => (await s.events.list(teamId)).map((event) => `${event.type} ${JSON.stringify(event.data)}`);

      it('a team carries its alert: none by default, set, cleared; bad values refused', async (s) => {
        const team = await newTeam(s, 10);
        assert.equal(team.lowBalanceAlert, null);
        const { hash } = await newKey(s, team.id);
        const set = await s.accounts.updateTeam(team.id, { lowBalanceAlert: 5 });
        assert.deepEqual(set, { ...team, lowBalanceAlert: 5 });
        assert.deepEqual(await s.accounts.getTeam(team.id), set);
        assert.equal((await s.accounts.findActiveKey(hash))?.team.lowBalanceAlert, 5);
        assert.equal((await s.accounts.listTeams()).find((t) => t.id === team.id)?.lowBalanceAlert, 5);
        assert.equal((await s.accounts.updateTeam(team.id, { name: 'renamed' }))?.lowBalanceAlert, 5, 'kept by other changes');
        assert.equal((await s.accounts.updateTeam(team.id, { lowBalanceAlert: null }))?.lowBalanceAlert, null);
        for (const bad of [-1, 2.5, Number.NaN, 1e13]) await assert.rejects(s.accounts.updateTeam(team.id, { lowBalanceAlert: bad }), RangeError, String(bad));
        await assert.rejects(s.events.list(team.id, 0), RangeError);
      });

      it('records credits.low and credits.exhausted once each per crossing; refunds do not re-arm them, a top-up to the alert does', async (s) => {
        const team = await newTeam(s, 10);
        await s.accounts.updateTeam(team.id, { lowBalanceAlert: 5 });
        await spend(s, team.id, 5);
        assert.deepEqual(await kinds(s, team.id), [], 'at the alert is not below it');
        const [below] = await spend(s, team.id, 1);
        assert.deepEqual(await kinds(s, team.id), ['credits.low {"balance":4,"threshold":5}']);
        await s.ledger.refund(below as string);
        await spend(s, team.id, 1);
        assert.equal((await s.events.list(team.id)).length, 1, 'a refund does not re-arm');
        await spend(s, team.id, 4);
        assert.deepEqual(await kinds(s, team.id), ['credits.low {"balance":4,"threshold":5}', 'credits.exhausted {"balance":0}']);
        await s.ledger.addCredits(team.id, 3);
        await spend(s, team.id, 3);
        assert.equal((await s.events.list(team.id)).length, 2, 'a top-up below the alert re-arms neither');
        await s.ledger.addCredits(team.id, 6);
        await spend(s, team.id, 6);
        const events = await s.events.list(team.id);
        assert.deepEqual(events.map((event) => event.type), ['credits.low', 'credits.exhausted', 'credits.low', 'credits.exhausted']);
        assert.deepEqual(events[2]?.data, { balance: 4, threshold: 5 });
        for (const event of events) {
          assert.match(event.id, /^evt_/);
          assert.equal(event.teamId, team.id);
          assert.match(event.createdAt, ISO_MS);
        }
        assert.equal(new Set(events.map((event) => event.id)).size, 4);
        assert.deepEqual((await s.events.list(team.id, 1)).map((event) => event.id), [events[0]?.id]);
        assert.deepEqual(await s.events.list((await newTeam(s)).id), []);
        assert.equal(await assertConsistent(s, team.id), 0);
      });

      it('records any other event in order after the crossings, with its data as given', async (s) => {
        const team = await newTeam(s, 2);
        const recorded = await s.events.record(team.id, 'job.completed', { job: { id: 'job_1', total: 2 }, note: 'é' });
        assert.match(recorded.id, /^evt_/);
        assert.match(recorded.createdAt, ISO_MS);
        assert.deepEqual(await s.events.list(team.id), [recorded]);
      });

      it('without an alert, reaching 0 is recorded, and any top-up re-arms it; an alert set below the balance arms at once, above it at the next top-up', async (s) => {
        const team = await newTeam(s, 2);
        await spend(s, team.id, 2);
        assert.deepEqual(await kinds(s, team.id), ['credits.exhausted {"balance":0}']);
        await s.ledger.addCredits(team.id, 1);
        await spend(s, team.id, 1);
        assert.equal((await s.events.list(team.id)).length, 2);
        await s.ledger.addCredits(team.id, 3);
        await s.accounts.updateTeam(team.id, { lowBalanceAlert: 10 });
        await spend(s, team.id, 1);
        assert.equal((await s.events.list(team.id)).length, 2, 'set while below: nothing until a top-up reaches it');
        await s.ledger.addCredits(team.id, 8);
        await spend(s, team.id, 1);
        assert.deepEqual((await kinds(s, team.id)).at(-1), 'credits.low {"balance":9,"threshold":10}');
        await s.accounts.updateTeam(team.id, { lowBalanceAlert: 3 });
        await spend(s, team.id, 7);
        assert.deepEqual((await kinds(s, team.id)).at(-1), 'credits.low {"balance":2,"threshold":3}', 'a new alert under the balance is armed');
      });

      it('100 charges racing across the alert and down to 0 record each crossing exactly once', async (s) => {
        const team = await newTeam(s, 50);
        await s.accounts.updateTeam(team.id, { lowBalanceAlert: 25 });
        const results = await Promise.all(Array.from({ length: 100 }, () => s.ledger.reserve(team.id, 1, reqId(), far())));
        assert.equal(results.filter((r) => r.ok).length, 50);
        assert.deepEqual(await kinds(s, team.id), ['credits.low {"balance":24,"threshold":25}', 'credits.exhausted {"balance":0}']);
      });
    });

    describe('idempotency keys', () => {
      const T0 = 1_700_000_000_000;
      const LOCK = 75_000;
      const DAY = 24 * 60 * MINUTE;
      const scopeOf = (teamId = uid('team'), test = false, key = uid('idem')) => ({ teamId, test, key });
      // Bytes that are not UTF-8 text, so that any decoding on the way would show.
      const answerOf = (size = 64, location: string | null = null) => ({
        status: 200,
        body: Buffer.from(Array.from({ length: size }, (_, i) => (i * 37 + 255) % 256)),
        location,
      });

      it('claims a free key once; the same request meanwhile finds it running, another request finds it reused', async (s) => {
        const scope = scopeOf();
        assert.deepEqual(await s.idempotency.claim(scope, 'fp-a', 'req_1', T0 + LOCK, T0), { outcome: 'claimed' });
        assert.deepEqual(await s.idempotency.claim(scope, 'fp-a', 'req_2', T0 + 1 + LOCK, T0 + 1), { outcome: 'running' });
        assert.deepEqual(await s.idempotency.claim(scope, 'fp-b', 'req_3', T0 + 2 + LOCK, T0 + 2), { outcome: 'reused' });
        // The same key in another team, or for the other mode of keys, is another key.
        assert.deepEqual(await s.idempotency.claim({ ...scope, teamId: uid('team') }, 'fp-b', 'req_4', T0 + LOCK, T0), { outcome: 'claimed' });
        assert.deepEqual(await s.idempotency.claim({ ...scope, test: true }, 'fp-b', 'req_5', T0 + LOCK, T0), { outcome: 'claimed' });
      });

      it('keeps the answer of its claim and gives it back byte for byte to the same request until it expires', async (s) => {
        const scope = scopeOf();
        await s.idempotency.claim(scope, 'fp', 'req_1', T0 + LOCK, T0);
        assert.equal(await s.idempotency.keep(scope, 'req_other', answerOf(), T0 + DAY), false, 'only the owner keeps');
        const answer = answerOf(300_000, '/v1/jobs/job_1');
        assert.equal(await s.idempotency.keep(scope, 'req_1', answer, T0 + 10 + DAY), true);
        assert.equal(await s.idempotency.keep(scope, 'req_1', answerOf(), T0 + DAY), false, 'kept once');
        const replay = await s.idempotency.claim(scope, 'fp', 'req_2', T0 + 100 + LOCK, T0 + 100);
        assert.equal(replay.outcome, 'kept');
        assert.ok(replay.outcome === 'kept');
        assert.equal(replay.answer.status, 200);
        assert.equal(replay.answer.location, '/v1/jobs/job_1');
        assert.ok(Buffer.isBuffer(replay.answer.body));
        assert.ok(replay.answer.body.equals(answer.body), 'the same bytes');
        assert.deepEqual(await s.idempotency.claim(scope, 'fp-other', 'req_3', T0 + LOCK, T0 + 200), { outcome: 'reused' });
        // Lock deadlines are beside the point once kept: it holds until it expires.
        assert.equal((await s.idempotency.claim(scope, 'fp', 'req_4', T0 + DAY + LOCK, T0 + 10 + DAY)).outcome, 'kept');
        assert.deepEqual(await s.idempotency.claim(scope, 'fp-other', 'req_5', T0 + 11 + DAY + LOCK, T0 + 11 + DAY), { outcome: 'claimed' }, 'expired: free');
      });

      it('a released key is free at once, for any request; only its owner releases it', async (s) => {
        const scope = scopeOf();
        await s.idempotency.claim(scope, 'fp', 'req_1', T0 + LOCK, T0);
        await s.idempotency.release(scope, 'req_other');
        assert.equal((await s.idempotency.claim(scope, 'fp', 'req_2', T0 + LOCK, T0)).outcome, 'running');
        await s.idempotency.release(scope, 'req_1');
        assert.deepEqual(await s.idempotency.claim(scope, 'fp-b', 'req_3', T0 + LOCK, T0), { outcome: 'claimed' });
        // A kept answer is not released.
        assert.equal(await s.idempotency.keep(scope, 'req_3', answerOf(), T0 + DAY), true);
        await s.idempotency.release(scope, 'req_3');
        assert.equal((await s.idempotency.claim(scope, 'fp-b', 'req_4', T0 + LOCK, T0)).outcome, 'kept');
      });

      it('a claim past its lock deadline is taken over; its first owner can then neither keep nor release it', async (s) => {
        const scope = scopeOf();
        await s.idempotency.claim(scope, 'fp', 'req_dead', T0 + LOCK, T0);
        assert.equal((await s.idempotency.claim(scope, 'fp', 'req_2', T0 + LOCK, T0 + LOCK)).outcome, 'running', 'held up to its deadline');
        assert.deepEqual(await s.idempotency.claim(scope, 'fp-b', 'req_new', T0 + 2 * LOCK, T0 + LOCK + 1), { outcome: 'claimed' });
        assert.equal(await s.idempotency.keep(scope, 'req_dead', answerOf(), T0 + DAY), false);
        await s.idempotency.release(scope, 'req_dead');
        assert.equal((await s.idempotency.claim(scope, 'fp-b', 'req_3', T0 + 2 * LOCK, T0 + LOCK + 2)).outcome, 'running');
        assert.equal(await s.idempotency.keep(scope, 'req_new', answerOf(), T0 + DAY), true);
      });

      it('exactly one of 100 concurrent claims of a key wins', async (s) => {
        const scope = scopeOf();
        const claims = await Promise.all(Array.from({ length: 100 }, (_, i) => s.idempotency.claim(scope, 'fp', `req_${i}`, T0 + LOCK, T0)));
        assert.equal(claims.filter((claim) => claim.outcome === 'claimed').length, 1);
        assert.equal(claims.filter((claim) => claim.outcome === 'running').length, 99);
        const mixed = scopeOf();
        const racing = await Promise.all(Array.from({ length: 50 }, (_, i) => s.idempotency.claim(mixed, `fp-${i % 2}`, `req_${i}`, T0 + LOCK, T0)));
        const winner = racing.findIndex((claim) => claim.outcome === 'claimed');
        assert.equal(racing.filter((claim) => claim.outcome === 'claimed').length, 1);
        racing.forEach((claim, i) => {
          if (i !== winner) assert.equal(claim.outcome, i % 2 === winner % 2 ? 'running' : 'reused', `claim ${i}`);
        });
      });

      it('prune deletes the records that no longer hold their key', async (s) => {
        const team = uid('team');
        const running = scopeOf(team);
        const dead = scopeOf(team);
        const kept = scopeOf(team);
        const expired = scopeOf(team);
        await s.idempotency.claim(running, 'fp', 'req_1', T0 + 10 * LOCK, T0);
        await s.idempotency.claim(dead, 'fp', 'req_2', T0 + LOCK, T0);
        for (const [scope, expires] of [[kept, T0 + DAY], [expired, T0 + 1_000]] as const) {
          await s.idempotency.claim(scope, 'fp', 'req_3', T0 + LOCK, T0);
          await s.idempotency.keep(scope, 'req_3', answerOf(), expires);
        }
        assert.equal(await s.idempotency.prune(T0), 0);
        assert.equal(await s.idempotency.prune(T0 + 2 * LOCK), 2);
        assert.equal((await s.idempotency.claim(running, 'fp', 'req_4', T0 + 2 * LOCK, T0 + 2 * LOCK)).outcome, 'running');
        assert.equal((await s.idempotency.claim(kept, 'fp', 'req_5', T0 + 2 * LOCK, T0 + 2 * LOCK)).outcome, 'kept');
        assert.equal((await s.idempotency.claim(expired, 'fp-b', 'req_6', T0 + 3 * LOCK, T0 + 2 * LOCK)).outcome, 'claimed');
        assert.equal(await s.idempotency.prune(T0 + 2 * DAY), 3);
      });
    });

    describe('rate limiter', () => {
      it('admits exactly the limit among 300 concurrent hits', async (s) => {
        const key = uid('rl');
        const decisions = await Promise.all(Array.from({ length: 300 }, () => s.limiter.hit(key, 100, MINUTE)));
        const allowed = decisions.filter((d) => d.allowed);
        assert.equal(allowed.length, 100);
        assert.deepEqual(
          allowed.map((d) => d.remaining).sort((x, y) => x - y),
          Array.from({ length: 100 }, (_, i) => i),
        );
        for (const d of decisions) {
          assert.equal(d.limit, 100);
          if (!d.allowed) {
            assert.equal(d.remaining, 0);
            assert.ok(d.resetSeconds >= 1 && d.resetSeconds <= 60, `resetSeconds ${d.resetSeconds}`);
          }
        }
        assert.equal((await s.limiter.hit(key, 100, MINUTE)).allowed, false);
        assert.equal((await s.limiter.hit(uid('rl'), 100, MINUTE)).allowed, true, 'keys are independent');
      });

      it('uses an exact rolling window, not fixed buckets', async (s) => {
        const key = uid('rl');
        const t0 = 1_700_000_040_000; // a whole minute: a fixed window would start afresh at t0 + 60 s
        const at = (i: number) => t0 + Math.round((i * 59_000) / 99); // 100 hits spread over 0..59 s
        for (let i = 0; i < 100; i++) {
          const d = await s.limiter.hit(key, 100, MINUTE, at(i));
          assert.equal(d.allowed, true, `hit ${i}`);
          assert.equal(d.remaining, 99 - i);
        }
        assert.equal((await s.limiter.hit(key, 100, MINUTE, t0 + 59_500)).allowed, false);
        // At 60.5 s only the hit at 0 s has left the window.
        const freed = await s.limiter.hit(key, 100, MINUTE, t0 + 60_500);
        assert.equal(freed.allowed, true);
        assert.equal(freed.remaining, 0);
        let denied = 0;
        for (let i = 0; i < 150; i++) if (!(await s.limiter.hit(key, 100, MINUTE, t0 + 60_500)).allowed) denied++;
        assert.equal(denied, 150, 'only one request freed at 60.5 s');
        // At 61.2 s the hits at 0.596 s and 1.192 s have left too.
        const later = await Promise.all(Array.from({ length: 5 }, () => s.limiter.hit(key, 100, MINUTE, t0 + 61_200)));
        assert.equal(later.filter((d) => d.allowed).length, 2);
        // Long after, the whole limit is available again.
        const fresh = await Promise.all(Array.from({ length: 101 }, () => s.limiter.hit(key, 100, MINUTE, t0 + 200_000)));
        assert.equal(fresh.filter((d) => d.allowed).length, 100);
      });

      it('reports resetSeconds as whole seconds until one more request is admitted', async (s) => {
        const key = uid('rl');
        const t0 = 1_700_000_000_000;
        assert.deepEqual(await s.limiter.hit(key, 2, MINUTE, t0), { allowed: true, limit: 2, remaining: 1, resetSeconds: 0 });
        assert.deepEqual(await s.limiter.hit(key, 2, MINUTE, t0 + 10_000), {
          allowed: true,
          limit: 2,
          remaining: 0,
          resetSeconds: 50,
        });
        assert.deepEqual(await s.limiter.hit(key, 2, MINUTE, t0 + 10_500), {
          allowed: false,
          limit: 2,
          remaining: 0,
          resetSeconds: 50, // 49.5 s, rounded up
        });
        assert.equal((await s.limiter.hit(key, 2, MINUTE, t0 + 59_999)).resetSeconds, 1);
        assert.deepEqual(await s.limiter.hit(key, 2, MINUTE, t0 + 60_000), {
          allowed: true,
          limit: 2,
          remaining: 0,
          resetSeconds: 10, // now the hit at 10 s is the oldest
        });
        const single = uid('rl');
        assert.deepEqual(await s.limiter.hit(single, 1, MINUTE, t0), { allowed: true, limit: 1, remaining: 0, resetSeconds: 60 });
        assert.deepEqual(await s.limiter.hit(single, 1, MINUTE, t0 + 100), {
          allowed: false,
          limit: 1,
          remaining: 0,
          resetSeconds: 60, // 59.9 s
        });
      });

      it('applies a changed limit to the same key', async (s) => {
        const key = uid('rl');
        const t0 = 1_700_000_000_000;
        for (let i = 0; i < 5; i++) assert.ok((await s.limiter.hit(key, 10, MINUTE, t0 + i * 1_000)).allowed);
        assert.equal((await s.limiter.hit(key, 3, MINUTE, t0 + 10_000)).allowed, false, 'lowered below the count');
        // Under limit 3, one more is admitted once only two of the five remain in the window.
        assert.equal((await s.limiter.hit(key, 3, MINUTE, t0 + 62_500)).allowed, true);
        assert.equal((await s.limiter.hit(key, 20, MINUTE, t0 + 62_600)).remaining, 16);
      });

      it('peek tells what a hit would get, and counts nothing', async (s) => {
        const key = uid('rl');
        const t0 = 1_700_000_000_000;
        assert.deepEqual(await s.limiter.peek(key, 3, MINUTE, t0), { allowed: true, limit: 3, remaining: 3, resetSeconds: 0 }, 'an unknown key');
        for (let i = 0; i < 3; i++) await s.limiter.hit(key, 3, MINUTE, t0 + i * 10_000);
        for (let i = 0; i < 5; i++) assert.deepEqual(await s.limiter.peek(key, 3, MINUTE, t0 + 25_000), { allowed: false, limit: 3, remaining: 0, resetSeconds: 35 });
        assert.deepEqual(await s.limiter.peek(key, 5, MINUTE, t0 + 25_000), { allowed: true, limit: 5, remaining: 2, resetSeconds: 0 }, 'under another limit');
        // Under limit 1, the third hit (at 20 s) is the one whose leaving frees a place.
        assert.deepEqual(await s.limiter.peek(key, 1, MINUTE, t0 + 25_000), { allowed: false, limit: 1, remaining: 0, resetSeconds: 55 });
        assert.deepEqual(await s.limiter.peek(key, 3, MINUTE, t0 + 60_000), { allowed: true, limit: 3, remaining: 1, resetSeconds: 0 }, 'the first hit has left the window');
        assert.equal((await s.limiter.hit(key, 3, MINUTE, t0 + 60_000)).remaining, 0, 'the peeks counted nothing');
      });
    });

    describe('batch jobs', () => {
      const items = (n: number) => Array.from({ length: n }, (_, i) => ({ endpoint: '/v1/snapmsg/profile', params: { username: `user${i}` } }));
      const newJob = async (s: Stores, teamId: string, n: number, now = 1_000, maxActive = 10) =>
        s.jobs.create({ teamId, keyId: 'key_x', test: false, label: 'batch', cacheMaxAge: null, maxPages: 1, items: items(n) }, maxActive, now);

      it('creates, gets and lists jobs newest first; a team at its cap of active jobs gets none', async (s) => {
        const team = await newTeam(s, 10);
        const other = await newTeam(s, 10);
        const first = await newJob(s, team.id, 3, 1_000);
        const second = await newJob(s, team.id, 2, 2_000, 2);
        assert.ok(first && second);
        assert.match(first.id, /^job_/);
        assert.deepEqual(
          { status: first.status, total: first.total, pending: first.pending, succeeded: first.succeeded, pages: first.pages, credits: first.creditsCharged, label: first.label },
          { status: 'queued', total: 3, pending: 3, succeeded: 0, pages: 0, credits: 0, label: 'batch' },
        );
        assert.equal(await newJob(s, team.id, 1, 3_000, 2), null, 'two active jobs: the cap of 2 is reached');
        assert.deepEqual(await s.jobs.get(team.id, first.id), first);
        assert.equal(await s.jobs.get(other.id, first.id), null, "another team's job is not found");
        const page1 = await s.jobs.list(team.id, 1);
        assert.deepEqual(page1.jobs.map((job) => job.id), [second.id]);
        assert.ok(page1.next);
        const page2 = await s.jobs.list(team.id, 1, page1.next);
        assert.deepEqual(page2.jobs.map((job) => job.id), [first.id]);
        assert.equal(page2.next, null);
        await assert.rejects(s.jobs.list(team.id, 1, 'nonsense'), RangeError);
      });

      it('claims at most perTeam items of a team at once, and lets teams take turns', async (s) => {
        const big = await newTeam(s, 10);
        const small = await newTeam(s, 10);
        await newJob(s, big.id, 10, 1_000);
        await newJob(s, small.id, 2, 2_000);
        const claimed: string[] = [];
        for (let n = 0; n < 6; n++) {
          const item = await s.jobs.claim(`node-${n}`, 60_000, 5_000 + n, 2);
          if (item) claimed.push(item.teamId);
        }
        assert.equal(claimed.filter((t) => t === big.id).length, 2, 'the big team holds its cap of 2');
        assert.equal(claimed.filter((t) => t === small.id).length, 2, 'the small team got its turns');
        assert.equal(claimed.length, 4, 'both teams at their cap: nothing more');
        assert.deepEqual(claimed.slice(0, 2).sort(), [big.id, small.id].sort(), 'the first two claims went one to each team');
        assert.deepEqual(await s.jobs.depth(), { pending: 8, running: 4 });
      });

      it('claims racing on every connection hold the cap exactly', async (s) => {
        const team = await newTeam(s, 10);
        await newJob(s, team.id, 30);
        const claims = await Promise.all(Array.from({ length: 20 }, (_, n) => s.jobs.claim(`node-${n}`, 60_000, 5_000, 3)));
        assert.equal(claims.filter(Boolean).length, 3);
        assert.equal(new Set(claims.filter(Boolean).map((c) => c?.index)).size, 3, 'three different items');
      });

      it('stores a page with the commit of its credit, ends the item, and the job with its last item (job.completed)', async (s) => {
        const team = await newTeam(s, 10);
        const job = await newJob(s, team.id, 2);
        assert.ok(job);
        for (let n = 0; n < 2; n++) {
          const item = await s.jobs.claim('node-a', 60_000, 5_000, 4);
          assert.ok(item);
          assert.equal(item.jobId, job.id);
          assert.equal(item.index, n, 'oldest item first');
          assert.equal(item.attempts, 1);
          const reservation = await s.ledger.reserve(team.id, 1, `req-${n}`, 100_000);
          assert.ok(reservation.ok);
          assert.deepEqual(await s.jobs.savePage(item, 'node-b', '{"x":0}', reservation.reservationId, 5_000), { saved: false, charged: false }, 'not the owner: nothing stored');
          assert.deepEqual(await s.jobs.savePage(item, 'node-a', `{"n":${n}}`, reservation.reservationId, 5_000), { saved: true, charged: true });
          assert.deepEqual(await s.jobs.savePage(item, 'node-a', `{"cached":${n}}`, null, 5_000), { saved: true, charged: false }, 'a cached page: free');
          assert.equal(await s.jobs.finish(item, 'node-b', { status: 'succeeded' }, 6_000), null);
          assert.ok(await s.jobs.finish(item, 'node-a', { status: 'succeeded' }, 6_000));
        }
        const done = await s.jobs.get(team.id, job.id);
        assert.ok(done);
        assert.deepEqual(
          { status: done.status, pending: done.pending, succeeded: done.succeeded, pages: done.pages, credits: done.creditsCharged, completedAt: done.completedAt },
          { status: 'completed', pending: 0, succeeded: 2, pages: 4, credits: 2, completedAt: 6_000 },
        );
        assert.equal(await assertConsistent(s, team.id), 8);
        assert.equal((await s.ledger.usage(team.id))?.pending, 0, 'every reservation committed');
        const results = await s.jobs.items(job.id, { limit: 10 });
        assert.deepEqual(results.map((r) => [r.index, r.status, r.pages, r.creditsCharged, r.attempts, r.finishedAt]), [
          [0, 'succeeded', ['{"n":0}', '{"cached":0}'], 1, 1, 6_000],
          [1, 'succeeded', ['{"n":1}', '{"cached":1}'], 1, 1, 6_000],
        ]);
        const events = (await s.events.list(team.id)).filter((e) => e.type === 'job.completed');
        assert.equal(events.length, 1);
        assert.equal(events[0]?.data.id, job.id);
        assert.equal(events[0]?.data.status, 'completed');
        assert.equal(await s.jobs.claim('node-a', 60_000, 7_000, 4), null, 'nothing left');
      });

      it("an item's last page is stored with its end: charged once, the item and the job ended, job.completed with the job's last item", async (s) => {
        const team = await newTeam(s, 10);
        const job = await newJob(s, team.id, 2);
        assert.ok(job);
        const first = await s.jobs.claim('node-a', 60_000, 5_000, 4);
        assert.ok(first);
        const reservation = await s.ledger.reserve(team.id, 1, 'req-first', 100_000);
        assert.ok(reservation.ok);
        assert.deepEqual(await s.jobs.saveLastPage(first, 'node-b', '{"x":0}', reservation.reservationId, 6_000), { saved: false, charged: false, ended: null }, 'not the owner: nothing stored');
        assert.deepEqual(await s.jobs.savePage(first, 'node-a', '{"page":1}', null, 5_000), { saved: true, charged: false });
        const saved = await s.jobs.saveLastPage(first, 'node-a', '{"page":2}', reservation.reservationId, 6_000);
        assert.deepEqual(saved, { saved: true, charged: true, ended: null }, 'not the last item of the job');
        const running = await s.jobs.get(team.id, job.id);
        assert.deepEqual([running?.status, running?.pending, running?.succeeded, running?.pages, running?.creditsCharged], ['running', 1, 1, 2, 1]);
        assert.equal((await s.jobs.saveLastPage(first, 'node-a', '{"page":3}', null, 6_000)).saved, false, 'ended: nothing more is stored');
        assert.equal(await s.jobs.finish(first, 'node-a', { status: 'succeeded' }, 6_000), null, 'ended once');
        const second = await s.jobs.claim('node-a', 60_000, 6_000, 4);
        assert.ok(second);
        const last = await s.jobs.saveLastPage(second, 'node-a', '{"only":1}', null, 7_000);
        assert.deepEqual(
          [last.ended?.status, last.ended?.pending, last.ended?.succeeded, last.ended?.pages, last.ended?.creditsCharged, last.ended?.completedAt],
          ['completed', 0, 2, 3, 1, 7_000],
        );
        assert.deepEqual(last.ended, await s.jobs.get(team.id, job.id), 'the job as stored');
        assert.deepEqual((await s.jobs.items(job.id, { limit: 10 })).map((r) => [r.index, r.status, r.pages, r.creditsCharged, r.finishedAt, r.error]), [
          [0, 'succeeded', ['{"page":1}', '{"page":2}'], 1, 6_000, null],
          [1, 'succeeded', ['{"only":1}'], 0, 7_000, null],
        ]);
        assert.equal((await s.ledger.usage(team.id))?.pending, 0, 'the reservation committed');
        assert.equal(await assertConsistent(s, team.id), 9);
        const events = (await s.events.list(team.id)).filter((e) => e.type === 'job.completed');
        assert.deepEqual(events.map((e) => [e.data.id, e.data.status, e.data.pages, e.data.creditsCharged]), [[job.id, 'completed', 3, 1]]);
      });

      it('last pages of a job stored at once: each with its credit, a lost claim among them stores nothing, one of them is told the job ended', async (s) => {
        const team = await newTeam(s, 10);
        const job = await newJob(s, team.id, 4);
        assert.ok(job);
        const items = await s.jobs.claimUpTo('node-a', 60_000, 5_000, 4, 4);
        assert.equal(items.length, 4);
        const reservations: string[] = [];
        for (let n = 0; n < 4; n++) {
          const reservation = await s.ledger.reserve(team.id, 1, `req-${n}`, 100_000);
          assert.ok(reservation.ok);
          reservations.push(reservation.reservationId);
        }
        const results = await Promise.all(
          items.map((item, n) => s.jobs.saveLastPage(item, n === 3 ? 'node-lost' : 'node-a', `{"n":${n}}`, reservations[n] as string, 6_000 + n)),
        );
        assert.deepEqual(results.map((r) => [r.saved, r.charged]), [[true, true], [true, true], [true, true], [false, false]]);
        assert.equal(results.filter((r) => r.ended).length, 0, 'one item is still running');
        assert.equal((await s.ledger.refund(reservations[3] as string)).refunded, true, 'the lost claim refunds its credit');
        const fourth = items[3];
        assert.ok(fourth);
        const last = await s.jobs.saveLastPage(fourth, 'node-a', '{"n":3}', null, 7_000);
        assert.deepEqual([last.saved, last.charged, last.ended?.status, last.ended?.succeeded, last.ended?.pages, last.ended?.creditsCharged], [true, false, 'completed', 4, 4, 3]);
        assert.deepEqual((await s.jobs.items(job.id, { limit: 10 })).map((r) => [r.index, r.status, r.pages, r.creditsCharged, r.finishedAt]), [
          [0, 'succeeded', ['{"n":0}'], 1, 6_000],
          [1, 'succeeded', ['{"n":1}'], 1, 6_001],
          [2, 'succeeded', ['{"n":2}'], 1, 6_002],
          [3, 'succeeded', ['{"n":3}'], 0, 7_000],
        ]);
        assert.equal(await assertConsistent(s, team.id), 7);
        assert.equal((await s.events.list(team.id)).filter((e) => e.type === 'job.completed').length, 1);
      });

      it('a page whose reservation was refunded as abandoned is stored free', async (s) => {
        const team = await newTeam(s, 10);
        await newJob(s, team.id, 1);
        const item = await s.jobs.claim('node-a', 60_000, 5_000, 4);
        assert.ok(item);
        const reservation = await s.ledger.reserve(team.id, 1, 'req-late', 10);
        assert.ok(reservation.ok);
        assert.equal(await s.ledger.refundExpired(1_000), 1);
        assert.deepEqual(await s.jobs.savePage(item, 'node-a', '{}', reservation.reservationId, 5_000), { saved: true, charged: false });
        assert.equal(await assertConsistent(s, team.id), 10);
      });

      it('cancel ends the items not started; the job ends with its running ones', async (s) => {
        const team = await newTeam(s, 10);
        const job = await newJob(s, team.id, 5);
        assert.ok(job);
        const running = await s.jobs.claim('node-a', 60_000, 5_000, 4);
        assert.ok(running);
        const cancelled = await s.jobs.cancel(team.id, job.id, 6_000);
        assert.ok(cancelled);
        assert.deepEqual([cancelled.status, cancelled.pending, cancelled.cancelled, cancelled.completedAt], ['cancelled', 1, 4, null]);
        assert.equal(await s.jobs.claim('node-b', 60_000, 6_000, 4), null, 'cancelled items never run');
        assert.ok(await s.jobs.finish(running, 'node-a', { status: 'succeeded' }, 7_000));
        const ended = await s.jobs.get(team.id, job.id);
        assert.deepEqual([ended?.status, ended?.pending, ended?.succeeded, ended?.completedAt], ['cancelled', 0, 1, 7_000]);
        assert.deepEqual((await s.jobs.items(job.id, { limit: 10, status: 'cancelled' })).map((i) => i.index), [1, 2, 3, 4]);
        assert.equal((await s.events.list(team.id)).filter((e) => e.type === 'job.completed').length, 1);
      });

      it('retry queues the failed items again, and is refused while the job runs', async (s) => {
        const team = await newTeam(s, 10);
        const job = await newJob(s, team.id, 2);
        assert.ok(job);
        const a = await s.jobs.claim('node-a', 60_000, 5_000, 4);
        assert.ok(a);
        assert.equal(await s.jobs.retry(team.id, job.id, 5_000), 'running');
        await s.jobs.finish(a, 'node-a', { status: 'failed', error: { code: 'INSUFFICIENT_CREDITS', message: 'no credits' } }, 6_000);
        const b = await s.jobs.claim('node-a', 60_000, 6_000, 4);
        assert.ok(b);
        await s.jobs.finish(b, 'node-a', { status: 'succeeded' }, 6_000);
        const failed = await s.jobs.items(job.id, { limit: 10, status: 'failed' });
        assert.deepEqual(failed.map((i) => [i.index, i.error]), [[0, { code: 'INSUFFICIENT_CREDITS', message: 'no credits' }]]);
        const retried = await s.jobs.retry(team.id, job.id, 7_000);
        assert.ok(retried && retried !== 'running');
        assert.deepEqual([retried.status, retried.pending, retried.failed, retried.succeeded, retried.completedAt], ['queued', 1, 0, 1, null]);
        const again = await s.jobs.claim('node-a', 60_000, 7_000, 4);
        assert.deepEqual([again?.index, again?.attempts], [0, 1]);
        assert.equal(await s.jobs.retry('team-nope', job.id, 7_000), null);
      });

      clocked('an item whose node died is taken up by another once its lock expires; the dead one can no longer store', async (s) => {
        const team = await newTeam(s, 10);
        const job = await newJob(s, team.id, 1);
        assert.ok(job);
        const first = await s.jobs.claim('dead-node', 10_000, 5_000, 1);
        assert.ok(first);
        assert.equal(await s.jobs.renew(first, 'dead-node', 20_000), true);
        assert.equal(await s.jobs.rescue(15_000), 0, 'lock still held');
        assert.equal(await s.jobs.claim('live-node', 80_000, 15_000, 1), null, 'the team is at its cap of 1');
        assert.equal(await s.jobs.rescue(25_000), 1);
        const second = await s.jobs.claim('live-node', 80_000, 25_000, 1);
        assert.ok(second, 'taken up again, the cap counted right');
        assert.deepEqual([second.index, second.attempts], [0, 2]);
        assert.equal(await s.jobs.renew(first, 'dead-node', 90_000), false);
        assert.equal((await s.jobs.savePage(first, 'dead-node', '{}', null, 26_000)).saved, false);
        assert.ok(await s.jobs.finish(second, 'live-node', { status: 'succeeded' }, 27_000));
        assert.equal((await s.jobs.get(team.id, job.id))?.status, 'completed');
      });

      clocked('a requeued item waits for its next attempt; a given-back claim is not counted as one', async (s) => {
        const team = await newTeam(s, 10);
        await newJob(s, team.id, 1);
        const item = await s.jobs.claim('node-a', 60_000, 5_000, 4);
        assert.ok(item);
        assert.equal(await s.jobs.requeue(item, 'node-a', 9_000, { code: 'UPSTREAM_ERROR', message: 'down' }), true);
        assert.equal(await s.jobs.claim('node-a', 60_000, 8_000, 4), null, 'not before its next attempt');
        const again = await s.jobs.claim('node-a', 60_000, 9_000, 4);
        assert.equal(again?.attempts, 2);
        assert.ok(again);
        assert.equal(await s.jobs.requeue(again, 'node-a', 9_000, null, true), true);
        assert.equal((await s.jobs.claim('node-a', 60_000, 9_000, 4))?.attempts, 2, 'the given-back claim is not an attempt');
      });

      clocked('a run that goes on from stored pages gets the last of them', async (s) => {
        const team = await newTeam(s, 10);
        await newJob(s, team.id, 1);
        const item = await s.jobs.claim('node-a', 10_000, 5_000, 4);
        assert.ok(item);
        assert.deepEqual([item.storedPages, item.lastPage], [0, null]);
        await s.jobs.savePage(item, 'node-a', '{"page":1}', null, 5_000);
        await s.jobs.savePage(item, 'node-a', '{"page":2}', null, 5_000);
        await s.jobs.rescue(20_000);
        const again = await s.jobs.claim('node-b', 80_000, 20_000, 4);
        assert.deepEqual([again?.storedPages, again?.lastPage], [2, '{"page":2}']);
      });

      it('prunes the jobs that ended before a time, with their items', async (s) => {
        const team = await newTeam(s, 10);
        const old = await newJob(s, team.id, 1, 1_000);
        const open = await newJob(s, team.id, 1, 2_000);
        assert.ok(old && open);
        const item = await s.jobs.claim('node-a', 60_000, 2_500, 1);
        assert.ok(item && item.jobId === old.id, 'the older job first');
        await s.jobs.finish(item, 'node-a', { status: 'succeeded' }, 3_000);
        assert.equal(await s.jobs.prune(3_000), 0, 'ended at 3000, not before');
        assert.equal(await s.jobs.prune(3_001), 1);
        assert.equal(await s.jobs.get(team.id, old.id), null);
        assert.deepEqual(await s.jobs.items(old.id, { limit: 10 }), []);
        assert.ok(await s.jobs.get(team.id, open.id), 'the open job stays');
      });
    });
  });
}
