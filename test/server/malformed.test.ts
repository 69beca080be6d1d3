// Requests that Node's HTTP parser refuses, and methods that never reach a route (CONNECT),
// still get the error envelope, never a bare answer or a closed socket.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startHarness, type Harness } from '../api/harness.ts';

function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(request));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('malformed HTTP requests', () => {
  let h: Harness;
  let port: number;
  before(async () => {
    h = await startHarness();
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    port = (h.app.server.address() as { port: number }).port;
  });
  after(() => h.close());

  const envelopeOf = (answer: string, status = 400, code = 'BAD_REQUEST') => {
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    assert.match(head, new RegExp(`^HTTP/1\\.1 ${status} `), answer);
    assert.match(head, /content-type: application\/json; charset=utf-8/i);
    const length = /content-length: (\d+)/i.exec(head)?.[1];
    assert.equal(Number(length), Buffer.byteLength(body), 'content-length matches the body');
    const requestId = /x-request-id: (req_\S+)/i.exec(head)?.[1];
    const parsed = JSON.parse(body) as { error: { code: string; message: string; requestId: string } };
    assert.deepEqual(Object.keys(parsed), ['error']);
    assert.deepEqual(Object.keys(parsed.error), ['code', 'message', 'requestId']);
    assert.equal(parsed.error.code, code);
    assert.equal(parsed.error.requestId, requestId);
    return parsed.error;
  };

  test('a URL beyond the header size limit', async () => {
    const error = envelopeOf(await raw(port, `GET /v1/snapmsg/profile?username=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`));
    assert.match(error.message, /too large/);
  });

  test('an unknown path is echoed in the 404 message only in part', async () => {
    const long = `/${'n'.repeat(10_000)}`;
    const [, body = ''] = (await raw(port, `GET ${long} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).split('\r\n\r\n');
    const error = (JSON.parse(body) as { error: { code: string; message: string } }).error;
    assert.equal(error.code, 'NOT_FOUND');
    assert.ok(error.message.length < 300, `${error.message.length} characters`);
  });

  test('an expectation other than 100-continue is ignored, as RFC 9110 allows, not a bare 417', async () => {
    const answer = await raw(port, 'GET /nowhere HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nConnection: close\r\n\r\n');
    envelopeOf(answer, 404, 'NOT_FOUND');
  });

  test('a request line that is not HTTP', async () => {
    envelopeOf(await raw(port, 'BLAH\r\n\r\n'));
  });

  test('a header line without a colon', async () => {
    envelopeOf(await raw(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n'));
  });
  test('CONNECT is 405 METHOD_NOT_ALLOWED with Allow: GET, whatever its target', async () => {
    for (const target of ['example.com:443', '127.0.0.1:22', '/v1/snapmsg/profile', '/healthz']) {
      const answer = await raw(port, `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
      const error = envelopeOf(answer, 405, 'METHOD_NOT_ALLOWED');
      assert.match(answer, /\r\nallow: GET\r\n/i);
      assert.match(error.message, /CONNECT/);
    }
    // The server is still there for the next client.
    assert.match(await raw(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'), /^HTTP\/1\.1 200 /);
  });

  test('other methods Node knows are 405 on an endpoint and 404 elsewhere, QUERY included', async () => {
    for (const method of ['QUERY', 'PROPFIND', 'TRACE', 'M-SEARCH', 'PURGE', 'SEARCH', 'LOCK']) {
      const known = await raw(port, `${method} /v1/snapmsg/profile?username=abc HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      envelopeOf(known, 405, 'METHOD_NOT_ALLOWED');
      assert.match(known, /\r\nallow: GET\r\n/i, method);
      const unknown = await raw(port, `${method} /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      envelopeOf(unknown, 404, 'NOT_FOUND');
    }
    // Methods Node does not know, and lower case, are not HTTP: 400.
    for (const line of ['FOO /healthz', 'get /healthz', 'PRI * HTTP/2.0']) {
      envelopeOf(await raw(port, `${line.includes('HTTP/') ? line : `${line} HTTP/1.1`}\r\nHost: x\r\n\r\n`));
    }
  });

  test('an Upgrade request (websocket, h2c) is answered as plain HTTP/1.1, never switched', async () => {
    for (const upgrade of ['websocket', 'h2c']) {
      const answer = await raw(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, close\r\nUpgrade: ${upgrade}\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`);
      assert.match(answer, /^HTTP\/1\.1 200 /, upgrade);
      assert.doesNotMatch(answer, /101|upgrade:/i);
      const missing = await raw(port, `GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, close\r\nUpgrade: ${upgrade}\r\n\r\n`);
      envelopeOf(missing, 404, 'NOT_FOUND');
    }
  });
});
