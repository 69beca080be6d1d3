// The dashboard's Monitors page: each monitor of the team with its last run, next run and last
// change (its patch shown operation by operation), and forms to pause, resume and delete it.
// Who may change them: an owner or operator; a member sees them.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { MonitorRecord, MonitorRun, Stores, Team, User } from '../store/types.ts';
import { durationText } from '../work/monitors/schedule.ts';
import { html, notice, PageError, table, type Html } from './html.ts';

interface MonitorScope {
  user: User;
  team: Team;
  teamQuery: string;
}

export interface MonitorPageDeps<S extends MonitorScope> {
  stores: Stores;
  now: () => number;
  scopeOf: (request: FastifyRequest) => Promise<S>;
  show: (reply: FastifyReply, scope: S, current: string, title: string, body: Html, status?: number) => unknown;
  csrfField: (scope: S) => Html;
}

const MONITORS_SHOWN = 100;
const VALUE_SHOWN = 200;

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
const time = (ms: number | null): Html => {
  const at = iso(ms);
  return at === null ? html`—` : html`<span class="unbroken">${at.slice(0, 10)}</span> <span class="unbroken">${at.slice(11, 19)}</span>`;
};

/** A value of a patch, short: JSON cut at VALUE_SHOWN characters. */
function shortValue(value: unknown): string {
  const text = JSON.stringify(value) ?? 'null';
  return text.length > VALUE_SHOWN ? `${text.slice(0, VALUE_SHOWN)}…` : text;
}

/** A patch as a person reads it: one line per operation. */
export function readablePatch(patch: readonly unknown[]): Html {
  const lines = patch.map((operation) => {
    const { op, path, value } = operation as { op: string; path: string; value?: unknown };
    const verb = op === 'add' ? 'added' : op === 'remove' ? 'removed' : op === 'replace' ? 'now' : op;
    return html`<li><code>${path || '/'}</code> ${verb}${op === 'remove' ? '' : html` <code>${shortValue(value)}</code>`}</li>`;
  });
  return html`<ul class="patch">${lines}</ul>`;
}

const schedule = (m: MonitorRecord): Html => (m.interval !== null ? html`every ${durationText(m.interval)}` : html`<code>${m.cron ?? ''}</code> ${m.timezone}`);
const target = (m: MonitorRecord): Html => html`<code>${m.endpoint}</code> ${Object.entries(m.params).map(([name, value]) => html`<code>${name}=${value}</code> `)}`;

export function monitorsPage<S extends MonitorScope>(app: FastifyInstance, { stores, now, scopeOf, show, csrfField }: MonitorPageDeps<S>): void {
  const mayChange = (user: User) => user.role !== 'member';

  async function render(request: FastifyRequest, reply: FastifyReply, message: Html | null = null, status = 200) {
    const scope = await scopeOf(request);
    const monitors = await stores.monitors.list(scope.team.id, MONITORS_SHOWN);
    const details: Html[] = [];
    const rows: Html[][] = [];
    for (const m of monitors) {
      const [last] = await stores.monitors.runs(scope.team.id, m.id, 1);
      const change = m.lastChangeAt === null ? undefined : (await stores.monitors.runs(scope.team.id, m.id, 20)).find((run: MonitorRun) => run.changed);
      const actions = mayChange(scope.user)
        ? html`<form method="post" action="/dashboard/monitors/${m.id}/${m.status === 'active' ? 'pause' : 'resume'}" class="inline">
              ${csrfField(scope)}<button type="submit" class="secondary">${m.status === 'active' ? 'Pause' : 'Resume'}</button>
            </form>
            <form method="post" action="/dashboard/monitors/${m.id}/delete" class="inline">
              ${csrfField(scope)}<button type="submit" class="danger">Delete</button>
            </form>`
        : html``;
      rows.push([
        html`<strong>${m.label ?? m.id}</strong><br />${target(m)}`,
        schedule(m),
        html`${m.status}`,
        last ? html`${time(last.startedAt)} <span class="run-${last.status}">${last.status}</span>${last.error ? html` <small>${last.error.code}</small>` : ''}` : html`—`,
        m.status === 'paused' ? html`—` : time(m.nextRunAt),
        time(m.lastChangeAt),
        actions,
      ]);
      if (change?.patch) {
        details.push(html`<section class="monitor-change" id="change-${m.id}">
          <h3>${m.label ?? m.id}: last change, ${time(change.finishedAt)}</h3>
          ${readablePatch(change.patch)}
        </section>`);
      }
    }
    return show(
      reply,
      scope,
      'Monitors',
      'Monitors',
      html`${message}
        <p>Pages watched on a schedule: each run is a live scrape (1 credit when kept), compared with the last successful run; a change is kept as a JSON Patch and sent to webhooks as <code>monitor.changed</code>. Create them with the API (<code>POST /v1/monitors</code>), the SDK or <code>pagescrape monitor create</code>.</p>
        ${table(
          [{ label: 'Monitor', long: true }, { label: 'Schedule' }, { label: 'Status' }, { label: 'Last run' }, { label: 'Next run' }, { label: 'Last change' }, { label: '' }],
          rows,
          'No monitors yet.',
        )}
        ${details.length > 0 ? html`<h2>Last changes</h2>${details}` : ''}`,
      status,
    );
  }

  async function changeable(request: FastifyRequest): Promise<{ scope: S; monitor: MonitorRecord }> {
    const scope = await scopeOf(request);
    if (!mayChange(scope.user)) throw new PageError(403, 'A member cannot change monitors; ask an owner.');
    const monitor = await stores.monitors.get(scope.team.id, (request.params as { id: string }).id);
    if (!monitor) throw new PageError(404, 'There is no such monitor.');
    return { scope, monitor };
  }

  app.get('/monitors', (request, reply) => render(request, reply));

  app.post('/monitors/:id/pause', { config: { form: ['csrf', 'team'] } }, async (request, reply) => {
    const { scope, monitor } = await changeable(request);
    await stores.monitors.update(scope.team.id, monitor.id, { status: 'paused' });
    return render(request, reply, notice('success', html`Monitor <strong>${monitor.label ?? monitor.id}</strong> paused.`));
  });

  app.post('/monitors/:id/resume', { config: { form: ['csrf', 'team'] } }, async (request, reply) => {
    const { scope, monitor } = await changeable(request);
    // Resumed: a run at once, as the API's resume does.
    await stores.monitors.update(scope.team.id, monitor.id, { status: 'active', nextRunAt: now() });
    return render(request, reply, notice('success', html`Monitor <strong>${monitor.label ?? monitor.id}</strong> resumed.`));
  });

  app.post('/monitors/:id/delete', { config: { form: ['csrf', 'team'] } }, async (request, reply) => {
    const { scope, monitor } = await changeable(request);
    await stores.monitors.delete(scope.team.id, monitor.id);
    return render(request, reply, notice('success', html`Monitor <strong>${monitor.label ?? monitor.id}</strong> deleted.`));
  });
}
