// Webhook endpoints and deliveries on the embedded store. One process writes: each change is one
// write transaction (synchronous, so nothing interleaves), and a claim is one conditional
// UPDATE … RETURNING all the same, as on PostgreSQL.
import { toEvent } from '../event-rows.ts';
import { isoNow, newId } from '../rules.ts';
import type { ClaimedDelivery, WebhookEndpoint, WebhookStore } from '../types.ts';
import { MAX_LISTED_ATTEMPTS } from '../types.ts';
import { DELIVERY_COLUMNS, DISABLED_REASON, ENDPOINT_COLUMNS, payloadOf, targetsOf, toAttempt, toDelivery, toEndpoint } from '../webhook-rows.ts';
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import { PRUNE_BATCH } from './maintenance.ts';
import { prepare, type Connection, type Row } from './connection.ts';

const SQL = {
  count: 'SELECT count(*) AS n FROM webhook_endpoints WHERE team_id = ?',
  insert: `INSERT INTO webhook_endpoints (id, team_id, url, events, description, created_at, secret) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  get: `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = ? AND team_id = ?`,
  byId: `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = ?`,
  list: `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE team_id = ? ORDER BY created_at, id`,
  deleteAttempts: 'DELETE FROM webhook_attempts WHERE delivery_seq IN (SELECT seq FROM webhook_deliveries WHERE endpoint_id = ?)',
  deleteDeliveries: 'DELETE FROM webhook_deliveries WHERE endpoint_id = ?',
  deleteEndpoint: 'DELETE FROM webhook_endpoints WHERE id = ? AND team_id = ?',
  rotate: `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_until = ?, secret = ? WHERE id = ? AND team_id = ? RETURNING ${ENDPOINT_COLUMNS}`,
  unfanned: 'SELECT seq, id, team_id, type, data, created_at FROM events WHERE fanned = 0 ORDER BY seq LIMIT ?',
  teamEndpoints: `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE team_id = ?`,
  insertDelivery: `INSERT INTO webhook_deliveries (id, endpoint_id, team_id, event_id, event_type, payload, state, attempts, next_attempt_at, created_at)
                   VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?) ON CONFLICT (event_id, endpoint_id) DO NOTHING`,
  fanned: 'UPDATE events SET fanned = 1 WHERE seq = ?',
  anyUnfanned: 'SELECT 1 FROM events WHERE fanned = 0 LIMIT 1',
  anyDue: "SELECT 1 FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= ? LIMIT 1",
  // Due, unlocked, and within the endpoint's share of attempts at once (those locked by anyone count).
  claim: `UPDATE webhook_deliveries SET lock_owner = ?1, lock_until = ?2
          WHERE seq IN (
            SELECT d.seq FROM (
              SELECT seq, endpoint_id, next_attempt_at, row_number() OVER (PARTITION BY endpoint_id ORDER BY next_attempt_at, seq) AS rn
                FROM webhook_deliveries
               WHERE state = 'pending' AND next_attempt_at <= ?3 AND (lock_until IS NULL OR lock_until < ?3)
            ) d
            LEFT JOIN (SELECT endpoint_id, count(*) AS n FROM webhook_deliveries WHERE lock_until >= ?3 GROUP BY endpoint_id) busy ON busy.endpoint_id = d.endpoint_id
            WHERE d.rn + coalesce(busy.n, 0) <= ?5
            ORDER BY d.next_attempt_at, d.seq LIMIT ?4)
            AND state = 'pending' AND (lock_until IS NULL OR lock_until < ?3)
          RETURNING ${DELIVERY_COLUMNS}`,
  settle: `UPDATE webhook_deliveries SET state = ?, next_attempt_at = ?, attempts = attempts + 1, lock_owner = NULL, lock_until = NULL
           WHERE id = ? AND lock_owner = ? RETURNING seq, endpoint_id`,
  release: 'UPDATE webhook_deliveries SET lock_owner = NULL, lock_until = NULL WHERE id = ? AND lock_owner = ?',
  attempt: 'INSERT INTO webhook_attempts (delivery_seq, at, status, duration_ms, response, error) VALUES (?, ?, ?, ?, ?, ?)',
  delivered: 'UPDATE webhook_endpoints SET failing_since = NULL, enabled = 1, disabled_reason = NULL, disabled_at = NULL WHERE id = ?',
  failing: 'UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, ?) WHERE id = ? RETURNING enabled, failing_since',
  disable: 'UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ?, disabled_at = ? WHERE id = ?',
  failPending: "UPDATE webhook_deliveries SET state = 'failed', next_attempt_at = NULL WHERE endpoint_id = ? AND state = 'pending' AND lock_until IS NULL",
  deliveries: `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE endpoint_id = ? AND team_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
  attempts: 'SELECT at, status, duration_ms, response, error FROM webhook_attempts WHERE delivery_seq = ? ORDER BY id DESC LIMIT ?',
  redeliver: `UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ? WHERE id = ? AND team_id = ? RETURNING ${DELIVERY_COLUMNS}`,
  old: "SELECT seq FROM webhook_deliveries WHERE state <> 'pending' AND created_at < ? LIMIT ?",
  attemptsOf: 'DELETE FROM webhook_attempts WHERE delivery_seq = ?',
  deliveryAt: 'DELETE FROM webhook_deliveries WHERE seq = ?',
  depth: "SELECT (SELECT count(*) FROM webhook_deliveries WHERE state = 'pending') + (SELECT count(*) FROM events WHERE fanned = 0) AS n",
};

export function webhookStore(c: Connection): WebhookStore {
  const st = prepare(c.db, SQL);
  return {
    async createEndpoint(endpoint, max) {
      return c.tx(() => {
        if (Number((st.count.get(endpoint.teamId) as Row).n) >= max) return null;
        const id = newId('wh');
        st.insert.run(id, endpoint.teamId, endpoint.url, JSON.stringify(endpoint.events), endpoint.description, isoNow(), endpoint.secret);
        return toEndpoint(st.get.get(id, endpoint.teamId) as Row);
      });
    },

    async getEndpoint(teamId, id) {
      const row = c.run(() => st.get.get(id, teamId));
      return row ? toEndpoint(row) : null;
    },

    async listEndpoints(teamId) {
      return c.run(() => st.list.all(teamId)).map(toEndpoint);
    },

    async deleteEndpoint(teamId, id) {
      return c.tx(() => {
        if (!st.get.get(id, teamId)) return false;
        st.deleteAttempts.run(id);
        st.deleteDeliveries.run(id);
        return st.deleteEndpoint.run(id, teamId).changes === 1;
      });
    },

    async rotateSecret(teamId, id, secret, previousUntil) {
      const row = c.tx(() => st.rotate.get(Math.trunc(previousUntil), secret, id, teamId));
      return row ? toEndpoint(row) : null;
    },

    async fanOut(limit, now) {
      // A read first: most rounds find nothing, and take no write lock for it.
      if (!c.run(() => st.anyUnfanned.get())) return 0;
      return c.tx(() => {
        const events = st.unfanned.all(limit).map((row) => ({ seq: row.seq as number, event: toEvent(row) }));
        const endpointsOf = new Map<string, WebhookEndpoint[]>();
        const createdAt = isoNow();
        for (const { seq, event } of events) {
          let endpoints = endpointsOf.get(event.teamId);
          if (!endpoints) {
            endpoints = st.teamEndpoints.all(event.teamId).map(toEndpoint);
            endpointsOf.set(event.teamId, endpoints);
          }
          const payload = payloadOf(event);
          for (const endpoint of targetsOf(event, endpoints)) {
            st.insertDelivery.run(newId('msg'), endpoint.id, event.teamId, event.id, event.type, payload, Math.trunc(now), createdAt);
          }
          st.fanned.run(seq);
        }
        return events.length;
      });
    },

    async claim(owner, now, lockedUntil, limit, perEndpoint) {
      if (!c.run(() => st.anyDue.get(Math.trunc(now)))) return [];
      return c.tx(() => {
        const rows = st.claim.all(owner, Math.trunc(lockedUntil), Math.trunc(now), limit, perEndpoint);
        const endpoints = new Map<string, WebhookEndpoint>();
        const claimed: ClaimedDelivery[] = [];
        for (const row of rows) {
          const delivery = toDelivery(row);
          let endpoint = endpoints.get(delivery.endpointId);
          if (!endpoint) {
            endpoint = toEndpoint(st.byId.get(delivery.endpointId) as Row);
            endpoints.set(endpoint.id, endpoint);
          }
          claimed.push({ ...delivery, endpoint });
        }
        return claimed;
      });
    },

    async settle(id, owner, attempt, outcome, now, disableAfterMs) {
      return c.tx(() => {
        const row = st.settle.get(outcome.state, outcome.nextAttemptAt === null ? null : Math.trunc(outcome.nextAttemptAt), id, owner);
        if (!row) return { recorded: false, disabled: false };
        st.attempt.run(row.seq as number, attempt.at, attempt.status, attempt.durationMs, attempt.response, attempt.error);
        const endpointId = row.endpoint_id as string;
        if (outcome.state === 'delivered') {
          st.delivered.run(endpointId);
          return { recorded: true, disabled: false };
        }
        const endpoint = st.failing.get(Math.trunc(now), endpointId);
        if (endpoint && Number(endpoint.enabled) === 1 && now - Number(endpoint.failing_since) >= disableAfterMs) {
          st.disable.run(DISABLED_REASON, isoNow(), endpointId);
          st.failPending.run(endpointId);
          return { recorded: true, disabled: true };
        }
        return { recorded: true, disabled: false };
      });
    },

    async release(id, owner) {
      c.tx(() => st.release.run(id, owner));
    },

    async listDeliveries(teamId, endpointId, limit, before) {
      return c.run(() => {
        const rows = st.deliveries.all(endpointId, teamId, before ?? Number.MAX_SAFE_INTEGER, limit + 1);
        const page = rows.slice(0, limit);
        const deliveries = page.map((row) => ({ ...toDelivery(row), attemptLog: st.attempts.all(row.seq as number, MAX_LISTED_ATTEMPTS).map(toAttempt) }));
        return { deliveries, next: rows.length > limit ? Number((page[page.length - 1] as Row).seq) : null };
      });
    },

    async redeliver(teamId, id, now) {
      const row = c.tx(() => st.redeliver.get(Math.trunc(now), id, teamId));
      return row ? toDelivery(row) : null;
    },

    async queueDepth() {
      return Number((c.run(() => st.depth.get()) as Row).n);
    },

    async prune(before) {
      const cutoff = new Date(before).toISOString();
      let total = 0;
      for (;;) {
        // Short transactions, so that the write lock is never held for long.
        const deleted = c.tx(() => {
          const seqs = st.old.all(cutoff, PRUNE_BATCH).map((row) => row.seq as number);
          for (const seq of seqs) {
            st.attemptsOf.run(seq);
            st.deliveryAt.run(seq);
          }
          return seqs.length;
        });
        total += deleted;
        if (deleted < PRUNE_BATCH) return total;
        await yieldToEvents();
      }
    },
  };
}
