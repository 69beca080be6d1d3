// The platforms' shared state in Redis: small JSON values with a time to live.
import type { KeyValue } from '../types.ts';
import type { RedisConnection } from './client.ts';

export class RedisKeyValue implements KeyValue {
  readonly #connection: RedisConnection;
  readonly #prefix: string;

  constructor(connection: RedisConnection, prefix: string) {
    this.#connection = connection;
    this.#prefix = `${prefix}state:`;
  }

  get(key: string): Promise<string | null> {
    const { redis, call } = this.#connection;
    return call(() => redis.get(this.#prefix + key));
  }

  async set(key: string, value: string | null, ttlMs: number): Promise<void> {
    const { redis, call } = this.#connection;
    if (value === null) await call(() => redis.del(this.#prefix + key));
    else await call(() => redis.set(this.#prefix + key, value, 'PX', Math.max(1, Math.trunc(ttlMs))));
  }
}
