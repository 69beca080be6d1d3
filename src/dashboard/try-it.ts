// The dashboard's Try it page: choose an endpoint, fill in its parameters, and run it in-process
// as one of the team's keys (a real request: charged, and rate-limited); the answer is shown.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TSchema } from 'typebox';
import type { EndpointDeclaration } from '../endpoints/types.ts';
import { fullQuerySchema } from '../server/query.ts';
import { html, notice, PageError, type Html } from './html.ts';
import { mayUse, SIGNED_IN_FORM, withCode, type PageTools } from './signed-in.ts';

export function tryItPages(
  app: FastifyInstance,
  { stores, scopeOf, show, csrfField, teamLine }: PageTools,
  endpoints: readonly EndpointDeclaration[],
  callAs: (keyId: string, url: string) => Promise<{ status: number; body: string }>,
): void {
  const byId = new Map(endpoints.map((e) => [e.id, e]));

  function parameterFields(endpoint: EndpointDeclaration, values: Record<string, string>): Html[] {
    const schema = fullQuerySchema(endpoint);
    const required = new Set<string>((endpoint.query.required as string[] | undefined) ?? []);
    return Object.entries(schema.properties as Record<string, TSchema & { enum?: string[]; description?: string; default?: string }>).map(([name, property]) => {
      const id = `param-${name}`;
      const label = html`<label for="${id}">${name}${required.has(name) ? html` <span class="required">(required)</span>` : ''}</label>`;
      const hint = property.description ? html`<p class="hint" id="${id}-hint">${withCode(property.description)}</p>` : '';
      const described = property.description ? html`aria-describedby="${id}-hint"` : '';
      const value = values[name] ?? '';
      const field = property.enum
        ? html`<select id="${id}" name="q.${name}" ${described}>
            <option value="">${required.has(name) ? 'Choose' : '(not set)'}</option>
            ${property.enum.map((option) => html`<option value="${option}" ${option === value ? html`selected` : ''}>${option}</option>`)}
          </select>`
        : html`<input id="${id}" name="q.${name}" type="text" value="${value}" ${required.has(name) ? html`required` : ''} ${described} />`;
      return html`<div>${label}${field}${hint}</div>`;
    });
  }

  async function tryPage(request: FastifyRequest, reply: FastifyReply, chosen: EndpointDeclaration | undefined, values: Record<string, string>, keyId: string, result: Html | null) {
    const scope = await scopeOf(request);
    const keys = (await stores.accounts.listKeys(scope.team.id)).filter((key) => mayUse(scope.user, key));
    const form = chosen
      ? keys.length === 0
        ? notice('error', html`There is no active key to run it with: <a href="/dashboard/keys${scope.teamQuery}">create one</a> first.`)
        : html`<form method="post" action="/dashboard/try">
            ${csrfField(scope)}
            <input type="hidden" name="endpoint" value="${chosen.id}" />
            <p><code>GET ${chosen.path}</code>: ${chosen.summary}</p>
            <label for="try-key">Key</label>
            <select id="try-key" name="key">
              ${keys.map((key) => html`<option value="${key.id}" ${key.id === keyId ? html`selected` : ''}>${key.name} (${key.prefix}…${key.last4})</option>`)}
            </select>
            ${parameterFields(chosen, values)}
            <button type="submit">Run</button>
          </form>`
      : '';
    return show(
      reply,
      scope,
      'Try it',
      'Try it',
      html`${teamLine(scope)}
        <form method="get" action="/dashboard/try" data-autosubmit>
          ${scope.teamField}
          <label for="try-endpoint">Endpoint</label>
          <select id="try-endpoint" name="endpoint">
            <option value="">Choose an endpoint</option>
            ${endpoints.map((e) => html`<option value="${e.id}" ${e.id === chosen?.id ? html`selected` : ''}>${e.path}: ${e.summary}</option>`)}
          </select>
          <button type="submit" class="secondary">Choose</button>
        </form>
        ${form}${result}
        <p class="hint">A run is a real request: a live scrape costs 1 credit, and it counts against the rate limit.</p>`,
    );
  }

  app.get('/try', async (request, reply) => {
    const id = (request.query as Record<string, string | undefined>).endpoint;
    return tryPage(request, reply, id ? byId.get(id) : undefined, {}, '', null);
  });

  app.post('/try', { config: { form: [...SIGNED_IN_FORM, 'endpoint', 'key', 'q.*'] } }, async (request, reply) => {
    const scope = await scopeOf(request);
    const body = request.body as Record<string, unknown>;
    const endpoint = byId.get(String(body.endpoint ?? ''));
    if (!endpoint) throw new PageError(404, 'There is no such endpoint.');
    const keyId = String(body.key ?? '');
    const key = (await stores.accounts.listKeys(scope.team.id)).find((k) => k.id === keyId);
    if (!key || !mayUse(scope.user, key)) throw new PageError(404, 'There is no such active key.');
    const values: Record<string, string> = {};
    for (const [name, value] of Object.entries(body)) {
      if (name.startsWith('q.') && typeof value === 'string' && value !== '') values[name.slice(2)] = value;
    }
    const answer = await callAs(key.id, `${endpoint.path}?${new URLSearchParams(values).toString()}`);
    let pretty = answer.body;
    let credits = 0;
    try {
      const parsed = JSON.parse(answer.body) as { meta?: { creditsCharged?: number } };
      pretty = JSON.stringify(parsed, null, 2);
      credits = parsed.meta?.creditsCharged ?? 0;
    } catch {
      // shown as it came
    }
    const result = html`<h2>Result</h2>
      <p role="status">Status <strong id="try-status">${answer.status}</strong>; credits charged: <strong id="try-credits">${credits}</strong>.</p>
      <pre aria-label="Response JSON"><code>${pretty}</code></pre>`;
    return tryPage(request, reply, endpoint, values, key.id, result);
  });
}
