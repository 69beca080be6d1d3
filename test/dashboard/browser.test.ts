// The dashboard in a real browser (Debian's Chromium, driven by playwright-core), on the store
// set TEST_STORES names: an account holder sets a password from the CLI's link, signs in,
// creates a key and reads it once, calls the API with it and watches balance, usage and ledger
// change, revokes it and gets 401, signs out and finds the pages closed; the same by keyboard
// alone; and the pages at 375 pixels wide. `SCREENSHOTS=docs` writes the README's screenshots.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { issuePasswordLink } from '../../src/account/users.ts';
import { generateKey } from '../../src/server/keys.ts';
import type { Role } from '../../src/store/types.ts';
import { startHarness, type Harness } from '../api/harness.ts';
import { assertFits } from '../support/layout.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const PASSWORD = 'a long enough password';
const SHOTS = process.env.SCREENSHOTS ? join(import.meta.dirname, '..', '..', process.env.SCREENSHOTS) : null;

describe('the dashboard in Chromium', () => {
  let h: Harness;
  let base = '';
  let browser: Browser;
  before(async () => {
    assert.ok(existsSync(CHROMIUM), `Chromium is needed by this test at ${CHROMIUM} (Debian package chromium; .ci/run installs it)`);
    h = await startHarness({ credits: 20 });
    base = await h.app.listen({ host: '127.0.0.1', port: 0 });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  });
  after(async () => {
    await browser?.close();
    await h?.close();
  });

  /** A new user (an owner unless told) of a new team with `credits`, and its set-password link. */
  async function newUser(credits: number, role: Role = 'owner'): Promise<{ teamId: string; userId: string; email: string; link: string }> {
    const team = await h.stores.accounts.createTeam({ name: `Team ${Math.random().toString(36).slice(2, 7)}`, credits, rateLimit: 100 });
    const email = `${role}-${Math.random().toString(36).slice(2, 8)}@example.com`;
    const user = await h.stores.users.createUser({ teamId: team.id, email, role });
    return { teamId: team.id, userId: user.id, email, link: await issuePasswordLink(h.stores.users, user.id, base, Date.now()) };
  }

  /** Sets the password from `link` and signs in. */
  async function signIn(page: Page, email: string, link: string): Promise<void> {
    await page.goto(link);
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('Confirm password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByText('Your password is set').waitFor();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  }

  const api = async (key: string) => {
    const response = await fetch(`${base}/v1/snapmsg/profile?username=lunavoss`, { headers: { 'x-api-key': key } });
    await response.arrayBuffer();
    return response.status;
  };

  test('by mouse: set a password, sign in, create a key and read it once, use it, watch balance, usage and ledger, revoke it, sign out', async () => {
    const { email, link } = await newUser(20);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
    try {
      await signIn(page, email, link);
      assert.equal(await page.locator('#balance').textContent(), '20');
      for (const name of ['Overview', 'Keys', 'Usage', 'Ledger', 'Try it']) assert.ok(await page.getByRole('link', { name, exact: true }).isVisible(), name);
      if (SHOTS) {
        mkdirSync(SHOTS, { recursive: true });
        await page.screenshot({ path: join(SHOTS, 'dashboard-overview.png'), fullPage: true });
      }

      await page.getByRole('link', { name: 'Keys', exact: true }).click();
      await page.getByLabel('Key name').fill('production');
      await page.getByRole('button', { name: 'Create key' }).click();
      const field = page.getByLabel('New key');
      assert.equal(await field.getAttribute('readonly'), '');
      const key = (await field.inputValue()).trim();
      assert.match(key, /^psk_live_/);
      await context.grantPermissions(['clipboard-read', 'clipboard-write']);
      await page.getByRole('button', { name: 'Copy' }).click();
      await page.getByRole('button', { name: 'Copied' }).waitFor();
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), key);
      if (SHOTS) await page.screenshot({ path: join(SHOTS, 'dashboard-keys.png'), fullPage: true });
      await page.goto(`${base}/dashboard/keys`);
      assert.equal(await page.getByLabel('New key').count(), 0, 'shown once only');
      assert.ok(!(await page.content()).includes(key));

      for (let i = 0; i < 3; i++) assert.equal(await api(key), 200);
      await h.app.writeRecords();
      await page.getByRole('link', { name: 'Overview', exact: true }).click();
      assert.equal(await page.locator('#balance').textContent(), '17');
      await page.getByRole('link', { name: 'Usage', exact: true }).click();
      assert.equal(await page.getByRole('row').filter({ hasText: '/v1/snapmsg/profile' }).count(), 3);
      assert.ok(await page.getByRole('img', { name: 'Requests per day' }).isVisible());
      if (SHOTS) await page.screenshot({ path: join(SHOTS, 'dashboard-usage.png'), fullPage: true });
      await page.getByRole('link', { name: 'Ledger', exact: true }).click();
      assert.equal(await page.getByRole('row').filter({ hasText: 'Charge' }).count(), 3);

      await page.getByRole('link', { name: 'Keys', exact: true }).click();
      await page.getByRole('row').filter({ hasText: 'production' }).getByRole('button', { name: 'Revoke' }).click();
      await page.getByRole('button', { name: 'Revoke key' }).click();
      await page.getByText('is revoked').waitFor();
      assert.equal(await api(key), 401);

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByText('You are signed out').waitFor();
      await page.goto(`${base}/dashboard/keys`);
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      assert.ok(page.url().endsWith('/dashboard/sign-in'));
      assert.deepEqual(problems, [], 'no errors in the console (a CSP violation would be one)');
    } finally {
      await context.close();
    }
  });

  test("spending guards: an owner sets a key's daily credit limit and the low-balance alert, and sees the banner", async () => {
    const { email, link } = await newUser(20);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
    const scrape = async (key: string, username: string) => {
      const response = await fetch(`${base}/v1/snapmsg/profile?username=${username}`, { headers: { 'x-api-key': key } });
      return { status: response.status, code: response.ok ? null : ((await response.json()) as { error: { code: string } }).error.code };
    };
    try {
      await signIn(page, email, link);
      assert.equal(await page.getByRole('alert').count(), 0, 'no banner yet');

      await page.getByRole('link', { name: 'Keys', exact: true }).click();
      await page.getByLabel('Key name').fill('guarded');
      await page.getByRole('button', { name: 'Create key' }).click();
      const key = (await page.getByLabel('New key').inputValue()).trim();
      await page.getByLabel('Daily credit limit of guarded').fill('1');
      await page.getByRole('row').filter({ hasText: 'guarded' }).getByRole('button', { name: 'Set' }).click();
      await page.getByText('The daily credit limit of guarded is 1 credit a day.').waitFor();
      assert.deepEqual(await scrape(key, 'lunavoss'), { status: 200, code: null });
      assert.deepEqual(await scrape(key, 'theo'), { status: 402, code: 'KEY_CREDIT_LIMIT' });
      await page.reload();
      const row = page.getByRole('row').filter({ hasText: 'guarded' });
      assert.equal((await row.getByRole('cell').nth(5).textContent())?.trim(), '1', "today's spend");
      assert.equal(await page.getByLabel('Daily credit limit of guarded').inputValue(), '1');

      await page.getByRole('link', { name: 'Overview', exact: true }).click();
      await page.getByLabel('Warn when the balance falls below (credits)').fill('50');
      await page.getByRole('button', { name: 'Save alert' }).click();
      await page.getByText('The low-balance alert is saved.').waitFor();
      const banner = page.getByRole('alert');
      assert.match((await banner.textContent()) ?? '', /Low balance: 19 credits left, below the alert at 50/);
      assert.ok(await banner.isVisible());
      await page.getByRole('link', { name: 'Usage', exact: true }).click();
      assert.ok(await page.getByRole('alert').filter({ hasText: 'Low balance' }).isVisible(), 'on every page');
      if (SHOTS) await page.screenshot({ path: join(SHOTS, 'dashboard-low-balance.png'), fullPage: true });

      await page.getByRole('link', { name: 'Overview', exact: true }).click();
      await page.getByLabel('Warn when the balance falls below (credits)').fill('');
      await page.getByRole('button', { name: 'Save alert' }).click();
      await page.getByText('The low-balance alert is saved.').waitFor();
      assert.equal(await page.getByRole('alert').count(), 0, 'no alert, no banner');
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  test('by keyboard alone: sign in, create a key, revoke it, sign out', async () => {
    const { email, link } = await newUser(5);
    const context = await browser.newContext();
    const page = await context.newPage();
    /** Tabs until the focused element has this accessible name (or label), at most 40 times. */
    const tabTo = async (name: string) => {
      for (let i = 0; i < 40; i++) {
        await page.keyboard.press('Tab');
        const focused = (await page.evaluate(`(() => {
          const element = document.activeElement;
          if (!element) return '';
          const label = element.id ? document.querySelector('label[for="' + element.id + '"]')?.textContent : null;
          return (label ?? element.getAttribute('aria-label') ?? element.textContent ?? '').trim();
        })()`)) as string;
        if (focused === name) {
          const outline = await page.evaluate('getComputedStyle(document.activeElement).outlineStyle');
          assert.notEqual(outline, 'none', `${name} shows its focus`);
          return;
        }
      }
      assert.fail(`Tab never reached ${name}`);
    };
    try {
      await page.goto(link);
      await tabTo('New password');
      await page.keyboard.type(PASSWORD);
      await tabTo('Confirm password');
      await page.keyboard.type(PASSWORD);
      await tabTo('Set password');
      await page.keyboard.press('Enter');
      await page.getByText('Your password is set').waitFor();
      await tabTo('Email');
      await page.keyboard.type(email);
      await tabTo('Password');
      await page.keyboard.type(PASSWORD);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      await tabTo('Keys');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Keys', exact: true }).waitFor();
      await tabTo('Key name');
      await page.keyboard.type('by keyboard');
      await page.keyboard.press('Enter');
      const key = await page.getByLabel('New key').inputValue();
      assert.equal(await api(key), 200);
      await tabTo('Revoke');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Revoke key' }).waitFor();
      await tabTo('Revoke key');
      await page.keyboard.press('Enter');
      await page.getByText('is revoked').waitFor();
      assert.equal(await api(key), 401);
      await tabTo('Sign out');
      await page.keyboard.press('Enter');
      await page.getByText('You are signed out').waitFor();
    } finally {
      await context.close();
    }
  });

  test('every page at 1280 and 375 pixels wide: nothing cut off, every action in reach, charts read true', async () => {
    // An operator (who sees the most) of a team with keys, one of them revoked and one with a
    // long name, requests of several kinds (live, a cache hit, refused), and a user with a long address.
    const { teamId, userId, email, link } = await newUser(50, 'operator');
    const newLink = () => issuePasswordLink(h.stores.users, userId, base, Date.now());
    const makeKey = async (name: string) => {
      const generated = generateKey();
      const record = await h.stores.accounts.createKey({ teamId, name, hash: generated.hash, prefix: generated.prefix, last4: generated.last4 });
      return { id: record.id, key: generated.key };
    };
    const production = await makeKey('production');
    await makeKey('integration-tests-of-the-eu-west-region-for-the-nightly-billing-run-0123456789');
    await h.stores.accounts.revokeKey((await makeKey('retired')).id);
    const call = async (query: string) => (await fetch(`${base}/v1/snapmsg/profile?${query}`, { headers: { 'x-api-key': production.key } })).arrayBuffer();
    for (const query of ['username=lunavoss', 'username=lunavoss', 'username=lunavoss&cache_max_age=1d', 'username=lunavoss', 'username=']) await call(query);
    await h.app.writeRecords();
    const member = await h.stores.users.createUser({ teamId, email: 'a.very.long.address.of.the.accounts.department@subsidiary.example.com', role: 'member' });

    for (const viewport of [{ width: 1280, height: 900 }, { width: 375, height: 800 }]) {
      const context = await browser.newContext({ viewport, isMobile: viewport.width < 500 });
      const page = await context.newPage();
      try {
        await page.goto(`${base}/dashboard/sign-in`);
        await assertFits(page, 'sign in');
        await page.goto(`${base}/dashboard/nothing`);
        await assertFits(page, 'a missing page');
        const setPassword = viewport.width === 1280 ? link : await newLink();
        await page.goto(setPassword);
        await assertFits(page, 'set password');
        await signIn(page, email, setPassword);
        const active = (await h.stores.accounts.listKeys(teamId)).filter((key) => key.revokedAt === null).length;
        const others = (await h.stores.users.listUsers(teamId)).filter((user) => user.disabledAt === null && user.email !== email).length;
        const pages: [string, string[]][] = [
          ['/dashboard', ['Show team', 'Add credits', 'Sign out everywhere', 'Sign out']],
          ['/dashboard/keys', ['Create key', ...Array<string>(active).fill('Revoke')]],
          [`/dashboard/keys/${production.id}/revoke`, ['Revoke key']],
          ['/dashboard/usage', ['Filter']],
          ['/dashboard/ledger', []],
          ['/dashboard/users', ['Add user', ...Array<string>(others).fill('Disable')]],
          [`/dashboard/users/${member.id}/disable`, ['Disable user']],
          ['/dashboard/try?endpoint=socialnet.profile.posts', ['Choose', 'Run']],
        ];
        for (const [path, actions] of pages) {
          await page.goto(`${base}${path}`);
          await assertFits(page, path);
          const buttons = (await page.getByRole('button').allTextContents()).map((text) => text.trim());
          for (const action of new Set(actions)) assert.equal(buttons.filter((text) => text === action).length, actions.filter((name) => name === action).length, `${path}: ${action}`);
        }
        // Pages that show a result: a new key, a new user's link, a run of Try it.
        await page.goto(`${base}/dashboard/keys`);
        await page.getByLabel('Key name').fill(`made at ${viewport.width}`);
        await page.getByRole('button', { name: 'Create key' }).click();
        await page.getByLabel('New key').waitFor();
        await assertFits(page, 'a new key');
        await page.goto(`${base}/dashboard/users`);
        await page.getByLabel("New user's email").fill(`new-${viewport.width}-${Math.random().toString(36).slice(2, 8)}@example.com`);
        await page.getByRole('button', { name: 'Add user' }).click();
        await page.getByLabel('Set-password link').waitFor();
        await assertFits(page, 'a new user');
        await page.goto(`${base}/dashboard/try?endpoint=snapmsg.profile`);
        await page.getByLabel('username').fill('lunavoss');
        await page.getByRole('button', { name: 'Run' }).click();
        await page.getByRole('heading', { name: 'Result' }).waitFor();
        await assertFits(page, 'a result of Try it');
      } finally {
        await context.close();
      }
    }

    // Shares are drawn on a 0-100% scale: against the requests chart, whose largest bar is full.
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    try {
      await signIn(page, email, await newLink());
      await page.goto(`${base}/dashboard/usage`);
      const totals = await h.stores.requests.totals(teamId, 0);
      const today = totals.days.at(-1)!;
      const profile = totals.endpoints.find((endpoint) => endpoint.endpoint === '/v1/snapmsg/profile')!;
      assert.ok(today.cached > 0 && today.cached < today.requests, 'a share strictly between 0 and 100%');
      // A chart by its title (its accessible name may go on with its description).
      const chartNamed = (title: string) => page.getByRole('img', { name: new RegExp(`^${title}(\\s|$)`) });
      const bar = (chart: string, label: string, size: 'height' | 'width') =>
        chartNamed(chart).locator('rect.bar').filter({ has: page.locator('title', { hasText: new RegExp(`^${label}: `) }) }).getAttribute(size).then(Number);
      const dayShare = (await bar('Cache-hit share per day', today.day, 'height')) / (await bar('Requests per day', today.day, 'height'));
      assert.ok(Math.abs(dayShare - today.cached / today.requests) < 0.01, `the day's share is drawn as ${dayShare}, not ${today.cached / today.requests}`);
      const endpointShare = (await bar('Cache-hit share per endpoint', profile.endpoint, 'width')) / (await bar('Requests per endpoint', profile.endpoint, 'width'));
      assert.ok(Math.abs(endpointShare - profile.cached / profile.requests) < 0.01, `the endpoint's share is drawn as ${endpointShare}, not ${profile.cached / profile.requests}`);
      const scale = await chartNamed('Cache-hit share per day').locator('text').allTextContents();
      assert.ok(scale.includes('100%'), `the share's axis is marked 100%: ${scale.join(', ')}`);
    } finally {
      await context.close();
    }
  });
});
