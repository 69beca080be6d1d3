// Single-flight across nodes: identical live scrapes in flight on different nodes share one
// upstream fetch.
//
// The first node to take the flight's lock (SET NX, with a token of its own as the value)
// scrapes; while it does, it renews the lock every second (it lapses 3 s after a holder dies).
// Its outcome is kept for a few seconds under a result key named after its token, and published
// on the flight's channel. Another node that finds the lock taken reads the holder's token,
// subscribes to the channel, then reads that holder's result key (the outcome may have been
// published before it subscribed), and waits. If the lock lapses with no outcome (the holder
// died), the waiter takes the flight itself; so it does if its own deadline comes first.
import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Flights } from '../types.ts';
import type { RedisConnection } from './client.ts';

const LOCK_MS = 3_000;
const RENEW_MS = 1_000;
/** How long an outcome stays readable after it is published (for waiters that subscribed late). */
const RESULT_MS = 10_000;

// Publishes the outcome and releases the lock only while this holder still owns it.
const FINISH = `
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
redis.call('PUBLISH', KEYS[3], ARGV[2])
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`;
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;

interface FlightCommands extends Redis {
  flightFinish(lock: string, result: string, channel: string, token: string, outcome: string, resultMs: number): Promise<number>;
  flightRenew(lock: string, token: string, lockMs: number): Promise<number>;
}

export class RedisFlights implements Flights {
  readonly #redis: FlightCommands;
  readonly #call: RedisConnection['call'];
  readonly #subscriber: Redis;
  readonly #prefix: string;
  /** Channel -> the listeners of this node's waiters on it. */
  readonly #waiters = new Map<string, Set<(outcome: string) => void>>();

  constructor({ redis, call }: RedisConnection, prefix: string) {
    this.#call = call;
    redis.defineCommand('flightFinish', { numberOfKeys: 3, lua: FINISH });
    redis.defineCommand('flightRenew', { numberOfKeys: 1, lua: RENEW });
    this.#redis = redis as FlightCommands;
    this.#prefix = `${prefix}flight:`;
    this.#subscriber = redis.duplicate();
    this.#subscriber.on('error', () => {});
    this.#subscriber.on('messageBuffer', (channel: Buffer, message: Buffer) => {
      const waiters = this.#waiters.get(channel.toString());
      if (!waiters) return;
      const outcome = message.toString();
      for (const wake of waiters) wake(outcome);
    });
  }

  async join(key: string, deadline: number, run: () => Promise<string>): Promise<string> {
    const id = createHash('sha256').update(key).digest('base64url');
    const lock = `${this.#prefix}${id}:lock`;
    const resultOf = (holder: string) => `${this.#prefix}${id}:result:${holder}`;
    const channel = `${this.#prefix}${id}:done`;
    const token = randomBytes(12).toString('base64url');
    for (;;) {
      if ((await this.#call(() => this.#redis.set(lock, token, 'PX', LOCK_MS, 'NX'))) === 'OK') {
        return this.#hold(lock, resultOf(token), channel, token, run);
      }
      const holder = await this.#call(() => this.#redis.get(lock));
      if (holder === null) continue; // released meanwhile: try to take it
      const outcome = await this.#wait(lock, holder, resultOf(holder), channel, deadline);
      if (outcome !== null) return outcome;
      // The holder is gone without an outcome, or this request's own time is up: scrape.
      if (Date.now() >= deadline) return run();
    }
  }

  async #hold(lock: string, result: string, channel: string, token: string, run: () => Promise<string>): Promise<string> {
    const renew = setInterval(() => {
      this.#redis.flightRenew(lock, token, LOCK_MS).catch(() => {});
    }, RENEW_MS);
    renew.unref();
    let outcome: string;
    try {
      outcome = await run();
    } finally {
      clearInterval(renew);
    }
    // The waiters fall back to scraping themselves if this fails (the lock lapses).
    await this.#redis.flightFinish(lock, result, channel, token, `${token}\n${outcome}`, RESULT_MS).catch(() => {});
    return outcome;
  }

  /** The outcome of `holder`'s scrape; null when its lock lapsed without one, or at `deadline`. */
  async #wait(lock: string, holder: string, result: string, channel: string, deadline: number): Promise<string | null> {
    let wake!: (outcome: string) => void;
    const published = new Promise<string>((resolve) => {
      wake = resolve;
    });
    // Messages are `token \n outcome`: only this holder's count.
    const listener = (message: string) => {
      const cut = message.indexOf('\n');
      if (message.slice(0, cut) === holder) wake(message.slice(cut + 1));
    };
    let waiters = this.#waiters.get(channel);
    if (!waiters) {
      waiters = new Set();
      this.#waiters.set(channel, waiters);
      await this.#call(() => this.#subscriber.subscribe(channel));
    }
    waiters.add(listener);
    const stored = async () => {
      const message = await this.#call(() => this.#redis.get(result));
      return message === null ? null : message.slice(message.indexOf('\n') + 1);
    };
    try {
      for (;;) {
        const outcome = await stored();
        if (outcome !== null) return outcome;
        // The holder finished (its outcome may have been written between the two reads) or lapsed.
        if ((await this.#call(() => this.#redis.get(lock))) !== holder) return await stored();
        const left = deadline - Date.now();
        if (left <= 0) return null;
        let timer: NodeJS.Timeout | undefined;
        const woken = await Promise.race([
          published,
          new Promise<null>((resolve) => {
            timer = setTimeout(() => resolve(null), Math.min(RENEW_MS, left));
          }),
        ]);
        clearTimeout(timer);
        if (woken !== null) return woken;
      }
    } finally {
      waiters.delete(listener);
      if (waiters.size === 0) {
        this.#waiters.delete(channel);
        this.#subscriber.unsubscribe(channel).catch(() => {});
      }
    }
  }

  close(): void {
    this.#subscriber.disconnect();
  }
}
