// Safe retries end to end: the SDK as built (sdk/dist) against the running service, through a
// loopback TCP proxy that can cut an answer after the request went through. The call still
// returns the data, the team is charged once, and every attempt carried the same
// Idempotency-Key; a caller's own key is the one sent; a 409 IDEMPOTENCY_IN_PROGRESS is waited
// out and answered by the replay.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { ConnectionError, PageScrape, type RetryEvent } from '../../sdk/dist/index.js';
import { startService, type Service } from '../support/service.ts';

/**
 * A TCP proxy in front of the service. It notes the Idempotency-Key of every request it
 * passes; while `cutAnswers` is above 0, it lets a request through to the service, then cuts
 * the client's connection at the first bytes of the answer (the service has run the request by
 * then, and charged it).
 */
class CuttingProxy {
  readonly server: Server;
  readonly keys: (string | null)[] = [];
  cutAnswers = 0;
  cuts = 0;
  readonly #sockets = new Set<Socket>();

  constructor(target: { host: string; port: number }) {
    this.server = createServer((client) => {
      const upstream = connect(target.port, target.host);
      this.#sockets.add(client).add(upstream);
      client.on('close', () => this.#sockets.delete(client));
      upstream.on('close', () => this.#sockets.delete(upstream));
      let head = '';
      client.on('data', (chunk: Buffer) => {
        // Each request's head on this connection: its key, if any.
        head += chunk.toString('latin1');
        for (let end = head.indexOf('\r\n\r\n'); end !== -1; end = head.indexOf('\r\n\r\n')) {
          const request = head.slice(0, end);
          head = head.slice(end + 4);
          if (/^(GET|PATCH|POST) /.test(request)) this.keys.push(/^idempotency-key: *(.*)$/im.exec(request)?.[1]?.trim() ?? null);
        }
        upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        if (this.cutAnswers > 0) {
          this.cutAnswers--;
          this.cuts++;
          client.destroy();
          upstream.destroy();
          return;
        }
        client.write(chunk);
      });
      client.on('end', () => upstream.end());
      upstream.on('end', () => client.end());
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
  }

  async listen(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    this.server.close();
    await once(this.server, 'close');
  }
}

describe('SDK safe retries through a proxy that cuts answers', () => {
  let service: Service;
  let proxy: CuttingProxy;
  let base = '';
  const balance = async () => (await service.stores.accounts.getTeam(service.team.id))?.credits ?? NaN;

  before(async () => {
    service = await startService();
    const target = new URL(service.base);
    proxy = new CuttingProxy({ host: target.hostname, port: Number(target.port) });
    base = await proxy.listen();
  });
  after(async () => {
    await proxy.close();
    await service.stop();
  });
  beforeEach(() => {
    proxy.keys.length = 0;
    proxy.cutAnswers = 0;
    proxy.cuts = 0;
  });

  test('the first answer cut after the request went through: the call returns the data, charged once, both attempts with one key', async () => {
    const client = new PageScrape({ baseUrl: base, apiKey: service.keys.live });
    const before = await balance();
    proxy.cutAnswers = 1;
    const retries: RetryEvent[] = [];
    const answer = await client.snapmsgProfile({ username: 'lunavoss' }, { onRetry: (event) => retries.push(event) });
    assert.equal(answer.data.profile.username, 'lunavoss');
    assert.equal(proxy.cuts, 1, 'the first answer was cut');
    assert.equal(retries.length, 1);
    const cut = retries[0]?.error;
    assert.ok(cut instanceof ConnectionError && cut.mayHaveReached, 'a connection broken after the request was sent');
    assert.equal(answer.meta.creditsCharged, 1, "the replay is the first answer, byte for byte: its meta says what the first request was charged");
    assert.equal(await balance(), before - 1, 'charged exactly once');
    assert.equal(proxy.keys.length, 2);
    assert.ok(proxy.keys[0], 'the first attempt carried a key');
    assert.equal(proxy.keys[1], proxy.keys[0], 'the second attempt carried the same key');
  });

  test('without a key, the same cut would have charged twice (the proxy test is able to tell)', async () => {
    // The same cut, by plain fetch without a key, then the same request again: two live scrapes.
    const before = await balance();
    proxy.cutAnswers = 1;
    const url = `${base}/v1/snapmsg/profile?username=lunavoss`;
    await assert.rejects(fetch(url, { headers: { 'x-api-key': service.keys.live } }).then((response) => response.text()));
    const again = await fetch(url, { headers: { 'x-api-key': service.keys.live } });
    assert.equal(again.status, 200);
    assert.equal(await balance(), before - 2);
  });

  test("a caller's own key is the one sent, and answers the same request again across calls, charged once", async () => {
    const client = new PageScrape({ baseUrl: base, apiKey: service.keys.live });
    const before = await balance();
    const key = `order-${Date.now()}`;
    const first = await client.linkpageAProfile({ url: 'https://linkpage-a.example/theo.marsh' }, { idempotencyKey: key });
    const second = await client.linkpageAProfile({ url: 'https://linkpage-a.example/theo.marsh' }, { idempotencyKey: key });
    assert.deepEqual(proxy.keys, [key, key]);
    assert.deepEqual(second, first, 'the replay, its meta the first request\'s');
    assert.equal(await balance(), before - 1);
  });

  test('409 IDEMPOTENCY_IN_PROGRESS is retried after Retry-After until the first answer is kept', async () => {
    // A slow profile (the sandbox answers it after 3 s): the second call meets the first still
    // running, and waits it out without using up its one retry.
    const client = new PageScrape({ baseUrl: base, apiKey: service.keys.live, maxRetries: 1 });
    const before = await balance();
    const key = `slow-${Date.now()}`;
    const query = { url: 'https://linkpage-a.example/slow-luna' };
    const retried: string[] = [];
    const first = client.linkpageAProfile(query, { idempotencyKey: key });
    // Sent once the first is surely claimed.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const second = client.linkpageAProfile(query, { idempotencyKey: key, onRetry: ({ error }) => retried.push(error.code) });
    const [a, b] = await Promise.all([first, second]);
    assert.ok(retried.length >= 1 && retried.every((code) => code === 'IDEMPOTENCY_IN_PROGRESS'), `retried for: ${retried.join(', ')}`);
    assert.deepEqual(b, a);
    assert.equal(await balance(), before - 1);
    assert.ok(proxy.keys.every((sent) => sent === key));
  });
});
