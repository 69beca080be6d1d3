// Storage interfaces. The embedded default (SQLite, in-process) and the scale-out
// implementations (PostgreSQL, Redis) implement these and pass the same behaviour suite.
// Nothing here may assume a particular engine.
// Each area of storage is a file of src/store/types/; this module gathers them.
export * from './types/accounts.ts';
export * from './types/ledger.ts';
export * from './types/cache.ts';
export * from './types/rate-limit.ts';
export * from './types/users.ts';
export * from './types/gate.ts';
export * from './types/requests.ts';
export * from './types/drift.ts';
export * from './types/shared-state.ts';
export * from './types/events.ts';
export * from './types/idempotency.ts';
export * from './types/webhooks.ts';
export * from './types/monitors.ts';
export * from './types/stores.ts';
export * from './types/jobs.ts';
