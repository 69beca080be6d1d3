// The cache of a cluster in two tiers: PostgreSQL holds every entry (durable, bounded by
// CACHE_MAX_BYTES and age, postgres/cache.ts); Redis holds the most recently stored ones,
// bounded by REDIS_CACHE_MAX_BYTES, so that a cache hit reads Redis alone. An entry read from
// PostgreSQL is copied into Redis for the next hit.
//
// In Redis (`<prefix>cache:`): `e:<key>` the entry (`<storedAt>\n<data>`), `t:<target>` the keys
// of a target, `stored` every key by the time its entry was scraped, `used` by the time it was
// last read or written, `meta` each key's size and target, `bytes` their total. Each operation is
// one Lua script, atomic. Beyond the bound, the least recently used entries go first, as in
// PostgreSQL (whose access times Redis's reads also update).
//
// A target deleted (after a 404) leaves a mark for an hour: an entry of that target scraped
// before the deletion is not copied into Redis again, so that a node that read it from
// PostgreSQL just before the deletion cannot bring it back. An entry never replaces one scraped
// later.
import type { Redis } from 'ioredis';
import type { DurableCache } from '../postgres/cache.ts';
import { entryBytes, type CacheEntry, type CachedEntry, type CacheStore } from '../types.ts';
import type { RedisConnection } from './client.ts';

/** How long a deleted target's mark keeps older entries of it out of Redis. */
const GONE_MS = 60 * 60 * 1000;
/** Entries dropped from Redis per script run when pruning by age. */
const PRUNE_BATCH = 500;

const DROP_LUA = `
local base = ARGV[1]
local function drop(key)
  local meta = redis.call('HGET', base .. 'meta', key)
  if not meta then return 0 end
  local space = string.find(meta, ' ', 1, true)
  local size = tonumber(string.sub(meta, 1, space - 1))
  redis.call('DEL', base .. 'e:' .. key)
  redis.call('SREM', base .. 't:' .. string.sub(meta, space + 1), key)
  redis.call('ZREM', base .. 'stored', key)
  redis.call('ZREM', base .. 'used', key)
  redis.call('HDEL', base .. 'meta', key)
  redis.call('DECRBY', base .. 'bytes', size)
  return size
end
`;

// ARGV: base, key, now. Answers the entry, or nil.
const GET = `
local entry = redis.call('GET', ARGV[1] .. 'e:' .. ARGV[2])
if entry then redis.call('ZADD', ARGV[1] .. 'used', ARGV[3], ARGV[2]) end
return entry
`;

// ARGV: base, key, target, storedAt, payload, max bytes, now. Answers 1 when stored.
const SET = `${DROP_LUA}
local key, target, stored = ARGV[2], ARGV[3], tonumber(ARGV[4])
local gone = tonumber(redis.call('GET', base .. 'gone:' .. target))
if gone and stored <= gone then return 0 end
local held = tonumber(redis.call('ZSCORE', base .. 'stored', key))
if held and held > stored then return 0 end
drop(key)
local size = #ARGV[5] + #key
if size > tonumber(ARGV[6]) then return 0 end
redis.call('SET', base .. 'e:' .. key, ARGV[5])
redis.call('SADD', base .. 't:' .. target, key)
redis.call('ZADD', base .. 'stored', stored, key)
redis.call('ZADD', base .. 'used', ARGV[7], key)
redis.call('HSET', base .. 'meta', key, size .. ' ' .. target)
local total = redis.call('INCRBY', base .. 'bytes', size)
while total > tonumber(ARGV[6]) do
  local oldest = redis.call('ZRANGE', base .. 'used', 0, 0)[1]
  if not oldest then break end
  total = total - drop(oldest)
end
return 1
`;

// ARGV: base, target, now.
const DELETE_TARGET = `${DROP_LUA}
for _, key in ipairs(redis.call('SMEMBERS', base .. 't:' .. ARGV[2])) do drop(key) end
redis.call('DEL', base .. 't:' .. ARGV[2])
redis.call('SET', base .. 'gone:' .. ARGV[2], ARGV[3], 'PX', ${GONE_MS})
`;

// ARGV: base, scraped before (epoch ms), batch. Answers how many were dropped.
const PRUNE = `${DROP_LUA}
local old = redis.call('ZRANGEBYSCORE', base .. 'stored', '-inf', '(' .. ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
for _, key in ipairs(old) do drop(key) end
return #old
`;

interface Scripts extends Redis {
  cacheGetBuffer(base: string, key: string, now: number): Promise<Buffer | null>;
  cacheSet(base: string, key: string, target: string, storedAt: number, payload: Buffer, maxBytes: number, now: number): Promise<number>;
  cacheDeleteTarget(base: string, target: string, now: number): Promise<null>;
  cachePrune(base: string, before: number, batch: number): Promise<number>;
}

const NEWLINE = 0x0a;

export class TieredCache implements CacheStore {
  readonly #redis: Scripts;
  readonly #call: RedisConnection['call'];
  readonly #durable: DurableCache;
  readonly #base: string;
  readonly #maxBytes: number;
  readonly #maxAgeMs: number;

  constructor({ redis, call }: RedisConnection, prefix: string, durable: DurableCache, limits: { maxBytes: number; maxAgeMs: number }) {
    // Keys are built inside the scripts from `base`: a single Redis server, not Redis Cluster.
    redis.defineCommand('cacheGet', { numberOfKeys: 0, lua: GET });
    redis.defineCommand('cacheSet', { numberOfKeys: 0, lua: SET });
    redis.defineCommand('cacheDeleteTarget', { numberOfKeys: 0, lua: DELETE_TARGET });
    redis.defineCommand('cachePrune', { numberOfKeys: 0, lua: PRUNE });
    this.#redis = redis as Scripts;
    this.#call = call;
    this.#durable = durable;
    this.#base = `${prefix}cache:`;
    this.#maxBytes = limits.maxBytes;
    this.#maxAgeMs = limits.maxAgeMs;
  }

  async get(key: string): Promise<CachedEntry | null> {
    const now = Date.now();
    const held = await this.#call(() => this.#redis.cacheGetBuffer(this.#base, key, now));
    if (held !== null) {
      const newline = held.indexOf(NEWLINE);
      this.#durable.touch(key, now);
      return { storedAt: Number(held.subarray(0, newline).toString('latin1')), bytes: held.subarray(newline + 1) };
    }
    const entry = await this.#durable.read(key);
    if (entry === null) return null;
    // Copied into Redis for the hits that follow; the answer does not wait for it.
    this.#keep(key, entry.target, entry.storedAt, entry.bytes).catch(() => {});
    return { bytes: entry.bytes, storedAt: entry.storedAt };
  }

  async set(key: string, target: string, entry: CacheEntry, options?: { together?: boolean }): Promise<void> {
    await this.#durable.set(key, target, entry, options);
    await this.#keep(key, target, entry.storedAt, entryBytes(entry));
  }

  async deleteTarget(target: string): Promise<void> {
    await this.#durable.deleteTarget(target);
    await this.#call(() => this.#redis.cacheDeleteTarget(this.#base, target, Date.now()));
  }

  async prune(now: number): Promise<void> {
    await this.#durable.prune(now);
    while ((await this.#call(() => this.#redis.cachePrune(this.#base, now - this.#maxAgeMs, PRUNE_BATCH))) === PRUNE_BATCH);
  }

  async #keep(key: string, target: string, storedAt: number, bytes: Buffer): Promise<void> {
    const payload = Buffer.concat([Buffer.from(`${storedAt}\n`, 'latin1'), bytes]);
    await this.#call(() => this.#redis.cacheSet(this.#base, key, target, storedAt, payload, this.#maxBytes, Date.now()));
  }
}
