// Webhook endpoints and deliveries on PostgreSQL, shared by every node.
//
// A claim is one conditional UPDATE … RETURNING: racing nodes compute the same due rows, the
// first locks them, and the others, once that commits, find the lock taken when the WHERE is
// checked again on the row's new version (READ COMMITTED), so each attempt is claimed by one
// node. A node that dies leaves `lock_until` behind; once it passes, the delivery is due again.
// Fan-outs take the events they turn into deliveries with FOR UPDATE SKIP LOCKED, so nodes share
// them out; each delivery is unique per event and endpoint besides.
import type pg from 'pg';
import { toEvent } from '../event-rows.ts';
import { newId } from '../rules.ts';
import type { ClaimedDelivery, WebhookEndpoint, WebhookStore } from '../types.ts';
import { MAX_LISTED_ATTEMPTS } from '../types.ts';
import { DELIVERY_COLUMNS, DISABLED_REASON, ENDPOINT_COLUMNS, payloadOf, targetsOf, toAttempt, toDelivery, toEndpoint } from '../webhook-rows.ts';
import type { Db } from './pool.ts';

type Row = Record<string, unknown>;

/** Rows deleted per statement while pruning. */
const PRUNE_BATCH = 1_000;

const SQL = {
  lockTeam: "SELECT pg_advisory_xact_lock(hashtext('webhooks:' || $1))",
  count: 'SELECT count(*)::int AS n FROM webhook_endpoints WHERE team_id = $1',
  insert: `INSERT INTO webhook_endpoints (id, team_id, url, events, description, secret) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${ENDPOINT_COLUMNS}`,
  get: `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1 AND team_id = $2`,
  list: `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE team_id = $1 ORDER BY created_at, id`,
  // The deliveries and their attempts go with it (ON DELETE CASCADE).
  deleteEndpoint: 'DELETE FROM webhook_endpoints WHERE id = $1 AND team_id = $2',
  rotate: `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_until = $1, secret = $2 WHERE id = $3 AND team_id = $4 RETURNING ${ENDPOINT_COLUMNS}`,
  unfanned: 'SELECT seq, id, team_id, type, data, created_at FROM events WHERE NOT fanned ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED',
  teamEndpoints: `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE team_id = ANY($1)`,
  insertDelivery: `INSERT INTO webhook_deliveries (id, endpoint_id, team_id, event_id, event_type, payload, state, attempts, next_attempt_at)
                   VALUES ($1, $2, $3, $4, $5, $6, 'pending', 0, $7) ON CONFLICT (event_id, endpoint_id) DO NOTHING`,
  fanned: 'UPDATE events SET fanned = true WHERE seq = ANY($1)',
  anyUnfanned: 'SELECT 1 FROM events WHERE NOT fanned LIMIT 1',
  claim: `UPDATE webhook_deliveries SET lock_owner = $1, lock_until = $2
          WHERE seq IN (
            SELECT d.seq FROM (
              SELECT seq, endpoint_id, next_attempt_at, row_number() OVER (PARTITION BY endpoint_id ORDER BY next_attempt_at, seq) AS rn
                FROM webhook_deliveries
               WHERE state = 'pending' AND next_attempt_at <= $3 AND (lock_until IS NULL OR lock_until < $3)
            ) d
            LEFT JOIN (SELECT endpoint_id, count(*) AS n FROM webhook_deliveries WHERE lock_until >= $3 GROUP BY endpoint_id) busy ON busy.endpoint_id = d.endpoint_id
            WHERE d.rn + coalesce(busy.n, 0) <= $5
            ORDER BY d.next_attempt_at, d.seq LIMIT $4)
            AND state = 'pending' AND (lock_until IS NULL OR lock_until < $3)
          RETURNING ${DELIVERY_COLUMNS}`,
  endpointsById: `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = ANY($1)`,
  settle: `UPDATE webhook_deliveries SET state = $1, next_attempt_at = $2, attempts = attempts + 1, lock_owner = NULL, lock_until = NULL
           WHERE id = $3 AND lock_owner = $4 RETURNING seq, endpoint_id`,
  release: 'UPDATE webhook_deliveries SET lock_owner = NULL, lock_until = NULL WHERE id = $1 AND lock_owner = $2',
  attempt: 'INSERT INTO webhook_attempts (delivery_seq, at, status, duration_ms, response, error) VALUES ($1, $2, $3, $4, $5, $6)',
  delivered: 'UPDATE webhook_endpoints SET failing_since = NULL, enabled = true, disabled_reason = NULL, disabled_at = NULL WHERE id = $1',
  failing: 'UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, $1) WHERE id = $2 RETURNING enabled, failing_since',
  disable: 'UPDATE webhook_endpoints SET enabled = false, disabled_reason = $1, disabled_at = now() WHERE id = $2',
  failPending: "UPDATE webhook_deliveries SET state = 'failed', next_attempt_at = NULL WHERE endpoint_id = $1 AND state = 'pending' AND lock_until IS NULL",
  deliveries: `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE endpoint_id = $1 AND team_id = $2 AND seq < $3 ORDER BY seq DESC LIMIT $4`,
  attempts: `SELECT delivery_seq, at, status, duration_ms, response, error FROM (
               SELECT *, row_number() OVER (PARTITION BY delivery_seq ORDER BY id DESC) AS rn FROM webhook_attempts WHERE delivery_seq = ANY($1)
             ) a WHERE rn <= $2 ORDER BY delivery_seq, id DESC`,
  redeliver: `UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = $1 WHERE id = $2 AND team_id = $3 RETURNING ${DELIVERY_COLUMNS}`,
  // Their attempts go with them (ON DELETE CASCADE).
  prune: "DELETE FROM webhook_deliveries WHERE seq IN (SELECT seq FROM webhook_deliveries WHERE state <> 'pending' AND created_at < $1 LIMIT $2)",
  depth: "SELECT (SELECT count(*) FROM webhook_deliveries WHERE state = 'pending') + (SELECT count(*) FROM events WHERE NOT fanned) AS n",
};

const one = async (client: pg.PoolClient, text: string, values: unknown[]): Promise<Row | undefined> => (await client.query(text, values)).rows[0] as Row | undefined;

export function webhookStore(db: Db): WebhookStore {
  const { query } = db;
  return {
    async createEndpoint(endpoint, max) {
      return db.transaction(async (client) => {
        // Creations of one team wait for each other, so that the count holds.
        await client.query(SQL.lockTeam, [endpoint.teamId]);
        if (Number((await one(client, SQL.count, [endpoint.teamId]))?.n) >= max) return null;
        const row = await one(client, SQL.insert, [newId('wh'), endpoint.teamId, endpoint.url, JSON.stringify(endpoint.events), endpoint.description, endpoint.secret]);
        return toEndpoint(row as Row);
      });
    },

    async getEndpoint(teamId, id) {
      const [row] = (await query(SQL.get, [id, teamId])).rows;
      return row ? toEndpoint(row) : null;
    },

    async listEndpoints(teamId) {
      return (await query(SQL.list, [teamId])).rows.map(toEndpoint);
    },

    async deleteEndpoint(teamId, id) {
      return ((await query(SQL.deleteEndpoint, [id, teamId])).rowCount ?? 0) === 1;
    },

    async rotateSecret(teamId, id, secret, previousUntil) {
      const [row] = (await query(SQL.rotate, [Math.trunc(previousUntil), secret, id, teamId])).rows;
      return row ? toEndpoint(row) : null;
    },

    async fanOut(limit, now) {
      // A read first: most rounds find nothing, and open no transaction for it.
      if ((await query(SQL.anyUnfanned)).rows.length === 0) return 0;
      return db.transaction(async (client) => {
        const events = (await client.query(SQL.unfanned, [limit])).rows.map((row: Row) => ({ seq: row.seq as string, event: toEvent(row) }));
        if (events.length === 0) return 0;
        const teams = [...new Set(events.map(({ event }) => event.teamId))];
        const endpoints = (await client.query(SQL.teamEndpoints, [teams])).rows.map(toEndpoint);
        for (const { event } of events) {
          const payload = payloadOf(event);
          const mine = endpoints.filter((endpoint) => endpoint.teamId === event.teamId);
          for (const endpoint of targetsOf(event, mine)) {
            await client.query(SQL.insertDelivery, [newId('msg'), endpoint.id, event.teamId, event.id, event.type, payload, Math.trunc(now)]);
          }
        }
        await client.query(SQL.fanned, [events.map(({ seq }) => seq)]);
        return events.length;
      });
    },

    async claim(owner, now, lockedUntil, limit, perEndpoint) {
      const rows = (await query(SQL.claim, [owner, Math.trunc(lockedUntil), Math.trunc(now), limit, perEndpoint])).rows;
      if (rows.length === 0) return [];
      const deliveries = rows.map(toDelivery);
      const endpoints = new Map<string, WebhookEndpoint>(
        (await query(SQL.endpointsById, [[...new Set(deliveries.map((delivery) => delivery.endpointId))]])).rows.map((row) => {
          const endpoint = toEndpoint(row);
          return [endpoint.id, endpoint];
        }),
      );
      const claimed: ClaimedDelivery[] = [];
      for (const delivery of deliveries) {
        const endpoint = endpoints.get(delivery.endpointId);
        // Deleted since the claim: nothing to send it to.
        if (endpoint) claimed.push({ ...delivery, endpoint });
      }
      return claimed;
    },

    async settle(id, owner, attempt, outcome, now, disableAfterMs) {
      return db.transaction(async (client) => {
        const row = await one(client, SQL.settle, [outcome.state, outcome.nextAttemptAt === null ? null : Math.trunc(outcome.nextAttemptAt), id, owner]);
        if (!row) return { recorded: false, disabled: false };
        await client.query(SQL.attempt, [row.seq, attempt.at, attempt.status, attempt.durationMs, attempt.response, attempt.error]);
        const endpointId = row.endpoint_id as string;
        if (outcome.state === 'delivered') {
          await client.query(SQL.delivered, [endpointId]);
          return { recorded: true, disabled: false };
        }
        const endpoint = await one(client, SQL.failing, [Math.trunc(now), endpointId]);
        if (endpoint && endpoint.enabled === true && now - Number(endpoint.failing_since) >= disableAfterMs) {
          await client.query(SQL.disable, [DISABLED_REASON, endpointId]);
          await client.query(SQL.failPending, [endpointId]);
          return { recorded: true, disabled: true };
        }
        return { recorded: true, disabled: false };
      });
    },

    async release(id, owner) {
      await query(SQL.release, [id, owner]);
    },

    async listDeliveries(teamId, endpointId, limit, before) {
      const rows = (await query(SQL.deliveries, [endpointId, teamId, before ?? Number.MAX_SAFE_INTEGER, limit + 1])).rows;
      const page = rows.slice(0, limit);
      const attempts = page.length === 0 ? [] : (await query(SQL.attempts, [page.map((row) => row.seq), MAX_LISTED_ATTEMPTS])).rows;
      const deliveries = page.map((row) => ({
        ...toDelivery(row),
        attemptLog: attempts.filter((attempt) => String(attempt.delivery_seq) === String(row.seq)).map(toAttempt),
      }));
      return { deliveries, next: rows.length > limit ? Number((page[page.length - 1] as Row).seq) : null };
    },

    async redeliver(teamId, id, now) {
      const [row] = (await query(SQL.redeliver, [Math.trunc(now), id, teamId])).rows;
      return row ? toDelivery(row) : null;
    },

    async queueDepth() {
      return Number((await query(SQL.depth)).rows[0]?.n ?? 0);
    },

    async prune(before) {
      let total = 0;
      for (;;) {
        const deleted = (await query(SQL.prune, [new Date(before), PRUNE_BATCH])).rowCount ?? 0;
        total += deleted;
        if (deleted < PRUNE_BATCH) return total;
      }
    },
  };
}
