// The reference page's content, as /openapi.json carries it: the guide (keys, first call,
// credits and cache, paging of each endpoint, rate-limit headers, every error with what to do),
// an example answer per endpoint that is a real answer of the service against the sandbox and
// fits the endpoint's schema, and code samples (curl, TypeScript with the SDK, Python with
// requests) that run as shown against the service.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { collectExamples } from '../../scripts/docs-examples.ts';
import { accountEndpoints } from '../../src/account/endpoints.ts';
import { exampleOf } from '../../src/docs/examples.ts';
import { endpoints } from '../../src/endpoints/index.ts';
import type { ApiEndpoint } from '../../src/endpoints/types.ts';
import { STATUS_OF } from '../../src/server/errors.ts';
import { startService, type Service } from '../support/service.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);
const all: ApiEndpoint[] = [...endpoints, ...accountEndpoints];

interface Operation {
  'x-codeSamples': { lang: string; label: string; source: string }[];
  responses: Record<string, { content: Record<string, { schema: object; example?: unknown }> }>;
}
interface Document {
  info: { description: string };
  paths: Record<string, { get: Operation }>;
}

/** The example file's scraped data, without what changes from run to run. */
const scraped = (examples: Record<string, unknown>) =>
  Object.fromEntries(
    endpoints.map((endpoint) => {
      const { fetchedAt: _fetchedAt, ...data } = (examples[endpoint.id] as { data: Record<string, unknown> }).data;
      return [endpoint.id, data];
    }),
  );

/** A Python that has `requests`: the one on the PATH, else Debian's (.ci/run installs python3-requests). */
async function pythonWithRequests(): Promise<string> {
  for (const candidate of [process.env.PYTHON, 'python3', '/usr/bin/python3']) {
    if (!candidate) continue;
    const works = await run(candidate, ['-c', 'import requests']).then(
      () => true,
      () => false,
    );
    if (works) return candidate;
  }
  throw new Error('No Python with requests: the Python samples need it (Debian package python3-requests; .ci/run installs it)');
}

/** The guide's first shell sample. */
const firstCall = (guide: string): string => /^```sh\n([\s\S]*?)\n```$/m.exec(guide)?.[1] ?? '';

describe('the reference page', () => {
  let service: Service;
  let document: Document;
  let python = '';
  before(async () => {
    python = await pythonWithRequests();
    service = await startService();
    document = (await (await fetch(`${service.base}/openapi.json`)).json()) as Document;
  });
  after(() => service.stop());

  test('the guide: a key, a first call, credits and cache, paging of each endpoint, rate-limit headers, every error with what to do', () => {
    const guide = document.info.description;
    for (const heading of ['Get a key', 'First call', 'Credits and the cache', 'Paging', 'Rate limits', 'Errors', 'Test mode', 'SDK, command line and MCP']) {
      assert.match(guide, new RegExp(`^## ${heading}$`, 'm'), heading);
    }
    assert.deepEqual(firstCall(guide).split('\n'), [
      `curl -sS -G '${service.base}/v1/snapmsg/profile' \\`,
      "  --data-urlencode 'username=lunavoss' \\",
      '  -H "x-api-key: $PAGESCRAPE_API_KEY"',
    ]);
    for (const endpoint of all.filter((candidate) => candidate.paging)) {
      const paging = endpoint.paging!;
      assert.ok(guide.includes(`| \`${endpoint.path}\` | \`data.${paging.items}\` | \`${paging.param}\` | \`data.paging.${paging.field}\` | \`data.paging.${paging.flag}\` |`), endpoint.path);
    }
    for (const header of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After']) assert.ok(guide.includes(`| \`${header}\` |`), header);
    for (const [code, status] of Object.entries(STATUS_OF)) assert.match(guide, new RegExp(`^\\| ${status} \\| \`${code}\` \\| .{20,} \\|$`, 'm'), code);
  });

  test('each endpoint: an example answer that fits its schema, and samples in curl, TypeScript and Python', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats.default(ajv);
    for (const endpoint of all) {
      const operation = document.paths[endpoint.path]?.get;
      assert.ok(operation, endpoint.path);
      const success = operation.responses['200']?.content['application/json'];
      assert.ok(success?.example, `${endpoint.path} has an example answer`);
      assert.deepEqual(success.example, exampleOf(endpoint.id));
      const validate = ajv.compile(success.schema);
      assert.ok(validate(success.example), `${endpoint.path}: ${ajv.errorsText(validate.errors)}`);
      assert.deepEqual(
        operation['x-codeSamples'].map((sample) => sample.label),
        ['curl', 'TypeScript (SDK)', 'Python (requests)'],
      );
    }
    const posts = document.paths['/v1/socialnet/profile/posts']?.get['x-codeSamples'];
    assert.match(posts?.[1]?.source ?? '', /client\.paginate\('\/v1\/socialnet\/profile\/posts'|client\.paginate\("\/v1\/socialnet\/profile\/posts"/);
    assert.match(posts?.[2]?.source ?? '', /params\["cursor"\] = data\["paging"\]\["cursor"\]/);
  });

  test('the examples are what the service answers against the sandbox now (else: npm run -s docs:examples)', async () => {
    const now = await collectExamples();
    const kept = Object.fromEntries(all.map((endpoint) => [endpoint.id, exampleOf(endpoint.id)]));
    assert.deepEqual(scraped(kept), scraped(now));
    assert.deepEqual(Object.keys(kept).sort(), Object.keys(now).sort());
  });

  test('every code sample runs as shown against the service', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'samples-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    // The SDK as a project installs it.
    mkdirSync(join(dir, 'node_modules', '@pagescrape'), { recursive: true });
    symlinkSync(join(ROOT, 'sdk'), join(dir, 'node_modules', '@pagescrape', 'sdk'));
    writeFileSync(join(dir, 'package.json'), '{ "type": "module" }');
    const env = { ...process.env, PAGESCRAPE_API_KEY: service.keys.live };
    const first = await run('sh', ['-c', firstCall(document.info.description)], { env });
    assert.equal((JSON.parse(first.stdout) as { data: { profile: { username: string } } }).data.profile.username, 'lunavoss', "the guide's first call");
    for (const endpoint of all) {
      const [curl, typescript, py] = document.paths[endpoint.path]?.get['x-codeSamples'] ?? [];
      assert.ok(curl && typescript && py);
      const file = join(dir, `${endpoint.id}.ts`);
      writeFileSync(file, typescript.source);
      // The three at once: each is a process that mostly waits for its start and the service.
      const [shell, node, pythonRun] = await Promise.all([
        run('sh', ['-c', curl.source], { env, maxBuffer: 16 * 1024 * 1024 }),
        run(process.execPath, [file], { env, cwd: dir, maxBuffer: 16 * 1024 * 1024 }),
        run(python, ['-c', py.source], { env, maxBuffer: 16 * 1024 * 1024 }),
      ]);
      assert.ok((JSON.parse(shell.stdout) as { data: unknown }).data, `${endpoint.path}: curl`);
      assert.ok(node.stdout.length > 0, `${endpoint.path}: TypeScript`);
      assert.ok(pythonRun.stdout.length > 0, `${endpoint.path}: Python`);
    }
    // The TypeScript samples also compile, strictly, against the SDK's types.
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', lib: ['es2022', 'dom'], types: [], strict: true, noEmit: true, allowImportingTsExtensions: true }, include: ['*.ts'] }),
    );
    await run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir]).catch((error: { stdout: string }) => assert.fail(`the TypeScript samples do not compile:\n${error.stdout}`));
  });
});
