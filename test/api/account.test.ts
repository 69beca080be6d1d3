// The account endpoints: the calling key's team, balance and rate limit, its usage per day and
// endpoint, and its request records; free, counted by the rate limit, declared like the rest.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { accountEndpoints } from '../../src/account/endpoints.ts';
import { byId, startHarness, type Harness } from './harness.ts';
import { expectError, success, urlOf, variantQuery } from './support.ts';

// ajv-formats is CommonJS: its function is both module.exports and module.exports.default.
const addFormats = addFormatsModule.default;
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv, ['date-time']);
const checkData = new Map(accountEndpoints.map((endpoint) => [endpoint.path, ajv.compile(endpoint.data)]));

/** A 200 from an account endpoint: free, its data as declared. */
function answer(response: Parameters<typeof success>[0], balance: number) {
  const body = success(response);
  assert.deepEqual(body.meta, { requestId: body.meta.requestId, creditsCharged: 0, creditsRemaining: balance, cached: false });
  const path = new URL(`http://x${String(response.raw.req.url)}`).pathname;
  const check = checkData.get(path);
  assert.ok(check, path);
  assert.ok(check(body.data), JSON.stringify(check.errors));
  return body.data as Record<string, unknown>;
}

const today = () => new Date().toISOString().slice(0, 10);

describe('account endpoints', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ credits: 100, rateLimit: 1000 });
  });
  after(() => h.close());

  test('GET /v1/account: the team, balance, rate limit and calling key; free, counted by the rate limit', async () => {
    const first = await h.get('/v1/account');
    const data = answer(first, 100);
    assert.deepEqual(data, { team: { id: h.team.id, name: h.team.name }, balance: 100, lowBalanceAlert: null, rateLimit: { limit: 1000, windowSeconds: 60 }, key: { id: h.keyId, name: 'test', dailyCreditLimit: null, spentToday: 0 } });
    const second = await h.get('/v1/account');
    assert.equal(Number(second.headers['x-ratelimit-remaining']), Number(first.headers['x-ratelimit-remaining']) - 1);
    assert.equal(await h.balance(), 100, 'nothing charged');
    expectError(await h.get('/v1/account', {}), 401, 'UNAUTHORIZED', { authed: false });
  });

  test('GET /v1/account/usage: every day of the span, totals per day and endpoint from the request records', async () => {
    const team = await h.newTeam(50, 1000);
    const endpoint = byId('snapmsg.profile');
    const url = urlOf(endpoint, { cache_max_age: '1d' }, variantQuery(endpoint, 'usage'));
    for (let i = 0; i < 3; i++) success(await h.get(url, { 'x-api-key': team.key }));
    await h.app.writeRecords();
    const data = answer(await h.get('/v1/account/usage', { 'x-api-key': team.key }), 49);
    const days = data.days as { day: string; requests: number; credits: number; cached: number }[];
    assert.equal(days.length, 30);
    assert.equal(days.at(-1)?.day, today());
    assert.equal(data.to, today());
    assert.equal(data.from, days[0]?.day);
    assert.deepEqual(days.at(-1), { day: today(), requests: 3, credits: 1, cached: 2 });
    assert.ok(days.slice(0, -1).every((day) => day.requests === 0));
    assert.deepEqual(data.totals, { requests: 3, credits: 1, cached: 2 });
    assert.deepEqual(data.endpoints, [{ endpoint: endpoint.path, requests: 3, credits: 1, cached: 2 }]);

    const past = answer(await h.get('/v1/account/usage?from=2026-01-01&to=2026-01-03', { 'x-api-key': team.key }), 49);
    assert.deepEqual(past.totals, { requests: 0, credits: 0, cached: 0 });
    assert.deepEqual((past.days as { day: string }[]).map((day) => day.day), ['2026-01-01', '2026-01-02', '2026-01-03']);
  });

  test('GET /v1/account/usage: 422 for a day that is not one, a span reversed or longer than 366 days, a repeated parameter', async () => {
    const problems = async (query: string) => expectError(await h.get(`/v1/account/usage?${query}`), 422, 'VALIDATION_ERROR', { authed: true }).details;
    assert.deepEqual(await problems('from=2026-02-30'), [{ path: 'from', message: 'Is not a calendar day' }]);
    assert.deepEqual(await problems('to=26-1-1'), [{ path: 'to', message: 'Has an invalid format' }]);
    assert.deepEqual(await problems('from=2026-03-02&to=2026-03-01'), [{ path: 'from', message: 'Must not be after to' }]);
    assert.deepEqual(await problems('from=2024-01-01&to=2026-01-01'), [{ path: 'from', message: 'The span must be at most 366 days' }]);
    assert.deepEqual(await problems('to=2026-01-01&to=2026-01-02'), [{ path: 'to', message: 'Given more than once; give it once' }]);
  });

  test('every account endpoint: 422 for parameters it does not declare, all listed, each with the closest declared name; nothing counted as done', async () => {
    const problems = async (url: string) => expectError(await h.get(url), 422, 'VALIDATION_ERROR', { authed: true }).details;
    assert.deepEqual(await problems('/v1/account?verbose=1'), [{ path: 'verbose', message: 'Unknown parameter; this endpoint takes none' }]);
    assert.deepEqual(await problems('/v1/account/usage?form=2026-01-01&To=2026-01-02&x=1'), [
      { path: 'form', message: 'Unknown parameter; did you mean from?' },
      { path: 'To', message: 'Unknown parameter; did you mean to?' },
      { path: 'x', message: 'Unknown parameter; the parameters are from, to' },
    ]);
    // An unknown name beside an invalid value of a declared one: both at once.
    assert.deepEqual(await problems('/v1/account/requests?status=20&end_point=/v1/snapmsg/profile'), [
      { path: 'end_point', message: 'Unknown parameter; did you mean endpoint?' },
      { path: 'status', message: 'Has an invalid format' },
    ]);
  });

  test('GET /v1/account/requests: the team\'s records newest first, 50 a page, with signed cursors bound to the filters', async () => {
    const team = await h.newTeam(100, 1000);
    const other = await h.newTeam(100, 1000);
    const endpoint = byId('linkpage-a.profile');
    const url = urlOf(endpoint, { cache_max_age: '1d' }, variantQuery(endpoint, 'listing'));
    const sent: string[] = [];
    for (let i = 0; i < 55; i++) sent.push(String((await h.get(url, { 'x-api-key': team.key })).headers['x-request-id']));
    await new Promise((resolve) => setTimeout(resolve, 5)); // a later millisecond: records of one millisecond go by request id
    expectError(await h.get(`${endpoint.path}?url=nope`, { 'x-api-key': team.key }), 422, 'VALIDATION_ERROR', { authed: true });
    success(await h.get(url, { 'x-api-key': other.key }));
    await h.app.writeRecords();

    const first = answer(await h.get('/v1/account/requests', { 'x-api-key': team.key }), 99);
    const records = first.requests as { requestId: string; at: string; status: number; keyId: string }[];
    assert.equal(records.length, 50);
    // The store keeps epoch ms; the API answers the time as ISO 8601 in UTC, to the millisecond.
    for (const record of records) {
      assert.match(record.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.ok(Math.abs(Date.parse(record.at) - Date.now()) < 60_000);
    }
    assert.equal(records[0]?.status, 422, 'newest first');
    assert.equal(records[0]?.keyId, team.keyId);
    assert.ok(!('teamId' in (records[0] ?? {})));
    const paging = first.paging as { cursor: string; hasNextPage: boolean };
    assert.equal(paging.hasNextPage, true);
    const second = answer(await h.get(`/v1/account/requests?cursor=${paging.cursor}`, { 'x-api-key': team.key }), 99);
    const rest = second.requests as { requestId: string }[];
    assert.equal(rest.length, 6);
    assert.deepEqual(second.paging, { cursor: null, hasNextPage: false });
    assert.deepEqual([...records, ...rest].map((r) => r.requestId).filter((id) => sent.includes(id)).sort(), [...sent].sort(), "every one of the team's requests, none of the other team's");

    const failed = answer(await h.get('/v1/account/requests?status=422', { 'x-api-key': team.key }), 99);
    assert.deepEqual((failed.requests as { status: number }[]).map((r) => r.status), [422]);
    const filtered = answer(await h.get(`/v1/account/requests?endpoint=${encodeURIComponent(endpoint.path)}&status=200`, { 'x-api-key': team.key }), 99);
    assert.equal((filtered.requests as unknown[]).length, 50);

    const foreign = expectError(await h.get(`/v1/account/requests?cursor=${paging.cursor}&status=200`, { 'x-api-key': team.key }), 400, 'BAD_REQUEST', { authed: true });
    assert.match(foreign.message, /other filters/);
    expectError(await h.get(`/v1/account/requests?cursor=${paging.cursor}`, { 'x-api-key': other.key }), 400, 'BAD_REQUEST', { authed: true });
    const forged = expectError(await h.get('/v1/account/requests?cursor=bm90LWEtY3Vyc29y', { 'x-api-key': team.key }), 400, 'BAD_REQUEST', { authed: true });
    assert.match(forged.message, /malformed or was not issued/);
    expectError(await h.get('/v1/account/requests?status=20', { 'x-api-key': team.key }), 422, 'VALIDATION_ERROR', { authed: true });
  });

  test('declared in the OpenAPI document under the account tag', async () => {
    const document = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, { get: { tags: string[]; operationId: string; responses: Record<string, unknown> } }>;
      tags: { name: string }[];
    };
    for (const endpoint of accountEndpoints) {
      const operation = document.paths[endpoint.path]?.get;
      assert.ok(operation, endpoint.path);
      assert.deepEqual(operation.tags, ['account']);
      assert.ok(operation.responses['200'] && operation.responses['401'] && operation.responses['429']);
    }
    assert.equal(document.paths['/v1/account/requests']?.get.operationId, 'accountRequests');
    assert.ok(document.tags.some((tag) => tag.name === 'account'));
  });
});
