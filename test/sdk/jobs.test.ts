// Batch jobs as users of the SDK and its command line meet them: client.jobs against a real
// service (start(), over HTTP) scraping the sandbox, and `pagescrape job …` (sdk/dist/cli.js).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { ConflictError, NotFoundError, PageScrape, type Job, type JobItem } from '../../sdk/src/index.ts';
import { startService, type Service } from '../support/service.ts';

const CLI = join(import.meta.dirname, '..', '..', 'sdk', 'dist', 'cli.js');
const run = promisify(execFile);

const requests = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ endpoint: '/v1/linkpage-a/profile', params: { url: `https://linkpage-a.example/${tag}${i}` } }));

describe('client.jobs', () => {
  let service: Service;
  let client: PageScrape;
  const dir = mkdtempSync(join(tmpdir(), 'sdk-jobs-'));
  before(async () => {
    service = await startService();
    client = new PageScrape({ apiKey: service.keys.live, baseUrl: service.base });
  });
  after(async () => {
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('create, wait with progress, results as an async iterator, list, retry (409 while running), cancel; an unknown job is NotFoundError', async () => {
    const job = await client.jobs.create(requests(30, 'sdk'), { label: 'sdk' });
    assert.equal(job.total, 30);
    const seen: Job[] = [];
    const ended = await client.jobs.wait(job.id, { intervalMs: 50, onProgress: (now) => seen.push(now) });
    assert.equal(ended.status, 'completed');
    assert.equal(ended.succeeded, 30);
    assert.ok(seen.length >= 1 && seen.at(-1)?.pending === 0);
    const items: JobItem[] = [];
    for await (const item of client.jobs.results(job.id)) items.push(item);
    assert.deepEqual(items.map((item) => item.index), [...Array(30).keys()]);
    assert.ok(items.every((item) => item.status === 'succeeded' && item.pages.length === 1 && item.creditsCharged === 1));
    const listed = await client.jobs.list({ limit: 5 });
    assert.equal(listed.jobs[0]?.id, job.id);
    assert.equal((await client.jobs.get(job.id)).creditsCharged, 30);
    const big = await client.jobs.create(requests(300, 'sdk-cancel'));
    await assert.rejects(client.jobs.retry(big.id), ConflictError);
    const cancelled = await client.jobs.cancel(big.id);
    assert.equal(cancelled.status, 'cancelled');
    await assert.rejects(client.jobs.get('job_nope'), NotFoundError);
  });

  test('pagescrape job create --file --wait --out, job status, job results, job cancel', async () => {
    const targets = join(dir, 'targets.ndjson');
    const out = join(dir, 'results.ndjson');
    writeFileSync(targets, `${requests(12, 'cli').map((r) => JSON.stringify(r)).join('\n')}\n`);
    const env = { ...process.env, PAGESCRAPE_API_KEY: service.keys.live, PAGESCRAPE_BASE_URL: service.base };
    const created = await run(process.execPath, [CLI, 'job', 'create', '--file', targets, '--wait', '--out', out], { env });
    assert.match(created.stderr, /completed: 12 succeeded, 0 failed, 0 cancelled, 12 credits charged; 12 items written/);
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as JobItem);
    assert.equal(lines.length, 12);
    assert.ok(lines.every((item) => item.status === 'succeeded'));
    const id = (await client.jobs.list({ limit: 1 })).jobs[0]?.id as string;
    const status = JSON.parse((await run(process.execPath, [CLI, 'job', 'status', id], { env })).stdout) as Job;
    assert.equal(status.succeeded, 12);
    const results = (await run(process.execPath, [CLI, 'job', 'results', id], { env })).stdout.trim().split('\n');
    assert.equal(results.length, 12);
    const cancelled = JSON.parse((await run(process.execPath, [CLI, 'job', 'cancel', id], { env })).stdout) as Job;
    assert.equal(cancelled.status, 'completed', 'an ended job is answered as it is');
    await assert.rejects(run(process.execPath, [CLI, 'job', 'create'], { env }), (error: { code: number; stderr: string }) => error.code === 2 && /--file/.test(error.stderr));
  });
});
