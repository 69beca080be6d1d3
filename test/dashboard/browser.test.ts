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
import { startHarness, type Harness } from '../api/harness.ts';

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

  /** A new owner of a new team with `credits`, and the path of its set-password link. */
  async function newOwner(credits: number): Promise<{ teamId: string; email: string; link: string }> {
    const team = await h.stores.accounts.createTeam({ name: `Team ${Math.random().toString(36).slice(2, 7)}`, credits, rateLimit: 100 });
    const email = `owner-${Math.random().toString(36).slice(2, 8)}@example.com`;
    const user = await h.stores.users.createUser({ teamId: team.id, email, role: 'owner' });
    return { teamId: team.id, email, link: await issuePasswordLink(h.stores.users, user.id, base, Date.now()) };
  }

  const api = async (key: string) => {
    const response = await fetch(`${base}/v1/snapmsg/profile?username=lunavoss`, { headers: { 'x-api-key': key } });
    await response.arrayBuffer();
    return response.status;
  };

  async function noHorizontalScroll(page: Page, what: string): Promise<void> {
    // Evaluated in the page (a string: this file is compiled without the DOM's types).
    const widths = (await page.evaluate('({ scroll: document.documentElement.scrollWidth, view: window.innerWidth })')) as { scroll: number; view: number };
    assert.ok(widths.scroll <= widths.view, `${what}: ${widths.scroll} px of content in a ${widths.view} px window`);
  }

  test('by mouse: set a password, sign in, create a key and read it once, use it, watch balance, usage and ledger, revoke it, sign out', async () => {
    const { email, link } = await newOwner(20);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
    try {
      await page.goto(link);
      await page.getByLabel('New password').fill(PASSWORD);
      await page.getByLabel('Confirm password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Set password' }).click();
      await page.getByText('Your password is set').waitFor();
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
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

  test('by keyboard alone: sign in, create a key, revoke it, sign out', async () => {
    const { email, link } = await newOwner(5);
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

  test('every page reads at 375 pixels wide without scrolling sideways', async () => {
    const { email, link } = await newOwner(5);
    const context = await browser.newContext({ viewport: { width: 375, height: 800 }, isMobile: true });
    const page = await context.newPage();
    try {
      await page.goto(link);
      await noHorizontalScroll(page, 'set password');
      await page.getByLabel('New password').fill(PASSWORD);
      await page.getByLabel('Confirm password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Set password' }).click();
      await noHorizontalScroll(page, 'sign in');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      for (const path of ['/dashboard', '/dashboard/keys', '/dashboard/usage', '/dashboard/ledger', '/dashboard/try?endpoint=socialnet.profile.posts']) {
        await page.goto(`${base}${path}`);
        await noHorizontalScroll(page, path);
      }
    } finally {
      await context.close();
    }
  });
});
