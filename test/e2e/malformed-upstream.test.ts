// An origin that answers malformed HTTP (an invalid status line, a control character in a
// header name, non-HTTP bytes, a bare CR) through the whole service: retried like any
// transient failure, then 502 UPSTREAM_BLOCKED with nothing charged, never a 500.
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startE2e, type E2e } from './harness.ts';
import { expectError } from './support.ts';

/** Malformed answers, chosen by a word in the request line. */
const SHAPES: Record<string, string> = {
  'bad-status': 'HTTP/1.1 2OO OK\r\nContent-Length: 2\r\n\r\nok',
  'bad-header': 'HTTP/1.1 200 OK\r\nX-Bad\u0001Name: v\r\nContent-Length: 2\r\n\r\nok',
  'not-http': 'SSH-2.0-OpenSSH_9.6\r\n\r\n',
  'bare-cr': 'HTTP/1.1 200 OK\rContent-Length: 2\r\n\r\nok',
};

describe('malformed HTTP from an origin: 502 UPSTREAM_BLOCKED, nothing charged', () => {
  let e2e: E2e;
  let origin: net.Server;
  const sockets = new Set<Socket>();
  let requests = 0;

  before(async () => {
    origin = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
      let head = '';
      socket.on('data', (chunk: Buffer) => {
        head += chunk.toString('latin1');
        if (!head.includes('\r\n\r\n')) return;
        requests += 1;
        const line = head.slice(0, head.indexOf('\r\n'));
        const shape = Object.keys(SHAPES).find((name) => line.includes(name)) ?? 'bad-status';
        socket.end(SHAPES[shape] ?? '');
        head = '';
      });
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    const malformed = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
    e2e = await startE2e({
      env: { SOCIALNET_ORIGIN: malformed, SNAPMSG_ORIGIN: malformed, LINKPAGE_A_ORIGIN: malformed, LINKPAGE_B_ORIGIN: malformed, SHOPFRONT_ORIGIN: malformed },
    });
  });
  after(async () => {
    await e2e.close();
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => origin.close(() => resolve()));
  });

  for (const shape of Object.keys(SHAPES)) {
    test(`linkpage-a, ${shape}: retried, then 502`, async () => {
      const before = requests;
      const body = await expectError(e2e, '/v1/linkpage-a/profile', { url: `https://linkpage-a.example/${shape}` }, 502, 'UPSTREAM_BLOCKED');
      assert.match(body.error.message, /linkpage-a/);
      assert.ok(requests - before >= 2, `the origin was asked more than once (${requests - before})`);
    });
  }

  for (const [path, query] of [
    ['/v1/socialnet/profile/posts', { url: 'https://www.socialnet.example/bad.status' }],
    ['/v1/snapmsg/profile', { username: 'not-http' }],
    ['/v1/linkpage-b/page', { url: 'https://linkpage-b.example/bare_cr' }],
    ['/v1/shopfront/shop', { url: 'https://www.shopfront.example/shop/bad-header' }],
  ] as const) {
    test(`${path}: 502 UPSTREAM_BLOCKED, not charged`, () => expectError(e2e, path, query, 502, 'UPSTREAM_BLOCKED').then(() => undefined));
  }
});
