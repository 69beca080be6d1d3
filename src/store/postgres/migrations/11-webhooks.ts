// Migration 11 of the PostgreSQL schema (../schema.ts runs them in order). Released: never edited.

export const migration = {
  name: 'webhooks',
  // Endpoints with their signing secrets (kept as they are: they must sign), one delivery per
  // event and endpoint (its id the `webhook-id` of every attempt), each attempt as it went.
  // `events.fanned` says an event was turned into its deliveries (those recorded before this
  // version had no endpoint to go to). Times of the queue are epoch ms.
  sql: `
    ALTER TABLE events ADD COLUMN fanned boolean NOT NULL DEFAULT false;
    UPDATE events SET fanned = true;
    CREATE INDEX events_unfanned ON events (seq) WHERE NOT fanned;
    CREATE TABLE webhook_endpoints (
      id                     text PRIMARY KEY,
      team_id                text NOT NULL REFERENCES teams (id),
      url                    text NOT NULL,
      events                 jsonb NOT NULL,
      description            text,
      enabled                boolean NOT NULL DEFAULT true,
      disabled_reason        text,
      disabled_at            timestamptz,
      created_at             timestamptz NOT NULL DEFAULT now(),
      secret                 text NOT NULL,
      previous_secret        text,
      previous_secret_until  bigint,
      failing_since          bigint
    );
    CREATE INDEX webhook_endpoints_team ON webhook_endpoints (team_id, created_at);
    CREATE TABLE webhook_deliveries (
      seq              bigserial PRIMARY KEY,
      id               text NOT NULL UNIQUE,
      endpoint_id      text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
      team_id          text NOT NULL,
      event_id         text NOT NULL,
      event_type       text NOT NULL,
      payload          text NOT NULL,
      state            text NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
      attempts         integer NOT NULL DEFAULT 0,
      next_attempt_at  bigint,
      lock_owner       text,
      lock_until       bigint,
      created_at       timestamptz NOT NULL DEFAULT now(),
      UNIQUE (event_id, endpoint_id)
    );
    CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
    CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, seq);
    CREATE INDEX webhook_deliveries_locked ON webhook_deliveries (endpoint_id) WHERE lock_until IS NOT NULL;
    CREATE TABLE webhook_attempts (
      id            bigserial PRIMARY KEY,
      delivery_seq  bigint NOT NULL REFERENCES webhook_deliveries (seq) ON DELETE CASCADE,
      at            timestamptz NOT NULL,
      status        integer,
      duration_ms   double precision NOT NULL,
      response      text NOT NULL,
      error         text
    );
    CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_seq, id);
    `,
};
