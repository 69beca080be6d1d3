// The signed-in pages of the dashboard: Overview, Keys, Usage, Ledger, Jobs, Try it (and Webhooks, webhooks.ts, and Monitors, monitors.ts). Each shows
// one team: the user's own, or for an operator any team (`?team=`). A user who asks for another
// team's page gets 404, as for a page that does not exist.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { TSchema } from 'typebox';
import type { EndpointDeclaration } from '../endpoints/types.ts';
import { issuePasswordLink, mayGrant, userActionProblem } from '../account/users.ts';
import { generateKey } from '../server/keys.ts';
import { MAX_DAILY_CREDITS, MAX_LOW_BALANCE_ALERT, normaliseEmail } from '../store/rules.ts';
import { fullQuerySchema } from '../server/query.ts';
import { spentOn, utcDay, type ApiKeyRecord, type RequestRecord, type Team, type User } from '../store/types.ts';
import { barChart, columnChart, SHARE } from './charts.ts';
import { Readable } from 'node:stream';
import { itemJson } from '../jobs/endpoints.ts';
import { html, notice, page, PageError, sendPage, table, type Html } from './html.ts';
import type { DashboardOptions } from './plugin.ts';
import type { SignedIn } from './session.ts';
import { webhookPages } from './webhooks.ts';
import { monitorsPage } from './monitors.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const RECORDS_PER_PAGE = 50;
const ENTRIES_PER_PAGE = 50;
const KEY_NAME_MAX = 100;

interface Scope {
  signedIn: SignedIn;
  user: User;
  team: Team;
  /** `?team=…` when an operator looks at another team than its own, else ''. */
  teamQuery: string;
  /** The same as a hidden form field. */
  teamField: Html;
}

const dayStart = (day: string): number => Date.parse(`${day}T00:00:00.000Z`);
/** A moment as `2026-11-26 22:20:21`, which wraps between the date and the time, never inside either. */
const time = (iso: string | null): Html => (iso === null ? html`—` : html`<span class="unbroken">${iso.slice(0, 10)}</span> <span class="unbroken">${iso.slice(11, 19)}</span>`);
/** An API path that may wrap after each slash. */
const apiPath = (path: string): Html[] => path.split('/').map((part, i) => (i === 0 ? html`${part}` : html`/<wbr />${part}`));
const mayRevoke = (user: User, key: ApiKeyRecord): boolean => key.revokedAt === null && (user.role !== 'member' || key.createdBy === user.id);
const mayUse = mayRevoke;
/** A secret shown once: a read-only field and a Copy button (dashboard.js). */
const copyField = (id: string, label: string, value: string): Html =>
  html`<div class="key-output">
    <div>
      <label for="${id}">${label}</label>
      <input id="${id}" type="text" readonly value="${value}" />
    </div>
    <button type="button" data-copy="${id}">Copy</button>
  </div>`;
/** A declaration's description, its `backticked` parts as code. */
const withCode = (text: string): Html[] => text.split('`').map((part, i) => (i % 2 === 1 ? html`<code>${part}</code>` : html`${part}`));

/** Who may set the team's spending guards (a key's daily credit limit, the low-balance alert): an owner, or an operator. */
const mayGuard = (user: User): boolean => user.role !== 'member';

/**
 * A number of credits from a form field: a whole number from 0 to `max`, or null for none (the
 * field left empty, or `none`); undefined when it is neither, or missing.
 */
export function creditsField(raw: unknown, max: number): number | null | undefined {
  if (typeof raw !== 'string') return undefined;
  const text = raw.trim().replaceAll(',', '').replaceAll('_', '');
  if (text === '' || text.toLowerCase() === 'none') return null;
  if (!/^\d{1,13}$/.test(text)) return undefined;
  const value = Number(text);
  return value <= max ? value : undefined;
}

/** The banner of every page while the team's balance is under its low-balance alert, or spent. */
function balanceBanner(team: Team, teamQuery: string): Html | null {
  const link = html`<a href="/dashboard${teamQuery}#alert">Alert settings</a>`;
  if (team.credits <= 0) {
    return html`<div class="banner" role="alert" id="low-balance-banner"><strong>No credits left.</strong> Live scrapes are refused (402 <code>INSUFFICIENT_CREDITS</code>); cached results are still served. Ask your operator for a top-up.</div>`;
  }
  if (team.lowBalanceAlert !== null && team.credits < team.lowBalanceAlert) {
    return html`<div class="banner" role="alert" id="low-balance-banner"><strong>Low balance:</strong> ${team.credits} credits left, below the alert at ${team.lowBalanceAlert}. Ask your operator for a top-up before live scrapes start failing with 402. ${link}</div>`;
  }
  return null;
}

/** The fields every form of a signed-in page posts: the session's CSRF token and, for an operator, the team. */
export const SIGNED_IN_FORM = ['csrf', 'team'] as const;

export const signedInPages: FastifyPluginAsync<DashboardOptions> = async (app, { stores, endpoints, now, callAs, baseUrl, webhooks }) => {
  app.addHook('preHandler', async (request, reply) => {
    if (request.signedIn) return;
    if (request.method === 'GET') return reply.redirect('/dashboard/sign-in', 303);
    throw new PageError(403, 'You are signed out. Sign in again.');
  });

  async function scopeOf(request: FastifyRequest): Promise<Scope> {
    const signedIn = request.signedIn as SignedIn;
    const { user } = signedIn;
    const asked = (request.query as Record<string, unknown>).team ?? (request.body as Record<string, unknown> | undefined)?.team;
    let team: Team | null;
    if (typeof asked === 'string' && asked !== '' && asked !== user.teamId) {
      if (user.role !== 'operator') throw new PageError(404, 'There is no such page.');
      team = await stores.accounts.getTeam(asked);
    } else team = await stores.accounts.getTeam(user.teamId);
    if (!team) throw new PageError(404, 'There is no such team.');
    const other = team.id !== user.teamId;
    return {
      signedIn,
      user,
      team,
      teamQuery: other ? `?team=${encodeURIComponent(team.id)}` : '',
      teamField: other ? html`<input type="hidden" name="team" value="${team.id}" />` : html``,
    };
  }

  const show = (reply: FastifyReply, scope: Scope, current: string, title: string, body: Html, status = 200) =>
    sendPage(
      reply,
      status,
      page({ title, nav: { current, csrf: scope.signedIn.session.csrf, email: scope.user.email, teamQuery: scope.teamQuery }, banner: balanceBanner(scope.team, scope.teamQuery), body }),
    );

  const csrfField = (scope: Scope) => html`<input type="hidden" name="csrf" value="${scope.signedIn.session.csrf}" />${scope.teamField}`;
  const teamLine = (scope: Scope) => html`<p class="hint">Team <strong>${scope.team.name}</strong> (${scope.team.id})${scope.user.role === 'operator' ? ', as operator' : ''}.</p>`;

  // ---- Overview
  async function overview(request: FastifyRequest, reply: FastifyReply, message: Html | null = null, status = 200) {
    const scope = await scopeOf(request);
    const { team, user } = scope;
    const since = dayStart(utcDay(now())) - 29 * DAY_MS;
    const totals = await stores.requests.totals(team.id, since);
    const spent = totals.days.reduce((sum, day) => sum + day.credits, 0);
    const requests = totals.days.reduce((sum, day) => sum + day.requests, 0);
    const operator =
      user.role === 'operator'
        ? html`<h2>Operator</h2>
            <form method="get" action="/dashboard" data-autosubmit>
              <label for="team">Team</label>
              <select id="team" name="team">
                ${(await stores.accounts.listTeams()).map((t) => html`<option value="${t.id}" ${t.id === team.id ? html`selected` : ''}>${t.name} (${t.id})</option>`)}
              </select>
              <button type="submit" class="secondary">Show team</button>
            </form>
            <form method="post" action="/dashboard/credits">
              ${csrfField(scope)}
              <label for="amount">Credits to add</label>
              <input id="amount" name="amount" type="number" min="1" max="100000000" step="1" required />
              <button type="submit">Add credits</button>
            </form>`
        : '';
    return show(
      reply,
      scope,
      'Overview',
      'Overview',
      html`${message}${teamLine(scope)}
        <dl class="cards">
          <div class="card"><dt>Balance</dt><dd id="balance">${team.credits}</dd></div>
          <div class="card"><dt>Rate limit</dt><dd>${team.rateLimit} <small>requests / 60 s</small></dd></div>
          <div class="card"><dt>Credits spent, last 30 days</dt><dd>${spent}</dd></div>
          <div class="card"><dt>Requests, last 30 days</dt><dd>${requests}</dd></div>
          <div class="card"><dt>Low-balance alert</dt><dd id="low-balance-alert">${team.lowBalanceAlert === null ? 'none' : team.lowBalanceAlert}</dd></div>
        </dl>
        <p>Each live scrape costs 1 credit; a cached result costs none. See the <a href="/docs">API docs</a> for every endpoint and its parameters.</p>
        ${user.role === 'member' ? '' : html`<p><a href="/dashboard/users${scope.teamQuery}">Users of the team</a>: add account holders and disable them.</p>`}
        ${mayGuard(user)
          ? html`<h2>Low-balance alert</h2>
              <form method="post" action="/dashboard/low-balance-alert">
                ${csrfField(scope)}
                <label for="alert">Warn when the balance falls below (credits)</label>
                <input id="alert" name="alert" type="text" inputmode="numeric" maxlength="20" value="${team.lowBalanceAlert ?? ''}" aria-describedby="alert-hint" />
                <p class="hint" id="alert-hint">Leave empty for none. While the balance is below it, every page of the dashboard shows a banner; crossing it records a <code>credits.low</code> event (and reaching 0 <code>credits.exhausted</code>), sent to the team's webhooks.</p>
                <button type="submit">Save alert</button>
              </form>`
          : ''}
        ${operator}
        <h2>Sessions</h2>
        <form method="post" action="/dashboard/sign-out-everywhere">
          ${csrfField(scope)}
          <button type="submit" class="secondary">Sign out everywhere</button>
        </form>`,
      status,
    );
  }
  app.get('/', (request, reply) => {
    const query = request.query as Record<string, string | undefined>;
    const saved = query.saved === 'alert' ? notice('success', 'The low-balance alert is saved.') : null;
    return overview(request, reply, saved);
  });

  app.post('/low-balance-alert', { config: { form: [...SIGNED_IN_FORM, 'alert'] } }, async (request, reply) => {
    const scope = await scopeOf(request);
    if (!mayGuard(scope.user)) throw new PageError(403, 'Only an owner sets the low-balance alert.');
    const alert = creditsField((request.body as Record<string, unknown>).alert, MAX_LOW_BALANCE_ALERT);
    if (alert === undefined) {
      return overview(request, reply, notice('error', `The low-balance alert must be a whole number of credits from 0 to ${MAX_LOW_BALANCE_ALERT.toLocaleString('en')}, or empty for none.`), 422);
    }
    await stores.accounts.updateTeam(scope.team.id, { lowBalanceAlert: alert });
    return reply.redirect(`/dashboard${scope.teamQuery}${scope.teamQuery ? '&' : '?'}saved=alert`, 303);
  });

  app.post('/credits', { config: { form: [...SIGNED_IN_FORM, 'amount'] } }, async (request, reply) => {
    const scope = await scopeOf(request);
    if (scope.user.role !== 'operator') throw new PageError(403, 'Only an operator can add credits.');
    const raw = String((request.body as Record<string, unknown>).amount ?? '');
    const amount = Number(raw);
    if (!/^\d{1,9}$/.test(raw) || amount < 1 || amount > 100_000_000) {
      return overview(request, reply, notice('error', 'The amount must be a whole number from 1 to 100,000,000.'), 422);
    }
    await stores.ledger.addCredits(scope.team.id, amount);
    return reply.redirect(`/dashboard${scope.teamQuery}${scope.teamQuery ? '&' : '?'}added=${amount}`, 303);
  });

  // ---- Keys
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

  // ---- Usage
  app.get('/usage', async (request, reply) => {
    const scope = await scopeOf(request);
    const query = request.query as Record<string, string | undefined>;
    const problems: string[] = [];
    const endpoint = query.endpoint || undefined;
    const status = query.status || undefined;
    const day = query.day || undefined;
    if (status !== undefined && !/^[1-5]\d\d$/.test(status)) problems.push('The status must be an HTTP status such as 200 or 502.');
    if (day !== undefined && (Number.isNaN(dayStart(day)) || utcDay(dayStart(day)) !== day)) problems.push('The day must be a date such as 2026-11-26.');
    const since = dayStart(utcDay(now())) - 29 * DAY_MS;
    const totals = await stores.requests.totals(scope.team.id, since);
    const byDay = new Map(totals.days.map((d) => [d.day, d]));
    const days = Array.from({ length: 30 }, (_, i) => {
      const label = utcDay(since + i * DAY_MS);
      return byDay.get(label) ?? { day: label, requests: 0, credits: 0, cached: 0 };
    });
    const share = (cached: number, requests: number) => (requests === 0 ? 0 : (cached / requests) * 100);
    let records: RequestRecord[] = [];
    let next: string | null = null;
    if (problems.length === 0) {
      try {
        const found = await stores.requests.list({
          teamId: scope.team.id,
          endpoint,
          status: status === undefined ? undefined : Number(status),
          since: day === undefined ? undefined : dayStart(day),
          until: day === undefined ? undefined : dayStart(day) + DAY_MS,
          limit: RECORDS_PER_PAGE,
          cursor: query.cursor || null,
        });
        ({ records, next } = { records: found.records, next: found.next });
      } catch (error) {
        if (!(error instanceof RangeError)) throw error;
        problems.push('That page link is not valid any more; start from the first page.');
      }
    }
    const filters = new URLSearchParams({ ...(scope.teamQuery ? { team: scope.team.id } : {}), ...(endpoint ? { endpoint } : {}), ...(status ? { status } : {}), ...(day ? { day } : {}) });
    const paths = [...new Set([...endpoints.map((e) => e.path), '/v1/account', '/v1/account/usage', '/v1/account/requests', ...totals.endpoints.map((e) => e.endpoint)])];
    return show(
      reply,
      scope,
      'Usage',
      'Usage',
      html`${problems.map((p) => notice('error', p))}${teamLine(scope)}
        <h2>Last 30 days</h2>
        <div class="charts">
          ${columnChart('Requests per day', days.map((d) => ({ label: d.day, value: d.requests })))}
          ${columnChart('Credits spent per day', days.map((d) => ({ label: d.day, value: d.credits })))}
          ${columnChart('Cache-hit share per day', days.map((d) => ({ label: d.day, value: share(d.cached, d.requests) })), SHARE)}
          ${barChart('Requests per endpoint', totals.endpoints.map((e) => ({ label: e.endpoint, value: e.requests })))}
          ${barChart('Credits spent per endpoint', totals.endpoints.map((e) => ({ label: e.endpoint, value: e.credits })))}
          ${barChart('Cache-hit share per endpoint', totals.endpoints.map((e) => ({ label: e.endpoint, value: share(e.cached, e.requests) })), SHARE)}
        </div>
        <h2>Recent requests</h2>
        <form method="get" action="/dashboard/usage" class="filters">
          ${scope.teamField}
          <div>
            <label for="filter-endpoint">Endpoint</label>
            <select id="filter-endpoint" name="endpoint">
              <option value="">All endpoints</option>
              ${paths.map((path) => html`<option value="${path}" ${path === endpoint ? html`selected` : ''}>${path}</option>`)}
            </select>
          </div>
          <div>
            <label for="filter-status">Status</label>
            <input id="filter-status" name="status" type="text" inputmode="numeric" maxlength="3" value="${status ?? ''}" />
          </div>
          <div>
            <label for="filter-day">Day</label>
            <input id="filter-day" name="day" type="date" value="${day ?? ''}" />
          </div>
          <button type="submit">Filter</button>
        </form>
        ${table(
          [{ label: 'Time (UTC)' }, { label: 'Endpoint' }, { label: 'Status' }, { label: 'Credits', num: true }, { label: 'Cached' }, { label: 'Duration', num: true }, { label: 'Request id', long: true }],
          records.map((r) => [
            time(r.at),
            apiPath(r.endpoint),
            html`${r.status}${r.errorCode ? html` <small>${r.errorCode}</small>` : ''}`,
            r.credits,
            r.cached ? 'yes' : 'no',
            `${r.durationMs.toFixed(1)} ms`,
            html`<code>${r.requestId}</code>`,
          ]),
          'No requests match.',
        )}
        <div class="pager">
          ${query.cursor ? html`<a href="/dashboard/usage?${filters.toString()}">Newest</a>` : ''}
          ${next ? html`<a href="/dashboard/usage?${new URLSearchParams([...filters, ['cursor', next]]).toString()}">Older requests</a>` : ''}
        </div>
        <p class="hint">Requests are listed within seconds of their answer.</p>`,
    );
  });

  // ---- Ledger
  app.get('/ledger', async (request, reply) => {
    const scope = await scopeOf(request);
    const raw = (request.query as Record<string, string | undefined>).before;
    const before = raw !== undefined && /^\d{1,15}$/.test(raw) ? Number(raw) : undefined;
    const [entries, usage] = await Promise.all([stores.ledger.entries(scope.team.id, ENTRIES_PER_PAGE + 1, before), stores.ledger.usage(scope.team.id)]);
    const shown = entries.slice(0, ENTRIES_PER_PAGE);
    const sum = usage ? usage.toppedUp - usage.charged + usage.refunded : 0;
    const kinds = { topup: 'Top-up', charge: 'Charge', refund: 'Refund' } as const;
    const more = entries.length > ENTRIES_PER_PAGE ? new URLSearchParams({ ...(scope.teamQuery ? { team: scope.team.id } : {}), before: String(shown.at(-1)?.id) }) : null;
    return show(
      reply,
      scope,
      'Ledger',
      'Ledger',
      html`${teamLine(scope)}
        <dl class="cards">
          <div class="card"><dt>Balance</dt><dd>${scope.team.credits}</dd></div>
          <div class="card"><dt>Sum of all entries</dt><dd>${sum}</dd></div>
          <div class="card"><dt>Credits held by requests in flight</dt><dd>${usage?.pending ?? 0}</dd></div>
        </dl>
        <p class="hint">A live scrape holds its credit as a charge when it starts; a failed one is refunded.</p>
        ${table(
          [{ label: 'Time (UTC)' }, { label: 'Kind' }, { label: 'Credits', num: true }, { label: 'Request id', long: true }],
          shown.map((e) => [time(e.createdAt), kinds[e.reason], e.amount > 0 ? `+${e.amount}` : `−${-e.amount}`, e.requestId ? html`<code>${e.requestId}</code>` : '—']),
          'No entries.',
        )}
        <div class="pager">
          ${before !== undefined ? html`<a href="/dashboard/ledger${scope.teamQuery}">Newest</a>` : ''}
          ${more ? html`<a href="/dashboard/ledger?${more.toString()}">Older entries</a>` : ''}
        </div>`,
    );
  });

  // ---- Users of the team (owners and operators)
  async function manager(request: FastifyRequest): Promise<Scope> {
    const scope = await scopeOf(request);
    if (scope.user.role === 'member') throw new PageError(403, "Only an owner manages the team's users.");
    return scope;
  }

  async function usersPage(request: FastifyRequest, reply: FastifyReply, top: Html | null, status = 200) {
    const scope = await manager(request);
    const users = await stores.users.listUsers(scope.team.id);
    return show(
      reply,
      scope,
      'Overview',
      'Users',
      html`${top}${teamLine(scope)}
        <form method="post" action="/dashboard/users">
          ${csrfField(scope)}
          <label for="user-email">New user's email</label>
          <input id="user-email" name="email" type="email" required maxlength="254" />
          <label for="user-role">Role</label>
          <select id="user-role" name="role">
            <option value="member">member: sees usage, uses Try it, manages its own keys</option>
            <option value="owner">owner: manages every key and user of the team</option>
          </select>
          <button type="submit">Add user</button>
        </form>
        <h2>Users of the team</h2>
        ${table(
          [{ label: 'Email', long: true }, { label: 'Role' }, { label: 'Password' }, { label: 'Status' }, { label: 'Action' }],
          users.map((u) => [
            u.email,
            u.role,
            u.hasPassword ? 'set' : 'not yet',
            u.disabledAt ? html`Disabled ${time(u.disabledAt)}` : 'Active',
            u.disabledAt || userActionProblem(scope.user, u) ? '' : html`<form method="get" action="/dashboard/users/${u.id}/disable">${scope.teamField}<button type="submit" class="secondary">Disable</button></form>`,
          ]),
          'No users.',
        )}`,
      status,
    );
  }
  app.get('/users', (request, reply) => usersPage(request, reply, null));

  app.post('/users', { config: { form: [...SIGNED_IN_FORM, 'email', 'role'] } }, async (request, reply) => {
    const scope = await manager(request);
    const body = request.body as Record<string, unknown>;
    const role = body.role === 'owner' || body.role === 'member' ? body.role : null;
    let email: string;
    try {
      email = normaliseEmail(String(body.email ?? ''));
    } catch {
      return usersPage(request, reply, notice('error', 'That is not an email address.'), 422);
    }
    if (!role || !mayGrant(scope.user, role)) return usersPage(request, reply, notice('error', 'Choose a role: member or owner.'), 422);
    // Only this team's users are looked at: an account under this email in another team is its
    // own and changes nothing here, so the answer never tells whether there is one.
    const inTeam = () => usersPage(request, reply, notice('error', 'This email is already a user of this team.'), 409);
    if ((await stores.users.listUsers(scope.team.id)).some((user) => user.email === email)) return inTeam();
    let created: User;
    try {
      created = await stores.users.createUser({ teamId: scope.team.id, email, role });
    } catch (error) {
      // Added meanwhile, by another owner.
      if (error instanceof RangeError) return inTeam();
      throw error;
    }
    const link = await issuePasswordLink(stores.users, created.id, baseUrl(), now());
    return usersPage(
      request,
      reply,
      html`${notice('success', html`User <strong>${email}</strong> added. Send them this link to set their password: it works once, for 24 hours.`)}
        ${copyField('new-link', 'Set-password link', link)}`,
    );
  });

  async function disablable(request: FastifyRequest): Promise<{ scope: Scope; target: User }> {
    const scope = await manager(request);
    const id = (request.params as { id: string }).id;
    const target = (await stores.users.listUsers(scope.team.id)).find((u) => u.id === id && u.disabledAt === null);
    if (!target || target.id === scope.user.id) throw new PageError(404, 'There is no such user to disable.');
    const problem = userActionProblem(scope.user, target);
    if (problem) throw new PageError(403, problem);
    return { scope, target };
  }

  app.get('/users/:id/disable', async (request, reply) => {
    const { scope, target } = await disablable(request);
    return show(
      reply,
      scope,
      'Overview',
      'Disable user',
      html`<p>Disable <strong>${target.email}</strong>? They are signed out everywhere and cannot sign in again; their keys keep working until revoked.</p>
        <form method="post" action="/dashboard/users/${target.id}/disable">
          ${csrfField(scope)}
          <button type="submit" class="danger">Disable user</button>
        </form>
        <p><a href="/dashboard/users${scope.teamQuery}">Cancel</a></p>`,
    );
  });

  app.post('/users/:id/disable', { config: { form: SIGNED_IN_FORM } }, async (request, reply) => {
    const { target } = await disablable(request);
    await stores.users.disableUser(target.id);
    return usersPage(request, reply, notice('success', html`<strong>${target.email}</strong> is disabled and signed out everywhere.`));
  });

  // ---- Try it
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

  // ---- Jobs: the team's batch jobs, their progress, results to download, cancel.
  app.get('/jobs', async (request, reply) => {
    const scope = await scopeOf(request);
    const { jobs } = await stores.jobs.list(scope.team.id, 50);
    const cancelled = (request.query as Record<string, string | undefined>).cancelled;
    const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
    const rows = jobs.map((job) => {
      const ended = job.total - job.pending;
      const active = job.status === 'queued' || job.status === 'running';
      return [
        html`<code>${job.id}</code>${job.label ? html`<br />${job.label}` : ''}`,
        job.status,
        html`<progress max="${job.total}" value="${ended}" aria-label="Items ended">${ended} of ${job.total}</progress> ${ended} / ${job.total}`,
        html`${job.succeeded} ok · ${job.failed} failed · ${job.cancelled} cancelled`,
        String(job.pages),
        String(job.creditsCharged),
        time(iso(job.createdAt)),
        html`<a href="/dashboard/jobs/${job.id}/results.ndjson${scope.teamQuery}" download="${job.id}.ndjson">Results (NDJSON)</a>`,
        active
          ? html`<form method="post" action="/dashboard/jobs/${job.id}/cancel">${csrfField(scope)}<button type="submit" class="secondary">Cancel</button></form>`
          : '',
      ];
    });
    return show(
      reply,
      scope,
      'Jobs',
      'Batch jobs',
      html`${cancelled ? notice('success', html`Job <code>${cancelled}</code> cancelled: its items not started will not run, nor be charged.`) : ''}${teamLine(scope)}
        <p>Jobs are created with <code>POST /v1/jobs</code> (see the <a href="/docs">API docs</a>), the SDK or <code>pagescrape job create</code>. Each live page an item keeps costs 1 credit. The newest 50 are shown.</p>
        ${table(
          [
            { label: 'Job' },
            { label: 'Status' },
            { label: 'Progress' },
            { label: 'Items' },
            { label: 'Pages', num: true },
            { label: 'Credits', num: true },
            { label: 'Created' },
            { label: 'Download' },
            { label: '' },
          ],
          rows,
          'No batch jobs yet.',
        )}`,
    );
  });

  /** The team's job named in the path; 404 for another team's or none. */
  async function ownJob(request: FastifyRequest) {
    const scope = await scopeOf(request);
    const { id } = request.params as { id: string };
    const job = await stores.jobs.get(scope.team.id, id);
    if (!job) throw new PageError(404, 'There is no such job.');
    return { scope, job };
  }

  app.get('/jobs/:id/results.ndjson', async (request, reply) => {
    const { job } = await ownJob(request);
    async function* lines(): AsyncGenerator<string> {
      let after = -1;
      for (;;) {
        const items = await stores.jobs.items(job.id, { after, limit: 50 });
        if (items.length === 0) return;
        let chunk = '';
        for (const item of items) if (item.status !== 'pending' && item.status !== 'running') chunk += `${itemJson(item)}\n`;
        if (chunk) yield chunk;
        after = items[items.length - 1]?.index ?? after;
      }
    }
    return reply
      .header('content-type', 'application/x-ndjson; charset=utf-8')
      .header('content-disposition', `attachment; filename="${job.id}.ndjson"`)
      .send(Readable.from(lines(), { objectMode: false }));
  });

  app.post('/jobs/:id/cancel', { config: { form: SIGNED_IN_FORM } }, async (request, reply) => {
    const { scope, job } = await ownJob(request);
    await stores.jobs.cancel(scope.team.id, job.id, now());
    return reply.redirect(`/dashboard/jobs${scope.teamQuery}${scope.teamQuery ? '&' : '?'}cancelled=${encodeURIComponent(job.id)}`, 303);
  });

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

  // ---- Webhooks (webhooks.ts)
  await webhookPages(app, { stores, now, scopeOf, show, csrfField, teamLine, copyField, time, formOf: (...fields) => [...SIGNED_IN_FORM, ...fields], webhooks });
  // ---- Monitors (monitors.ts)
  monitorsPage(app, { stores, now, scopeOf, show, csrfField });
};
