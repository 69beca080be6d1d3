import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { withCatalogue } from '../../sandbox/catalogue.ts';

test('the README documents the current sandbox catalogue (npm run -s sandbox:catalogue -- --write)', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  assert.equal(withCatalogue(readme), readme);
});

test('the README opens with the two-command quick start', () => {
  const head = readFileSync(new URL('../../README.md', import.meta.url), 'utf8').split('\n').slice(0, 12).join('\n');
  assert.match(head, /npm install && npm run demo/);
  assert.match(head, /npm test/);
});
