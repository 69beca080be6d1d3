// The SDK's command line (sdk/dist/cli.js, as `npx` and `npm run -s client` run it) against the
// running service and the sandbox: JSON answers, --all listings as NDJSON counted and checked for
// duplicates, the progress line on a terminal, and the exit code of each error class.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { catalogued as catalogueQuery, startService, type Service } from '../support/service.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const CLI = join(ROOT, 'sdk', 'dist', 'cli.js');
const run = promisify(execFile);

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Arguments for `get` of the catalogue entry of `path` whose description matches `pattern`. */
const catalogued = (path: string, pattern: RegExp): string[] => ['get', path, ...Object.entries(catalogueQuery(path, pattern)).flatMap(([name, value]) => [`--${name}`, value])];

describe('pagescrape, the command line', () => {
  let service: Service;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    service = await startService();
    env = { ...process.env, PAGESCRAPE_BASE_URL: service.base, PAGESCRAPE_API_KEY: service.keys.live };
  });
  after(() => service.stop());

  const cli = async (args: string[], extra: NodeJS.ProcessEnv = {}): Promise<Ran> => {
    try {
      const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: { ...env, ...extra }, maxBuffer: 64 * 1024 * 1024 });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  };
  const lines = (stdout: string) => stdout.split('\n').filter((line) => line !== '');

  test('a path with its query string, as curl takes it, is read as its parameters; a flag given too wins', async () => {
    const ran = await cli(['get', '/v1/snapmsg/profile?username=nobody&cache_max_age=7d', '--username', 'lunavoss']);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal((JSON.parse(ran.stdout) as { data: { profile: { username: string } } }).data.profile.username, 'lunavoss');
    const listed = await cli(['get', `/v1/shopfront/shop?${new URLSearchParams(catalogueQuery('/v1/shopfront/shop', /480 posts/))}`, '--all']);
    assert.equal(lines(listed.stdout).length, 480);
    const unknown = await cli(['get', '/v1/snapmsg/profile?usernme=x']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /\n {2}--usernme: Unknown parameter; did you mean --username\?\n/);
  });

  test('get prints the answer as JSON', async () => {
    const ran = await cli(['get', '/v1/snapmsg/profile', '--username', 'lunavoss']);
    assert.equal(ran.code, 0, ran.stderr);
    const body = JSON.parse(ran.stdout) as { data: { profile: { username: string } }; meta: { creditsCharged: number } };
    assert.equal(body.data.profile.username, 'lunavoss');
    assert.equal(body.meta.creditsCharged, 1);
    assert.equal(ran.stderr, '');
  });

  for (const [path, pattern, total, id] of [
    ['/v1/shopfront/shop', /480 posts/, 480, 'id'],
    ['/v1/snapmsg/spotlight/comments', /^large: 460 comments/, 460, 'id'],
    ['/v1/socialnet/profile/posts', /^Large page by numeric id/, 320, 'postId'],
  ] as const) {
    test(`get ${path} --all prints every item once, as NDJSON (${pattern.source})`, async () => {
      const ran = await cli([...catalogued(path, pattern), '--cache_max_age', '1d', '--all']);
      assert.equal(ran.code, 0, ran.stderr);
      const items = lines(ran.stdout).map((line) => JSON.parse(line) as Record<string, string>);
      assert.equal(items.length, total);
      assert.equal(new Set(items.map((item) => item[id])).size, total, 'no duplicates');
      assert.equal(ran.stderr, '', 'no progress line when standard error is not a terminal');
    });
  }

  test('--max-pages bounds --all; --all on an endpoint that does not page is refused', async () => {
    const ran = await cli([...catalogued('/v1/shopfront/shop', /480 posts/), '--all', '--max-pages', '2']);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(lines(ran.stdout).length, 48);
    const refused = await cli(['get', '/v1/snapmsg/profile', '--username', 'lunavoss', '--all']);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /does not page/);
  });

  test('on a terminal, a progress line on standard error: pages, items, credits', async () => {
    // `script` runs the command on a pseudo-terminal (util-linux).
    const command = [process.execPath, CLI, ...catalogued('/v1/shopfront/shop', /480 posts/), '--all'].map((part) => `'${part}'`).join(' ');
    const { stdout } = await run('script', ['-qec', `${command} > /dev/null`, '/dev/null'], { env });
    assert.match(stdout, /pages 20 · items 480 · credits \d+\r?\n/);
  });

  test('account, endpoints, --help and --version', async () => {
    const account = await cli(['account']);
    assert.equal(account.code, 0, account.stderr);
    assert.equal((JSON.parse(account.stdout) as { data: { team: { id: string } } }).data.team.id, service.team.id);
    const endpoints = await cli(['endpoints']);
    assert.match(endpoints.stdout, /\/v1\/shopfront\/shop {2}--url --pageToken --cache_max_age --stale_if_error {2}\[--all\]/);
    assert.match((await cli(['--help'])).stdout, /Exit codes/);
    assert.match((await cli(['--version'])).stdout, /^\d+\.\d+\.\d+\n$/);
  });

  test('unknown parameters are refused before any request, all at once, as the API refuses them: each with the closest declared name', async () => {
    const ran = await cli(['get', '/v1/socialnet/profile/posts', '--url', 'https://www.socialnet.example/tidewaterkitchen', '--cache-max-age', '1d', '--foo', 'x']);
    assert.equal(ran.code, 2);
    assert.equal(ran.stdout, '');
    assert.match(
      ran.stderr,
      /^pagescrape: \/v1\/socialnet\/profile\/posts does not take these parameters:\n {2}--cache-max-age: Unknown parameter; did you mean --cache_max_age\?\n {2}--foo: Unknown parameter; the parameters are --url, --pageId, --cursor, --cache_max_age, --stale_if_error\n/,
    );
    // The API words its details the same way.
    const api = await fetch(`${service.base}/v1/socialnet/profile/posts?url=https://www.socialnet.example/tidewaterkitchen&cache-max-age=1d&foo=x`, { headers: { 'x-api-key': service.keys.live } });
    assert.deepEqual(((await api.json()) as { error: { details: unknown } }).error.details, [
      { path: 'cache-max-age', message: 'Unknown parameter; did you mean cache_max_age?' },
      { path: 'foo', message: 'Unknown parameter; the parameters are url, pageId, cursor, cache_max_age, stale_if_error' },
    ]);
  });

  test('exit codes by error class', async () => {
    const cases: [string[], NodeJS.ProcessEnv, number, RegExp][] = [
      [[], {}, 2, /Usage/],
      [['get', '/v1/nowhere'], {}, 2, /Unknown path/],
      [['get', '/v1/snapmsg/profile', '--usernme', 'x'], {}, 2, /\n {2}--usernme: Unknown parameter; did you mean --username\?\n/],
      [['get', '/v1/snapmsg/profile', '--username'], {}, 2, /needs a value/],
      [['get', '/v1/snapmsg/profile', '--username', 'no spaces'], {}, 2, /VALIDATION_ERROR \(HTTP 422\).*\n {2}username: /],
      [['account'], { PAGESCRAPE_API_KEY: '' }, 3, /no API key/],
      [['account'], { PAGESCRAPE_API_KEY: 'psk_live_unknown-key-000000000000000000' }, 3, /UNAUTHORIZED \(HTTP 401\)/],
      [['get', '/v1/snapmsg/profile', '--username', 'lunavoss'], { PAGESCRAPE_API_KEY: service.keys.broke }, 4, /INSUFFICIENT_CREDITS/],
      [catalogued('/v1/socialnet/profile/posts', /^Private profile/), {}, 5, /NOT_FOUND \(HTTP 404\).*\[req_/],
      [[...catalogued('/v1/socialnet/profile/posts', /^Login wall/), '--retries', '0'], {}, 7, /UPSTREAM_BLOCKED/],
      [['account', '--retries', '0'], { PAGESCRAPE_BASE_URL: 'http://127.0.0.1:9' }, 8, /CONNECTION_ERROR/],
    ];
    for (const [args, extra, code, message] of cases) {
      const ran = await cli(args, extra);
      assert.equal(ran.code, code, `${args.join(' ')}: ${ran.stderr}`);
      assert.match(ran.stderr, message, args.join(' '));
    }
  });

  test('a test-mode key works from the command line, free', async () => {
    const ran = await cli([...catalogued('/v1/shopfront/shop', /480 posts/), '--all'], { PAGESCRAPE_API_KEY: service.keys.test });
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(lines(ran.stdout).length, 480);
    const one = await cli(['get', '/v1/snapmsg/profile', '--username', 'lunavoss'], { PAGESCRAPE_API_KEY: service.keys.test });
    assert.deepEqual((JSON.parse(one.stdout) as { meta: { test: boolean; creditsCharged: number } }).meta.test, true);
  });

  test('a reader that stops early (| head) ends the listing with exit 0', async () => {
    const child = spawn(process.execPath, [CLI, ...catalogued('/v1/shopfront/shop', /480 posts/), '--all'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const first = await new Promise<string>((resolve) => child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString())));
    assert.match(first, /^\{/);
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 0);
  });

  test('npm run -s client from the repository, and npx from the sdk/ package', async () => {
    // npx runs the bin itself, so the build leaves it executable (npm only sets the bit when it links the package).
    assert.ok((statSync(CLI).mode & 0o111) !== 0, 'sdk/dist/cli.js is executable');
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const viaScript = await run(npm, ['run', '-s', 'client', '--', 'get', '/v1/snapmsg/profile', '--username', 'lunavoss'], { cwd: ROOT, env });
    assert.equal((JSON.parse(viaScript.stdout) as { data: { profile: { username: string } } }).data.profile.username, 'lunavoss');
    const viaNpx = await run('npx', ['--yes', join(ROOT, 'sdk'), 'account'], { cwd: join(ROOT, 'sdk'), env });
    assert.equal((JSON.parse(viaNpx.stdout) as { data: { team: { id: string } } }).data.team.id, service.team.id);
  });
});
