// The service against a sandbox that fails as real platforms do: a platform that goes down and
// comes back (the breaker opens, answers at once, and closes on a probe), a platform that
// changes its pages (drift samples), and a platform that blocks one proxy's address (the pool
// moves on to another).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connectProxy } from '../support/proxies.ts';
import { startE2e, type E2e } from './harness.ts';

describe('a sandbox that goes down, changes and blocks', () => {
  let e: E2e;
  const served: { platform: string; status: number }[] = [];
  before(async () => {
    e = await startE2e({
      sandbox: { observe: (answer) => served.push(answer) },
      breaker: { minRequests: 6, windowMs: 30_000, failureRatio: 0.5, coolDownMs: 400, maxCoolDownMs: 2_000 },
    });
  });
  after(() => e.close());

  test('a platform that goes down opens its breaker (answered at once, no upstream request), and a probe closes it once it is back', async () => {
    e.sandbox.control.down('linkpage-b');
    const failures = await Promise.all(Array.from({ length: 6 }, (_, i) => e.get('/v1/linkpage-b/page', { url: `https://linkpage-b.example/down${i}` })));
    for (const failure of failures) assert.equal(failure.status, 502);
    const before = served.filter((answer) => answer.platform === 'linkpage-b').length;
    const paused = await e.get('/v1/linkpage-b/page', { url: 'https://linkpage-b.example/paused' });
    assert.equal(paused.status, 502);
    assert.match(paused.body.error.message, /paused/);
    assert.equal(served.filter((answer) => answer.platform === 'linkpage-b').length, before, 'no upstream request while open');
    const status = (await (await fetch(`${e.base}/v1/status`)).json()) as { data: { platforms: Record<string, { state: string }> } };
    assert.equal(status.data.platforms['linkpage-b']?.state, 'down');
    e.sandbox.control.down('linkpage-b', false);
    await new Promise((resolve) => setTimeout(resolve, 450));
    const back = await e.get('/v1/linkpage-b/page', { url: 'https://linkpage-b.example/tidewaterkitchen' });
    assert.ok(back.status === 200 || back.status === 404, `the probe reached the platform: ${back.status}`);
    const after = (await (await fetch(`${e.base}/v1/status`)).json()) as { data: { platforms: Record<string, { state: string }> } };
    assert.notEqual(after.data.platforms['linkpage-b']?.state, 'down');
  });

  test('a platform that changes its pages: 502 UPSTREAM_UNRECOGNISED, and the new page kept as a drift sample', async () => {
    e.sandbox.control.changed('snapmsg');
    const changed = await e.get('/v1/snapmsg/profile', { username: 'lunavoss' });
    assert.equal(changed.status, 502);
    assert.equal(changed.body.error.code, 'UPSTREAM_UNRECOGNISED');
    const [sample] = await e.stores.drift.list({ platform: 'snapmsg' });
    assert.equal(sample?.requestId, changed.body.error.requestId);
    assert.match((await e.stores.drift.get(sample?.id ?? ''))?.body ?? '', /app-root/);
    e.sandbox.control.changed('snapmsg', false);
    assert.equal((await e.get('/v1/snapmsg/profile', { username: 'lunavoss' })).status, 200);
  });
});

describe('a sandbox that blocks one proxy of the pool', () => {
  test('requests through a pool of two proxies all succeed; the blocked proxy is benched after its first block', async (t) => {
    const a = await connectProxy(t, '127.0.0.21');
    const b = await connectProxy(t, '127.0.0.22');
    const served: { platform: string; status: number }[] = [];
    const e = await startE2e({
      sandbox: { observe: (answer) => served.push(answer), blockedAddresses: ['127.0.0.21'] },
      env: { SNAPMSG_PROXIES: `http://127.0.0.1:${a.port},http://127.0.0.1:${b.port}` },
    });
    t.after(() => e.close());
    for (let i = 0; i < 6; i++) assert.equal((await e.get('/v1/snapmsg/profile', { username: 'lunavoss' })).status, 200);
    assert.equal(served.filter((answer) => answer.status === 429).length, 1, 'one block, then the proxy was benched');
    assert.equal(a.tunnels() >= 1 && b.tunnels() >= 1, true);
  });
});
