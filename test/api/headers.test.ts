// The security headers of every kind of answer: `x-content-type-options: nosniff` on each (API
// answers and their errors, the documents, the docs page and its script, the dashboard, answers
// written straight to the socket), and on every HTML page a Content-Security-Policy that no
// other site may frame it under (`frame-ancestors 'none'`, with X-Frame-Options DENY).
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { InjectOptions } from 'fastify';
import { exampleQuery, byId, startHarness, type Harness } from './harness.ts';

describe('security headers', () => {
  let h: Harness;
  let limited: { key: string };
  before(async () => {
    h = await startHarness({ credits: 100 });
    limited = await h.newTeam(100, 1);
  });
  after(() => h.close());

  const profile = `/v1/snapmsg/profile?${exampleQuery(byId('snapmsg.profile'))}`;
  const answers: [string, InjectOptions, number][] = [
    ['a scrape', { url: profile }, 200],
    ['a cache hit', { url: `${profile}&cache_max_age=1d` }, 200],
    ['an account endpoint', { url: '/v1/account' }, 200],
    ['no key', { url: profile, headers: {} }, 401],
    ['a wrong key', { url: profile, headers: { 'x-api-key': 'psk_live_wrong' } }, 401],
    ['invalid parameters', { url: '/v1/snapmsg/profile?username=' }, 422],
    ['an unknown path', { url: '/v1/nothing' }, 404],
    ['another method', { method: 'POST', url: '/v1/snapmsg/profile', payload: 'x' }, 405],
    ['an unreadable path', { url: '/v1/%zz' }, 400],
    ['a malformed URL', { url: '/v1/snapmsg/profile?username=%E0%A4%A' }, 422],
    ['the status', { url: '/v1/status', headers: {} }, 200],
    ['the OpenAPI document', { url: '/openapi.json', headers: {} }, 200],
    ['the metrics', { url: '/metrics', headers: {} }, 200],
    ['alive', { url: '/healthz', headers: {} }, 200],
    ['ready', { url: '/readyz', headers: {} }, 200],
    ['the front page', { url: '/', headers: {} }, 302],
    ['the docs page without its slash', { url: '/docs', headers: {} }, 301],
    ['the docs script', { url: '/docs/js/scalar.js', headers: {} }, 200],
    ['MCP by GET', { url: '/mcp', headers: {} }, 405],
    ['the dashboard stylesheet', { url: '/dashboard/assets/dashboard.css', headers: {} }, 200],
  ];

  for (const [what, request, status] of answers) {
    test(`${what}: ${status} with nosniff`, async () => {
      const response = await h.app.inject({ method: 'GET', headers: { 'x-api-key': h.key }, ...request });
      assert.equal(response.statusCode, status, response.body.slice(0, 300));
      assert.equal(response.headers['x-content-type-options'], 'nosniff');
    });
  }

  test('a rate-limited request: 429 with nosniff', async () => {
    await h.get(profile, { 'x-api-key': limited.key });
    const response = await h.get(profile, { 'x-api-key': limited.key });
    assert.equal(response.statusCode, 429);
    assert.equal(response.headers['x-content-type-options'], 'nosniff');
  });

  test('an MCP message: 200 with nosniff', async () => {
    const response = await h.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { 'x-api-key': h.key, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['x-content-type-options'], 'nosniff');
  });

  const htmlPages: [string, string, number][] = [
    ['the docs page', '/docs/', 200],
    ['the dashboard sign-in', '/dashboard/sign-in', 200],
    ['a missing dashboard page', '/dashboard/nothing', 404],
  ];
  for (const [what, url, status] of htmlPages) {
    test(`${what}: nosniff, and a CSP that forbids framing it`, async () => {
      const response = await h.app.inject({ method: 'GET', url });
      assert.equal(response.statusCode, status);
      assert.match(String(response.headers['content-type']), /^text\/html/);
      assert.equal(response.headers['x-content-type-options'], 'nosniff');
      assert.equal(response.headers['x-frame-options'], 'DENY');
      const csp = String(response.headers['content-security-policy'] ?? '');
      assert.match(csp, /(^|; )frame-ancestors 'none'(;|$)/, csp);
      assert.match(csp, /(^|; )default-src 'none'(;|$)/, csp);
      assert.match(csp, /(^|; )base-uri 'none'(;|$)/, csp);
      assert.doesNotMatch(csp, /'unsafe-eval'|script-src[^;]*'unsafe-inline'|https?:|\*/, csp);
    });
  }

  test('the docs page allows its inline script by its hash alone', async () => {
    const response = await h.app.inject({ method: 'GET', url: '/docs/' });
    const csp = String(response.headers['content-security-policy']);
    const scriptSrc = /(?:^|; )script-src ([^;]+)/.exec(csp)?.[1] ?? '';
    assert.match(scriptSrc, /^'self'( 'sha256-[A-Za-z0-9+/]+=*')+$/, csp);
  });

  test('an answer written straight to the socket (an unreadable request): nosniff', async () => {
    const base = new URL(await h.app.listen({ host: '127.0.0.1', port: 0 }));
    const socket = connect(Number(base.port), base.hostname);
    socket.write('GET /v1/status HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n');
    let text = '';
    for await (const chunk of socket) text += String(chunk);
    assert.match(text, /^HTTP\/1\.1 400 /);
    assert.match(text, /\r\nx-content-type-options: nosniff\r\n/i);
  });
});
