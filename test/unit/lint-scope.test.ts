// `npm run lint` (and so `npm test`) lints the project's own sources, the folders and files
// tsconfig.json compiles: every tracked source file, and nothing else a checkout may hold (an
// untracked scratch file in the root, a folder of notes), which must not fail the run.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ESLint } from 'eslint';

const ROOT = join(import.meta.dirname, '..', '..');
const LINTED = /\.(?:[cm]?[jt]s|tsx)$/;

const eslint = new ESLint({ cwd: ROOT });
const linted = async (path: string): Promise<boolean> => !(await eslint.isPathIgnored(join(ROOT, path))) && (await eslint.calculateConfigForFile(join(ROOT, path))) !== undefined;

test('the lint script lints the checkout, as the configuration scopes it', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  // ESLint over the whole checkout (its configuration scopes it), then the import-cycle check.
  assert.equal(pkg.scripts.lint, 'eslint . && node --disable-warning=ExperimentalWarning scripts/import-cycles.ts');
});

test('every tracked source file is linted', async () => {
  const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((path) => LINTED.test(path));
  assert.ok(tracked.length > 200, `git lists the sources (${tracked.length})`);
  const missed = [];
  for (const path of tracked) if (!(await linted(path))) missed.push(path);
  assert.deepEqual(missed, []);
});

test('what tsconfig.json compiles is what is linted: src, test, bench, sandbox, scripts, sdk/src', async () => {
  for (const path of ['src/main.ts', 'test/unit/lint-scope.test.ts', 'bench/cluster.ts', 'sandbox/main.ts', 'scripts/sdk-types.ts', 'sdk/src/client.ts', 'eslint.config.js', 'src/dashboard/assets/new-file.js', 'src/new-folder/new-file.ts']) {
    assert.ok(await linted(path), path);
  }
});

test('an untracked scratch file or folder in the root, the SDK build and the data directory are not linted', async () => {
  for (const path of ['scratch.ts', 'scratch.js', 'try.mjs', 'notes/scratch.ts', 'tmp/a/b.js', 'sdk/dist/cli.js', 'sdk/scratch.ts', 'data/x.js', 'node_modules/x/index.js']) {
    assert.equal(await linted(path), false, path);
  }
});
