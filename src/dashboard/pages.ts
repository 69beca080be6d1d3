// The signed-in pages of the dashboard: this file holds the Overview and what every page shares
// (the team it shows, its frame); each other section is a file of its own (Keys keys.ts, Usage
// and Ledger usage.ts, Users users.ts, Jobs jobs.ts, Try it try-it.ts, Webhooks webhooks.ts,
// Monitors monitors.ts). Each shows one team: the user's own, or for an operator any team
// (`?team=`). A user who asks for another team's page gets 404, as for a page that does not exist.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { MAX_LOW_BALANCE_ALERT } from '../store/rules.ts';
import { utcDay, type Team } from '../store/types.ts';
import { html, notice, page, PageError, sendPage, type Html } from './html.ts';
import { jobPages } from './jobs.ts';
import { keyPages } from './keys.ts';
import { monitorsPage } from './monitors.ts';
import type { DashboardOptions } from './options.ts';
import type { SignedIn } from './session.ts';
import { creditsField, DAY_MS, dayStart, mayGuard, SIGNED_IN_FORM, type Scope } from './signed-in.ts';
import { tryItPages } from './try-it.ts';
import { usagePages } from './usage.ts';
import { userPages } from './users.ts';
import { webhookPages } from './webhooks.ts';

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

  const tools = { stores, now, scopeOf, show, csrfField, teamLine };
  // ---- Keys (keys.ts)
  keyPages(app, tools);
  // ---- Usage and Ledger (usage.ts)
  usagePages(app, tools, endpoints);
  // ---- Users of the team, for owners and operators (users.ts)
  userPages(app, tools, baseUrl);
  // ---- Jobs (jobs.ts)
  jobPages(app, tools);
  // ---- Try it (try-it.ts)
  tryItPages(app, tools, endpoints, callAs);
  // ---- Webhooks (webhooks.ts)
  await webhookPages(app, tools, webhooks);
  // ---- Monitors (monitors.ts)
  monitorsPage(app, tools);
};
