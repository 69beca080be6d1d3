// The reference page in a real browser (Debian's Chromium, driven by playwright-core): it renders
// the guide and every endpoint with its example answer and code samples, from what the service
// serves alone (no request leaves it), without errors, under its Content-Security-Policy (no
// violation of it), which no other page may frame it under; its key field shows a plain name for
// the key, and the guide's first call is shown whole at 1400 pixels. `SCREENSHOTS=docs` writes
// the README's screenshots of it.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { KEY_PLACEHOLDER, SCALAR_KEY_PLACEHOLDER } from '../../src/server/plugins/reference.ts';
import { cutOff } from '../support/layout.ts';
import { startService, type Service } from '../support/service.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = process.env.SCREENSHOTS ? join(import.meta.dirname, '..', '..', process.env.SCREENSHOTS) : null;

describe('the reference page in Chromium', () => {
  let service: Service;
  let browser: Browser;
  before(async () => {
    assert.ok(existsSync(CHROMIUM), `Chromium is needed by this test at ${CHROMIUM} (Debian package chromium; .ci/run installs it)`);
    service = await startService();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update'] });
  });
  after(async () => {
    await browser?.close();
    await service?.stop();
  });

  test('/ shows the guide and the endpoints, from the service alone, without errors or violations of its policy', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const elsewhere: string[] = [];
    const problems: string[] = [];
    context.on('request', (request) => {
      const url = request.url();
      if (!url.startsWith(`${service.base}/`) && !url.startsWith('data:') && !url.startsWith('blob:')) elsewhere.push(url);
    });
    context.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
    context.on('weberror', (error) => problems.push(error.error().message));
    // Every violation of the page's policy, as the page itself is told of it.
    await context.addInitScript(`document.addEventListener('securitypolicyviolation', (event) => {
      (window.violations ??= []).push(event.violatedDirective + ' ' + event.blockedURI + ' ' + (event.sample || ''));
    })`);
    const violations = async (page: { evaluate: (code: string) => Promise<unknown> }) => (await page.evaluate('window.violations ?? []')) as string[];
    try {
      let page = await context.newPage();
      const answer = await page.goto(`${service.base}/`, { waitUntil: 'networkidle' });
      assert.match((await answer?.allHeaders())?.['content-security-policy'] ?? '', /frame-ancestors 'none'/);
      assert.equal(await page.title(), 'Public-Page Data Extraction API: reference');
      await page.getByRole('heading', { name: 'Get a key' }).waitFor();
      for (const heading of ['First call', 'Credits and the cache', 'Paging', 'Rate limits', 'Errors']) assert.ok(await page.getByRole('heading', { name: heading, exact: true }).isVisible(), heading);
      assert.ok(await page.getByText('UPSTREAM_UNRECOGNISED', { exact: true }).first().isVisible());

      // The key field of the authentication panel names the key; it shows no made-up key.
      const keyField = page.getByRole('textbox', { name: 'Value' }).first();
      assert.equal(await keyField.getAttribute('placeholder'), KEY_PLACEHOLDER);
      assert.equal(await page.locator(`[placeholder="${SCALAR_KEY_PLACEHOLDER}"]`).count(), 0);

      // The first call of the guide is shown whole: no line of it behind a scrollbar.
      const firstCall = page.locator('pre', { hasText: 'curl' }).first();
      assert.ok(await firstCall.isVisible());
      assert.deepEqual(await cutOff(page, firstCall), [], 'the first curl sample of the guide at 1400 px');
      if (SHOTS) {
        mkdirSync(SHOTS, { recursive: true });
        await page.screenshot({ path: join(SHOTS, 'reference.png') });
      }
      assert.deepEqual(await violations(page), []);

      // An endpoint, opened by its link: its example answer from the sandbox and its samples.
      page = await context.newPage();
      await page.goto(`${service.base}/docs/#tag/snapmsg/GET/v1/snapmsg/profile`, { waitUntil: 'networkidle' });
      await page.getByRole('heading', { name: 'snapmsg public profile' }).waitFor();
      await page.getByText('"publicProfileInfo"').first().waitFor();
      await page.getByText('x-api-key: $PAGESCRAPE_API_KEY').first().waitFor();
      if (SHOTS) await page.screenshot({ path: join(SHOTS, 'reference-endpoint.png') });
      await page.getByRole('button', { name: /curl/ }).first().click();
      assert.deepEqual((await page.getByRole('option').allTextContents()).map((label) => label.trim()), ['curl', 'TypeScript (SDK)', 'Python (requests)']);
      await page.getByRole('option', { name: 'Python (requests)' }).click();
      await page.getByText('import requests').first().waitFor();
      assert.deepEqual(await violations(page), []);
      assert.deepEqual(elsewhere, [], 'every request goes to the service');
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  test('no other page can frame the reference', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.setContent(`<iframe src="${service.base}/docs/" width="800" height="600"></iframe>`);
      const frame = await (await page.waitForSelector('iframe')).contentFrame();
      await page.waitForTimeout(500);
      assert.equal(await frame?.getByRole('heading', { name: 'Get a key' }).count(), 0);
      assert.doesNotMatch((await frame?.content()) ?? '', /api-reference|scalar/i);
    } finally {
      await context.close();
    }
  });
});
