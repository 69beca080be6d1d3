// socialnet's session on a cluster: two extractor instances (two nodes) sharing Redis load the
// home page once between them, and a session one node obtained serves the other.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startSandbox, type RunningSandbox } from '../../sandbox/server.ts';
import { SOCIALNET_CATALOGUE } from '../../sandbox/platforms/socialnet/catalogue.ts';
import { loadConfig, UNPACED_ENV } from '../../src/config.ts';
import { upstreamClient } from '../../src/main.ts';
import { createSocialnetExtractors } from '../../src/platforms/socialnet/extract.ts';
import { sharedStates } from '../../src/server/shared-state.ts';
import { connected, createRedis, type RedisConnection } from '../../src/store/redis/client.ts';
import { RedisFlights } from '../../src/store/redis/flights.ts';
import { RedisKeyValue } from '../../src/store/redis/kv.ts';
import type { UpstreamClient } from '../../src/upstream/client.ts';
import type { Upstream } from '../../src/upstream/types.ts';
import { testBackends, type TestBackends } from '../support/backends.ts';

let backends: TestBackends;
let sandbox: RunningSandbox;
let client: UpstreamClient;
const connections: RedisConnection[] = [];
const flights: RedisFlights[] = [];
const dir = mkdtempSync(join(tmpdir(), 'socialnet-sessions-'));

before(async () => {
  backends = await testBackends();
  sandbox = await startSandbox({ latencyMs: 100 });
  client = upstreamClient(loadConfig({ ...sandbox.env, ...UNPACED_ENV, DATA_DIR: dir, CURSOR_SECRET: 'socialnet-sessions-secret-0123456789' }));
});
after(async () => {
  for (const f of flights) f.close();
  for (const c of connections) c.close();
  await client?.close();
  await sandbox?.close();
  await backends?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('socialnet sessions shared through Redis', () => {
  test('concurrent requests on two nodes load the home page once; the other node reuses the session', async () => {
    const prefix = backends.freshPrefix();
    const node = async () => {
      const connection = createRedis({ url: backends.redisUrl, prefix });
      await connected(connection.redis, 5_000);
      const nodeFlights = new RedisFlights(connection, prefix);
      connections.push(connection);
      flights.push(nodeFlights);
      return { extractors: createSocialnetExtractors(), shared: sharedStates({ kv: new RedisKeyValue(connection, prefix), flights: nodeFlights })('socialnet') };
    };
    const [a, b] = [await node(), await node()];
    const paths: string[] = [];
    const contextOf = (shared: (typeof a)['shared']) => {
      const controller = new AbortController();
      const deadline = Date.now() + 20_000;
      const bound = client.bind('socialnet', controller.signal, deadline);
      const upstream: Upstream = (request) => {
        paths.push(request.path);
        return bound(request);
      };
      return { signal: controller.signal, deadline, log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} }, upstream, shared };
    };
    const entry = SOCIALNET_CATALOGUE.find((candidate) => candidate.description.startsWith('Ordinary business page by numeric id'));
    const pageId = new URLSearchParams(entry?.query).get('pageId') ?? '';
    assert.match(pageId, /^\d+$/);
    const request = { params: { pageId }, position: null };
    const results = await Promise.all([
      ...Array.from({ length: 3 }, () => a.extractors.posts(request, contextOf(a.shared))),
      ...Array.from({ length: 3 }, () => b.extractors.posts(request, contextOf(b.shared))),
    ]);
    for (const result of results) assert.ok(result.data.posts.length > 0);
    assert.equal(paths.filter((path) => path === '/').length, 1, `one home page for both nodes: ${JSON.stringify(paths)}`);
    paths.length = 0;
    await b.extractors.posts(request, contextOf(b.shared));
    assert.deepEqual(
      paths.filter((path) => path === '/'),
      [],
      'the stored session serves later requests on either node',
    );
  });
});
