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

/**
 * Runs `run` as the one run of `key` in the cluster, or takes the result of the node that runs
 * it. A failure travels as `describe` puts it and is rebuilt with `rebuild` on the other nodes;
 * this node's own failure is rethrown as it was.
 */
export async function joinFlight<T, F>(
  flights: Flights,
  key: string,
  deadline: number,
  run: () => Promise<T>,
  failures: { describe: (error: unknown) => F; rebuild: (failure: F) => Error },
): Promise<T> {
  let own: { error: unknown } | null = null;
  const serialised = await flights.join(key, deadline, async () => {
    try {
      return JSON.stringify({ ok: true, value: await run() });
    } catch (error) {
      own = { error };
      return JSON.stringify({ ok: false, failure: failures.describe(error) });
    }
  });
  if (own) throw (own as { error: unknown }).error;
  const outcome = JSON.parse(serialised) as { ok: true; value: T } | { ok: false; failure: F };
  if (!outcome.ok) throw failures.rebuild(outcome.failure);
  return outcome.value;
}

/** How a failed load of shared state travels: as the upstream outcome it was. */
const upstreamFailures = (platform: string) => ({
  describe: (error: unknown) => {
    const known = isUpstreamOutcome(error) ? error : new UpstreamOutcome('transient', platform, 'the shared load failed');
    return { kind: known.kind, message: known.message };
  },
  rebuild: (failure: { kind: OutcomeKind; message: string }) => new UpstreamOutcome(failure.kind, platform, failure.message),
});

export function sharedStates(stores: Pick<Stores, 'kv' | 'flights'>): (platform: string) => SharedState {
  const kv = stores.kv ?? new MemoryKeyValue();
  const flights: Flights | undefined = stores.flights;
  const inProcess = new Map<string, Promise<unknown>>();
  const states = new Map<string, SharedState>();

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
        const loaded = flights ? joinFlight(flights, `state:${key}`, deadline, load, upstreamFailures(platform)) : load();
        const started = loaded.finally(() => inProcess.delete(key));
        inProcess.set(key, started);
        return started;
      },
    };
    states.set(platform, state);
    return state;
  };
}
