// The /v1/webhooks endpoints, one declaration each (method, path, parameters, body, query, data,
// an example) so that the route, its validation, the OpenAPI entry, the docs and the SDK come
// from one place. Free, authenticated and rate-limited like every endpoint; team-scoped (an id
// of another team's is unknown: 404).
//
// Who may manage them: reading (list, show, deliveries) any live key of the team; changing
// (create, delete, rotate, test, redeliver) a live key made by the operator's CLI or by an owner
// in the dashboard, as for the account's settings (a member's key cannot); never a test key.
import { Type, type Static, type TObject } from 'typebox';
import { DateTime, Int, NStr, Nullable, Obj, Str, TokenParam } from '../endpoints/schemas/common.ts';
import type { Caller } from '../server/plugins/auth.ts';
import type { CursorSealer } from '../server/cursors.ts';
import { ApiError } from '../server/errors.ts';
import { EVENT_TYPES, type Stores, type WebhookDelivery, type WebhookAttempt, type WebhookEndpoint } from '../store/types.ts';
import { registrationProblem, type GuardSettings, type Resolver } from './guard.ts';
import { newSecret } from './sign.ts';

/** Endpoints a team may have. */
export const MAX_WEBHOOKS = 10;
/** How long a rotated-out secret keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;
/** Deliveries per page of the log. */
const DELIVERIES_PER_PAGE = 20;

export interface WebhookContext {
  caller: Caller;
  stores: Stores;
  sealer: CursorSealer;
  /** Epoch ms. */
  now: number;
  guard: GuardSettings;
  resolver: Resolver;
  /** Tells this node's dispatcher that a delivery is due now. */
  nudge: () => void;
}

export interface WebhookAction<P extends TObject = TObject, B extends TObject = TObject, Q extends TObject = TObject, D extends TObject = TObject> {
  id: string;
  method: 'GET' | 'POST' | 'DELETE';
  /** The OpenAPI path, its parameters in braces. */
  path: string;
  summary: string;
  description: string;
  /** 201 for a creation, else 200. */
  status: 200 | 201;
  params: P;
  /** The JSON body, when the action reads one. */
  body?: B;
  /** The query, when the action reads one. */
  query?: Q;
  data: D;
  /** Whether the action changes something (an owner's key only). */
  changes: boolean;
  /** A sample for the docs. */
  example: { params: Static<P>; body?: Static<B>; query?: Static<Q> };
  apply: (input: { params: Static<P>; body: Static<B>; query: Static<Q> }, context: WebhookContext) => Promise<Static<D>>;
}

const EventName = Type.Union([...EVENT_TYPES.map((type) => Type.Literal(type)), Type.Literal('*')], { description: 'An event type, or `*` for every type.' });

export const WebhookView = Obj({
  id: Str({ description: 'The webhook id, `wh_…`.' }),
  url: Str({ description: 'Where deliveries are POSTed.' }),
  events: Type.Array(EventName, { description: 'The event types it is sent; `["*"]`: every type.' }),
  description: NStr(),
  enabled: Type.Boolean({ description: 'False once every delivery failed for 5 days; a delivered test or redelivery enables it again.' }),
  disabledReason: NStr(),
  disabledAt: Nullable(DateTime()),
  createdAt: DateTime(),
  previousSecretExpiresAt: Nullable(DateTime('While a rotated-out secret still signs beside the new one (24 hours after a rotation): until when; null otherwise.')),
});

export const WithSecret = Obj({
  ...WebhookView.properties,
  secret: Str({ description: 'The signing secret (`whsec_…`), shown this once: keep it to verify deliveries.' }),
});

export const Attempt = Obj({
  at: DateTime('When the attempt started.'),
  status: Nullable(Int({ description: "The receiver's HTTP status; null when no answer came." })),
  durationMs: Type.Number(),
  response: Str({ description: 'The first 1 KB of the answer.' }),
  error: NStr(),
});

export const DeliveryView = Obj({
  id: Str({ description: 'The delivery id, `msg_…`: the `webhook-id` header of each of its attempts.' }),
  eventId: Str(),
  eventType: Str(),
  state: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  attemptCount: Int(),
  nextAttemptAt: Nullable(DateTime('When it is tried next; null once delivered or failed.')),
  createdAt: DateTime(),
  attempts: Type.Array(Attempt, { description: 'Its last 20 attempts, newest first.' }),
});

export const CreateBody = Obj({
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'An `https://` URL on a public address.' }),
  events: Type.Array(EventName, { minItems: 1, maxItems: EVENT_TYPES.length + 1, uniqueItems: true, description: 'The event types to send, or `["*"]` for every type.' }),
  description: Type.Optional(Nullable(Type.String({ maxLength: 200, description: 'A note for the team, at most 200 characters.' }))),
});

export const webhookView = (endpoint: WebhookEndpoint, now: number): Static<typeof WebhookView> => ({
  id: endpoint.id,
  url: endpoint.url,
  // Checked against the event types when the endpoint was registered.
  events: endpoint.events as Static<typeof EventName>[],
  description: endpoint.description,
  enabled: endpoint.enabled,
  disabledReason: endpoint.disabledReason,
  disabledAt: endpoint.disabledAt,
  createdAt: endpoint.createdAt,
  previousSecretExpiresAt: endpoint.previousSecret !== null && endpoint.previousSecretUntil !== null && endpoint.previousSecretUntil > now ? new Date(endpoint.previousSecretUntil).toISOString() : null,
});

export const deliveryView = (delivery: WebhookDelivery & { attemptLog: WebhookAttempt[] }): Static<typeof DeliveryView> => ({
  id: delivery.id,
  eventId: delivery.eventId,
  eventType: delivery.eventType,
  state: delivery.state,
  attemptCount: delivery.attempts,
  nextAttemptAt: delivery.nextAttemptAt === null ? null : new Date(delivery.nextAttemptAt).toISOString(),
  createdAt: delivery.createdAt,
  attempts: delivery.attemptLog,
});

const IdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, description: 'The webhook id, `wh_…`.' }) });
const NoParams = Type.Object({});
const shown = (id: string): string => (id.length > 100 ? `${id.slice(0, 100)}…` : id);

/** The calling key, when it may change the team's webhooks; else 403. */
async function manager({ caller, stores }: WebhookContext): Promise<void> {
  if (caller.test) throw new ApiError('FORBIDDEN', 'A test key (psk_test_) cannot manage webhooks: use a live key.');
  const key = await stores.accounts.getKey(caller.keyId);
  if (!key) throw new ApiError('UNAUTHORIZED', 'The API key is invalid or has been revoked.');
  const maker = key.createdBy === null ? null : await stores.users.getUser(key.createdBy);
  if (maker?.role === 'member') throw new ApiError('FORBIDDEN', "A key made by a member of the team cannot manage the team's webhooks: use a key an owner made, or ask an owner.");
}

async function found(context: WebhookContext, id: string): Promise<WebhookEndpoint> {
  const endpoint = await context.stores.webhooks.getEndpoint(context.caller.team.id, id);
  if (!endpoint) throw new ApiError('NOT_FOUND', `The team has no webhook ${shown(id)}.`);
  return endpoint;
}

const create: WebhookAction = {
  id: 'webhooks.create',
  method: 'POST',
  path: '/v1/webhooks',
  status: 201,
  summary: 'Register a webhook endpoint',
  description: `Events of the team are POSTed to \`url\`, signed as the Standard Webhooks specification says (\`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\`). The answer carries the signing secret (\`whsec_…\`) this once. \`https://\` only, to public addresses: loopback, private, link-local, shared and multicast addresses are refused, by name too (the name is resolved, and again at every delivery). At most ${MAX_WEBHOOKS} per team. Free.`,
  params: NoParams,
  body: CreateBody,
  data: WithSecret,
  changes: true,
  example: { params: {}, body: { url: 'https://example.com/hooks/pagescrape', events: ['credits.low', 'credits.exhausted'], description: 'Billing alerts' } },
  async apply({ body }, context) {
    await manager(context);
    const { url, events, description } = body as { url: string; events: string[]; description?: string | null };
    const problem = await registrationProblem(url, context.guard, context.resolver);
    if (problem !== null) throw new ApiError('VALIDATION_ERROR', 'The request body is invalid; see details.', { details: [{ path: 'url', message: problem }] });
    const endpoint = await context.stores.webhooks.createEndpoint(
      { teamId: context.caller.team.id, url: new URL(url).href, events: events.includes('*') ? ['*'] : events, description: description ?? null, secret: newSecret() },
      MAX_WEBHOOKS,
    );
    if (!endpoint) throw new ApiError('CONFLICT', `The team has ${MAX_WEBHOOKS} webhooks, the most it may have: delete one first.`);
    return { ...webhookView(endpoint, context.now), secret: endpoint.secret };
  },
};

const list: WebhookAction = {
  id: 'webhooks.list',
  method: 'GET',
  path: '/v1/webhooks',
  status: 200,
  summary: "The team's webhook endpoints",
  description: 'Oldest first, without their secrets. Free.',
  params: NoParams,
  data: Obj({ webhooks: Type.Array(WebhookView) }),
  changes: false,
  example: { params: {} },
  async apply(_input, context) {
    return { webhooks: (await context.stores.webhooks.listEndpoints(context.caller.team.id)).map((endpoint) => webhookView(endpoint, context.now)) };
  },
};

const show: WebhookAction = {
  id: 'webhooks.get',
  method: 'GET',
  path: '/v1/webhooks/{id}',
  status: 200,
  summary: 'One webhook endpoint',
  description: 'Without its secret. Free.',
  params: IdParam,
  data: WebhookView,
  changes: false,
  example: { params: { id: 'wh_3q2VbX9kT0mW7yZ1aC4dE6fG' } },
  async apply({ params }, context) {
    return webhookView(await found(context, (params as { id: string }).id), context.now);
  },
};

const remove: WebhookAction = {
  id: 'webhooks.delete',
  method: 'DELETE',
  path: '/v1/webhooks/{id}',
  status: 200,
  summary: 'Delete a webhook endpoint',
  description: 'With its deliveries and their log; nothing more is sent to it. Free.',
  params: IdParam,
  data: Obj({ id: Str(), deleted: Type.Boolean() }),
  changes: true,
  example: { params: { id: 'wh_3q2VbX9kT0mW7yZ1aC4dE6fG' } },
  async apply({ params }, context) {
    await manager(context);
    const { id } = params as { id: string };
    if (!(await context.stores.webhooks.deleteEndpoint(context.caller.team.id, id))) throw new ApiError('NOT_FOUND', `The team has no webhook ${shown(id)}.`);
    return { id, deleted: true };
  },
};

const rotate: WebhookAction = {
  id: 'webhooks.rotateSecret',
  method: 'POST',
  path: '/v1/webhooks/{id}/rotate-secret',
  status: 200,
  summary: "Rotate a webhook endpoint's signing secret",
  description:
    'A new secret, shown this once. For 24 hours the old one keeps signing beside it (two signatures in `webhook-signature`, space-separated), so that receivers can switch without missing a delivery. Free.',
  params: IdParam,
  data: WithSecret,
  changes: true,
  example: { params: { id: 'wh_3q2VbX9kT0mW7yZ1aC4dE6fG' } },
  async apply({ params }, context) {
    await manager(context);
    const { id } = params as { id: string };
    const rotated = await context.stores.webhooks.rotateSecret(context.caller.team.id, id, newSecret(), context.now + ROTATION_OVERLAP_MS);
    if (!rotated) throw new ApiError('NOT_FOUND', `The team has no webhook ${shown(id)}.`);
    return { ...webhookView(rotated, context.now), secret: rotated.secret };
  },
};

const sendTest: WebhookAction = {
  id: 'webhooks.test',
  method: 'POST',
  path: '/v1/webhooks/{id}/test',
  status: 200,
  summary: 'Send a test event to a webhook endpoint',
  description:
    'Records a `webhook.test` event for this endpoint alone (whatever events it subscribes to, enabled or not); it is delivered, signed and retried like any other, and shows in the deliveries log. A delivered one enables a disabled endpoint again. Free.',
  params: IdParam,
  data: Obj({ eventId: Str({ description: 'The event recorded, `evt_…`.' }) }),
  changes: true,
  example: { params: { id: 'wh_3q2VbX9kT0mW7yZ1aC4dE6fG' } },
  async apply({ params }, context) {
    await manager(context);
    const endpoint = await found(context, (params as { id: string }).id);
    const event = await context.stores.events.record(context.caller.team.id, 'webhook.test', { webhookId: endpoint.id, message: 'A test event, sent on request.' });
    context.nudge();
    return { eventId: event.id };
  },
};

const deliveries: WebhookAction = {
  id: 'webhooks.deliveries',
  method: 'GET',
  path: '/v1/webhooks/{id}/deliveries',
  status: 200,
  summary: "A webhook endpoint's deliveries, newest first",
  description: `One delivery per event sent to the endpoint, ${DELIVERIES_PER_PAGE} per page, newest first, each with its attempts (time, HTTP status, duration, the first 1 KB of the answer, the error); follow \`data.paging.cursor\` for older ones. Free.`,
  params: IdParam,
  query: Type.Object({ cursor: Type.Optional(TokenParam('`data.paging.cursor` of the page before.')) }, { additionalProperties: false }),
  data: Obj({ deliveries: Type.Array(DeliveryView), paging: Obj({ cursor: NStr(), hasNextPage: Type.Boolean() }) }),
  changes: false,
  example: { params: { id: 'wh_3q2VbX9kT0mW7yZ1aC4dE6fG' }, query: {} },
  async apply({ params, query }, context) {
    const endpoint = await found(context, (params as { id: string }).id);
    const filter = { team: context.caller.team.id, webhook: endpoint.id };
    let before: number | undefined;
    const cursor = (query as { cursor?: string }).cursor;
    if (cursor !== undefined) {
      const opened = context.sealer.open(cursor, 'webhooks.deliveries', filter);
      const position = opened.ok ? Number(opened.cursor.position.deliveries) : Number.NaN;
      if (!opened.ok || !Number.isSafeInteger(position)) {
        throw new ApiError('BAD_REQUEST', opened.ok || opened.problem !== 'foreign' ? 'The cursor is malformed or was not issued by this service.' : 'The cursor was issued for another webhook.');
      }
      before = position;
    }
    const page = await context.stores.webhooks.listDeliveries(context.caller.team.id, endpoint.id, DELIVERIES_PER_PAGE, before);
    return {
      deliveries: page.deliveries.map(deliveryView),
      paging: {
        cursor: page.next === null ? null : context.sealer.seal('webhooks.deliveries', filter, { deliveries: page.next }, context.now),
        hasNextPage: page.next !== null,
      },
    };
  },
};

const redeliver: WebhookAction = {
  id: 'webhooks.redeliver',
  method: 'POST',
  path: '/v1/webhooks/deliveries/{id}/redeliver',
  status: 200,
  summary: 'Send a delivery again',
  description:
    'Makes the delivery due now, whatever its state: one more attempt with the same `webhook-id` (receivers that already have it can tell). If it fails, it is retried only while the schedule has retries left. A delivered one enables a disabled endpoint again. Free.',
  params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, description: 'The delivery id, `msg_…`.' }) }),
  data: Obj({ id: Str(), state: Str(), nextAttemptAt: Nullable(DateTime()) }),
  changes: true,
  example: { params: { id: 'msg_2ZkV8dT1qX0bN5mR7yW3cF6hJ' } },
  async apply({ params }, context) {
    await manager(context);
    const { id } = params as { id: string };
    const delivery = await context.stores.webhooks.redeliver(context.caller.team.id, id, context.now);
    if (!delivery) throw new ApiError('NOT_FOUND', `The team has no delivery ${shown(id)}.`);
    context.nudge();
    return { id: delivery.id, state: delivery.state, nextAttemptAt: delivery.nextAttemptAt === null ? null : new Date(delivery.nextAttemptAt).toISOString() };
  },
};

/** The webhook endpoints, in the order of the docs. */
export const webhookActions: readonly WebhookAction[] = [create, list, show, remove, rotate, sendTest, deliveries, redeliver];

/** The OpenAPI tag of the webhook endpoints. */
export const WEBHOOKS_TAG = {
  name: 'webhooks',
  description:
    "The team's webhook endpoints: events (`credits.low`, `credits.exhausted`, `job.completed`, `monitor.changed`, `monitor.failed`, `webhook.test`) POSTed and signed as the Standard Webhooks specification says, retried for about a day. Free; counted by the rate limit.",
};
