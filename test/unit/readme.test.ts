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

test('the README states which Node runs what, as package.json does, and the tests run on that Node', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { engines: { node: string }; dependencies: Record<string, string> };
  const runtime = pkg.dependencies.node ?? '';
  assert.match(runtime, /^\d+\.\d+\.\d+$/, 'the `node` dependency is pinned: it is the runtime');
  assert.equal(process.versions.node, runtime, 'npm scripts (and so these tests) run on the Node from node_modules');
  assert.ok(readme.includes(`Node ${runtime}`), `the README names Node ${runtime}`);
  assert.ok(readme.includes(`\`${pkg.engines.node}\``), `the README states engines.node (${pkg.engines.node}): what runs npm itself`);
});

test('no README command is macOS-only: `open` is "open … in a browser"', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  assert.doesNotMatch(readme, /^open /m);
  assert.match(readme, /open http:\/\/127\.0\.0\.1:3000\/docs in a browser/);
});
