// Requests that Node's HTTP parser refuses still get the error envelope, never a bare answer.
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

  const envelopeOf = (answer: string) => {
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    assert.match(head, /^HTTP\/1\.1 400 /);
    assert.match(head, /content-type: application\/json; charset=utf-8/i);
    const requestId = /x-request-id: (req_\S+)/i.exec(head)?.[1];
    const parsed = JSON.parse(body) as { error: { code: string; message: string; requestId: string } };
    assert.equal(parsed.error.code, 'BAD_REQUEST');
    assert.equal(parsed.error.requestId, requestId);
    return parsed.error;
  };

  test('a URL beyond the header size limit', async () => {
    const error = envelopeOf(await raw(port, `GET /v1/snapmsg/profile?username=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`));
    assert.match(error.message, /too large/);
  });

  test('a request line that is not HTTP', async () => {
    envelopeOf(await raw(port, 'BLAH\r\n\r\n'));
  });

  test('a header line without a colon', async () => {
    envelopeOf(await raw(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n'));
  });
});
