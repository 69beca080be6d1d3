// Layout checks for the browser tests, run in the page: nothing cut off sideways (the page
// itself, and no box that scrolls or clips its content), every action on the page reachable
// (inside the page's width, not clipped by a box, and the element a click at its centre hits),
// and SVG chart text inside its chart. The page code is a string: the tests are compiled
// without the DOM's types.
import assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';

/** A short name of an element for messages: tag, id or class, and the start of its text. */
const DESCRIBE = `(element) => {
  const name = element.tagName.toLowerCase() + (element.id ? '#' + element.id : element.classList.length ? '.' + [...element.classList].join('.') : '');
  const text = (element.getAttribute('aria-label') || element.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 40);
  return text ? name + ' "' + text + '"' : name;
}`;

/** Whether an element's box clips what overflows it sideways (it scrolls it, or hides it). */
const CLIPS = `(element) => ['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(element).overflowX)`;

/** Form fields scroll their own long values; that is not content cut off. */
const FIELD = `(element) => ['INPUT', 'SELECT', 'TEXTAREA', 'OPTION'].includes(element.tagName)`;

/**
 * What is cut off sideways within `root` (the whole page when none): the page wider than the
 * window, or a box whose content is wider than it shows.
 */
export async function cutOff(page: Page, root?: Locator): Promise<string[]> {
  const probe = `(root) => {
    const describe = ${DESCRIBE};
    const clips = ${CLIPS};
    const field = ${FIELD};
    const problems = [];
    const html = document.documentElement;
    if (!root && html.scrollWidth > html.clientWidth) problems.push('the page: ' + html.scrollWidth + ' px wide in a ' + html.clientWidth + ' px window');
    const scope = root ?? document.body;
    const inside = [scope, ...scope.querySelectorAll('*')];
    // The boxes around root count too: they may be what cuts it.
    if (root) for (let up = root.parentElement; up && up !== document.body; up = up.parentElement) inside.push(up);
    for (const element of inside) {
      // Not shown, or shown to screen readers alone (clipped to a pixel).
      if (field(element) || !clips(element) || element.getClientRects().length === 0 || element.clientWidth <= 1) continue;
      if (element.scrollWidth > element.clientWidth + 1) problems.push(describe(element) + ': ' + element.scrollWidth + ' px of content in ' + element.clientWidth + ' px');
    }
    return problems;
  }`;
  if (!root) return (await page.evaluate(`(${probe})(null)`)) as string[];
  // The element is marked for the probe to find it (a function of the page's own is typed with the DOM).
  await root.evaluate((element: { setAttribute(name: string, value: string): void }) => element.setAttribute('data-layout-root', ''));
  try {
    return (await page.evaluate(`(${probe})(document.querySelector('[data-layout-root]'))`)) as string[];
  } finally {
    await root.evaluate((element: { removeAttribute(name: string): void }) => element.removeAttribute('data-layout-root'));
  }
}

/**
 * The actions of the page (buttons, links, form fields) that cannot be reached as they are:
 * outside the page's width, clipped by a box around them, or covered where a click would land.
 * The page is scrolled (only the page: a box that must be scrolled to show an action hides it).
 */
export async function unreachableActions(page: Page): Promise<string[]> {
  return (await page.evaluate(`(() => {
    const describe = ${DESCRIBE};
    const clips = ${CLIPS};
    const problems = [];
    const width = document.documentElement.clientWidth;
    const actions = [...document.querySelectorAll('button, a[href], input:not([type=hidden]), select, textarea')].filter((element) => element.getClientRects().length > 0);
    for (const element of actions) {
      window.scrollTo(0, Math.max(0, element.getBoundingClientRect().top + window.scrollY - window.innerHeight / 2));
      const box = element.getBoundingClientRect();
      if (box.width < 1 || box.height < 1) {
        problems.push(describe(element) + ': no size');
        continue;
      }
      if (box.left < -0.5 || box.right > width + 0.5) {
        problems.push(describe(element) + ': from ' + Math.round(box.left) + ' to ' + Math.round(box.right) + ' px in a ' + width + ' px page');
        continue;
      }
      let clipped = null;
      for (let up = element.parentElement; up && up !== document.body; up = up.parentElement) {
        if (!clips(up)) continue;
        const outer = up.getBoundingClientRect();
        if (box.left < outer.left - 0.5 || box.right > outer.right + 0.5) clipped = describe(up);
      }
      if (clipped) {
        problems.push(describe(element) + ': cut by ' + clipped);
        continue;
      }
      const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
      const label = element.id ? document.querySelector('label[for="' + element.id + '"]') : null;
      if (!hit || !(element === hit || element.contains(hit) || (label && label.contains(hit)))) problems.push(describe(element) + ': covered by ' + (hit ? describe(hit) : 'nothing'));
    }
    window.scrollTo(0, 0);
    return problems;
  })()`)) as string[];
}

/** Text of the page's SVG charts that reaches outside its chart. */
export async function chartTextOutside(page: Page): Promise<string[]> {
  return (await page.evaluate(`(() => {
    const problems = [];
    for (const svg of document.querySelectorAll('svg')) {
      const outer = svg.getBoundingClientRect();
      const title = svg.querySelector('title')?.textContent ?? 'a chart';
      for (const text of svg.querySelectorAll('text')) {
        const box = text.getBoundingClientRect();
        if (box.left < outer.left - 0.5 || box.right > outer.right + 0.5 || box.top < outer.top - 0.5 || box.bottom > outer.bottom + 0.5) {
          problems.push(title + ': "' + text.textContent + '" from ' + Math.round(box.left - outer.left) + ' to ' + Math.round(box.right - outer.left) + ' px in ' + Math.round(outer.width) + ' px');
        }
      }
    }
    return problems;
  })()`)) as string[];
}

/** Asserts that the page shows everything at its width: nothing cut off, every action reachable, chart text inside its chart. */
export async function assertFits(page: Page, what: string): Promise<void> {
  const width = page.viewportSize()?.width ?? 0;
  assert.deepEqual(await cutOff(page), [], `${what} at ${width} px: content cut off`);
  assert.deepEqual(await unreachableActions(page), [], `${what} at ${width} px: actions out of reach`);
  assert.deepEqual(await chartTextOutside(page), [], `${what} at ${width} px: chart text cut off`);
}
