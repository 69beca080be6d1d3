// End-to-end: the memory budget for upstream answers (UPSTREAM_MEMORY_BYTES). A scrape that
// cannot get its share in time is answered 503 SERVICE_UNAVAILABLE with Retry-After and
// refunded; once the answers holding the budget are done with, scrapes are served again.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startE2e, type E2e } from './harness.ts';
import { expectLive } from './support.ts';

const KB = 1024;
const BODY = 700 * KB;

describe('memory budget for upstream answers', () => {
  let e2e: E2e;
  let origin: http.Server;
  /** Ends the held answer of /shop/holdmemory. */
  let finishHeld: (() => void) | null = null;
  let heldStarted: Promise<void>;

  before(async () => {
    let started: () => void = () => undefined;
    heldStarted = new Promise((resolve) => (started = resolve));
    // A shopfront origin of large pages: /shop/holdmemory sends its headers (declaring 700 KB)
    // and most of its body, then holds it open until the test lets it finish.
    origin = http.createServer((req, res) => {
      const page = 'p'.repeat(BODY);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': String(BODY) });
      if (req.url !== '/shop/holdmemory') return res.end(page);
      res.write(page.slice(0, BODY - 1));
      finishHeld = () => res.end(page.slice(BODY - 1));
      started();
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    e2e = await startE2e({
      requestBudgetMs: 8_000,
      env: {
        SHOPFRONT_ORIGIN: `http://127.0.0.1:${(origin.address() as AddressInfo).port}`,
        UPSTREAM_MAX_BYTES: String(1_024 * KB),
        UPSTREAM_MEMORY_BYTES: String(1_024 * KB),
      },
    });
  });
  after(async () => {
    await e2e.close();
    origin.closeAllConnections();
    await new Promise<void>((resolve) => origin.close(() => resolve()));
  });

  test('a scrape without room in the budget is 503 SERVICE_UNAVAILABLE with Retry-After, refunded; served again once the budget frees', async () => {
    const balance = await e2e.balance();
    // The held answer takes 700 KB of the 1 MB budget while it is read.
    const held = e2e.get('/v1/shopfront/shop', { url: 'https://www.shopfront.example/shop/holdmemory' });
    await heldStarted;

    // (The held scrape's credit is reserved meanwhile: the refund shows in the balance.)
    const reserved = await e2e.balance();
    assert.equal(reserved, balance - 1);
    const refused = await e2e.get('/v1/shopfront/shop', { url: 'https://www.shopfront.example/shop/bigpage' });
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'SERVICE_UNAVAILABLE');
    assert.match(refused.body.error.message, /busy; retry shortly/);
    assert.equal(refused.body.error.requestId, refused.headers.get('x-request-id'));
    assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    assert.equal(await e2e.balance(), reserved, 'nothing charged: the credit is refunded');

    // Small answers still fit beside it.
    await expectLive(e2e, '/v1/linkpage-a/profile', { url: 'https://linkpage-a.example/luna.voss' });

    (finishHeld as unknown as () => void)();
    // These pages are not storefronts: the extractor cannot read them (502), and refunds.
    const heldAnswer = await held;
    assert.equal(heldAnswer.status, 502);
    assert.equal(heldAnswer.body.error.code, 'UPSTREAM_UNRECOGNISED');
    // The budget was given back: the same large page now gets its share and is read.
    const served = await e2e.get('/v1/shopfront/shop', { url: 'https://www.shopfront.example/shop/bigpage' });
    assert.equal(served.status, 502, JSON.stringify(served.body));
    assert.equal(served.body.error.code, 'UPSTREAM_UNRECOGNISED');
    // Only the one live 200 was charged.
    assert.equal(await e2e.balance(), balance - 1);
    assert.equal((await e2e.stores.ledger.usage(e2e.team.id))?.pending, 0);
  });
});
