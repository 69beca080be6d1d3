// The pace of each egress (a proxy, or a node's own address) shared by every node that uses it
// (pacing.ts does it for one node): the concurrency cap as leases in a sorted set (a lease lapses
// by itself if its node dies), and the pace as the next free start time, reserved atomically.
// One Lua script takes a turn on the egress whose turn comes first. A proxy's budget is shared
// by every node that names it; so is the nodes' own address (`direct`), as nodes commonly leave
// through one address (a NAT) and a platform sees them as one client.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { UpstreamOutcome } from '../../upstream/outcomes.ts';
import { DIRECT, type EgressState, type PaceLimits, type PaceSlot, type Pacer } from '../../upstream/pacing.ts';
import type { RedisConnection } from './client.ts';

/** How often a request waiting for a slot asks again. */
const POLL_MS = 25;

// KEYS: per egress, its leases then its next start. ARGV: now, the cap (0: none), the lease's
// expiry, its id, the interval (0: none), the longest wait. Returns {index (1-based), wait in ms};
// {0, -2} when every egress is at its cap, {0, -1} when the first turn comes too late.
const TAKE = `
local now = tonumber(ARGV[1])
local cap = tonumber(ARGV[2])
local interval = tonumber(ARGV[5])
local best = 0
local bestStart = 0
for i = 1, #KEYS, 2 do
  local free = true
  if cap > 0 then
    redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
    free = redis.call('ZCARD', KEYS[i]) < cap
  end
  if free then
    local start = now
    if interval > 0 then start = math.max(now, tonumber(redis.call('GET', KEYS[i + 1]) or '0')) end
    if best == 0 or start < bestStart then
      best = i
      bestStart = start
    end
  end
end
if best == 0 then return {0, -2} end
if bestStart - now > tonumber(ARGV[6]) then return {0, -1} end
if cap > 0 then
  redis.call('ZADD', KEYS[best], ARGV[3], ARGV[4])
  redis.call('PEXPIRE', KEYS[best], math.max(1, tonumber(ARGV[3]) - now))
end
if interval > 0 then
  local after = bestStart + interval
  redis.call('SET', KEYS[best + 1], tostring(after), 'PX', math.ceil(after - now) + 1000)
end
return {(best + 1) / 2, bestStart - now}
`;

interface Scripts extends Redis {
  paceTakeFirst(keyCount: number, ...args: (string | number)[]): Promise<[number, number]>;
}
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });

export class RedisPacer implements Pacer {
  readonly #redis: Scripts;
  readonly #call: RedisConnection['call'];
  readonly #prefix: string;
  readonly #limits: (platform: string) => PaceLimits;
  readonly #queueMax: number;
  /** Requests of this node waiting for a slot, per platform (the queue's bound is per node). */
  readonly #waiting = new Map<string, number>();
  /** This node's view of each egress: waiting, active, and the waits so far. */
  readonly #states = new Map<string, EgressState>();

  constructor({ redis, call }: RedisConnection, prefix: string, limits: (platform: string) => PaceLimits, queueMax: number) {
    redis.defineCommand('paceTakeFirst', { lua: TAKE });
    this.#redis = redis as Scripts;
    this.#call = call;
    this.#prefix = `${prefix}pace:`;
    this.#limits = limits;
    this.#queueMax = queueMax;
  }

  #state(platform: string, egress: string): EgressState {
    const key = `${platform} ${egress}`;
    let state = this.#states.get(key);
    if (!state) this.#states.set(key, (state = { platform, egress, waiting: 0, active: 0, waits: 0, waitedSeconds: 0 }));
    return state;
  }

  async take(platform: string, egresses: readonly string[], deadline: number, signal: AbortSignal): Promise<PaceSlot> {
    const first = egresses[0];
    if (first === undefined) throw new Error('no egress to take a turn on');
    const { maxConcurrency, maxRps } = this.#limits(platform);
    if (maxConcurrency === 0 && maxRps === 0) return { egress: first, release: () => {} };
    const refuse = (why: string) => new UpstreamOutcome('overloaded', platform, why);
    const waiting = this.#waiting.get(platform) ?? 0;
    if (waiting >= this.#queueMax) throw refuse(`too many requests to ${platform} are waiting`);
    this.#waiting.set(platform, waiting + 1);
    const keys = egresses.flatMap((egress) => {
      const base = `${this.#prefix}${platform}:${egress}`;
      return [`${base}:leases`, `${base}:next`];
    });
    const id = randomBytes(9).toString('base64url');
    const from = Date.now();
    const waitingOn = egresses.map((egress) => this.#state(platform, egress));
    for (const state of waitingOn) state.waiting += 1;
    let release = () => {};
    // Set when the turn did not come at once (no free slot yet, or the pace's wait): only then
    // is the take a wait. The round trips to Redis alone are not.
    let queued = false;
    try {
      for (;;) {
        const now = Date.now();
        if (now >= deadline) throw refuse(`${platform} had no free slot before this request's deadline`);
        const [index, wait] = await this.#call(() => this.#redis.paceTakeFirst(keys.length, ...keys, now, maxConcurrency, deadline + 1_000, id, maxRps > 0 ? 1000 / maxRps : 0, deadline - now));
        if (wait === -1) throw refuse(`${platform} is paced and this request's turn would come too late`);
        if (wait === -2) {
          queued = true;
          await sleep(Math.min(POLL_MS, deadline - now), signal);
          continue;
        }
        const egress = egresses[index - 1] ?? first;
        const leases = keys[2 * (index - 1)] as string;
        const state = this.#state(platform, egress);
        let done = false;
        release = () => {
          if (done) return;
          done = true;
          state.active -= 1;
          if (maxConcurrency > 0) this.#call(() => this.#redis.zrem(leases, id)).catch(() => {}); // else it lapses at the deadline
        };
        state.active += 1;
        if (wait > 0) {
          queued = true;
          await sleep(wait, signal);
        }
        if (queued) {
          state.waits += 1;
          state.waitedSeconds += (Date.now() - from) / 1000;
        }
        return { egress, release };
      }
    } catch (error) {
      release();
      throw error;
    } finally {
      for (const state of waitingOn) state.waiting -= 1;
      this.#waiting.set(platform, (this.#waiting.get(platform) ?? 1) - 1);
    }
  }

  async acquire(platform: string, deadline: number, signal: AbortSignal): Promise<() => void> {
    return (await this.take(platform, [DIRECT], deadline, signal)).release;
  }

  states(): EgressState[] {
    return [...this.#states.values()].map((state) => ({ ...state }));
  }
}
