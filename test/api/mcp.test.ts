// The MCP server at /mcp, driven by the official SDK's own client over Streamable HTTP: the
// tools generated from the declarations, and calls that go the API's own way (auth, rate limit,
// cache, credits) and come back as structured content or as tool errors with code and request id.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { endpoints } from '../../src/endpoints/index.ts';
import { UpstreamOutcome } from '../../src/upstream/outcomes.ts';
import { defaultScript, startHarness, type Harness } from './harness.ts';
import { monitorOperations } from '../../src/work/monitors/endpoints.ts';

describe('MCP at /mcp', () => {
  let h: Harness;
  let base = '';
  before(async () => {
    h = await startHarness({ credits: 50 });
    base = await h.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(() => h.close());
  afterEach(() => {
    h.script = defaultScript;
  });

  async function connect(key: string): Promise<Client> {
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { 'x-api-key': key } } }));
    return client;
  }

  test('lists one tool per endpoint, generated from its declaration, get_account and one per monitors\' operation', async () => {
    const client = await connect(h.key);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(
        tools.map((tool) => tool.name).sort(),
        [...endpoints.map((e) => e.id.replace(/[.-]/g, '_')), 'get_account', 'create_job', 'get_job', 'get_job_results', ...monitorOperations.map((operation) => operation.id.replace(/[.-]/g, '_'))].sort(),
      );
      const posts = tools.find((tool) => tool.name === 'socialnet_profile_posts');
      assert.ok(posts?.description?.includes('1 credit'));
      assert.ok(Object.keys(posts?.inputSchema.properties ?? {}).includes('pageId'));
      assert.ok(Object.keys(posts?.inputSchema.properties ?? {}).includes('cache_max_age'));
      assert.deepEqual(Object.keys(posts?.outputSchema?.properties ?? {}), ['data', 'meta']);
    } finally {
      await client.close();
    }
  });

  test('the monitors\' tools: create, list, get, update, runs, delete, their arguments as path, query and body', async () => {
    const client = await connect(h.key);
    try {
      const created = await client.callTool({ name: 'monitors_create', arguments: { endpoint: '/v1/snapmsg/profile', params: { username: 'lunavoss' }, interval: '1h', watch: ['/profile/subscriberCount'] } });
      assert.equal(created.isError, undefined, JSON.stringify(created.content));
      const id = (created.structuredContent as { data: { id: string } }).data.id;
      assert.match(id, /^mon_/);
      const listed = await client.callTool({ name: 'monitors_list', arguments: { limit: '10' } });
      assert.deepEqual((listed.structuredContent as { data: { monitors: { id: string }[] } }).data.monitors.map((monitor) => monitor.id), [id]);
      const paused = await client.callTool({ name: 'monitors_update', arguments: { id, status: 'paused' } });
      assert.equal((paused.structuredContent as { data: { status: string } }).data.status, 'paused');
      const runs = await client.callTool({ name: 'monitors_runs', arguments: { id } });
      assert.ok(Array.isArray((runs.structuredContent as { data: { runs: unknown[] } }).data.runs));
      const invalid = await client.callTool({ name: 'monitors_create', arguments: { endpoint: '/v1/snapmsg/profile', params: {}, interval: '1s' } });
      assert.equal(invalid.isError, true);
      assert.equal((invalid._meta as { code: string }).code, 'VALIDATION_ERROR');
      const deleted = await client.callTool({ name: 'monitors_delete', arguments: { id } });
      assert.deepEqual((deleted.structuredContent as { data: unknown }).data, { id, deleted: true });
      const gone = await client.callTool({ name: 'monitors_get', arguments: { id } });
      assert.equal((gone._meta as { code: string }).code, 'NOT_FOUND');
    } finally {
      await client.close();
    }
  });

  test('a call to a 200 returns the envelope as structured content, charged as the HTTP endpoint is', async () => {
    const client = await connect(h.key);
    try {
      const before = await h.balance();
      const result = await client.callTool({ name: 'snapmsg_profile', arguments: { username: 'lunavoss' } });
      assert.equal(result.isError, undefined);
      const envelope = result.structuredContent as { data: { username?: string }; meta: { creditsCharged: number; requestId: string } };
      assert.equal(envelope.meta.creditsCharged, 1);
      assert.ok(envelope.data);
      assert.equal(await h.balance(), before - 1);
      const cached = await client.callTool({ name: 'snapmsg_profile', arguments: { username: 'lunavoss', cache_max_age: '1d' } });
      assert.equal((cached.structuredContent as { meta: { cached: boolean; creditsCharged: number } }).meta.cached, true);
      assert.equal(await h.balance(), before - 1, 'a cache hit is free, as over HTTP');
      await h.app.writeRecords();
      const records = await h.stores.requests.list({ teamId: h.team.id, limit: 10 });
      assert.ok(records.records.some((record) => record.requestId === envelope.meta.requestId), 'recorded like any request');
      const account = await client.callTool({ name: 'get_account', arguments: {} });
      assert.equal((account.structuredContent as { data: { balance: number } }).data.balance, before - 1);
    } finally {
      await client.close();
    }
  });

  test('a 404 and a call with too few credits come back as tool errors carrying the code and request id', async () => {
    const client = await connect(h.key);
    try {
      h.script = async (endpoint) => {
        throw new UpstreamOutcome('not_found', endpoint.platform, 'gone');
      };
      const missing = await client.callTool({ name: 'linkpage_a_profile', arguments: { url: 'https://linkpage-a.example/nobody' } });
      assert.equal(missing.isError, true);
      const text = (missing.content as { type: string; text: string }[])[0]?.text ?? '';
      assert.match(text, /^NOT_FOUND \(HTTP 404\): .+ Request id req_[A-Za-z0-9_-]+\.$/);
      assert.equal((missing._meta as { code: string }).code, 'NOT_FOUND');
      h.script = defaultScript;
      const broke = await h.newTeam(0, 100);
      const poor = await connect(broke.key);
      try {
        const refused = await poor.callTool({ name: 'snapmsg_profile', arguments: { username: 'lunavoss' } });
        assert.equal(refused.isError, true);
        assert.equal((refused._meta as { code: string }).code, 'INSUFFICIENT_CREDITS');
        assert.match((refused._meta as { requestId: string }).requestId, /^req_/);
      } finally {
        await poor.close();
      }
    } finally {
      await client.close();
    }
  });

  test('idempotencyKey: sent as the Idempotency-Key header, so the same call again is the first answer, charged once', async () => {
    const client = await connect(h.key);
    try {
      const { tools } = await client.listTools();
      const profile = tools.find((tool) => tool.name === 'snapmsg_profile');
      assert.ok(Object.keys(profile?.inputSchema.properties ?? {}).includes('idempotencyKey'));
      assert.match(profile?.description ?? '', /idempotencyKey/);
      assert.ok(!Object.keys(tools.find((tool) => tool.name === 'get_account')?.inputSchema.properties ?? {}).includes('idempotencyKey'), 'a free tool has none');
      const before = await h.balance();
      const calls = h.calls.length;
      const key = `mcp-${Date.now()}`;
      const first = await client.callTool({ name: 'snapmsg_profile', arguments: { username: 'lunavoss', idempotencyKey: key } });
      const again = await client.callTool({ name: 'snapmsg_profile', arguments: { username: 'lunavoss', idempotencyKey: key } });
      assert.equal(first.isError, undefined);
      assert.deepEqual(again.structuredContent, first.structuredContent, 'the replay: the first answer, its requestId included');
      assert.equal(await h.balance(), before - 1);
      assert.equal(h.calls.length, calls + 1, 'scraped once');
      const reused = await client.callTool({ name: 'snapmsg_profile', arguments: { username: 'theo', idempotencyKey: key } });
      assert.equal((reused._meta as { code: string }).code, 'IDEMPOTENCY_KEY_REUSED');
      const invalid = await client.callTool({ name: 'snapmsg_profile', arguments: { username: 'lunavoss', idempotencyKey: 'has spaces' } });
      assert.deepEqual([(invalid._meta as { status: number }).status, (invalid._meta as { code: string }).code], [422, 'VALIDATION_ERROR']);
      assert.equal(await h.balance(), before - 1);
    } finally {
      await client.close();
    }
  });

  test('every tool input schema is closed, and unknown arguments are refused as the API refuses them: all named, none charged', async () => {
    const client = await connect(h.key);
    try {
      const { tools } = await client.listTools();
      for (const tool of tools) assert.equal((tool.inputSchema as { additionalProperties?: unknown }).additionalProperties, false, tool.name);
      const before = await h.balance();
      const calls = h.calls.length;
      const refused = await client.callTool({ name: 'snapmsg_profile', arguments: { username: 'lunavoss', 'cache-max-age': '1d', junk: 'x'.repeat(10_000) } });
      assert.equal(refused.isError, true);
      const meta = refused._meta as { status: number; code: string; details: { path: string; message: string }[] };
      assert.equal(meta.status, 422);
      assert.equal(meta.code, 'VALIDATION_ERROR');
      assert.deepEqual(meta.details, [
        { path: 'cache-max-age', message: 'Unknown parameter; did you mean cache_max_age?' },
        { path: 'junk', message: 'Unknown parameter; the parameters are username, cache_max_age, stale_if_error' },
      ]);
      const text = (refused.content as { type: string; text: string }[])[0]?.text ?? '';
      assert.match(text, /^VALIDATION_ERROR \(HTTP 422\): .+ Request id req_[A-Za-z0-9_-]+\.\n- cache-max-age: Unknown parameter; did you mean cache_max_age\?\n- junk: Unknown parameter; the parameters are username, cache_max_age, stale_if_error$/);
      const account = await client.callTool({ name: 'get_account', arguments: { verbose: true } });
      assert.equal((account._meta as { code: string }).code, 'VALIDATION_ERROR');
      assert.equal(await h.balance(), before, 'nothing charged');
      assert.equal(h.calls.length, calls, 'nothing scraped');
    } finally {
      await client.close();
    }
  });

  test('an argument too long for a URL is refused as an HTTP request of that size is, before anything else', async () => {
    const junk = 'x'.repeat(60_000);
    const http = await fetch(`${base}/v1/snapmsg/profile?username=lunavoss&cache_max_age=30d&junk=${junk}`, { headers: { 'x-api-key': h.key } });
    assert.equal(http.status, 400);
    const expected = ((await http.json()) as { error: { code: string; message: string } }).error;
    assert.equal(expected.code, 'BAD_REQUEST');
    const client = await connect(h.key);
    try {
      const remaining = async () => Number((await h.get('/v1/account')).headers['x-ratelimit-remaining']);
      const before = await remaining();
      const refused = await client.callTool({ name: 'snapmsg_profile', arguments: { username: 'lunavoss', cache_max_age: '30d', junk } });
      assert.equal(refused.isError, true);
      const meta = refused._meta as { status: number; code: string; requestId: string };
      assert.deepEqual([meta.status, meta.code], [400, 'BAD_REQUEST']);
      assert.match(meta.requestId, /^req_/);
      assert.equal((refused.content as { text: string }[])[0]?.text, `BAD_REQUEST (HTTP 400): ${expected.message} Request id ${meta.requestId}.`);
      // The request it would make is not admitted, like the HTTP request Node refuses before it is
      // read: the rate window saw our two probes and the POST that carried the call, nothing more.
      assert.equal(await remaining(), before - 2);
      // A declared argument that long is refused the same way.
      const long = await client.callTool({ name: 'linkpage_a_profile', arguments: { url: `https://linkpage-a.example/${'a'.repeat(20_000)}` } });
      assert.equal((long._meta as { code: string }).code, 'BAD_REQUEST');
    } finally {
      await client.close();
    }
  });

  test('without a valid key: 401 before any tool is listed', async () => {
    const response = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(response.status, 401);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'UNAUTHORIZED');
    await assert.rejects(connect(`psk_live_${'x'.repeat(32)}`));
    assert.equal((await fetch(`${base}/mcp`)).status, 405);
  });

  const post = (key: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': key, ...headers },
      body: JSON.stringify(body),
    });
  const list = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list' });

  test("every POST counts against the team's rate limit, as an API request does; a tool call counts once", async () => {
    const team = await h.newTeam(10, 5);
    const remaining: (string | null)[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await post(team.key, list(i));
      assert.equal(response.status, 200);
      remaining.push(response.headers.get('x-ratelimit-remaining'));
    }
    assert.deepEqual(remaining, ['4', '3', '2']);
    const called = await post(team.key, { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'get_account', arguments: {} } });
    assert.equal(called.status, 200);
    assert.equal(called.headers.get('x-ratelimit-remaining'), '1', 'the call and the API request it makes count once together');
    const account = ((await called.json()) as { result: { structuredContent: { data: { rateLimit: { limit: number } } } } }).result;
    assert.equal(account.structuredContent.data.rateLimit.limit, 5);
    assert.equal((await post(team.key, { jsonrpc: '2.0', method: 'notifications/initialized' })).status, 202, 'a notification counts too');
    const refused = await post(team.key, list(10));
    assert.equal(refused.status, 429);
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'RATE_LIMITED');
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.equal((await h.get('/v1/account', { 'x-api-key': team.key })).statusCode, 429, 'the same window as the API');
  });

  test('batches: refused under MCP 2025-06-18 and later (no batching there); under 2025-03-26 at most 10 messages, each counted', async () => {
    const team = await h.newTeam(10, 30);
    const batch = (n: number) => Array.from({ length: n }, (_, i) => list(i + 1));
    for (const version of ['2025-06-18', '2025-11-25']) {
      const refused = await post(team.key, batch(2), { 'mcp-protocol-version': version });
      assert.equal(refused.status, 400, version);
      const body = (await refused.json()) as { jsonrpc: string; error: { code: number; message: string } };
      assert.equal(body.error.code, -32600);
      assert.match(body.error.message, /batch/i);
    }
    const old = await post(team.key, batch(3), { 'mcp-protocol-version': '2025-03-26' });
    assert.equal(old.status, 200);
    assert.equal(((await old.json()) as unknown[]).length, 3);
    assert.equal(old.headers.get('x-ratelimit-remaining'), String(30 - 2 - 3), 'each message of a batch counts');
    const large = await post(team.key, batch(11));
    assert.equal(large.status, 400, 'more than 10 messages');
    assert.equal(((await large.json()) as { error: { code: number } }).error.code, -32600);
    assert.equal((await post(team.key, [])).status, 400, 'an empty batch');
    const small = await h.newTeam(10, 3);
    assert.equal((await post(small.key, batch(4))).status, 429, 'a batch larger than what is left of the window is refused');
  });

  test('failed keys are limited per address as on the API (429 after 30), and two different keys are refused', async () => {
    const other = await startHarness({ credits: 5 });
    try {
      const url = `${await other.app.listen({ host: '127.0.0.1', port: 0 })}/mcp`;
      const post = (headers: Record<string, string>) =>
        fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        });
      const both = await post({ 'x-api-key': other.key, authorization: `Bearer psk_live_${'y'.repeat(32)}` });
      assert.equal(both.status, 401, 'x-api-key and Bearer disagree');
      for (let attempt = 2; attempt <= 30; attempt++) assert.equal((await post({ 'x-api-key': `psk_live_${'x'.repeat(32)}` })).status, 401, `attempt ${attempt}`);
      const limited = await post({ 'x-api-key': `psk_live_${'x'.repeat(32)}` });
      assert.equal(limited.status, 429);
      assert.equal(((await limited.json()) as { error: { code: string } }).error.code, 'RATE_LIMITED');
      assert.ok(limited.headers.get('retry-after'));
      // A valid key is never refused by that limit.
      assert.equal((await post({ 'x-api-key': other.key })).status, 200);
    } finally {
      await other.close();
    }
  });
});
