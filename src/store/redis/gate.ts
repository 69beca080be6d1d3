// The door of a cluster's API requests in one Redis round trip (PostgreSQL + Redis).
//
// A node remembers the keys it has seen (hash → key, team, the team's `keys_version`). Redis
// holds a copy of each team's versions and balance (`<prefix>team:<id>`: `keys`, `balance`,
// `credits`), and one Lua script checks the remembered version against the copy and counts the
// request in the team's rolling window, answering the balance with the decision. A cache hit
// thus needs nothing from PostgreSQL.
//
// Exactness:
// - A revocation or settings change raises `keys_version` in PostgreSQL, and the command that
//   made it returns only once the copy in Redis has the new version (accounts.ts awaits the
//   watcher). Every request that starts later finds its node's memory stale, reads the key from
//   PostgreSQL and is refused. A copy is only ever raised (never lowered) by a version, so a node
//   holding an older read cannot undo it.
// - A copy missing (Redis restarted empty, or expired) or older than the node's memory never
//   admits by memory: the key is read from PostgreSQL, and the copy refilled from that read.
// - A node that fails to reach Redis forgets every key, so that a copy it could not see change
//   meanwhile is never trusted.
// - Balances: every change of credits in PostgreSQL raises `balance_version` and writes the copy
//   (set if newer). A write lost to an outage leaves the copy behind until the team's next change
//   or until it expires (COPY_TTL_MS); the balance in `meta.creditsRemaining` of a cache hit can
//   lag by that much then, never a charge.
import type { Redis } from 'ioredis';
import type { FoundKey, PostgresAccountStore, TeamWatcher } from '../postgres/index.ts';
import type { Admission, Gate, RateLimiter } from '../types.ts';
import type { RedisConnection } from './client.ts';
import { teamWindow } from '../gate.ts';
import { decisionOf, Members, rateKeyPrefix, WINDOW_LUA } from './limiter.ts';

/** How long a team's copy lives after its last write. */
export const COPY_TTL_MS = 60_000;
/** Keys a node remembers; beyond, the longest remembered is forgotten first. */
const MEMORY_SIZE = 10_000;
/** Reads of a key from PostgreSQL before one request gives up on the copy in Redis and counts through the limiter. */
const ATTEMPTS = 3;

const RAISE_LUA = `
local function raise(team, field, version, ttl, ...)
  local current = tonumber(redis.call('HGET', team, field))
  if current == nil or tonumber(version) > current then redis.call('HSET', team, field, version, ...) end
  redis.call('PEXPIRE', team, ttl)
end
`;

// KEYS: the team's window, its copy. ARGV: limit, window, now, member, the keys version the node
// holds, then (a refill from PostgreSQL, or '') the balance version, the credits, and the TTL.
const ADMIT = `${WINDOW_LUA}${RAISE_LUA}
local copy = KEYS[2]
if ARGV[6] ~= '' then
  raise(copy, 'keys', ARGV[5], ARGV[8])
  raise(copy, 'balance', ARGV[6], ARGV[8], 'credits', ARGV[7])
end
local held = redis.call('HMGET', copy, 'keys', 'credits')
if held[1] ~= ARGV[5] or not held[2] then return {-1} end
local counted = countIn(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4])
counted[4] = held[2]
return counted
`;

// KEYS: the team's copy. ARGV: the version field, the version, the TTL, then the fields it versions.
const RAISE = `${RAISE_LUA}
raise(KEYS[1], ARGV[1], ARGV[2], ARGV[3], unpack(ARGV, 4))
`;

interface Scripts extends Redis {
  gateAdmit(window: string, copy: string, ...args: (string | number)[]): Promise<[number, number?, string?, string?]>;
  gateRaise(copy: string, ...args: (string | number)[]): Promise<null>;
}

export class RedisGate implements Gate, TeamWatcher {
  readonly #redis: Scripts;
  readonly #call: RedisConnection['call'];
  readonly #accounts: PostgresAccountStore;
  readonly #limiter: RateLimiter;
  readonly #windows: string;
  readonly #copies: string;
  readonly #members = new Members();
  readonly #known = new Map<string, FoundKey>();

  constructor({ redis, call }: RedisConnection, prefix: string, accounts: PostgresAccountStore, limiter: RateLimiter) {
    redis.defineCommand('gateAdmit', { numberOfKeys: 2, lua: ADMIT });
    redis.defineCommand('gateRaise', { numberOfKeys: 1, lua: RAISE });
    this.#redis = redis as Scripts;
    this.#call = call;
    this.#accounts = accounts;
    this.#limiter = limiter;
    this.#windows = rateKeyPrefix(prefix);
    this.#copies = `${prefix}team:`;
  }

  async admit(hash: string, windowMs: number, now: number): Promise<Admission | null> {
    let known = this.#known.get(hash);
    let refill = false;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (known === undefined) {
        const found = await this.#accounts.findActiveKey(hash);
        if (found === null) return null;
        known = found;
        refill = true;
      }
      const held: FoundKey = known;
      const { team, versions } = held;
      const member = this.#members.next(now);
      const args = refill ? [versions.balance, team.credits, COPY_TTL_MS] : ['', '', ''];
      const answer = await this.#redisCall(() =>
        this.#redis.gateAdmit(this.#windows + teamWindow(held), this.#copies + team.id, team.rateLimit, windowMs, now, member, versions.keys, ...args),
      );
      if (answer[0] !== -1) {
        this.#remember(hash, held);
        const decision = decisionOf(team.rateLimit, windowMs, now, answer as [number, number, string]);
        return { key: held.key, hash, team: { ...team, credits: Number(answer[3]) }, decision };
      }
      // The copy moved on (or is gone): what this node holds may be stale.
      this.#known.delete(hash);
      known = undefined;
    }
    // The copy kept changing under three reads in a row: admit by this last read alone.
    const found = await this.#accounts.findActiveKey(hash);
    if (found === null) return null;
    return { ...found, decision: await this.#limiter.hit(teamWindow(found), found.team.rateLimit, windowMs, now) };
  }

  async keysChanged(teamId: string, keysVersion: number): Promise<void> {
    await this.#redisCall(() => this.#redis.gateRaise(this.#copies + teamId, 'keys', keysVersion, COPY_TTL_MS));
  }

  balanceChanged(teamId: string, balanceVersion: number, credits: number): void {
    this.#redisCall(() => this.#redis.gateRaise(this.#copies + teamId, 'balance', balanceVersion, COPY_TTL_MS, 'credits', credits)).catch(() => {});
  }

  /** Keys remembered now (for tests). */
  get remembered(): number {
    return this.#known.size;
  }

  #remember(hash: string, found: FoundKey): void {
    if (this.#known.has(hash)) return;
    if (this.#known.size >= MEMORY_SIZE) this.#known.delete(this.#known.keys().next().value as string);
    this.#known.set(hash, found);
  }

  /** A Redis call; failing, this node forgets every key (it cannot have seen the copies change). */
  async #redisCall<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await this.#call(fn);
    } catch (error) {
      this.#known.clear();
      throw error;
    }
  }
}
