// What a client developer does with /openapi.json: generate types with openapi-typescript (which
// refuses a document that Redocly's recommended ruleset finds an error in), write a small
// openapi-fetch client calling all nine endpoints, compile it with `tsc --strict`, and run it
// against the service (pointed at the sandbox upstream) at the address the document names.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { endpoints } from '../../src/endpoints/index.ts';
import { startE2e, type E2e } from '../e2e/harness.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const bin = (path: string) => join(ROOT, 'node_modules', path);

/**
 * The client, as its developer would write it against the generated `paths`. Every value it
 * prints is read through the generated types; the `@ts-expect-error` lines prove those types
 * are precise (with `any` or `unknown` data they would be unused, which tsc reports).
 */
const CLIENT = `
import createClient from 'openapi-fetch';
import type { paths } from './schema.ts';

const client = createClient<paths>({
  baseUrl: process.env.API_BASE_URL,
  headers: { 'x-api-key': process.env.API_KEY },
});

interface Call { operation: string; status: number; requestId: string; value: string | number }
const calls: Call[] = [];
function record(operation: string, response: Response, meta: { requestId: string }, value: string | number): void {
  calls.push({ operation, status: response.status, requestId: meta.requestId, value });
}

const posts = await client.GET('/v1/socialnet/profile/posts', { params: { query: { url: 'https://www.socialnet.example/tidewaterkitchen' } } });
if (!posts.data) throw new Error('posts: ' + JSON.stringify(posts.error));
record('socialnetProfilePosts', posts.response, posts.data.meta, posts.data.data.posts.length);
// @ts-expect-error: a post's text is a string or null, never a number.
const wrong: number = posts.data.data.posts[0]?.text;
void wrong;

const comment = posts.data.data.posts.flatMap((post) => post.topComments).find((top) => top.replyCount > 0);
if (!comment) throw new Error('no top comment with replies');
const replies = await client.GET('/v1/socialnet/post/comment/replies', {
  params: { query: { feedbackId: comment.feedbackId, expansionToken: comment.expansionToken } },
});
if (!replies.data) throw new Error('replies: ' + JSON.stringify(replies.error));
record('socialnetPostCommentReplies', replies.response, replies.data.meta, replies.data.data.replyCount);

const reels = await client.GET('/v1/socialnet/profile/reels', { params: { query: { url: 'https://www.socialnet.example/tidewaterkitchen' } } });
if (!reels.data) throw new Error('reels: ' + JSON.stringify(reels.error));
record('socialnetProfileReels', reels.response, reels.data.meta, reels.data.data.reels.length);

const page = await client.GET('/v1/socialnet/profile', { params: { query: { url: 'https://www.socialnet.example/tidewaterkitchen' } } });
if (!page.data) throw new Error('socialnet profile: ' + JSON.stringify(page.error));
record('socialnetProfile', page.response, page.data.meta, page.data.data.profile.name);

const snap = await client.GET('/v1/snapmsg/profile', { params: { query: { username: 'lunavoss' } } });
if (!snap.data) throw new Error('snapmsg profile: ' + JSON.stringify(snap.error));
record('snapmsgProfile', snap.response, snap.data.meta, snap.data.data.profile.username);
// @ts-expect-error: profileType is one of two literals.
snap.data.data.profile.profileType = 'somethingElse';

const spotlight = await client.GET('/v1/snapmsg/spotlight/comments', {
  params: { query: { url: 'https://www.snapmsg.example/spotlight/starTrails_Sintra_0001' } },
});
if (!spotlight.data) throw new Error('spotlight comments: ' + JSON.stringify(spotlight.error));
record('snapmsgSpotlightComments', spotlight.response, spotlight.data.meta, spotlight.data.data.comments.length);

const linkA = await client.GET('/v1/linkpage-a/profile', { params: { query: { url: 'https://linkpage-a.example/luna.voss' } } });
if (!linkA.data) throw new Error('linkpage-a: ' + JSON.stringify(linkA.error));
record('linkpageAProfile', linkA.response, linkA.data.meta, linkA.data.data.profile.username);

const linkB = await client.GET('/v1/linkpage-b/page', { params: { query: { url: 'https://linkpage-b.example/luna.voss' } } });
if (!linkB.data) throw new Error('linkpage-b: ' + JSON.stringify(linkB.error));
record('linkpageBPage', linkB.response, linkB.data.meta, linkB.data.data.page.username);

const shop = await client.GET('/v1/shopfront/shop', { params: { query: { url: 'https://www.shopfront.example/shop/lunacooks' } } });
if (!shop.data) throw new Error('shopfront: ' + JSON.stringify(shop.error));
record('shopfrontShop', shop.response, shop.data.meta, shop.data.data.shop.handle);

// @ts-expect-error: the document has no such path.
await client.GET('/v1/unknown/endpoint', {});

console.log(JSON.stringify(calls));
`;

describe('a client generated from /openapi.json (openapi-typescript, openapi-fetch, tsc --strict)', () => {
  let e2e: E2e;
  let dir: string;
  let document: { servers?: { url: string }[] };
  before(async () => {
    e2e = await startE2e();
    dir = mkdtempSync(join(tmpdir(), 'generated-client-'));
    // The client resolves openapi-fetch and @types/node from the project's dependencies.
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    writeFileSync(join(dir, 'package.json'), '{ "type": "module", "private": true }\n');
    writeFileSync(join(dir, 'client.ts'), CLIENT);
    document = (await (await fetch(`${e2e.base}/openapi.json`)).json()) as typeof document;
  });
  after(async () => {
    await e2e.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the document names the address the service listens on in servers', () => {
    assert.deepEqual(document.servers?.map((server) => server.url), [e2e.base]);
  });

  test('types are generated from the served document under the recommended ruleset, the client compiles with tsc --strict and every call is a typed 200', async () => {
    // The generator lints with the project's redocly.yaml (recommended) and refuses on any error.
    const generated = await run(process.execPath, [bin('openapi-typescript/bin/cli.js'), `${e2e.base}/openapi.json`, '--redocly', join(ROOT, 'redocly.yaml'), '--output', join(dir, 'schema.ts')], {
      cwd: dir,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true' },
    });
    assert.doesNotMatch(generated.stderr, /✘|error/i, generated.stderr);

    // --skipLibCheck, as the project's own tsconfig: the client and the generated schema are
    // checked in full, the dependencies' declaration files are taken as they are.
    const tsc = [bin('typescript/bin/tsc'), '--strict', '--noEmit', '--skipLibCheck', '--target', 'es2023', '--lib', 'es2023', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--allowImportingTsExtensions', '--types', 'node', 'client.ts'];
    await run(process.execPath, tsc, { cwd: dir }).catch((error: { stdout?: string }) => assert.fail(`tsc --strict failed:\n${error.stdout ?? String(error)}`));

    const before = await e2e.balance();
    const { stdout } = await run(process.execPath, ['--disable-warning=ExperimentalWarning', 'client.ts'], {
      cwd: dir,
      env: { ...process.env, API_BASE_URL: document.servers?.[0]?.url ?? '', API_KEY: e2e.key },
    });
    const calls = JSON.parse(stdout) as { operation: string; status: number; requestId: string; value: string | number }[];
    const operationIds = endpoints.map((endpoint) => endpoint.id.replace(/[.-](\w)/g, (_, letter: string) => letter.toUpperCase()));
    assert.deepEqual(calls.map((call) => call.operation).sort(), operationIds.sort(), 'one call per endpoint');
    for (const call of calls) {
      assert.equal(call.status, 200, call.operation);
      assert.match(call.requestId, /^req_/, call.operation);
    }
    const value = Object.fromEntries(calls.map((call) => [call.operation, call.value]));
    assert.equal(value.snapmsgProfile, 'lunavoss');
    assert.equal(value.linkpageAProfile, 'luna.voss');
    assert.equal(value.linkpageBPage, 'luna.voss');
    assert.equal(value.shopfrontShop, 'lunacooks');
    assert.equal(typeof value.socialnetProfile, 'string');
    for (const counted of ['socialnetProfilePosts', 'socialnetPostCommentReplies', 'socialnetProfileReels', 'snapmsgSpotlightComments']) {
      assert.ok(typeof value[counted] === 'number' && value[counted] > 0, `${counted}: ${value[counted]}`);
    }
    assert.equal(await e2e.balance(), before - 9, 'nine live scrapes, one credit each');
  });
});
