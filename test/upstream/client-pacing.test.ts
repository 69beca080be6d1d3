// The upstream client under a pace: 500 requests at once to one platform capped at 4 at a
// time, with a queue of 50. The platform never sees more than 4 at once; what the queue cannot
// hold, or what would wait past its deadline, is refused at once as overloaded; each retry
// takes its turn too.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { UpstreamClient } from '../../src/upstream/client.ts';
import { isUpstreamOutcome } from '../../src/upstream/outcomes.ts';
import { LocalPacer } from '../../src/upstream/pacing.ts';

test('500 concurrent requests against a cap of 4 and a queue of 50', async (t) => {
  let inFlight = 0;
  let most = 0;
  let served = 0;
  const server = createServer((_request, response) => {
    inFlight += 1;
    most = Math.max(most, inFlight);
    setTimeout(() => {
      inFlight -= 1;
      served += 1;
      response.writeHead(200, { 'content-type': 'text/html' }).end('<html>ok</html>');
    }, 10);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new UpstreamClient({
    platforms: { shop: { origin, hosts: ['www.shop.example'] } },
    pacer: new LocalPacer(() => ({ maxConcurrency: 4, maxRps: 0 }), 50),
  });
  t.after(() => client.close());

  const deadline = Date.now() + 3_000;
  const results = await Promise.allSettled(
    Array.from({ length: 500 }, (_, i) => client.bind('shop', new AbortController().signal, deadline)({ path: `/p/${i}`, kind: 'page' })),
  );
  const ok = results.filter((r) => r.status === 'fulfilled').length;
  const overloaded = results.filter((r) => r.status === 'rejected' && isUpstreamOutcome(r.reason) && r.reason.kind === 'overloaded').length;
  assert.equal(ok + overloaded, 500, 'every request either went through or was refused as overloaded');
  assert.ok(most <= 4, `at most 4 at once upstream, saw ${most}`);
  assert.equal(served, ok);
  assert.ok(ok >= 54, `the 4 running and the 50 queued went through (${ok})`);
  assert.ok(overloaded >= 400, `the rest were refused (${overloaded})`);
});
