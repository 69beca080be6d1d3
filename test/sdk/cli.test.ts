// The SDK's command line (sdk/dist/cli.js, as `npx` and `npm run -s client` run it) against the
// running service and the sandbox: JSON answers, --all listings as NDJSON counted and checked for
// duplicates, what a listing tells on standard error (progress, each wait before a retry, the
// summary however it ends) on a terminal and elsewhere, --max-credits, and the exit code of each
// error class.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { refusedPort } from '../support/ports.ts';
import { catalogued as catalogueQuery, startService, type Service } from '../support/service.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const CLI = join(ROOT, 'sdk', 'dist', 'cli.js');
const run = promisify(execFile);

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** The summary line a listing ends with, its parts parsed. */
const SUMMARY = /^pagescrape: (?<how>[^:]+): (?<pages>\d+) pages?, (?<items>\d+) items?, (?<credits>\d+) credits? spent(?:, (?<left>\d+) left)?, (?:no retries|waited (?<waited>[\d.]+) s before (?<retries>\d+) retr(?:y|ies)), [\d.]+ s in all$/m;
const summaryOf = (stderr: string) => {
  const found = SUMMARY.exec(stderr)?.groups;
  assert.ok(found, `a summary line in:\n${stderr}`);
  return { how: found.how ?? '', pages: Number(found.pages), items: Number(found.items), credits: Number(found.credits), left: Number(found.left), retries: Number(found.retries ?? 0), waited: Number(found.waited ?? 0) };
};

/**
 * A test double of a congested service in front of the real one: it holds every answer for
 * `delayMs`, and answers the requests numbered in `limited` (1 for the first) 429 RATE_LIMITED
 * with `Retry-After: 1`, as the service does when a team's window is full.
 */
async function congested(target: string, delayMs: number, limited: readonly number[]): Promise<{ base: string; server: Server }> {
  let seen = 0;
  const server = createServer((request, response) => {
    seen++;
    if (limited.includes(seen)) {
      const error = { code: 'RATE_LIMITED', message: 'Too many requests for the team in the last 60 seconds. Retry in 1 s.', requestId: `req_limited${seen}` };
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' }).end(JSON.stringify({ error }));
      return;
    }
    setTimeout(() => {
      fetch(`${target}${request.url}`, { headers: { 'x-api-key': String(request.headers['x-api-key']) } })
        .then(async (answer) => response.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text()))
        .catch(() => response.destroy());
    }, delayMs);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
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

  test('get --idempotency-key: the same command again is answered from the first, charged once; not with --all', async () => {
    const credits = async () => (await service.stores.accounts.getTeam(service.team.id))?.credits;
    const before = await credits();
    const key = `cli-${Date.now()}`;
    const first = await cli(['get', '/v1/snapmsg/profile', '--username', 'lunavoss', '--idempotency-key', key]);
    const second = await cli(['get', '/v1/snapmsg/profile', '--username', 'lunavoss', '--idempotency-key', key]);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(second.stdout, first.stdout, 'the replay, byte for byte');
    assert.equal(await credits(), (before ?? 0) - 1);
    const other = await cli(['get', '/v1/snapmsg/profile', '--username', 'theo', '--idempotency-key', key]);
    assert.equal(other.code, 2);
    assert.match(other.stderr, /IDEMPOTENCY_KEY_REUSED \(HTTP 422\)/);
    const listed = await cli([...catalogued('/v1/shopfront/shop', /480 posts/), '--all', '--idempotency-key', key]);
    assert.equal(listed.code, 2);
    assert.match(listed.stderr, /--idempotency-key is the key of one request/);
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
      const summary = summaryOf(ran.stderr);
      assert.deepEqual([summary.how, summary.items, summary.retries], ['done', total, 0]);
    });
  }

  test('--all on a standard error that is not a terminal: plain progress lines, a line for each wait before a retry, a summary', async () => {
    // 20 pages of 24 posts, each answer held 250 ms, the 2nd and 5th requests rate limited.
    const proxy = await congested(service.base, 250, [2, 5]);
    try {
      const before = (await service.stores.accounts.getTeam(service.team.id))?.credits ?? 0;
      const ran = await cli([...catalogued('/v1/shopfront/shop', /480 posts/), '--all'], { PAGESCRAPE_BASE_URL: proxy.base });
      assert.equal(ran.code, 0, ran.stderr);
      assert.equal(lines(ran.stdout).length, 480);
      const told = lines(ran.stderr);
      assert.equal(told[0], 'pagescrape: pages 1 · items 24 · credits 1 · ' + /[\d.]+ s$/.exec(told[0] ?? '')?.[0], 'a line once the first page is in');
      const progress = told.filter((line) => /^pagescrape: pages \d+ · items \d+ · credits \d+ · [\d.]+ s$/.test(line));
      const took = Number(/, ([\d.]+) s in all$/.exec(told.at(-1) ?? '')?.[1]);
      assert.ok(progress.length >= 2 && progress.length <= 1 + Math.floor(took / 5), `the first page, then a line every 5 s at most over ${took} s:\n${ran.stderr}`);
      const waits = told.filter((line) => line.startsWith('pagescrape: waiting '));
      assert.equal(waits.length, 2, ran.stderr);
      for (const wait of waits) assert.match(wait, /^pagescrape: waiting 1\.\d s, then retry 1 of 3: RATE_LIMITED \(HTTP 429\): Too many requests .* \[req_limited\d\]$/);
      const summary = summaryOf(ran.stderr);
      assert.deepEqual([summary.how, summary.pages, summary.items, summary.credits, summary.retries], ['done', 20, 480, 20, 2]);
      assert.ok(summary.waited >= 2 && summary.waited < 3, `waited ${summary.waited} s for two Retry-After: 1`);
      assert.equal(summary.left, before - 20);
      assert.equal(told.at(-1), SUMMARY.exec(ran.stderr)?.[0], 'the summary comes last');
      assert.equal(told.length, progress.length + waits.length + 1, `nothing else:\n${ran.stderr}`);

      // A single call tells its waits too, and nothing else.
      const one = await cli(['get', '/v1/snapmsg/profile', '--username', 'lunavoss'], { PAGESCRAPE_BASE_URL: proxy.base });
      assert.equal(one.code, 0, one.stderr);
      assert.equal(lines(one.stderr).length, 0, 'the 5th request was the last limited one');
    } finally {
      proxy.server.closeAllConnections();
      proxy.server.close();
    }
    const limited = await congested(service.base, 0, [1]);
    try {
      const one = await cli(['get', '/v1/snapmsg/profile', '--username', 'lunavoss'], { PAGESCRAPE_BASE_URL: limited.base });
      assert.equal(one.code, 0, one.stderr);
      assert.match(one.stderr, /^pagescrape: waiting 1\.\d s, then retry 1 of 3: RATE_LIMITED \(HTTP 429\): .*\n$/);
      assert.equal((JSON.parse(one.stdout) as { data: { profile: { username: string } } }).data.profile.username, 'lunavoss');
    } finally {
      limited.server.closeAllConnections();
      limited.server.close();
    }
  });

  test('--max-credits: no page that could pass the bound is requested; cache hits cost nothing; exit 9 when it stops the listing', async () => {
    const balance = async () => (await service.stores.accounts.getTeam(service.team.id))?.credits ?? 0;
    // A listing no other test reads (215 reels), first live: 1 credit a page.
    const args = catalogued('/v1/socialnet/profile/reels', /^Large page: 215 reels/);
    let before = await balance();
    const live = await cli([...args, '--all', '--max-credits', '5']);
    assert.equal(live.code, 9, live.stderr);
    let summary = summaryOf(live.stderr);
    assert.match(summary.how, /^stopped by --max-credits 5\b/);
    assert.deepEqual([summary.pages, summary.credits], [5, 5]);
    assert.equal(lines(live.stdout).length, summary.items);
    assert.equal(before - (await balance()), 5, 'exactly 5 credits spent');

    // Again, from the cache where it can be: the 5 pages read are free, 5 more are bought.
    before = await balance();
    const cached = await cli([...args, '--cache_max_age', '1d', '--all', '--max-credits', '5']);
    assert.equal(cached.code, 9, cached.stderr);
    summary = summaryOf(cached.stderr);
    assert.deepEqual([summary.pages, summary.credits], [10, 5]);
    assert.equal(before - (await balance()), 5);

    // A bound the listing stays within: it ends, exit 0, having bought only the pages not cached.
    before = await balance();
    const whole = await cli([...args, '--cache_max_age', '1d', '--all', '--max-credits', '1000']);
    assert.equal(whole.code, 0, whole.stderr);
    summary = summaryOf(whole.stderr);
    assert.deepEqual([summary.how, summary.items, summary.credits], ['done', 215, summary.pages - 10]);
    assert.equal(before - (await balance()), summary.credits);

    // Bound 0: not even the first page.
    const none = await cli([...args, '--all', '--max-credits', '0']);
    assert.deepEqual([none.code, none.stdout, summaryOf(none.stderr).pages], [9, '', 0]);
  });

  test('the summary however a listing ends: an error in the middle, a reader that closes the output; --quiet tells nothing but errors', async () => {
    const failed = await cli([...catalogued('/v1/socialnet/profile/posts', /^The timeline query rejects every cursor/), '--all']);
    assert.equal(failed.code, 2, failed.stderr);
    assert.match(failed.stderr, /^pagescrape: BAD_REQUEST \(HTTP 400\): .*$/m);
    const summary = summaryOf(failed.stderr);
    assert.deepEqual([summary.how, summary.pages, summary.credits], ['stopped by the error above', 1, 1]);
    assert.equal(lines(failed.stdout).length, summary.items);

    const quiet = await cli([...catalogued('/v1/shopfront/shop', /480 posts/), '--cache_max_age', '1d', '--all', '--quiet']);
    assert.deepEqual([quiet.code, quiet.stderr, lines(quiet.stdout).length], [0, '', 480]);
    const quietFailure = await cli([...catalogued('/v1/socialnet/profile/posts', /^The timeline query rejects every cursor/), '--all', '--quiet']);
    assert.match(quietFailure.stderr, /^pagescrape: BAD_REQUEST \(HTTP 400\): [^\n]*\n$/);
  });

  test('--max-pages bounds --all; --all on an endpoint that does not page is refused, and the bounds without --all', async () => {
    const ran = await cli([...catalogued('/v1/shopfront/shop', /480 posts/), '--all', '--max-pages', '2']);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(lines(ran.stdout).length, 48);
    assert.deepEqual([summaryOf(ran.stderr).how, summaryOf(ran.stderr).pages], ['stopped by --max-pages 2', 2]);
    const refused = await cli(['get', '/v1/snapmsg/profile', '--username', 'lunavoss', '--all']);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /does not page/);
    for (const bound of ['--max-pages', '--max-credits']) {
      const alone = await cli(['get', '/v1/snapmsg/profile', '--username', 'lunavoss', bound, '1']);
      assert.equal(alone.code, 2);
      assert.match(alone.stderr, new RegExp(`${bound} bounds a listing: it works with --all`));
    }
  });

  test('on a terminal, one progress line rewritten in place, then the summary', async () => {
    // `script` runs the command on a pseudo-terminal (util-linux).
    const command = [process.execPath, CLI, ...catalogued('/v1/shopfront/shop', /480 posts/), '--all'].map((part) => `'${part}'`).join(' ');
    const { stdout } = await run('script', ['-qec', `${command} > /dev/null`, '/dev/null'], { env });
    const redrawn = stdout.split('\r\u001b[K').filter((part) => part !== '');
    assert.equal(redrawn.length, 21, `20 pages, then the summary:\n${JSON.stringify(stdout)}`);
    for (const [index, part] of redrawn.slice(0, 20).entries()) assert.match(part, new RegExp(`^pagescrape: pages ${index + 1} · items ${24 * (index + 1)} · credits \\d+ · [\\d.]+ s$`));
    assert.match(redrawn[20] ?? '', /^pagescrape: done: 20 pages, 480 items, \d+ credits? spent, .*\r?\n$/);
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

  test('exit codes by error class', async (t) => {
    const closed = await refusedPort();
    t.after(() => closed.release());
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
      [['account', '--retries', '0'], { PAGESCRAPE_BASE_URL: closed.origin }, 8, /CONNECTION_ERROR/],
      [['account', '--retries', '1'], { PAGESCRAPE_BASE_URL: closed.origin }, 8, /^pagescrape: waiting 0\.\d s, then retry 1 of 1: CONNECTION_ERROR: .*\npagescrape: CONNECTION_ERROR: /],
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
    assert.equal(summaryOf(ran.stderr).credits, 0);
    const one = await cli(['get', '/v1/snapmsg/profile', '--username', 'lunavoss'], { PAGESCRAPE_API_KEY: service.keys.test });
    assert.deepEqual((JSON.parse(one.stdout) as { meta: { test: boolean; creditsCharged: number } }).meta.test, true);
  });

  test('a reader that stops early (| head) ends the listing with exit 0 and the summary', async () => {
    const child = spawn(process.execPath, [CLI, ...catalogued('/v1/shopfront/shop', /480 posts/), '--all'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const first = await new Promise<string>((resolve) => child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString())));
    assert.match(first, /^\{/);
    child.stdout.destroy();
    const [code] = (await once(child, 'close')) as [number | null];
    assert.equal(code, 0, stderr);
    assert.equal(summaryOf(stderr).how, 'stopped, the output was closed');
  });

  test('Ctrl-C stops the listing with exit 130 and the summary of what it read', async () => {
    const slow = await congested(service.base, 400, []);
    try {
      const child = spawn(process.execPath, [CLI, ...catalogued('/v1/shopfront/shop', /480 posts/), '--all'], { env: { ...env, PAGESCRAPE_BASE_URL: slow.base }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      await once(child.stdout, 'data');
      child.kill('SIGINT');
      const [code] = (await once(child, 'close')) as [number | null];
      assert.equal(code, 130, stderr);
      const summary = summaryOf(stderr);
      assert.equal(summary.how, 'interrupted');
      assert.ok(summary.pages >= 1 && summary.pages < 20, stderr);
    } finally {
      slow.server.closeAllConnections();
      slow.server.close();
    }
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
