// The dashboard's Usage and Ledger pages: the last 30 days in charts, the team's recent requests
// (filtered by endpoint, status and day, paged), and its ledger of top-ups, charges and refunds.
import type { FastifyInstance } from 'fastify';
import type { EndpointDeclaration } from '../endpoints/types.ts';
import { utcDay, type RequestRecord } from '../store/types.ts';
import { barChart, columnChart, SHARE } from './charts.ts';
import { html, notice, table } from './html.ts';
import { apiPath, DAY_MS, dayStart, time, type PageTools } from './signed-in.ts';

const RECORDS_PER_PAGE = 50;
const ENTRIES_PER_PAGE = 50;

export function usagePages(app: FastifyInstance, { stores, now, scopeOf, show, teamLine }: PageTools, endpoints: readonly EndpointDeclaration[]): void {
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
            time(new Date(r.at).toISOString()),
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
}
