// Idempotency keys: a request's first 2xx answer, kept to be replayed to the same request.

/** Where an `Idempotency-Key` holds: one team, one key mode (live or test), the key itself. */
export interface IdempotencyScope {
  teamId: string;
  test: boolean;
  key: string;
}

/** A 2xx answer kept for an `Idempotency-Key`, replayed byte for byte. */
export interface KeptAnswer {
  status: number;
  /** Kept and given back as it is (the service keeps its answers compressed). */
  body: Buffer;
  /** The `location` header it carried; null when none. */
  location: string | null;
}

/**
 * What a claim of a key found: `claimed` (the caller runs the request), `kept` (an answer of
 * the same request is kept), `running` (the same request is still being answered) or `reused`
 * (the key belongs to a different request, kept or running).
 */
export type IdempotencyClaim = { outcome: 'claimed' } | { outcome: 'kept'; answer: KeptAnswer } | { outcome: 'running' } | { outcome: 'reused' };

/**
 * The records of `Idempotency-Key`s. A key is held by one request at a time: claimed while it
 * runs (until a lock deadline, after which a node that died is assumed gone and the key may be
 * claimed again), then either kept with its answer until an expiry or released. Exact under
 * races, across nodes.
 */
export interface IdempotencyStore {
  /**
   * Claims the key for a request with `fingerprint`, run by `owner` (its request id), locked
   * until `lockedUntil` (epoch ms); unless a record holds it at `now`: a kept answer before its
   * expiry, or a claim before its lock deadline.
   */
  claim(scope: IdempotencyScope, fingerprint: string, owner: string, lockedUntil: number, now: number): Promise<IdempotencyClaim>;
  /** Keeps the answer of the claim `owner` holds, until `expiresAt` (epoch ms); false when the claim is no longer its own. */
  keep(scope: IdempotencyScope, owner: string, answer: KeptAnswer, expiresAt: number): Promise<boolean>;
  /** Frees the key of the claim `owner` holds (its request ended without a 2xx); no-op when the claim is not its own. */
  release(scope: IdempotencyScope, owner: string): Promise<void>;
  /** Deletes the records that no longer hold their key at `now` (expired answers, claims past their deadline); returns how many. */
  prune(now: number): Promise<number>;
}
