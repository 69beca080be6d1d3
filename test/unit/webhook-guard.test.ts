// The address guard of webhook URLs, with an injected resolver: refused at registration, and at
// delivery on the address actually connected, before any connection. Nothing here connects
// anywhere but loopback (and only where the test lets the guard allow it).
import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { checkUrl, refusal, registrationProblem, type Resolver } from '../../src/webhooks/guard.ts';
import { Sender } from '../../src/webhooks/send.ts';

const strict = { allowPrivate: false, allowHttp: false };
const strictHttp = { allowPrivate: false, allowHttp: true };
const fixed =
  (table: Record<string, string[]>): Resolver =>
  async (hostname) => {
    const answers = table[hostname];
    if (!answers) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return answers.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
const never: Resolver = async () => {
  throw new Error('the resolver must not be asked');
};

describe('webhook address guard: the ranges', () => {
  test('refuses every address that is not public unicast, in both families and their mapped forms', () => {
    for (const address of [
      '127.0.0.1',
      '127.9.9.9',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '224.0.0.1',
      '0.0.0.0',
      '255.255.255.255',
      '::1',
      '::',
      'fc00::1',
      'fd12:3456::1',
      'fe80::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:169.254.169.254',
      '::ffff:10.0.0.1',
      '::a9fe:a9fe',
      '::7f00:1',
      '64:ff9b::a9fe:a9fe',
      '2002:a9fe:a9fe::1',
    ]) {
      assert.notEqual(refusal(address), null, address);
    }
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:93.184.216.34']) assert.equal(refusal(address), null, address);
  });
});

describe('webhook address guard: at registration', () => {
  test('https only; http with WEBHOOK_ALLOW_HTTP; no credentials, no garbage', () => {
    assert.match((checkUrl('http://hooks.example/in', strict) as { message: string }).message, /https:\/\//);
    assert.equal(checkUrl('http://hooks.example/in', strictHttp).ok, true);
    assert.equal(checkUrl('https://hooks.example/in', strict).ok, true);
    for (const raw of ['ftp://hooks.example/', 'not a url', 'https://user:pw@hooks.example/', `https://hooks.example/${'a'.repeat(3_000)}`, 'file:///etc/passwd']) {
      assert.equal(checkUrl(raw, strictHttp).ok, false, raw);
    }
  });

  test('refuses literal addresses in every spelling: metadata, private, loopback, decimal, hex, octal, IPv4-mapped, localhost', async () => {
    for (const raw of [
      'http://169.254.169.254/',
      'https://169.254.169.254/latest/meta-data/',
      'https://10.0.0.1/',
      'https://[::1]/',
      'https://2130706433/',
      'https://0x7f000001/',
      'https://0x7f.1/',
      'https://0177.0.0.1/',
      'https://127.1/',
      'https://0xa9.0xfe.0xa9.0xfe/',
      'https://2852039166/',
      'https://[::ffff:127.0.0.1]/',
      'https://[::ffff:a9fe:a9fe]/',
      'https://[::ffff:10.0.0.1]/',
      'https://[fe80::1]/',
      'https://[fd00::1]/',
      'https://100.64.1.1/',
      'https://localhost/',
      'https://api.localhost/',
      'https://0.0.0.0/',
    ]) {
      const problem = await registrationProblem(raw, strictHttp, never);
      assert.ok(problem, `${raw} is refused`);
    }
  });

  test('resolves a name and refuses it when any answer is refused; accepts a public one', async () => {
    const resolver = fixed({
      'loop.example': ['127.0.0.1'],
      'mixed.example': ['93.184.216.34', '10.0.0.1'],
      'v6.example': ['::1'],
      'public.example': ['93.184.216.34', '2606:4700:4700::1111'],
    });
    assert.match((await registrationProblem('https://loop.example/hook', strict, resolver)) ?? '', /resolves to 127\.0\.0\.1.*loopback/);
    assert.match((await registrationProblem('https://mixed.example/hook', strict, resolver)) ?? '', /10\.0\.0\.1.*private/);
    assert.match((await registrationProblem('https://v6.example/hook', strict, resolver)) ?? '', /::1/);
    assert.match((await registrationProblem('https://nowhere.example/hook', strict, resolver)) ?? '', /does not resolve/);
    assert.equal(await registrationProblem('https://public.example/hook', strict, resolver), null);
  });

  test('WEBHOOK_ALLOW_PRIVATE lifts the address rules, not the scheme', async () => {
    const open = { allowPrivate: true, allowHttp: false };
    assert.equal(await registrationProblem('https://127.0.0.1/', open, never), null);
    assert.equal(await registrationProblem('https://localhost/', open, never), null);
    assert.ok(await registrationProblem('http://127.0.0.1/', open, never));
  });
});

describe('webhook address guard: at delivery, on the address connected', () => {
  let server: Server;
  let port: number;
  let connections = 0;
  let requests = 0;
  before(async () => {
    server = createServer((_request, response) => {
      requests += 1;
      response.end('ok');
    });
    server.on('connection', () => {
      connections += 1;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('a name whose answer changes after registration to a refused range is refused before any connection', async () => {
    // Public when registered; at delivery, the metadata address, a private one, then loopback
    // (where this test listens, so that a connection would be seen).
    const answers = [['93.184.216.34'], ['169.254.169.254'], ['10.0.0.1'], ['127.0.0.1'], ['93.184.216.34', '127.0.0.1']];
    let asked = 0;
    const rebinding: Resolver = async () => (answers[Math.min(asked++, answers.length - 1)] as string[]).map((address) => ({ address, family: 4 }));
    assert.equal(await registrationProblem(`http://rebind.example:${port}/hook`, strictHttp, rebinding), null);
    const sender = new Sender({ guard: strictHttp, resolver: rebinding, timeoutMs: 2_000 });
    try {
      for (const expected of [/169\.254\.169\.254/, /10\.0\.0\.1/, /127\.0\.0\.1/, /127\.0\.0\.1/]) {
        const result = await sender.send(`http://rebind.example:${port}/hook`, {}, '{}');
        assert.equal(result.delivered, false);
        assert.equal(result.status, null);
        assert.match(result.error ?? '', /address is refused/);
        assert.match(result.error ?? '', expected);
      }
      assert.equal(asked, 5, 'resolved afresh at every attempt');
      assert.equal(connections, 0, 'no connection was made');
      assert.equal(requests, 0);
    } finally {
      await sender.close();
    }
  });

  test('a literal refused address is refused at delivery too, without a lookup or a connection', async () => {
    const sender = new Sender({ guard: strictHttp, resolver: never, timeoutMs: 2_000 });
    try {
      for (const url of [`http://127.0.0.1:${port}/`, `http://[::ffff:127.0.0.1]:${port}/`, `http://2130706433:${port}/`]) {
        const result = await sender.send(url, {}, '{}');
        assert.match(result.error ?? '', /refused/, url);
      }
      assert.equal(connections, 0);
    } finally {
      await sender.close();
    }
  });

  test('with WEBHOOK_ALLOW_PRIVATE the checked answer is the address connected to', async () => {
    const resolver = fixed({ 'receiver.example': ['127.0.0.1'] });
    const sender = new Sender({ guard: { allowPrivate: true, allowHttp: true }, resolver, timeoutMs: 2_000 });
    try {
      const result = await sender.send(`http://receiver.example:${port}/hook`, {}, '{}');
      assert.deepEqual([result.delivered, result.status, result.response], [true, 200, 'ok']);
      assert.equal(requests, 1);
    } finally {
      await sender.close();
    }
  });
});
