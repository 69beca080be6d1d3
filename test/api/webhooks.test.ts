// Webhooks from the outside: the /v1/webhooks endpoints of the real app, deliveries to a real
// receiver on loopback (WEBHOOK_ALLOW_PRIVATE and _HTTP on, as for development), each verified
// with the Standard Webhooks library; the retry schedule shortened. Registration refusals are
// checked with the guard strict and an injected resolver: nothing connects anywhere.
import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { generateKey } from '../../src/server/keys.ts';
import { openSqliteStores } from '../../src/store/sqlite/index.ts';
import type { Resolver } from '../../src/webhooks/guard.ts';
import { spawnService } from '../support/child-service.ts';
import { startReceiver, type Receiver, type Received } from '../support/webhook-receiver.ts';
import { byId, startHarness, type Harness } from './harness.ts';
import { keyMadeBy, success, until, urlOf, variantQuery } from './support.ts';

const SCHEDULE_MS = [300, 300, 300];
const TIMEOUT_MS = 1_000;
const delivery = { retryScheduleMs: SCHEDULE_MS, disableAfterMs: 5 * 86_400_000, timeoutMs: TIMEOUT_MS, pollMs: 50 };
const open = { allowPrivate: true, allowHttp: true };

type Json = Record<string, unknown>;
interface Created {
  id: string;
  url: string;
  secret: string;
  events: string[];
  enabled: boolean;
}
interface Attempt {
  at: string;
  status: number | null;
  durationMs: number;
  response: string;
  error: string | null;
}
interface DeliveryView {
  id: string;
  eventType: string;
  state: string;
  attemptCount: number;
  attempts: Attempt[];
}

function call(h: Harness, method: 'GET' | 'POST' | 'DELETE' | 'PUT', url: string, key: string, body?: unknown) {
  return h.app.inject({
    method,
    url,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

async function register(h: Harness, key: string, url: string, events: string[] = ['*']): Promise<Created> {
  const response = await call(h, 'POST', '/v1/webhooks', key, { url, events });
  assert.equal(response.statusCode, 201, response.body);
  return (JSON.parse(response.body) as { data: Created }).data;
}

const verify = (secret: string, request: Received): unknown => new Webhook(secret).verify(request.body, request.headers);

async function deliveriesOf(h: Harness, key: string, id: string): Promise<DeliveryView[]> {
  const response = await call(h, 'GET', `/v1/webhooks/${id}/deliveries`, key);
  assert.equal(response.statusCode, 200, response.body);
  return (JSON.parse(response.body) as { data: { deliveries: DeliveryView[] } }).data.deliveries;
}

describe('webhooks: registration and management', () => {
  const table: Record<string, string[]> = { 'loop.example': ['127.0.0.1'], 'inner.example': ['10.0.0.1'], 'hooks.example': ['93.184.216.34'] };
  const resolver: Resolver = async (hostname) => {
    const answers = table[hostname];
    if (!answers) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return answers.map((address): LookupAddress => ({ address, family: 4 }));
  };
  let h: Harness;
  before(async () => {
    // The guard strict, names resolved by the table above: nothing is delivered, nothing connects.
    h = await startHarness({ app: { webhooks: { resolver } } });
  });
  after(() => h.close());

  test('creates (201, the secret shown once), lists, shows, deletes; free', async () => {
    const before = await h.balance();
    const response = await call(h, 'POST', '/v1/webhooks', h.key, { url: 'https://hooks.example/in', events: ['credits.low', 'credits.exhausted'], description: 'billing' });
    assert.equal(response.statusCode, 201, response.body);
    const body = JSON.parse(response.body) as { data: Created & Json; meta: Json };
    assert.match(body.data.id, /^wh_/);
    assert.match(body.data.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual([body.data.url, body.data.events, body.data.description, body.data.enabled, body.data.previousSecretExpiresAt], ['https://hooks.example/in', ['credits.low', 'credits.exhausted'], 'billing', true, null]);
    assert.equal(body.meta.creditsCharged, 0);
    const shown = JSON.parse((await call(h, 'GET', `/v1/webhooks/${body.data.id}`, h.key)).body) as { data: Json };
    assert.equal(shown.data.secret, undefined, 'the secret is shown once');
    assert.equal(shown.data.id, body.data.id);
    const listed = JSON.parse((await call(h, 'GET', '/v1/webhooks', h.key)).body) as { data: { webhooks: Json[] } };
    assert.ok(listed.data.webhooks.some((webhook) => webhook.id === body.data.id && webhook.secret === undefined));
    const rotated = JSON.parse((await call(h, 'POST', `/v1/webhooks/${body.data.id}/rotate-secret`, h.key)).body) as { data: Json };
    assert.notEqual(rotated.data.secret, body.data.secret);
    assert.ok(Date.parse(String(rotated.data.previousSecretExpiresAt)) - h.clock.now === 86_400_000, 'the old secret signs for 24 hours more');
    assert.equal((await call(h, 'DELETE', `/v1/webhooks/${body.data.id}`, h.key)).statusCode, 200);
    assert.equal((await call(h, 'GET', `/v1/webhooks/${body.data.id}`, h.key)).statusCode, 404);
    assert.equal(await h.balance(), before);
  });

  test('every POST takes an Idempotency-Key: a repeat is the first answer replayed, the same key for another body is refused', async () => {
    const send = (url: string, key: string, body?: unknown) =>
      h.app.inject({
        method: 'POST',
        url,
        headers: { 'x-api-key': h.key, 'idempotency-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
    const count = async () => (JSON.parse((await call(h, 'GET', '/v1/webhooks', h.key)).body) as { data: { webhooks: Json[] } }).data.webhooks.length;
    const before = await count();
    const body = { url: 'https://hooks.example/once', events: ['*'] };
    const first = await send('/v1/webhooks', 'create-once', body);
    const again = await send('/v1/webhooks', 'create-once', body);
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body, first.body, 'the same answer, byte for byte');
    assert.equal(await count(), before + 1, 'one webhook made');
    const reused = await send('/v1/webhooks', 'create-once', { ...body, url: 'https://hooks.example/other' });
    assert.equal(reused.statusCode, 422);
    assert.equal((JSON.parse(reused.body) as { error: { code: string } }).error.code, 'IDEMPOTENCY_KEY_REUSED');
    // A POST without a body is fingerprinted by its path: the same key on another webhook is another request.
    const { id } = (JSON.parse(first.body) as { data: Created }).data;
    const rotated = await send(`/v1/webhooks/${id}/rotate-secret`, 'rotate-once');
    const rotatedAgain = await send(`/v1/webhooks/${id}/rotate-secret`, 'rotate-once');
    assert.equal(rotatedAgain.headers['idempotent-replayed'], 'true');
    assert.equal(rotatedAgain.body, rotated.body, 'rotated once: the same new secret');
    assert.equal((await call(h, 'DELETE', `/v1/webhooks/${id}`, h.key)).statusCode, 200);
  });

  test('refuses, with 422 and a clear message, every URL that could reach inside the network', async () => {
    for (const url of [
      'http://169.254.169.254/',
      'https://169.254.169.254/latest/meta-data/',
      'https://10.0.0.1/',
      'https://[::1]/',
      'https://loop.example/hook',
      'https://inner.example/hook',
      'https://2130706433/',
      'https://0x7f000001/',
      'https://0177.0.0.1/',
      'https://[::ffff:127.0.0.1]/',
      'https://[::ffff:a9fe:a9fe]/',
      'https://localhost:8080/',
      'https://100.64.0.1/',
      'http://hooks.example/in',
      'https://nowhere.example/',
    ]) {
      const response = await call(h, 'POST', '/v1/webhooks', h.key, { url, events: ['*'] });
      assert.equal(response.statusCode, 422, url);
      const error = (JSON.parse(response.body) as { error: { code: string; details: { path: string; message: string }[] } }).error;
      assert.equal(error.code, 'VALIDATION_ERROR');
      assert.equal(error.details[0]?.path, 'url', url);
      assert.ok((error.details[0]?.message.length ?? 0) > 10, url);
    }
    assert.deepEqual(
      (JSON.parse((await call(h, 'GET', '/v1/webhooks', h.key)).body) as { data: { webhooks: Json[] } }).data.webhooks.filter((w) => w.url !== 'https://hooks.example/in'),
      [],
      'nothing was created',
    );
  });

  test('validates the body whole, with paths', async () => {
    const response = await call(h, 'POST', '/v1/webhooks', h.key, { url: 5, events: ['nope'], extra: true });
    assert.equal(response.statusCode, 422);
    const paths = (JSON.parse(response.body) as { error: { details: { path: string }[] } }).error.details.map((detail) => detail.path).sort();
    assert.deepEqual(paths, ['events[0]', 'extra', 'url']);
    const empty = await call(h, 'POST', '/v1/webhooks', h.key, { url: 'https://hooks.example/in', events: [] });
    assert.equal(empty.statusCode, 422);
  });

  test("is team-scoped: another team's ids are unknown", async () => {
    const mine = await register(h, h.key, 'https://hooks.example/mine');
    const other = await h.newTeam(10);
    for (const [method, path] of [
      ['GET', `/v1/webhooks/${mine.id}`],
      ['DELETE', `/v1/webhooks/${mine.id}`],
      ['POST', `/v1/webhooks/${mine.id}/rotate-secret`],
      ['POST', `/v1/webhooks/${mine.id}/test`],
      ['GET', `/v1/webhooks/${mine.id}/deliveries`],
      ['POST', '/v1/webhooks/deliveries/msg_nope/redeliver'],
    ] as const) {
      assert.equal((await call(h, method, path, other.key)).statusCode, 404, `${method} ${path}`);
    }
    assert.deepEqual((JSON.parse((await call(h, 'GET', '/v1/webhooks', other.key)).body) as { data: { webhooks: Json[] } }).data.webhooks, []);
    assert.equal((await call(h, 'GET', `/v1/webhooks/${mine.id}`, h.key)).statusCode, 200);
  });

  test('at most 10 per team (409); a key a member made cannot manage them (403) but can read them', async () => {
    const team = await h.newTeam(10);
    for (let i = 0; i < 10; i++) await register(h, team.key, `https://hooks.example/${i}`);
    const eleventh = await call(h, 'POST', '/v1/webhooks', team.key, { url: 'https://hooks.example/11', events: ['*'] });
    assert.equal(eleventh.statusCode, 409);
    assert.equal((JSON.parse(eleventh.body) as { error: { code: string } }).error.code, 'CONFLICT');
    const member = await keyMadeBy(h, team.team.id, 'member');
    const [first] = (JSON.parse((await call(h, 'GET', '/v1/webhooks', member)).body) as { data: { webhooks: { id: string }[] } }).data.webhooks;
    assert.ok(first);
    assert.equal((await call(h, 'DELETE', `/v1/webhooks/${first.id}`, member)).statusCode, 403);
    assert.equal((await call(h, 'POST', `/v1/webhooks/${first.id}/rotate-secret`, member)).statusCode, 403);
    const owner = await keyMadeBy(h, team.team.id, 'owner');
    assert.equal((await call(h, 'DELETE', `/v1/webhooks/${first.id}`, owner)).statusCode, 200);
    assert.equal((await call(h, 'PUT', '/v1/webhooks', owner)).statusCode, 405);
  });
});

describe('webhooks: deliveries to a receiver', () => {
  let h: Harness;
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver();
    h = await startHarness({ credits: 1000, app: { webhooks: { guard: open, delivery } } });
  });
  after(async () => {
    await h.close();
    await receiver.close();
  });

  test('a test event arrives signed as Standard Webhooks says; a replay older than 5 minutes fails verification', async () => {
    const hook = await register(h, h.key, `${receiver.origin}/signed`);
    const sent = JSON.parse((await call(h, 'POST', `/v1/webhooks/${hook.id}/test`, h.key)).body) as { data: { eventId: string } };
    assert.ok(await until(() => receiver.received.some((r) => r.path === '/signed'), 5_000));
    const request = receiver.received.find((r) => r.path === '/signed') as Received;
    assert.match(request.headers['webhook-id'] ?? '', /^msg_/);
    assert.match(request.headers['webhook-signature'] ?? '', /^v1,[A-Za-z0-9+/]+=*$/);
    assert.equal(request.headers['content-type'], 'application/json');
    const payload = verify(hook.secret, request) as { type: string; timestamp: string; data: Json };
    assert.equal(payload.type, 'webhook.test');
    assert.equal(payload.data.webhookId, hook.id);
    assert.ok(!Number.isNaN(Date.parse(payload.timestamp)));
    assert.ok(sent.data.eventId.startsWith('evt_'));
    assert.throws(() => new Webhook(`whsec_${Buffer.from('another secret of 32 bytes, yes!').toString('base64')}`).verify(request.body, request.headers));
    assert.throws(() => verify(hook.secret, { ...request, body: request.body.replace('webhook.test', 'webhook.tesT') }));
    const realNow = Date.now;
    Date.now = () => realNow() + 6 * 60_000;
    try {
      assert.throws(() => verify(hook.secret, request), /timestamp/i, 'a replay six minutes later');
    } finally {
      Date.now = realNow;
    }
    assert.ok(await until(async () => (await deliveriesOf(h, h.key, hook.id))[0]?.state === 'delivered', 3_000));
    const [logged] = await deliveriesOf(h, h.key, hook.id);
    assert.deepEqual([logged?.id, logged?.state, logged?.attemptCount, logged?.attempts[0]?.status, logged?.attempts[0]?.response], [request.headers['webhook-id'], 'delivered', 1, 200, 'ok']);
  });

  test('500 twice then 200: three attempts with the same webhook-id on the schedule, in the log; redeliver sends it again', async () => {
    const hook = await register(h, h.key, `${receiver.origin}/flaky`);
    let answered = 0;
    receiver.answer = (request, response) => {
      if (request.path !== '/flaky') return void response.end('ok');
      answered += 1;
      response.statusCode = answered <= 2 ? 500 : 200;
      response.end(answered <= 2 ? `down ${answered}` : 'fine');
    };
    await call(h, 'POST', `/v1/webhooks/${hook.id}/test`, h.key);
    assert.ok(await until(() => receiver.received.filter((r) => r.path === '/flaky').length === 3, 10_000));
    const attempts = receiver.received.filter((r) => r.path === '/flaky');
    const id = attempts[0]?.headers['webhook-id'] as string;
    assert.ok(attempts.every((r) => r.headers['webhook-id'] === id), 'the same webhook-id on every attempt');
    for (const r of attempts) verify(hook.secret, r);
    for (let i = 1; i < 3; i++) assert.ok((attempts[i] as Received).at - (attempts[i - 1] as Received).at >= (SCHEDULE_MS[i - 1] as number) - 20, `retry ${i} waited its turn`);
    await until(async () => (await deliveriesOf(h, h.key, hook.id))[0]?.state === 'delivered', 3_000);
    const [logged] = await deliveriesOf(h, h.key, hook.id);
    assert.equal(logged?.id, id);
    assert.deepEqual(
      logged?.attempts.map((a) => [a.status, a.response]),
      [
        [200, 'fine'],
        [500, 'down 2'],
        [500, 'down 1'],
      ],
    );
    assert.ok(logged?.attempts.every((a) => a.durationMs >= 0 && !Number.isNaN(Date.parse(a.at))));
    const again = await call(h, 'POST', `/v1/webhooks/deliveries/${id}/redeliver`, h.key);
    assert.equal(again.statusCode, 200, again.body);
    assert.ok(await until(() => receiver.of(id).length === 4, 5_000), 'redelivered');
    verify(hook.secret, receiver.of(id)[3] as Received);
    await until(async () => (await deliveriesOf(h, h.key, hook.id))[0]?.attemptCount === 4, 3_000);
  });

  test('the retries end in failed after the schedule', async () => {
    const hook = await register(h, h.key, `${receiver.origin}/down`);
    receiver.answer = (request, response) => {
      response.statusCode = request.path === '/down' ? 503 : 200;
      response.end();
    };
    await call(h, 'POST', `/v1/webhooks/${hook.id}/test`, h.key);
    assert.ok(await until(async () => (await deliveriesOf(h, h.key, hook.id))[0]?.state === 'failed', 10_000));
    const [logged] = await deliveriesOf(h, h.key, hook.id);
    assert.equal(logged?.attemptCount, SCHEDULE_MS.length + 1);
    assert.equal(receiver.received.filter((r) => r.path === '/down').length, SCHEDULE_MS.length + 1);
  });

  test('a receiver that hangs, answers 10 MB or redirects: bounded and recorded, nothing else harmed', async () => {
    const hang = await register(h, h.key, `${receiver.origin}/hang`);
    const big = await register(h, h.key, `${receiver.origin}/big`);
    const moved = await register(h, h.key, `${receiver.origin}/moved`);
    const written = { bytes: 0, closed: false };
    receiver.answer = (request, response) => {
      if (request.path === '/hang') return; // never answers
      if (request.path === '/big') {
        response.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(64 * 1024, 'x');
        response.on('close', () => (written.closed = true));
        const pump = () => {
          while (written.bytes < 10 * 1024 * 1024) {
            written.bytes += chunk.length;
            if (!response.write(chunk)) return void response.once('drain', pump);
          }
          response.end();
        };
        return pump();
      }
      if (request.path === '/moved') {
        response.writeHead(302, { location: `${receiver.origin}/elsewhere` });
        return void response.end();
      }
      response.end('ok');
    };
    for (const hook of [hang, big, moved]) await call(h, 'POST', `/v1/webhooks/${hook.id}/test`, h.key);
    const first = async (id: string) => (await deliveriesOf(h, h.key, id))[0]?.attempts.at(-1);
    assert.ok(await until(async () => (await first(hang.id)) !== undefined && (await first(big.id)) !== undefined && (await first(moved.id)) !== undefined, 10_000));
    const hung = (await first(hang.id)) as Attempt;
    assert.equal(hung.status, null);
    assert.match(hung.error ?? '', /within 1 s/);
    assert.ok(hung.durationMs >= TIMEOUT_MS - 50 && hung.durationMs < TIMEOUT_MS + 1_500, `bounded by the timeout: ${hung.durationMs} ms`);
    const large = (await first(big.id)) as Attempt;
    assert.equal(large.status, 200);
    assert.equal(large.response.length, 1_024, 'the first 1 KB kept');
    assert.ok(await until(() => written.closed, 3_000), 'the answer was cut off, not read whole');
    assert.ok(written.bytes < 10 * 1024 * 1024, `not all of it was sent: ${written.bytes}`);
    const redirect = (await first(moved.id)) as Attempt;
    assert.equal(redirect.status, 302);
    assert.match(redirect.error ?? '', /Redirects are not followed/);
    assert.equal(receiver.received.filter((r) => r.path === '/elsewhere').length, 0, 'not followed');
    // Meanwhile the API answers at once.
    const started = performance.now();
    assert.equal((await call(h, 'GET', '/v1/webhooks', h.key)).statusCode, 200);
    assert.ok(performance.now() - started < 500);
  });

  test('credits.low and credits.exhausted arrive after charges cross the alert', async () => {
    const team = await h.newTeam(3, 1000);
    success(await h.app.inject({ method: 'PATCH', url: '/v1/account', headers: { 'x-api-key': team.key, 'content-type': 'application/json' }, payload: JSON.stringify({ lowBalanceAlert: 2 }) }));
    const hook = await register(h, team.key, `${receiver.origin}/credits`, ['credits.low', 'credits.exhausted']);
    receiver.answer = (_request, response) => response.end('ok');
    const endpoint = byId('linkpage-a.profile');
    for (let i = 0; i < 3; i++) success(await h.get(urlOf(endpoint, {}, variantQuery(endpoint, `webhook-credit-${i}`)), { 'x-api-key': team.key }));
    assert.ok(await until(() => receiver.received.filter((r) => r.path === '/credits').length === 2, 5_000));
    const payloads = receiver.received.filter((r) => r.path === '/credits').map((r) => verify(hook.secret, r) as { type: string; data: Json });
    assert.deepEqual(payloads.map((p) => [p.type, p.data]).sort(), [
      ['credits.exhausted', { balance: 0 }],
      ['credits.low', { balance: 1, threshold: 2 }],
    ]);
  });

  test('during a rotation both secrets sign, and either verifies', async () => {
    const hook = await register(h, h.key, `${receiver.origin}/rotated`);
    const rotated = JSON.parse((await call(h, 'POST', `/v1/webhooks/${hook.id}/rotate-secret`, h.key)).body) as { data: Created };
    receiver.answer = (_request, response) => response.end('ok');
    await call(h, 'POST', `/v1/webhooks/${hook.id}/test`, h.key);
    assert.ok(await until(() => receiver.received.some((r) => r.path === '/rotated'), 5_000));
    const request = receiver.received.find((r) => r.path === '/rotated') as Received;
    assert.equal(request.headers['webhook-signature']?.split(' ').length, 2);
    verify(hook.secret, request);
    verify(rotated.data.secret, request);
  });
});

describe('webhooks: the service killed with deliveries pending', () => {
  let dir = '';
  let receiver: Receiver;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'webhooks-kill-'));
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const serve = () =>
    spawnService({
      DATA_DIR: dir,
      WEBHOOK_ALLOW_PRIVATE: 'on',
      WEBHOOK_ALLOW_HTTP: 'on',
      WEBHOOK_RETRY_SCHEDULE: '0.3,0.3,0.3,0.3,0.3,0.3,0.3,0.3,0.3,0.3,0.3,0.3,0.3,0.3,0.3,0.3,0.3,0.3,0.3,0.3',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_POLL_MS: '50',
    });

  test('every delivery arrives after a restart', async () => {
    const setup = openSqliteStores({ path: join(dir, 'service.db') });
    const team = await setup.accounts.createTeam({ name: 'killed', credits: 10, rateLimit: 1000 });
    const key = generateKey();
    await setup.accounts.createKey({ teamId: team.id, name: 'k', hash: key.hash, prefix: key.prefix, last4: key.last4 });
    await setup.close();

    // Down at first: every delivery stays pending, one of them in the middle of an attempt.
    let up = false;
    receiver.answer = (request, response) => {
      if (up) return void response.end('ok');
      if (request.body.includes('"n":0')) return; // hangs: the kill comes mid-attempt
      response.statusCode = 503;
      response.end();
    };
    const first = serve();
    const base = await first.listening;
    const post = (path: string, body?: unknown) =>
      fetch(`${base}${path}`, { method: 'POST', headers: { 'x-api-key': key.key, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
    const hook = (await (await post('/v1/webhooks', { url: `${receiver.origin}/killed`, events: ['*'] })).json()) as { data: Created };
    // Events of the team, recorded as anything in the service records them.
    const recorder = openSqliteStores({ path: join(dir, 'service.db') });
    for (let n = 0; n < 5; n++) await recorder.events.record(team.id, 'credits.low', { n, balance: 1, threshold: 2 });
    await recorder.close();
    assert.ok(await until(() => new Set(receiver.received.map((r) => r.headers['webhook-id'])).size === 5, 10_000), 'each tried before the kill');
    first.child.kill('SIGKILL');
    await first.exited;
    const delivered = new Set<string>();
    up = true;
    const second = serve();
    try {
      await second.listening;
      receiver.answer = (request, response) => {
        delivered.add(request.headers['webhook-id'] as string);
        verify(hook.data.secret, request);
        response.end('ok');
      };
      assert.ok(await until(() => delivered.size === 5, 20_000), `all five arrive after the restart (${delivered.size})`);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});
