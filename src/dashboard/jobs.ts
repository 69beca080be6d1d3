// The dashboard's Jobs page: the team's batch jobs, their progress, results to download, cancel.
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { itemJson } from '../jobs/endpoints.ts';
import { html, notice, PageError, table } from './html.ts';
import { SIGNED_IN_FORM, time, type PageTools } from './signed-in.ts';

export function jobPages(app: FastifyInstance, { stores, now, scopeOf, show, csrfField, teamLine }: PageTools): void {
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
}
