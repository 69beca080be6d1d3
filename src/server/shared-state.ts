// The platforms' shared state (SharedState in endpoints/types.ts), one namespace per platform:
// in the stores' key-value store and flights on a cluster (Redis), in this process otherwise.
import type { SharedState } from '../endpoints/types.ts';
import type { Flights, KeyValue, Stores } from '../store/types.ts';
import { isUpstreamOutcome, UpstreamOutcome, type OutcomeKind } from '../upstream/outcomes.ts';

/** Values in this process's memory, dropped when their time is up. */
class MemoryKeyValue implements KeyValue {
  readonly #values = new Map<string, { value: string; expires: number }>();

  async get(key: string): Promise<string | null> {
    const held = this.#values.get(key);
    if (!held) return null;
    if (held.expires <= Date.now()) {
      this.#values.delete(key);
      return null;
    }
    return held.value;
  }

  async set(key: string, value: string | null, ttlMs: number): Promise<void> {
    if (value === null) this.#values.delete(key);
    else this.#values.set(key, { value, expires: Date.now() + ttlMs });
  }
}

/** A load's outcome as it travels to the callers waiting on other nodes. */
type Outcome = { ok: true; value: unknown } | { ok: false; kind: OutcomeKind; platform: string; message: string };

export function sharedStates(stores: Pick<Stores, 'kv' | 'flights'>): (platform: string) => SharedState {
  const kv = stores.kv ?? new MemoryKeyValue();
  const flights: Flights | undefined = stores.flights;
  const inProcess = new Map<string, Promise<unknown>>();
  const states = new Map<string, SharedState>();

  const acrossNodes = async <T>(key: string, deadline: number, load: () => Promise<T>): Promise<T> => {
    if (!flights) return load();
    let failure: { error: unknown } | null = null;
    const serialised = await flights.join(`state:${key}`, deadline, async () => {
      let outcome: Outcome;
      try {
        outcome = { ok: true, value: await load() };
      } catch (error) {
        failure = { error };
        const known = isUpstreamOutcome(error) ? error : new UpstreamOutcome('transient', key.slice(0, key.indexOf(':')), 'the shared load failed');
        outcome = { ok: false, kind: known.kind, platform: known.platform, message: known.message };
      }
      return JSON.stringify(outcome);
    });
    if (failure) throw (failure as { error: unknown }).error;
    const outcome = JSON.parse(serialised) as Outcome;
    if (!outcome.ok) throw new UpstreamOutcome(outcome.kind, outcome.platform, outcome.message);
    return outcome.value as T;
  };

  return (platform) => {
    let state = states.get(platform);
    if (state) return state;
    state = {
      async get(name) {
        const value = await kv.get(`${platform}:${name}`);
        return value === null ? null : (JSON.parse(value) as unknown);
      },
      async set(name, value, ttlMs) {
        await kv.set(`${platform}:${name}`, value === null ? null : JSON.stringify(value), ttlMs);
      },
      once<T>(name: string, deadline: number, load: () => Promise<T>): Promise<T> {
        const key = `${platform}:${name}`;
        const running = inProcess.get(key);
        if (running) return running as Promise<T>;
        const started = acrossNodes(key, deadline, load).finally(() => inProcess.delete(key));
        inProcess.set(key, started);
        return started;
      },
    };
    states.set(platform, state);
    return state;
  };
}
