// Failing fast while a backend is down. Every call to PostgreSQL or Redis is bounded by a
// timeout, but a request makes several calls in sequence: once one has found the backend
// unavailable, the calls of the next second fail at once instead of each waiting out its own
// timeout, so that a request is answered 503 within the timeout of a single call. The first
// call after that second tries the backend again: the service recovers by itself.
import { StoreUnavailableError } from './types.ts';

const COOL_MS = 1_000;

export class Availability {
  readonly #name: string;
  #downUntil = 0;

  constructor(name: string) {
    this.#name = name;
  }

  async run<T>(call: () => Promise<T>): Promise<T> {
    if (Date.now() < this.#downUntil) throw new StoreUnavailableError(`${this.#name} is unavailable (it failed less than a second ago)`);
    try {
      return await call();
    } catch (error) {
      if (error instanceof StoreUnavailableError) this.#downUntil = Date.now() + COOL_MS;
      throw error;
    }
  }
}
