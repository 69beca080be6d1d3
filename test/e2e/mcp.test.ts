// MCP as an agent meets it: the official SDK's client connected to /mcp of the running service,
// which scrapes the sandbox upstream; every tool called with its endpoint's example query answers
// an envelope that fits its output schema (the client checks it), charged as over HTTP; a
// test-mode key works there too, for free.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { accountEndpoints } from '../../src/account/endpoints.ts';
import { endpoints } from '../../src/endpoints/index.ts';
import { monitorOperations } from '../../src/work/monitors/endpoints.ts';
import { startService, type Service } from '../support/service.ts';

describe('MCP against the service and the sandbox', () => {
  let service: Service;
  before(async () => {
    service = await startService();
  });
  after(() => service.stop());

  async function connect(key: string): Promise<Client> {
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${service.base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    return client;
  }
  const balance = async () => (await service.stores.ledger.balance(service.team.id)) ?? Number.NaN;

  test('every tool, called with its endpoint\'s example query, answers its envelope', async () => {
    const client = await connect(service.keys.live);
    try {
      const { tools } = await client.listTools();
      const scraping = new Set(endpoints.map((endpoint) => endpoint.id.replace(/[.-]/g, '_')));
      const examples = new Map([...endpoints, ...accountEndpoints].map((endpoint) => [endpoint.id.replace(/[.-]/g, '_'), endpoint.exampleQuery]));
      examples.set('get_account', {});
      // The monitors' tools need a monitor of their own (test/api/mcp.test.ts calls them); the batch job tools are called in test/api/jobs.test.ts.
      const jobTools = new Set(['create_job', 'get_job', 'get_job_results']);
      assert.equal(tools.length, endpoints.length + 1 + monitorOperations.length + jobTools.size);
      for (const tool of tools.filter((each) => !each.name.startsWith('monitors_') && !jobTools.has(each.name))) {
        const before = await balance();
        const result = await client.callTool({ name: tool.name, arguments: examples.get(tool.name) ?? {} });
        assert.equal(result.isError, undefined, `${tool.name}: ${JSON.stringify(result.content)}`);
        const envelope = result.structuredContent as { data: object; meta: { creditsCharged: number; requestId: string } };
        assert.match(envelope.meta.requestId, /^req_/);
        const charged = scraping.has(tool.name) ? 1 : 0;
        assert.equal(envelope.meta.creditsCharged, charged, tool.name);
        assert.equal(await balance(), before - charged, tool.name);
      }
    } finally {
      await client.close();
    }
  });

  test('a test-mode key: the same tools, free, marked test', async () => {
    const client = await connect(service.keys.test);
    try {
      const before = await balance();
      const result = await client.callTool({ name: 'shopfront_shop', arguments: { url: 'https://www.shopfront.example/shop/lunacooks' } });
      assert.equal(result.isError, undefined);
      const { meta } = result.structuredContent as { meta: { test: boolean; creditsCharged: number } };
      assert.deepEqual([meta.test, meta.creditsCharged], [true, 0]);
      assert.equal(await balance(), before);
    } finally {
      await client.close();
    }
  });
});
