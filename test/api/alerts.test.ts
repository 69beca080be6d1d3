// The team's low-balance alert through the API: PATCH /v1/account sets it (validated, owners'
// keys only), GET /v1/account shows it, and the live scrapes that cross it or reach 0 record
// credits.low and credits.exhausted exactly once each, however many race.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { byId, defaultScript, fixtureResult, startHarness, type Harness } from './harness.ts';
import { expectError, keyMadeBy, sleep, success, urlOf, variantQuery, type Response } from './support.ts';

describe('low-balance alerts', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ credits: 100 });
  });
  after(() => h.close());
  afterEach(() => {
    h.script = defaultScript;
  });

  const patch = (body: unknown, apiKey: string): Promise<Response> =>
    h.app.inject({ method: 'PATCH', url: '/v1/account', headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, payload: JSON.stringify(body) });

  test('PATCH /v1/account sets and removes the alert, answering the account; GET /v1/account shows it', async () => {
    const team = await h.newTeam(40, 1000);
    const set = success(await patch({ lowBalanceAlert: 25 }, team.key));
    assert.deepEqual(set.data, {
      team: { id: team.team.id, name: team.team.name },
      balance: 40,
      lowBalanceAlert: 25,
      rateLimit: { limit: 1000, windowSeconds: 60 },
      key: { id: team.keyId, name: 'test', dailyCreditLimit: null, spentToday: 0 },
    });
    assert.equal(set.meta.creditsCharged, 0);
    assert.equal((success(await h.get('/v1/account', { 'x-api-key': team.key })).data as { lowBalanceAlert: number | null }).lowBalanceAlert, 25);
    assert.equal((success(await patch({ lowBalanceAlert: null }, team.key)).data as { lowBalanceAlert: number | null }).lowBalanceAlert, null);
    for (const [body, path] of [
      [{ lowBalanceAlert: -5 }, 'lowBalanceAlert'],
      [{ lowBalanceAlert: '25' }, 'lowBalanceAlert'],
      [{}, 'lowBalanceAlert'],
      [{ lowBalanceAlert: 1, dailyCreditLimit: 1 }, 'dailyCreditLimit'],
    ] as const) {
      const error = expectError(await patch(body, team.key), 422, 'VALIDATION_ERROR', { authed: true });
      assert.deepEqual(error.details?.map((detail) => detail.path), [path], JSON.stringify(body));
    }
    const put = await h.app.inject({ method: 'PUT', url: '/v1/account', headers: { 'x-api-key': team.key } });
    expectError(put, 405, 'METHOD_NOT_ALLOWED', { authed: null });
    assert.equal(put.headers.allow, 'GET, PATCH');
    assert.equal((await h.stores.accounts.getTeam(team.team.id))?.lowBalanceAlert, null, 'nothing changed by the refused ones');
  });

  test("a key a member made cannot set it; an owner's can", async () => {
    const team = await h.newTeam(10, 1000);
    for (const [role, status] of [['member', 403], ['owner', 200]] as const) {
      const answer = await patch({ lowBalanceAlert: 3 }, await keyMadeBy(h, team.team.id, role));
      if (status === 403) expectError(answer, 403, 'FORBIDDEN', { authed: true });
      else assert.equal((success(answer).data as { lowBalanceAlert: number }).lowBalanceAlert, 3);
    }
  });

  test('racing live scrapes across the alert and down to 0 record credits.low and credits.exhausted once each; a top-up to the alert re-arms them', async () => {
    const endpoint = byId('linkpage-a.profile');
    const team = await h.newTeam(30, 1000);
    success(await patch({ lowBalanceAlert: 10 }, team.key));
    h.script = async (e) => {
      await sleep(5);
      return fixtureResult(e);
    };
    const responses = await Promise.all(Array.from({ length: 40 }, (_, i) => h.get(urlOf(endpoint, {}, variantQuery(endpoint, `alert${i}`)), { 'x-api-key': team.key })));
    assert.equal(responses.filter((response) => response.statusCode === 200).length, 30);
    const events = await h.stores.events.list(team.team.id);
    assert.deepEqual(
      events.map((event) => [event.type, event.data]),
      [
        ['credits.low', { balance: 9, threshold: 10 }],
        ['credits.exhausted', { balance: 0 }],
      ],
    );
    await h.stores.ledger.addCredits(team.team.id, 12);
    for (let i = 0; i < 3; i++) success(await h.get(urlOf(endpoint, {}, variantQuery(endpoint, `again${i}`)), { 'x-api-key': team.key }));
    assert.deepEqual((await h.stores.events.list(team.team.id)).map((event) => event.type), ['credits.low', 'credits.exhausted', 'credits.low']);
  });
});
