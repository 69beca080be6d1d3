// The breaker counts only the platform's answers. A platform that is healthy but slow, behind a
// pace of one request at a time: most requests wait in the service's own queue until their time
// budget runs out. Those are the service's lack of capacity (503, refunded), not failures of the
// platform: its breaker stays closed, and the next request is served.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { UpstreamClient } from '../../src/upstream/client.ts';
import { LocalPacer } from '../../src/upstream/pacing.ts';
import { byId, fixtureResult, startHarness } from '../api/harness.ts';
import { urlOf, variantQuery } from '../api/support.ts';

test('requests that only waited in our own queue past their budget leave the breaker closed', async (t) => {
  let asked = 0;
  const server = createServer((_request, response) => {
    asked += 1;
    // Healthy, but each answer takes 100 ms.
    setTimeout(() => response.writeHead(200, { 'content-type': 'text/html' }).end('<html>ok</html>'), 100);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new UpstreamClient({
    platforms: { 'linkpage-a': { origin, hosts: ['linkpage-a.example'] } },
    // One at a time, a queue long enough for all: the requests beyond the first few wait there.
    pacer: new LocalPacer(() => ({ maxConcurrency: 1, maxRps: 0 }), 100),
  });
  t.after(() => client.close());

  const h = await startHarness({
    credits: 1000,
    rateLimit: 100_000,
    app: {
      // The upstream client keeps real time: so does the app here.
      now: Date.now,
      requestBudgetMs: 1_500,
      upstream: (platform, signal, deadline) => client.bind(platform, signal, deadline),
      breaker: { minRequests: 5, windowMs: 30_000, failureRatio: 0.5, coolDownMs: 15_000, maxCoolDownMs: 120_000 },
    },
  });
  t.after(() => h.close());
  const endpoint = byId('linkpage-a.profile');
  h.script = async (declaration, _request, _signal, upstream) => {
    await upstream({ path: '/page', kind: 'page' });
    return fixtureResult(declaration);
  };
  const before = await h.balance();

  const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => h.get(urlOf(endpoint, {}, variantQuery(endpoint, `queued${i}`)))));
  const statuses = answers.map((answer) => answer.statusCode);
  const served = statuses.filter((status) => status === 200).length;
  const refused = answers.filter((answer) => answer.statusCode === 503 && (answer.json() as { error: { code: string } }).error.code === 'SERVICE_UNAVAILABLE').length;
  assert.ok(served >= 1 && served < 40, `some were served, the rest waited too long (${statuses.join(' ')})`);
  assert.equal(served + refused, 40, `each was served or refused as the service's own lack of capacity, never blamed on the platform: ${statuses.join(' ')}`);
  // A request whose turn came with its budget nearly spent may have asked and been cut short.
  assert.ok(asked >= served && asked < 40, `the platform was asked ${asked} times`);
  assert.equal(await h.balance(), before - served, 'only the served ones were charged');

  const status = (await h.app.inject({ method: 'GET', url: '/v1/status' })).json() as { data: { platforms: Record<string, { state: string }> } };
  assert.equal(status.data.platforms['linkpage-a']?.state, 'ok', 'the breaker saw no failure');
  const next = await h.get(urlOf(endpoint, {}, variantQuery(endpoint, 'after')));
  assert.equal(next.statusCode, 200, 'the next request is served');
});
