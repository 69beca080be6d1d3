// The account's events (a job completed, a monitor changed, the balance ran low), sent to the
// team's webhooks.

/** The kinds of event a team may be sent (webhooks). */
export const EVENT_TYPES = ['job.completed', 'monitor.changed', 'monitor.failed', 'credits.low', 'credits.exhausted', 'webhook.test'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * Something that happened to a team, recorded to be sent later (webhooks). A row of `events` is
 * an event to send: whatever raises one only records it, in the same transaction as the change
 * it reports when it can, and the webhooks deliver it from there.
 */
export interface AccountEvent {
  /** `evt_…`. */
  id: string;
  teamId: string;
  type: EventType;
  /** `credits.low`: `{ balance, threshold }`; `credits.exhausted`: `{ balance }` (0); others: their own. */
  data: Record<string, unknown>;
  createdAt: string;
}

/**
 * The events recorded for teams, in the order they happened. A balance crossing is recorded by
 * the very change of balance that makes it (in the same statement or transaction), so each is
 * recorded exactly once however many requests race: `credits.low` when a charge takes the
 * balance from `lowBalanceAlert` or above to below it, `credits.exhausted` when a charge takes
 * it to 0; each once, until a top-up takes the balance to `lowBalanceAlert` or above (above 0
 * when none is set), which re-arms both. Refunds neither record nor re-arm.
 */
export interface EventLog {
  /** A team's events, oldest first; at most `limit` (default 100). */
  list(teamId: string, limit?: number): Promise<AccountEvent[]>;
  /** Records an event for a team, now; returns it. */
  record(teamId: string, type: EventType, data: Record<string, unknown>): Promise<AccountEvent>;
}
