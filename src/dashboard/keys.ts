// The dashboard's Keys page: the team's keys, create one (shown once, with a Copy button), set a
// key's daily credit limit (owners and operators), revoke one (a member: only its own).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { generateKey } from '../server/keys.ts';
import { MAX_DAILY_CREDITS } from '../store/rules.ts';
import { spentOn, utcDay, type ApiKeyRecord } from '../store/types.ts';
import { html, notice, PageError, table, type Html } from './html.ts';
import { copyField, creditsField, mayGuard, mayRevoke, SIGNED_IN_FORM, time, type PageTools, type Scope } from './signed-in.ts';

const KEY_NAME_MAX = 100;

export function keyPages(app: FastifyInstance, { stores, now, scopeOf, show, csrfField, teamLine }: PageTools): void {
  async function keysPage(request: FastifyRequest, reply: FastifyReply, top: Html | null, status = 200) {
    const scope = await scopeOf(request);
    const keys = await stores.accounts.listKeys(scope.team.id);
    const query = request.query as Record<string, string | undefined>;
    const revoked = query.revoked ? keys.find((key) => key.id === query.revoked) : undefined;
    const limited = query.limited ? keys.find((key) => key.id === query.limited) : undefined;
    const today = utcDay(now());
    const limitCell = (key: ApiKeyRecord): Html | string => {
      const shown = key.dailyCreditLimit === null ? 'none' : String(key.dailyCreditLimit);
      if (key.revokedAt !== null || !mayGuard(scope.user)) return shown;
      return html`<form method="post" action="/dashboard/keys/${key.id}/limit" class="limit-form">
        ${csrfField(scope)}
        <label for="limit-${key.id}" class="visually-hidden">Daily credit limit of ${key.name}</label>
        <input id="limit-${key.id}" name="limit" type="text" inputmode="numeric" maxlength="16" value="${key.dailyCreditLimit ?? ''}" placeholder="none" />
        <button type="submit" class="secondary">Set</button>
      </form>`;
    };
    const done = revoked
      ? notice('success', html`Key <strong>${revoked.name}</strong> is revoked: requests with it fail with 401.`)
      : limited
        ? notice('success', html`The daily credit limit of <strong>${limited.name}</strong> is ${limited.dailyCreditLimit === null ? 'removed' : html`${limited.dailyCreditLimit} credit${limited.dailyCreditLimit === 1 ? '' : 's'} a day`}.`)
        : null;
    return show(
      reply,
      scope,
      'Keys',
      'Keys',
      html`${top ?? done}${teamLine(scope)}
        <form method="post" action="/dashboard/keys">
          ${csrfField(scope)}
          <label for="key-name">Key name</label>
          <input id="key-name" name="name" type="text" maxlength="${KEY_NAME_MAX}" required />
          <button type="submit">Create key</button>
        </form>
        <h2>Keys of the team</h2>
        ${table(
          [
            { label: 'Name', long: true },
            { label: 'Key' },
            { label: 'Created' },
            { label: 'Last used' },
            { label: 'Daily credit limit' },
            { label: 'Spent today', num: true },
            { label: 'Status' },
            { label: 'Action' },
          ],
          keys.map((key) => [
            key.name,
            html`<code>${key.prefix}…${key.last4}</code>`,
            time(key.createdAt),
            time(key.lastUsedAt),
            limitCell(key),
            html`<span id="spent-${key.id}">${spentOn(key, today)}</span>`,
            key.revokedAt ? html`Revoked ${time(key.revokedAt)}` : 'Active',
            mayRevoke(scope.user, key) ? html`<form method="get" action="/dashboard/keys/${key.id}/revoke">${scope.teamField}<button type="submit" class="secondary">Revoke</button></form>` : '',
          ]),
          'No keys yet.',
        )}
        <p class="hint">Last use is recorded within seconds of a request. A key's daily credit limit bounds what its live scrapes spend per UTC day (past it they get 402 <code>KEY_CREDIT_LIMIT</code> until midnight UTC; cached results are still served); leave it empty for none. Spent today counts live scrapes in flight.</p>`,
      status,
    );
  }
  app.get('/keys', (request, reply) => keysPage(request, reply, null));

  app.post('/keys', { config: { form: [...SIGNED_IN_FORM, 'name'] } }, async (request, reply) => {
    const scope = await scopeOf(request);
    const name = String((request.body as Record<string, unknown>).name ?? '').trim();
    if (name === '' || name.length > KEY_NAME_MAX) return keysPage(request, reply, notice('error', `The key name must be 1 to ${KEY_NAME_MAX} characters.`), 422);
    const generated = generateKey();
    await stores.accounts.createKey({ teamId: scope.team.id, name, hash: generated.hash, prefix: generated.prefix, last4: generated.last4, createdBy: scope.user.id });
    return keysPage(
      request,
      reply,
      html`${notice('success', html`Key <strong>${name}</strong> created. Copy it now: it is shown only this once.`)}
        ${copyField('new-key', 'New key', generated.key)}`,
    );
  });

  app.post('/keys/:id/limit', { config: { form: [...SIGNED_IN_FORM, 'limit'] } }, async (request, reply) => {
    const scope = await scopeOf(request);
    if (!mayGuard(scope.user)) throw new PageError(403, "Only an owner sets a key's daily credit limit.");
    const id = (request.params as { id: string }).id;
    const key = (await stores.accounts.listKeys(scope.team.id)).find((k) => k.id === id && k.revokedAt === null);
    if (!key) throw new PageError(404, 'There is no such active key.');
    const limit = creditsField((request.body as Record<string, unknown>).limit, MAX_DAILY_CREDITS);
    if (limit === undefined) {
      return keysPage(request, reply, notice('error', `The daily credit limit must be a whole number of credits from 0 to ${MAX_DAILY_CREDITS.toLocaleString('en')}, or empty for none.`), 422);
    }
    await stores.accounts.updateKey(key.id, { dailyCreditLimit: limit });
    return reply.redirect(`/dashboard/keys${scope.teamQuery}${scope.teamQuery ? '&' : '?'}limited=${encodeURIComponent(key.id)}`, 303);
  });

  async function revocable(request: FastifyRequest): Promise<{ scope: Scope; key: ApiKeyRecord }> {
    const scope = await scopeOf(request);
    const id = (request.params as { id: string }).id;
    const key = (await stores.accounts.listKeys(scope.team.id)).find((k) => k.id === id && k.revokedAt === null);
    if (!key) throw new PageError(404, 'There is no such active key.');
    if (!mayRevoke(scope.user, key)) throw new PageError(403, 'A member can revoke only the keys it created.');
    return { scope, key };
  }

  app.get('/keys/:id/revoke', async (request, reply) => {
    const { scope, key } = await revocable(request);
    return show(
      reply,
      scope,
      'Keys',
      'Revoke key',
      html`<p>Revoke the key <strong>${key.name}</strong> (<code>${key.prefix}…${key.last4}</code>)? Every request with it fails with 401 from the next one on. This cannot be undone.</p>
        <form method="post" action="/dashboard/keys/${key.id}/revoke">
          ${csrfField(scope)}
          <button type="submit" class="danger">Revoke key</button>
        </form>
        <p><a href="/dashboard/keys${scope.teamQuery}">Cancel</a></p>`,
    );
  });

  app.post('/keys/:id/revoke', { config: { form: SIGNED_IN_FORM } }, async (request, reply) => {
    const { scope, key } = await revocable(request);
    await stores.accounts.revokeKey(key.id);
    return reply.redirect(`/dashboard/keys${scope.teamQuery}${scope.teamQuery ? '&' : '?'}revoked=${encodeURIComponent(key.id)}`, 303);
  });
}
