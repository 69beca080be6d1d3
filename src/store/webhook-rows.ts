// Webhook rows as both stores read them (the same columns in SQLite and PostgreSQL), and the
// rules of a fan-out that do not depend on the engine.
import type { AccountEvent, WebhookAttempt, WebhookDelivery, WebhookEndpoint } from './types.ts';

type Row = Record<string, unknown>;

const iso = (value: unknown): string => (value instanceof Date ? value.toISOString() : String(value));
const num = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

export const ENDPOINT_COLUMNS =
  'id, team_id, url, events, description, enabled, disabled_reason, disabled_at, created_at, secret, previous_secret, previous_secret_until, failing_since';

export const toEndpoint = (r: Row): WebhookEndpoint => ({
  id: r.id as string,
  teamId: r.team_id as string,
  url: r.url as string,
  events: (typeof r.events === 'string' ? JSON.parse(r.events) : r.events) as string[],
  description: (r.description as string | null) ?? null,
  enabled: r.enabled === true || Number(r.enabled) === 1,
  disabledReason: (r.disabled_reason as string | null) ?? null,
  disabledAt: r.disabled_at === null || r.disabled_at === undefined ? null : iso(r.disabled_at),
  createdAt: iso(r.created_at),
  secret: r.secret as string,
  previousSecret: (r.previous_secret as string | null) ?? null,
  previousSecretUntil: num(r.previous_secret_until),
  failingSince: num(r.failing_since),
});

export const DELIVERY_COLUMNS = 'seq, id, endpoint_id, team_id, event_id, event_type, payload, state, attempts, next_attempt_at, created_at';

export const toDelivery = (r: Row): WebhookDelivery => ({
  id: r.id as string,
  endpointId: r.endpoint_id as string,
  teamId: r.team_id as string,
  eventId: r.event_id as string,
  eventType: r.event_type as string,
  payload: r.payload as string,
  state: r.state as WebhookDelivery['state'],
  attempts: Number(r.attempts),
  nextAttemptAt: num(r.next_attempt_at),
  createdAt: iso(r.created_at),
});

export const toAttempt = (r: Row): WebhookAttempt => ({
  at: iso(r.at),
  status: num(r.status),
  durationMs: Number(r.duration_ms),
  response: r.response as string,
  error: (r.error as string | null) ?? null,
});

/** The body every attempt of the event's deliveries sends. */
export const payloadOf = (event: AccountEvent): string => JSON.stringify({ type: event.type, timestamp: event.createdAt, data: event.data });

/**
 * The endpoints (of the event's team) an event goes to: a `webhook.test` event to the one its
 * `data.webhookId` names; any other to each enabled endpoint subscribed to its type (or `*`)
 * that existed when it happened.
 */
export function targetsOf(event: AccountEvent, endpoints: readonly WebhookEndpoint[]): WebhookEndpoint[] {
  if (event.type === 'webhook.test') return endpoints.filter((endpoint) => endpoint.id === event.data.webhookId);
  const at = Date.parse(event.createdAt);
  return endpoints.filter((endpoint) => endpoint.enabled && Date.parse(endpoint.createdAt) <= at && (endpoint.events.includes('*') || endpoint.events.includes(event.type)));
}

export const DISABLED_REASON = 'Every delivery failed for too long; a delivered test or redelivery enables it again.';
