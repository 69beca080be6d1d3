// The dashboard over HTTP: sign-in and set-password, sessions and their cookies, CSRF, the
// sign-in limit, roles, and one team's user asking for what is another team's.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { issuePasswordLink, LINK_LIFETIME_MS } from '../../src/account/users.ts';
import { SIGN_IN_LIMITS } from '../../src/dashboard/plugin.ts';
import { startHarness, type Harness } from '../api/harness.ts';
import { Browser, csrfOf, PASSWORD, signedIn, userWithPassword } from './support.ts';

const keyIdsOf = async (h: Harness, teamId: string) => (await h.stores.accounts.listKeys(teamId)).map((key) => key.id);

describe('dashboard over HTTP', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ credits: 100 });
  });
  after(() => h.close());

  test('pages carry a strict Content-Security-Policy and load nothing from another host', async () => {
    const page = await new Browser(h).get('/dashboard/sign-in');
    assert.equal(page.status, 200);
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-eval|unsafe-inline|https?:/);
    assert.equal(page.headers['referrer-policy'], 'no-referrer');
    assert.doesNotMatch(page.body, /(src|href)="(https?:)?\/\//);
    assert.doesNotMatch(page.body, /<script>|style=/, 'no inline script or style');
    const asset = await new Browser(h).get('/dashboard/assets/dashboard.js');
    assert.equal(asset.status, 200);
    assert.match(String(asset.headers['content-type']), /javascript/);
  });

  test('a method a page does not take is 405 naming the ones it takes, as on the API (HEAD included); an unknown page is 404', async () => {
    for (const [method, path, allow] of [
      ['HEAD', '/dashboard/sign-in', 'GET, POST'],
      ['PUT', '/dashboard/sign-in', 'GET, POST'],
      ['DELETE', '/dashboard', 'GET'],
      ['HEAD', '/dashboard/assets/dashboard.js', 'GET'],
    ] as const) {
      const response = await h.app.inject({ method, url: path });
      assert.equal(response.statusCode, 405, `${method} ${path}`);
      assert.equal(response.headers.allow, allow, `${method} ${path}`);
    }
    assert.equal((await h.app.inject({ method: 'GET', url: '/dashboard/no-such-page' })).statusCode, 404);
  });

  test('a set-password link works once, within 24 hours; a wrong or short password is refused with a clear message', async () => {
    const user = await h.stores.users.createUser({ teamId: h.team.id, email: 'link@example.com', role: 'member' });
    const link = await issuePasswordLink(h.stores.users, user.id, 'http://127.0.0.1', Date.now());
    const path = link.replace('http://127.0.0.1', '');
    const token = new URL(link).searchParams.get('token') ?? '';
    const browser = new Browser(h);
    const form = await browser.get(path);
    assert.match(form.body, /<label for="new-password">New password<\/label>/);
    assert.match(form.body, /<label for="confirm-password">Confirm password<\/label>/);
    assert.match(form.body, />Set password<\/button>/);
    const short = await browser.post('/dashboard/set-password', { token, password: 'short', confirm: 'short' });
    assert.equal(short.status, 422);
    assert.match(short.body, /at least 10 characters/);
    const differ = await browser.post('/dashboard/set-password', { token, password: PASSWORD, confirm: `${PASSWORD}!` });
    assert.match(differ.body, /The two passwords differ/);
    const done = await browser.post('/dashboard/set-password', { token, password: PASSWORD, confirm: PASSWORD });
    assert.equal(done.status, 303);
    assert.equal(done.location, '/dashboard/sign-in?done=password');
    const again = await new Browser(h).get(path);
    assert.equal(again.status, 400);
    assert.match(again.body, /expired or has already been used/);
    const old = await h.stores.users.createUser({ teamId: h.team.id, email: 'old-link@example.com', role: 'member' });
    const expired = await issuePasswordLink(h.stores.users, old.id, 'http://127.0.0.1', h.clock.now - LINK_LIFETIME_MS - 1);
    assert.equal((await new Browser(h).get(expired.replace('http://127.0.0.1', ''))).status, 400);
  });

  test('an earlier link dies when a new one is issued, and every link of the user when one is used', async () => {
    const user = await h.stores.users.createUser({ teamId: h.team.id, email: 'relinked@example.com', role: 'owner' });
    const path = (link: string) => link.replace('http://127.0.0.1', '');
    const tokenOf = (link: string) => new URL(link).searchParams.get('token') ?? '';
    const first = await issuePasswordLink(h.stores.users, user.id, 'http://127.0.0.1', Date.now());
    const second = await issuePasswordLink(h.stores.users, user.id, 'http://127.0.0.1', Date.now());
    // A form opened with the first link before the second was issued.
    const early = new Browser(h);
    assert.equal((await early.get(path(second))).status, 200);
    const set = new Browser(h);
    await set.get(path(second));
    assert.equal((await set.post('/dashboard/set-password', { token: tokenOf(second), password: PASSWORD, confirm: PASSWORD })).status, 303);
    assert.equal((await new Browser(h).get(path(first))).status, 400, 'the first link is dead');
    const takeover = await early.post('/dashboard/set-password', { token: tokenOf(first), password: 'a password of my own', confirm: 'a password of my own' });
    assert.equal(takeover.status, 400);
    assert.match(takeover.body, /expired or has already been used/);
    const owner = new Browser(h);
    assert.equal((await owner.signIn('relinked@example.com')).status, 303, 'the password set with the second link still holds');
    assert.equal((await owner.get('/dashboard')).status, 200, 'and its session was not ended');
    // A third link, issued after the password was set, ends the second too (already used) and works once.
    const third = await issuePasswordLink(h.stores.users, user.id, 'http://127.0.0.1', Date.now());
    assert.equal((await new Browser(h).get(path(third))).status, 200);
    assert.equal((await new Browser(h).get(path(second))).status, 400);
  });

  test('sign-in: a new session in an HttpOnly, SameSite=Lax cookie; a wrong password says so; a planted cookie is never adopted', async () => {
    const { email } = await userWithPassword(h, h.team.id, 'owner');
    const browser = new Browser(h);
    browser.cookies.set('ps_session', 'planted-by-someone-else-0123456789');
    const form = await browser.get('/dashboard/sign-in');
    assert.match(form.body, /<label for="email">Email<\/label>/);
    assert.match(form.body, /<label for="password">Password<\/label>/);
    const wrong = await browser.post('/dashboard/sign-in', { email, password: 'not the password' });
    assert.equal(wrong.status, 401);
    assert.match(wrong.body, /The email or password is wrong/);
    const unknown = await browser.post('/dashboard/sign-in', { email: 'nobody@example.com', password: PASSWORD });
    assert.match(unknown.body, /The email or password is wrong/, 'the same answer for an unknown email');
    const ok = await browser.post('/dashboard/sign-in', { email: email.toUpperCase(), password: PASSWORD });
    assert.equal(ok.status, 303);
    const cookie = [ok.headers['set-cookie']].flat().find((line) => String(line).startsWith('ps_session=')) as string;
    assert.match(cookie, /; HttpOnly/);
    assert.match(cookie, /; SameSite=Lax/);
    assert.match(cookie, /; Path=\/dashboard/);
    assert.doesNotMatch(cookie, /; Secure/, 'plain HTTP here');
    assert.notEqual(browser.cookies.get('ps_session'), 'planted-by-someone-else-0123456789');
    assert.equal((await browser.get('/dashboard')).status, 200);
    const planted = new Browser(h);
    planted.cookies.set('ps_session', 'planted-by-someone-else-0123456789');
    assert.equal((await planted.get('/dashboard')).status, 303, 'an unknown session is no session');
  });

  test('cookies are Secure when served over HTTPS (PUBLIC_BASE_URL https)', async () => {
    const secure = await startHarness({ credits: 1, app: { publicBaseUrl: 'https://api.example.com' } });
    try {
      const page = await new Browser(secure).get('/dashboard/sign-in');
      assert.match(String([page.headers['set-cookie']].flat()[0]), /; Secure/);
    } finally {
      await secure.close();
    }
  });

  test('every change without the CSRF token, or with another session\'s, is 403 and changes nothing', async () => {
    const { browser } = await signedIn(h, h.team.id, 'owner');
    const other = await signedIn(h, h.team.id, 'owner');
    await other.browser.get('/dashboard/keys');
    const before = await keyIdsOf(h, h.team.id);
    for (const csrf of ['', 'forged', csrfOf(other.browser.last)]) {
      const page = await browser.request('POST', '/dashboard/keys', { csrf, name: 'sneaky' });
      assert.equal(page.status, 403, csrf);
      assert.match(page.body, /did not come from this dashboard/);
    }
    assert.deepEqual(await keyIdsOf(h, h.team.id), before);
    const signOut = await browser.request('POST', '/dashboard/sign-out', { name: 'x' });
    assert.equal(signOut.status, 403);
    assert.equal((await browser.get('/dashboard')).status, 200, 'still signed in');
    const anonymous = new Browser(h);
    assert.equal((await anonymous.request('POST', '/dashboard/sign-in', { email: 'a@example.com', password: PASSWORD })).status, 403, 'sign-in needs the form token too');
  });

  test('a form posted with a field the dashboard does not put in it is refused (422, each named with the closest field) and changes nothing', async () => {
    const team = await h.newTeam(5, 100);
    const { browser } = await signedIn(h, team.team.id, 'owner');
    await browser.get('/dashboard/keys');
    const before = await keyIdsOf(h, team.team.id);
    const page = await browser.post('/dashboard/keys', { name: 'typo', nmae: 'x', admin: '1' });
    assert.equal(page.status, 422);
    assert.match(page.body, /nmae: Unknown field; did you mean name\?/);
    assert.match(page.body, /admin: Unknown field; the fields are csrf, team, name/);
    assert.deepEqual(await keyIdsOf(h, team.team.id), before, 'no key made');
    // Try it: its parameters (q.*) are the endpoint's, and the API refuses an unknown one itself.
    await browser.get('/dashboard/try?endpoint=snapmsg.profile');
    const tried = await browser.post('/dashboard/try', { endpoint: 'snapmsg.profile', key: team.keyId, 'q.username': 'lunavoss', 'q.cache-max-age': '1d' });
    assert.equal(tried.status, 200);
    assert.match(tried.body, /id="try-status">422</);
    assert.match(tried.body, /did you mean cache_max_age\?/);
    assert.equal(await h.balance(team.team.id), 5, 'not charged');
    const extra = await browser.post('/dashboard/try', { endpoint: 'snapmsg.profile', key: team.keyId, 'q.username': 'lunavoss', endpont: 'snapmsg.profile' });
    assert.equal(extra.status, 422);
    assert.match(extra.body, /endpont: Unknown field; did you mean endpoint\?/);
    // Before sign-in too.
    const anonymous = new Browser(h);
    await anonymous.get('/dashboard/sign-in');
    const signIn = await anonymous.post('/dashboard/sign-in', { email: 'a@example.com', password: PASSWORD, remember: 'yes' });
    assert.equal(signIn.status, 422);
    assert.match(signIn.body, /remember: Unknown field; the fields are csrf, email, password/);
  });

  test('the try-it panel is held to the size of an HTTP request, as MCP is', async () => {
    const team = await h.newTeam(5, 100);
    const { browser } = await signedIn(h, team.team.id, 'owner');
    const form = await browser.get('/dashboard/try?endpoint=linkpage-a.profile');
    // Sent raw in a 6 KB form, each `~` is three bytes of the request's URL: over 16 KiB.
    const payload = `csrf=${csrfOf(form)}&endpoint=linkpage-a.profile&key=${team.keyId}&q.cache_max_age=1d&q.url=https://linkpage-a.example/${'~'.repeat(6_000)}`;
    const cookie = [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const tried = await h.app.inject({ method: 'POST', url: '/dashboard/try', remoteAddress: browser.address, headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload });
    assert.equal(tried.statusCode, 200);
    assert.match(tried.body, /id="try-status">400</);
    assert.match(tried.body, /The request URL or headers are too large/);
    assert.equal(await h.balance(team.team.id), 5, 'not charged');
  });

  test('sign-in attempts are limited per account and per address', async () => {
    const { email } = await userWithPassword(h, h.team.id, 'member');
    const browser = new Browser(h);
    await browser.get('/dashboard/sign-in');
    const statuses: number[] = [];
    for (let i = 0; i < SIGN_IN_LIMITS.account + 1; i++) statuses.push((await browser.post('/dashboard/sign-in', { email, password: 'wrong password!' })).status);
    assert.deepEqual(statuses, [...Array(SIGN_IN_LIMITS.account).fill(401), 429]);
    const limited = await browser.post('/dashboard/sign-in', { email, password: PASSWORD });
    assert.equal(limited.status, 429, 'even the right password, until the window frees');
    assert.match(limited.body, /Too many sign-in attempts/);
    assert.ok(Number(limited.headers['retry-after']) > 0);
    // Per address: other accounts from one address.
    const remote = new Browser(h, {}, '203.0.113.77');
    await remote.get('/dashboard/sign-in');
    const seen: number[] = [];
    for (let i = 0; i < SIGN_IN_LIMITS.address + 1; i++) seen.push((await remote.post('/dashboard/sign-in', { email: `guess${i}@example.com`, password: 'whatever it is' }, remote.last)).status);
    assert.deepEqual(seen, [...Array(SIGN_IN_LIMITS.address).fill(401), 429]);
  });

  test("failures at an account from many addresses do not lock its owner out: an address that has not failed there still gets in", async () => {
    const { email } = await userWithPassword(h, h.team.id, 'owner');
    const attackers = Array.from({ length: SIGN_IN_LIMITS.account }, (_, i) => new Browser(h, {}, `198.51.100.${i + 1}`));
    for (const attacker of attackers) assert.equal((await attacker.signIn(email, 'a wrong password')).status, 401);
    // The account has had its failures: an address that failed there is refused, right password or not.
    const again = await attackers[0]!.post('/dashboard/sign-in', { email, password: PASSWORD });
    assert.equal(again.status, 429);
    assert.ok(Number(again.headers['retry-after']) > 0);
    // The owner, from an address with no failure there, signs in.
    const owner = new Browser(h, {}, '192.0.2.200');
    const signed = await owner.signIn(email);
    assert.equal(signed.status, 303, signed.body);
    assert.equal((await owner.get('/dashboard')).status, 200);
    // A new address's wrong guess is answered, and then that address too is refused.
    const fresh = new Browser(h, {}, '198.51.100.200');
    assert.equal((await fresh.signIn(email, 'another wrong one')).status, 401);
    assert.equal((await fresh.post('/dashboard/sign-in', { email, password: PASSWORD })).status, 429, 'one guess per address while the account is under attack');
    // Ten requests every 15 minutes keep the addresses that made them out, not everyone.
    h.clock.now += 15 * 60 * 1000 + 1;
    assert.equal((await attackers[0]!.signIn(email)).status, 303, 'once the window has passed, the failed address gets in too');
  });

  test('sign out ends the session; sign out everywhere ends them all; pages then send to sign-in', async () => {
    const { email } = await userWithPassword(h, h.team.id, 'member');
    const first = new Browser(h);
    await first.signIn(email);
    const second = new Browser(h);
    await second.signIn(email);
    await first.get('/dashboard');
    const out = await first.post('/dashboard/sign-out-everywhere', {});
    assert.equal(out.status, 303);
    for (const browser of [first, second]) {
      const page = await browser.get('/dashboard/keys');
      assert.equal(page.status, 303);
      assert.equal(page.location, '/dashboard/sign-in');
    }
    const third = new Browser(h);
    await third.signIn(email);
    await third.get('/dashboard');
    assert.equal((await third.post('/dashboard/sign-out', {})).status, 303);
    assert.equal((await third.get('/dashboard')).status, 303);
  });

  test('a disabled user is signed out and cannot sign in', async () => {
    const { browser, id, email } = await signedIn(h, h.team.id, 'member');
    await h.stores.users.disableUser(id);
    assert.equal((await browser.get('/dashboard')).status, 303);
    const again = new Browser(h);
    assert.equal((await again.signIn(email)).status, 401);
  });

  test('a member creates and revokes its own keys only; an owner revokes any of the team', async () => {
    const owner = await signedIn(h, h.team.id, 'owner');
    await owner.browser.get('/dashboard/keys');
    await owner.browser.post('/dashboard/keys', { name: 'owners key' });
    const ownersKey = (await h.stores.accounts.listKeys(h.team.id)).find((k) => k.name === 'owners key');
    assert.ok(ownersKey);
    const member = await signedIn(h, h.team.id, 'member');
    await member.browser.get('/dashboard/keys');
    const made = await member.browser.post('/dashboard/keys', { name: 'members key' });
    assert.match(made.body, /<label for="new-key">New key<\/label>/);
    const membersKey = (await h.stores.accounts.listKeys(h.team.id)).find((k) => k.name === 'members key');
    assert.equal(membersKey?.createdBy, member.id);
    const listing = await member.browser.get('/dashboard/keys');
    assert.ok(!listing.body.includes(`/dashboard/keys/${ownersKey.id}/revoke`), 'no Revoke button for a key it did not create');
    const refused = await member.browser.post(`/dashboard/keys/${ownersKey.id}/revoke`, {}, listing);
    assert.equal(refused.status, 403);
    assert.equal((await h.stores.accounts.activeKeyHash(ownersKey.id)) !== null, true, 'still active');
    const confirm = await member.browser.get(`/dashboard/keys/${membersKey?.id}/revoke`);
    assert.match(confirm.body, />Revoke key<\/button>/);
    assert.equal((await member.browser.post(`/dashboard/keys/${membersKey?.id}/revoke`, {})).status, 303);
    assert.equal(await h.stores.accounts.activeKeyHash(membersKey?.id ?? ''), null);
    await owner.browser.get('/dashboard/keys');
    assert.equal((await owner.browser.post(`/dashboard/keys/${ownersKey.id}/revoke`, {})).status, 303);
    assert.equal(await h.stores.accounts.activeKeyHash(ownersKey.id), null);
  });

  test("one team's user asking for another team's keys, usage or ledger gets 404, and nothing of it", async () => {
    const other = await h.newTeam(77, 100);
    const { browser } = await signedIn(h, h.team.id, 'owner');
    for (const path of ['/dashboard', '/dashboard/keys', '/dashboard/usage', '/dashboard/ledger', '/dashboard/try']) {
      const page = await browser.get(`${path}?team=${other.team.id}`);
      assert.equal(page.status, 404, path);
      assert.ok(!page.body.includes(other.team.id) && !page.body.includes(other.team.name), path);
    }
    await browser.get('/dashboard/keys');
    for (const path of [`/dashboard/keys/${other.keyId}/revoke`]) {
      assert.equal((await browser.get(path)).status, 404);
      await browser.get('/dashboard/keys');
      assert.equal((await browser.post(path, {})).status, 404);
    }
    assert.notEqual(await h.stores.accounts.activeKeyHash(other.keyId), null, "the other team's key is untouched");
    await browser.get('/dashboard/try?endpoint=snapmsg.profile');
    assert.equal((await browser.post('/dashboard/try', { endpoint: 'snapmsg.profile', key: other.keyId, 'q.username': 'lunavoss' })).status, 404);
    assert.equal(await h.balance(other.team.id), 77, 'nothing charged to the other team');
    await browser.get('/dashboard');
    assert.equal((await browser.post('/dashboard/credits', { amount: '5', team: other.team.id })).status, 404);
    await browser.get('/dashboard');
    assert.equal((await browser.post('/dashboard/credits', { amount: '5' })).status, 403, 'only an operator adds credits');
  });

  test("Keys: each key's daily credit limit and today's spend; an owner sets and clears the limit, bad input is 422, a member may not", async () => {
    const team = await h.newTeam(50, 100);
    const scrape = () => h.get('/v1/snapmsg/profile?username=lunavoss', { 'x-api-key': team.key });
    assert.equal((await scrape()).statusCode, 200);
    assert.equal((await scrape()).statusCode, 200);
    const owner = await signedIn(h, team.team.id, 'owner');
    const keys = await owner.browser.get('/dashboard/keys');
    assert.match(keys.body, /<th[^>]*>Daily credit limit<\/th>/);
    assert.match(keys.body, new RegExp(`id="spent-${team.keyId}">2<`), 'two live scrapes today');
    assert.match(keys.body, new RegExp(`<form method="post" action="/dashboard/keys/${team.keyId}/limit"`));

    const set = await owner.browser.post(`/dashboard/keys/${team.keyId}/limit`, { limit: '3' });
    assert.equal(set.status, 303);
    assert.equal(set.location, `/dashboard/keys?limited=${team.keyId}`);
    assert.equal((await h.stores.accounts.getKey(team.keyId))?.dailyCreditLimit, 3);
    const shown = await owner.browser.get(set.location ?? '');
    assert.match(shown.body, /The daily credit limit of <strong>test<\/strong> is 3 credits a day/);
    assert.match(shown.body, new RegExp(`id="limit-${team.keyId}"[^>]*value="3"`));
    // The API enforces what the dashboard set: one more live scrape, then 402 KEY_CREDIT_LIMIT.
    assert.equal((await h.get('/v1/snapmsg/profile?username=theo', { 'x-api-key': team.key })).statusCode, 200);
    const limited = await h.get('/v1/snapmsg/profile?username=mara', { 'x-api-key': team.key });
    assert.equal(limited.statusCode, 402);
    assert.equal((limited.json() as { error: { code: string } }).error.code, 'KEY_CREDIT_LIMIT');

    for (const bad of ['-1', '2.5', 'lots', '1000000001', '1e3']) {
      const refused = await owner.browser.post(`/dashboard/keys/${team.keyId}/limit`, { limit: bad }, shown);
      assert.equal(refused.status, 422, bad);
      assert.match(refused.body, /The daily credit limit must be a whole number of credits from 0 to 1,000,000,000, or empty for none/);
    }
    assert.equal((await owner.browser.post(`/dashboard/keys/${team.keyId}/limit`, {}, shown)).status, 422, 'without the field: not a removal');
    assert.equal((await h.stores.accounts.getKey(team.keyId))?.dailyCreditLimit, 3, 'unchanged by bad input');
    const extra = await owner.browser.post(`/dashboard/keys/${team.keyId}/limit`, { limit: '5', dailyCreditLimit: '9' }, shown);
    assert.equal(extra.status, 422, 'a field the form does not have');

    const cleared = await owner.browser.post(`/dashboard/keys/${team.keyId}/limit`, { limit: '' }, shown);
    assert.equal(cleared.status, 303);
    assert.equal((await h.stores.accounts.getKey(team.keyId))?.dailyCreditLimit, null);
    assert.match((await owner.browser.get(cleared.location ?? '')).body, /The daily credit limit of <strong>test<\/strong> is removed/);

    const member = await signedIn(h, team.team.id, 'member');
    const seen = await member.browser.get('/dashboard/keys');
    assert.match(seen.body, new RegExp(`id="spent-${team.keyId}">3<`), 'a member sees the spend');
    assert.ok(!seen.body.includes(`/dashboard/keys/${team.keyId}/limit`), 'but no form');
    assert.equal((await member.browser.post(`/dashboard/keys/${team.keyId}/limit`, { limit: '1' }, seen)).status, 403);
    assert.equal((await h.stores.accounts.getKey(team.keyId))?.dailyCreditLimit, null);

    // Another team's key is out of reach.
    const stranger = await signedIn(h, h.team.id, 'owner');
    await stranger.browser.get('/dashboard/keys');
    assert.equal((await stranger.browser.post(`/dashboard/keys/${team.keyId}/limit`, { limit: '1' })).status, 404);
    assert.equal((await h.stores.accounts.getKey(team.keyId))?.dailyCreditLimit, null);
  });

  test('an owner sets and clears the low-balance alert on the Overview; every page shows a banner while the balance is below it, or 0', async () => {
    const team = await h.newTeam(10, 100);
    const owner = await signedIn(h, team.team.id, 'owner');
    const overview = await owner.browser.get('/dashboard');
    assert.match(overview.body, /id="low-balance-alert">none</);
    assert.ok(!overview.body.includes('low-balance-banner'), 'no alert, credits left: no banner');
    for (const bad of ['-5', 'ten', '1000000000001']) {
      const refused = await owner.browser.post('/dashboard/low-balance-alert', { alert: bad }, overview);
      assert.equal(refused.status, 422, bad);
      assert.match(refused.body, /The low-balance alert must be a whole number of credits/);
    }
    const set = await owner.browser.post('/dashboard/low-balance-alert', { alert: '25' }, overview);
    assert.equal(set.status, 303);
    assert.equal((await h.stores.accounts.getTeam(team.team.id))?.lowBalanceAlert, 25);
    const after = await owner.browser.get(set.location ?? '');
    assert.match(after.body, /The low-balance alert is saved/);
    assert.match(after.body, /id="low-balance-alert">25</);
    for (const path of ['/dashboard', '/dashboard/keys', '/dashboard/usage', '/dashboard/ledger', '/dashboard/try', '/dashboard/users']) {
      const page = await owner.browser.get(path);
      assert.match(page.body, /<div class="banner" role="alert" id="low-balance-banner"><strong>Low balance:<\/strong> 10 credits left, below the alert at 25/, path);
    }
    // The API sees the same setting.
    const account = (await h.get('/v1/account', { 'x-api-key': team.key })).json() as { data: { lowBalanceAlert: number | null } };
    assert.equal(account.data.lowBalanceAlert, 25);

    const cleared = await owner.browser.post('/dashboard/low-balance-alert', { alert: '' }, after);
    assert.equal(cleared.status, 303);
    assert.equal((await h.stores.accounts.getTeam(team.team.id))?.lowBalanceAlert, null);
    assert.ok(!(await owner.browser.get('/dashboard')).body.includes('low-balance-banner'));

    // At 0 the banner shows with or without an alert.
    const broke = await h.newTeam(0, 100);
    const poor = await signedIn(h, broke.team.id, 'member');
    const page = await poor.browser.get('/dashboard/usage');
    assert.match(page.body, /id="low-balance-banner"><strong>No credits left.<\/strong>/);
    const home = await poor.browser.get('/dashboard');
    assert.ok(!home.body.includes('action="/dashboard/low-balance-alert"'), 'a member has no alert form');
    assert.equal((await poor.browser.post('/dashboard/low-balance-alert', { alert: '5' }, home)).status, 403);
  });

  test('an operator sees any team and adds credits to it', async () => {
    const other = await h.newTeam(10, 100);
    const { browser } = await signedIn(h, h.team.id, 'operator');
    const overview = await browser.get(`/dashboard?team=${other.team.id}`);
    assert.equal(overview.status, 200);
    assert.match(overview.body, new RegExp(`id="balance">10<`));
    const added = await browser.post('/dashboard/credits', { amount: '25', team: other.team.id });
    assert.equal(added.status, 303);
    assert.equal(await h.balance(other.team.id), 35);
    assert.equal((await browser.get(`/dashboard/ledger?team=${other.team.id}`)).status, 200);
  });

  test('Try it runs the request as the chosen key, through the same auth, limit and credits, and shows status, credits and JSON', async () => {
    const team = await h.newTeam(5, 100);
    const { browser } = await signedIn(h, team.team.id, 'owner');
    const form = await browser.get('/dashboard/try?endpoint=snapmsg.profile');
    assert.match(form.body, /<label for="param-username">username <span class="required">\(required\)<\/span><\/label>/);
    assert.match(form.body, /<select id="param-cache_max_age" name="q.cache_max_age"/);
    const ran = await browser.post('/dashboard/try', { endpoint: 'snapmsg.profile', key: team.keyId, 'q.username': 'lunavoss' });
    assert.equal(ran.status, 200);
    assert.match(ran.body, /id="try-status">200</);
    assert.match(ran.body, /id="try-credits">1</);
    assert.match(ran.body, /&quot;creditsCharged&quot;: 1/);
    assert.equal(await h.balance(team.team.id), 4);
    await h.stores.accounts.revokeKey(team.keyId);
    await browser.get('/dashboard/try?endpoint=snapmsg.profile');
    assert.equal((await browser.post('/dashboard/try', { endpoint: 'snapmsg.profile', key: team.keyId, 'q.username': 'lunavoss' })).status, 404, 'a revoked key is not offered');
    const outside = await h.app.inject({ method: 'GET', url: '/v1/snapmsg/profile?username=lunavoss', headers: { 'x-internal-caller': `${'0'.repeat(64)}.${h.keyId}` } });
    assert.equal(outside.statusCode, 401, 'the in-process header is useless without the secret');
  });

  test("an owner adds users with a one-time link and disables them; a member may not; another team's users are out of reach", async () => {
    const team = await h.newTeam(5, 100);
    const owner = await signedIn(h, team.team.id, 'owner');
    await owner.browser.get('/dashboard/users');
    const added = await owner.browser.post('/dashboard/users', { email: 'New.Member@example.com', role: 'member' });
    assert.equal(added.status, 200);
    const link = /id="new-link" type="text" readonly value="([^"]+)"/.exec(added.body)?.[1] ?? '';
    assert.match(link, /^http:\/\/127\.0\.0\.1(:\d+)?\/dashboard\/set-password\?token=/);
    const member = (await h.stores.users.listUsers(team.team.id)).find((user) => user.email === 'new.member@example.com');
    assert.equal(member?.role, 'member');
    assert.equal((await new Browser(h).get(link.replace(/^http:\/\/[^/]+/, ''))).status, 200, 'the link sets a password');
    const taken = await owner.browser.post('/dashboard/users', { email: 'new.member@example.com', role: 'owner' });
    assert.equal(taken.status, 409);
    assert.match(taken.body, /already a user of this team/);

    const memberSession = await signedIn(h, team.team.id, 'member');
    assert.equal((await memberSession.browser.get('/dashboard/users')).status, 403);
    await memberSession.browser.get('/dashboard');
    assert.equal((await memberSession.browser.post('/dashboard/users', { email: 'x@example.com', role: 'owner' })).status, 403);

    const stranger = await signedIn(h, h.team.id, 'owner');
    assert.equal((await stranger.browser.get(`/dashboard/users/${memberSession.id}/disable`)).status, 404);

    await owner.browser.get('/dashboard/users');
    const confirm = await owner.browser.get(`/dashboard/users/${memberSession.id}/disable`);
    assert.match(confirm.body, />Disable user<\/button>/);
    assert.equal((await owner.browser.post(`/dashboard/users/${memberSession.id}/disable`, {})).status, 200);
    assert.equal((await memberSession.browser.get('/dashboard')).status, 303, 'the disabled member is signed out');
  });

  test("adding a user answers the same whether or not the email has an account in another team; each team's account is its own", async () => {
    const mine = await h.newTeam(5, 100);
    const theirs = await h.newTeam(5, 100);
    const owner = await signedIn(h, mine.team.id, 'owner');
    const elsewhere = await userWithPassword(h, theirs.team.id, 'owner', 'known.elsewhere@example.com');
    const addOf = async (email: string) => {
      await owner.browser.get('/dashboard/users');
      const page = await owner.browser.post('/dashboard/users', { email, role: 'member' });
      const link = /id="new-link" type="text" readonly value="([^"]+)"/.exec(page.body)?.[1] ?? '';
      return { status: page.status, notice: /<p class="notice[^>]*>[\s\S]*?<\/p>/.exec(page.body.replaceAll(email.toLowerCase(), 'EMAIL'))?.[0], link };
    };
    const fresh = await addOf('nobody.yet@example.com');
    const known = await addOf('Known.Elsewhere@example.com');
    assert.equal(fresh.status, 200);
    assert.deepEqual([known.status, known.notice], [fresh.status, fresh.notice], 'the same answer');
    assert.match(known.link, /\/dashboard\/set-password\?token=/);
    // The link sets the password of the account in this team; signing in with it opens this team.
    const invited = new Browser(h);
    const form = await invited.get(known.link.replace(/^http:\/\/[^/]+/, ''));
    assert.equal(form.status, 200);
    const mine_password = 'the password of this team';
    assert.equal((await invited.post('/dashboard/set-password', { token: new URL(known.link).searchParams.get('token') ?? '', password: mine_password, confirm: mine_password })).status, 303);
    const here = new Browser(h);
    assert.equal((await here.signIn('known.elsewhere@example.com', mine_password)).status, 303);
    assert.match((await here.get('/dashboard')).body, new RegExp(mine.team.id));
    // The other team's account is untouched: its own password opens its own team.
    const there = new Browser(h);
    assert.equal((await there.signIn(elsewhere.email)).status, 303);
    assert.match((await there.get('/dashboard')).body, new RegExp(theirs.team.id));
    // In the same team, an email is there once: that the owner can see in its list anyway.
    const twice = await addOf('nobody.yet@example.com');
    assert.equal(twice.status, 409);
    assert.match(twice.notice ?? '', /already a user of this team/);
  });

  test('roles form an order: nobody acts on a user whose role is above theirs', async () => {
    const team = await h.newTeam(5, 100);
    const owner = await signedIn(h, team.team.id, 'owner');
    const operator = await signedIn(h, team.team.id, 'operator');
    const peer = await userWithPassword(h, team.team.id, 'owner');
    const list = await owner.browser.get('/dashboard/users');
    assert.match(list.body, new RegExp(`/dashboard/users/${peer.id}/disable`), 'an owner may act on another owner');
    assert.doesNotMatch(list.body, new RegExp(`/dashboard/users/${operator.id}/`), 'no action is offered on the operator');
    const confirm = await owner.browser.get(`/dashboard/users/${operator.id}/disable`);
    assert.equal(confirm.status, 403);
    assert.match(confirm.body, /An owner cannot act on an operator/);
    await owner.browser.get('/dashboard/users');
    const refused = await owner.browser.post(`/dashboard/users/${operator.id}/disable`, {});
    assert.equal(refused.status, 403);
    assert.equal((await h.stores.users.getUser(operator.id))?.disabledAt, null, 'the operator stays enabled');
    assert.equal((await operator.browser.get('/dashboard')).status, 200, 'and signed in');
    // Nor may an owner make a user above itself.
    await owner.browser.get('/dashboard/users');
    const raised = await owner.browser.post('/dashboard/users', { email: 'raised@example.com', role: 'operator' });
    assert.equal(raised.status, 422);
    assert.equal((await h.stores.users.listUsers(team.team.id)).some((u) => u.email === 'raised@example.com'), false);
    // The operator may act on the owner.
    await operator.browser.get(`/dashboard/users?team=${team.team.id}`);
    assert.equal((await operator.browser.post(`/dashboard/users/${owner.id}/disable`, {})).status, 200);
    assert.equal((await owner.browser.get('/dashboard')).status, 303, 'the owner is signed out');
  });

  test('maintenance deletes expired sessions and links', async () => {
    const user = await h.stores.users.createUser({ teamId: h.team.id, email: `expired-${Date.now()}@example.com`, role: 'member' });
    await h.stores.users.createSession('expired-session-hash', { userId: user.id, csrf: 'c', createdAt: new Date().toISOString(), expiresAt: h.clock.now - 1 });
    await h.stores.users.createPasswordLink({ hash: 'expired-link-hash', userId: user.id, expiresAt: h.clock.now - 1 });
    await h.app.maintain();
    assert.equal(await h.stores.users.pruneSessions(h.clock.now), 0, 'nothing left to prune');
  });

  test('a body larger than a form needs is refused without being read in full, as a page', async () => {
    const page = await new Browser(h).get('/dashboard/sign-in');
    const response = await h.app.inject({
      method: 'POST',
      url: '/dashboard/sign-in',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ csrf: csrfOf(page), email: 'a@example.com', password: 'x'.repeat(100_000) }),
    });
    assert.equal(response.statusCode, 400);
    assert.match(String(response.headers['content-type']), /text\/html/);
  });
});
