// The SDK on the oldest Node it claims: Node 18, fetched from the npm registry as the `node`
// package (npx keeps it in its cache after the first run). The built SDK lists a large page to its end with
// paginate(), and its command line dumps a listing and reports an error, as on the current Node.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { catalogued, startService, type Service } from '../support/service.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const NODE_18 = 'node@18.20.8';
const run = promisify(execFile);

describe(`the SDK on Node 18 (${NODE_18})`, () => {
  let service: Service;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let node = '';
  /** Runs `args` with Node 18. */
  const node18 = (args: string[]) => run(node, args, { env, cwd: dir, maxBuffer: 64 * 1024 * 1024 });

  before(async () => {
    // npx fetches it once (and checks the registry at each call): ask it once where it is.
    node = (await run('npx', ['--yes', '--package', NODE_18, '--', 'node', '-p', 'process.execPath'], { timeout: 300_000 })).stdout.trim();
    service = await startService();
    dir = mkdtempSync(join(tmpdir(), 'sdk-node18-'));
    // A project with the SDK installed, as `npm install <repository>/sdk` links it.
    mkdirSync(join(dir, 'node_modules', '@pagescrape'), { recursive: true });
    symlinkSync(join(ROOT, 'sdk'), join(dir, 'node_modules', '@pagescrape', 'sdk'));
    writeFileSync(join(dir, 'package.json'), '{ "type": "module" }');
    env = { ...process.env, PAGESCRAPE_BASE_URL: service.base, PAGESCRAPE_API_KEY: service.keys.live };
  });
  after(async () => {
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('it is Node 18', async () => {
    assert.match((await node18(['--version'])).stdout, /^v18\./);
  });

  test('paginate() lists a large page to its end', async () => {
    const query = catalogued('/v1/shopfront/shop', /480 posts/);
    writeFileSync(
      join(dir, 'list.js'),
      [
        "import { PageScrape } from '@pagescrape/sdk';",
        `const listing = new PageScrape().paginate('/v1/shopfront/shop', ${JSON.stringify(query)});`,
        'const ids = new Set();',
        'for await (const post of listing) ids.add(post.id);',
        'console.log(JSON.stringify({ ids: ids.size, items: listing.items, pages: listing.pages, credits: listing.creditsSpent }));',
      ].join('\n'),
    );
    const { stdout } = await node18(['list.js']);
    assert.deepEqual(JSON.parse(stdout), { ids: 480, items: 480, pages: 20, credits: 20 });
  });

  test('the command line: --all as NDJSON, and an error with its exit code', async () => {
    const query = catalogued('/v1/snapmsg/spotlight/comments', /^large: 460 comments/);
    const cli = join(ROOT, 'sdk', 'dist', 'cli.js');
    const { stdout } = await node18([cli, 'get', '/v1/snapmsg/spotlight/comments', '--url', query.url as string, '--all']);
    const ids = stdout.trim().split('\n').map((line) => (JSON.parse(line) as { id: string }).id);
    assert.deepEqual([ids.length, new Set(ids).size], [460, 460]);
    const failed = await node18([cli, 'get', '/v1/snapmsg/profile', '--username', 'no spaces']).catch((error: unknown) => error as { code: number; stderr: string });
    assert.ok('code' in failed);
    assert.equal(failed.code, 2);
    assert.match(failed.stderr, /VALIDATION_ERROR \(HTTP 422\)/);
  });
});
