// The NDJSON results of a job of 10,000 items stream in bounded memory: while the client reads
// nothing, the service reads no more of the job's items from the store than the socket holds
// (counted by a spy on the store's `items`), and once the client reads, every line arrives in
// item order. The items are cache hits of one page, so the job runs in seconds. While they
// wait, /readyz answers 200: a long queue is not a service unable to serve.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig, UNPACED_ENV } from '../../src/config.ts';
import { start } from '../../src/main.ts';
import { generateKey } from '../../src/server/keys.ts';
import { openStores } from '../../src/store/open.ts';
import { startSandbox } from '../../sandbox/server.ts';

const ITEMS = 10_000;
const BATCH = 50;

describe('batch jobs: the NDJSON of 10,000 items', () => {
  test('reads the store only as fast as the client reads, and streams every item in order', async () => {
    const sandbox = await startSandbox({ seed: 'jobs-stream', portBase: 0, host: '127.0.0.1' });
    const dir = mkdtempSync(join(tmpdir(), 'jobs-stream-'));
    const config = loadConfig({ ...sandbox.env, ...UNPACED_ENV, DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', JOB_CONCURRENCY_PER_TEAM: '32', JOB_WORKERS: '32' });
    const stores = await openStores(config);
    let reads = 0;
    const items = stores.jobs.items.bind(stores.jobs);
    stores.jobs.items = (jobId, options) => {
      reads += 1;
      return items(jobId, options);
    };
    const running = await start(config, stores);
    let response: IncomingMessage | undefined;
    try {
      const team = await stores.accounts.createTeam({ name: 'stream', credits: 100, rateLimit: 1_000_000 });
      const generated = generateKey();
      await stores.accounts.createKey({ teamId: team.id, name: 'live', hash: generated.hash, prefix: generated.prefix, last4: generated.last4 });
      const headers = { 'x-api-key': generated.key, 'content-type': 'application/json' };
      const target = { url: 'https://linkpage-a.example/lunavoss' };
      // One live scrape fills the cache; every item of the job is then a hit of it, free.
      const seeded = await fetch(`${running.address}/v1/linkpage-a/profile?${new URLSearchParams(target)}`, { headers });
      assert.equal(seeded.status, 200, await seeded.text());
      const requests = Array.from({ length: ITEMS }, () => ({ endpoint: '/v1/linkpage-a/profile', params: target }));
      const created = await fetch(`${running.address}/v1/jobs`, { method: 'POST', headers, body: JSON.stringify({ requests, cache_max_age: '30d' }) });
      assert.equal(created.status, 202, await created.clone().text());
      const id = ((await created.json()) as { data: { id: string } }).data.id;
      // A long queue is work waiting, not a service unable to serve: /readyz stays 200.
      const ready = await fetch(`${running.address}/readyz`);
      assert.equal(ready.status, 200, await ready.text());
      const until = Date.now() + 300_000;
      for (;;) {
        const job = (await (await fetch(`${running.address}/v1/jobs/${id}`, { headers })).json()) as { data: { status: string; succeeded: number; creditsCharged: number } };
        if (job.data.status === 'completed') {
          assert.equal(job.data.succeeded, ITEMS);
          assert.equal(job.data.creditsCharged, 0, 'cache hits are free');
          break;
        }
        assert.ok(Date.now() < until, `the job did not end: ${JSON.stringify(job.data)}`);
        await sleep(200);
      }

      reads = 0;
      const url = new URL(`${running.address}/v1/jobs/${id}/results.ndjson`);
      response = await new Promise<IncomingMessage>((resolve, reject) => {
        request(url, { headers: { 'x-api-key': generated.key } }, resolve).on('error', reject).end();
      });
      assert.equal(response.statusCode, 200);
      response.pause();
      // The client reads nothing for a while: the service fills the socket and waits.
      await sleep(1_500);
      const whilePaused = reads;
      assert.ok(whilePaused < (ITEMS / BATCH) / 2, `${whilePaused} of ${ITEMS / BATCH} reads of the store while the client read nothing`);

      let text = '';
      response.setEncoding('utf8');
      for await (const chunk of response) text += chunk as string;
      const lines = text.trimEnd().split('\n');
      assert.equal(lines.length, ITEMS);
      lines.forEach((line, index) => {
        const item = JSON.parse(line) as { index: number; status: string; pages: unknown[] };
        assert.equal(item.index, index);
        assert.equal(item.status, 'succeeded');
        assert.equal(item.pages.length, 1);
      });
      assert.ok(text.length > 4 * 1024 * 1024, `${text.length} bytes: more than the socket holds`);
      assert.ok(reads >= ITEMS / BATCH, 'the rest read once the client read');
    } finally {
      // A failed check leaves the stream unread: closed here, or the service's stop would wait for it.
      response?.destroy();
      await running.stop();
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
