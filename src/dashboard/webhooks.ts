// The dashboard's Webhooks page: the team's endpoints (disabled ones marked), and for owners
// (and operators) the same powers as the API: register one (its secret shown once, with a Copy
// button), send a test, rotate the secret, delete; and each endpoint's delivery log with status
// and timing, and redeliver. Members see the endpoints and their logs only.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { EVENT_TYPES, type User, type WebhookEndpoint } from '../store/types.ts';
import { registrationProblem, systemResolver, type GuardSettings, type Resolver } from '../webhooks/guard.ts';
import { MAX_WEBHOOKS, ROTATION_OVERLAP_MS } from '../webhooks/endpoints.ts';
import { newSecret } from '../webhooks/sign.ts';
import { html, notice, PageError, table, type Html } from './html.ts';
import { copyField, SIGNED_IN_FORM, time, type PageTools, type Scope } from './signed-in.ts';

/** The address guard and the dispatcher, as the API's webhook routes have them. */
export interface WebhookSettings {
  guard: GuardSettings;
  resolver: Resolver;
  nudge: () => void;
}

/** The fields every form of the page posts, and `fields`. */
const formOf = (...fields: string[]): readonly string[] => [...SIGNED_IN_FORM, ...fields];

const DESCRIPTION_MAX = 200;
const LOG_ROWS = 50;

export async function webhookPages(app: FastifyInstance, { stores, now, scopeOf, show, csrfField, teamLine }: PageTools, webhooks?: WebhookSettings): Promise<void> {
  const guard = webhooks?.guard ?? { allowPrivate: false, allowHttp: false };
  const resolver = webhooks?.resolver ?? systemResolver;
  const nudge = () => webhooks?.nudge();
  const mayManage = (user: User) => user.role !== 'member';

  async function owner(request: FastifyRequest): Promise<Scope> {
    const scope = await scopeOf(request);
    if (!mayManage(scope.user)) throw new PageError(403, "Only an owner manages the team's webhooks.");
    return scope;
  }
  async function endpointOf(scope: Scope, id: string): Promise<WebhookEndpoint> {
    const endpoint = await stores.webhooks.getEndpoint(scope.team.id, id);
    if (!endpoint) throw new PageError(404, 'There is no such webhook.');
    return endpoint;
  }
  const state = (endpoint: WebhookEndpoint): Html =>
    endpoint.enabled ? html`Enabled` : html`<strong>Disabled</strong> ${time(endpoint.disabledAt)}<br /><small>${endpoint.disabledReason ?? ''}</small>`;
  const button = (scope: Scope, action: string, label: string, style = 'secondary') =>
    html`<form method="post" action="${action}">${csrfField(scope)}<button type="submit" class="${style}">${label}</button></form>`;

  async function listPage(request: FastifyRequest, reply: FastifyReply, top: Html | null, status = 200) {
    const scope = await scopeOf(request);
    const endpoints = await stores.webhooks.listEndpoints(scope.team.id);
    const manage = mayManage(scope.user);
    const form = manage
      ? html`<h2>Add a webhook</h2>
          <form method="post" action="/dashboard/webhooks">
            ${csrfField(scope)}
            <label for="webhook-url">URL</label>
            <input id="webhook-url" name="url" type="url" maxlength="2048" required placeholder="https://example.com/hooks/pagescrape" />
            <fieldset>
              <legend>Events</legend>
              <label><input type="checkbox" name="events" value="*" checked /> Every event</label>
              ${EVENT_TYPES.map((type) => html`<label><input type="checkbox" name="events" value="${type}" /> <code>${type}</code></label>`)}
            </fieldset>
            <label for="webhook-description">Description (optional)</label>
            <input id="webhook-description" name="description" type="text" maxlength="${DESCRIPTION_MAX}" />
            <button type="submit">Add webhook</button>
          </form>
          <p class="hint">At most ${MAX_WEBHOOKS} per team. Deliveries are signed as the Standard Webhooks specification says; verify them with the secret shown when you add one. <code>https://</code> on a public address only.</p>`
      : html`<p class="hint">Only an owner adds, tests and deletes webhooks.</p>`;
    return show(
      reply,
      scope,
      'Webhooks',
      'Webhooks',
      html`${top}${teamLine(scope)}
        ${table(
          [{ label: 'URL', long: true }, { label: 'Events' }, { label: 'Description' }, { label: 'Created' }, { label: 'Status' }, { label: 'Deliveries' }],
          endpoints.map((endpoint) => [
            html`<code>${endpoint.url}</code>`,
            endpoint.events.join(', '),
            endpoint.description ?? '',
            time(endpoint.createdAt),
            state(endpoint),
            html`<a href="/dashboard/webhooks/${endpoint.id}${scope.teamQuery}">Log and actions</a>`,
          ]),
          'No webhooks yet.',
        )}
        ${form}`,
      status,
    );
  }
  app.get('/webhooks', (request, reply) => listPage(request, reply, null));

  app.post('/webhooks', { config: { form: formOf('url', 'events', 'description') } }, async (request, reply) => {
    const scope = await owner(request);
    const body = request.body as Record<string, unknown>;
    const url = String(body.url ?? '').trim();
    const chosen = ([] as unknown[]).concat(body.events ?? []).map(String);
    const events = chosen.includes('*') ? ['*'] : chosen.filter((type) => (EVENT_TYPES as readonly string[]).includes(type));
    const description = String(body.description ?? '').trim();
    if (events.length === 0) return listPage(request, reply, notice('error', 'Choose at least one event.'), 422);
    if (description.length > DESCRIPTION_MAX) return listPage(request, reply, notice('error', `The description must be at most ${DESCRIPTION_MAX} characters.`), 422);
    const problem = await registrationProblem(url, guard, resolver);
    if (problem !== null) return listPage(request, reply, notice('error', html`This URL is refused: ${problem}.`), 422);
    const endpoint = await stores.webhooks.createEndpoint({ teamId: scope.team.id, url: new URL(url).href, events, description: description || null, secret: newSecret() }, MAX_WEBHOOKS);
    if (!endpoint) return listPage(request, reply, notice('error', `The team has ${MAX_WEBHOOKS} webhooks, the most it may have: delete one first.`), 409);
    return listPage(
      request,
      reply,
      html`${notice('success', html`Webhook added. Copy its signing secret now: it is shown only this once.`)}${copyField('new-secret', 'Signing secret', endpoint.secret)}`,
    );
  });

  async function detailPage(request: FastifyRequest, reply: FastifyReply, top: Html | null, status = 200) {
    const scope = await scopeOf(request);
    const endpoint = await endpointOf(scope, (request.params as { id: string }).id);
    const { deliveries } = await stores.webhooks.listDeliveries(scope.team.id, endpoint.id, LOG_ROWS);
    const manage = mayManage(scope.user);
    const base = `/dashboard/webhooks/${endpoint.id}`;
    const actions = manage
      ? html`<div class="actions">
          ${button(scope, `${base}/test`, 'Send a test event')} ${button(scope, `${base}/rotate`, 'Rotate the secret')}
          <form method="get" action="${base}/delete">${scope.teamField}<button type="submit" class="danger">Delete</button></form>
        </div>`
      : '';
    return show(
      reply,
      scope,
      'Webhooks',
      'Webhook',
      html`${top}${teamLine(scope)}
        <dl class="cards">
          <div class="card"><dt>URL</dt><dd><code>${endpoint.url}</code></dd></div>
          <div class="card"><dt>Events</dt><dd>${endpoint.events.join(', ')}</dd></div>
          <div class="card"><dt>Status</dt><dd id="webhook-state">${state(endpoint)}</dd></div>
        </dl>
        ${endpoint.previousSecret !== null && endpoint.previousSecretUntil !== null && endpoint.previousSecretUntil > now() ? html`<p class="hint">The previous secret signs beside the new one until ${time(new Date(endpoint.previousSecretUntil).toISOString())}.</p>` : ''}
        ${actions}
        <h2>Deliveries</h2>
        ${table(
          [{ label: 'Created' }, { label: 'Event' }, { label: 'Delivery id' }, { label: 'State' }, { label: 'Attempts', num: true }, { label: 'Last attempt' }, { label: 'Next attempt' }, { label: 'Action' }],
          deliveries.map((delivery) => {
            const last = delivery.attemptLog[0];
            return [
              time(delivery.createdAt),
              html`<code>${delivery.eventType}</code>`,
              html`<code>${delivery.id}</code>`,
              delivery.state,
              String(delivery.attempts),
              last
                ? html`${time(last.at)}: ${last.status === null ? 'no answer' : `HTTP ${last.status}`} in ${Math.round(last.durationMs)} ms${last.error ? html`<br /><small>${last.error}</small>` : ''}${last.response ? html`<br /><small><code>${last.response.slice(0, 200)}</code></small>` : ''}`
                : '—',
              delivery.nextAttemptAt === null ? '—' : time(new Date(delivery.nextAttemptAt).toISOString()),
              manage ? button(scope, `/dashboard/webhooks/deliveries/${delivery.id}/redeliver`, 'Redeliver') : '',
            ];
          }),
          'No deliveries yet.',
        )}
        <p class="hint">The newest ${LOG_ROWS}; <code>GET /v1/webhooks/${endpoint.id}/deliveries</code> pages through all of them with every attempt. Failed attempts are retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h.</p>
        <p><a href="/dashboard/webhooks${scope.teamQuery}">All webhooks</a></p>`,
      status,
    );
  }
  app.get('/webhooks/:id', (request, reply) => detailPage(request, reply, null));

  app.post('/webhooks/:id/test', { config: { form: formOf() } }, async (request, reply) => {
    const scope = await owner(request);
    const endpoint = await endpointOf(scope, (request.params as { id: string }).id);
    await stores.events.record(scope.team.id, 'webhook.test', { webhookId: endpoint.id, message: 'A test event, sent from the dashboard.' });
    nudge();
    return detailPage(request, reply, notice('success', 'A test event is on its way; reload to see its delivery.'));
  });

  app.post('/webhooks/:id/rotate', { config: { form: formOf() } }, async (request, reply) => {
    const scope = await owner(request);
    const endpoint = await endpointOf(scope, (request.params as { id: string }).id);
    const rotated = await stores.webhooks.rotateSecret(scope.team.id, endpoint.id, newSecret(), now() + ROTATION_OVERLAP_MS);
    if (!rotated) throw new PageError(404, 'There is no such webhook.');
    return detailPage(
      request,
      reply,
      html`${notice('success', 'New signing secret. Copy it now: it is shown only this once. The previous one keeps signing beside it for 24 hours.')}${copyField('new-secret', 'Signing secret', rotated.secret)}`,
    );
  });

  app.get('/webhooks/:id/delete', async (request, reply) => {
    const scope = await owner(request);
    const endpoint = await endpointOf(scope, (request.params as { id: string }).id);
    return show(
      reply,
      scope,
      'Webhooks',
      'Delete webhook',
      html`<p>Delete the webhook to <code>${endpoint.url}</code>, with its delivery log? Nothing more is sent to it.</p>
        ${button(scope, `/dashboard/webhooks/${endpoint.id}/delete`, 'Delete webhook', 'danger')}
        <p><a href="/dashboard/webhooks/${endpoint.id}${scope.teamQuery}">Cancel</a></p>`,
    );
  });

  app.post('/webhooks/:id/delete', { config: { form: formOf() } }, async (request, reply) => {
    const scope = await owner(request);
    const endpoint = await endpointOf(scope, (request.params as { id: string }).id);
    await stores.webhooks.deleteEndpoint(scope.team.id, endpoint.id);
    return listPage(request, reply, notice('success', html`The webhook to <code>${endpoint.url}</code> is deleted.`));
  });

  app.post('/webhooks/deliveries/:id/redeliver', { config: { form: formOf() } }, async (request, reply) => {
    const scope = await owner(request);
    const delivery = await stores.webhooks.redeliver(scope.team.id, (request.params as { id: string }).id, now());
    if (!delivery) throw new PageError(404, 'There is no such delivery.');
    nudge();
    return reply.redirect(`/dashboard/webhooks/${delivery.endpointId}${scope.teamQuery}`, 303);
  });
}
