// The endpoints as tools for AI agents: a Model Context Protocol server at /mcp (Streamable
// HTTP, stateless), on the official SDK. One tool per scraping endpoint, generated from its
// declaration (input schema from its query schema, output schema from its data schema), plus
// `get_account`. A call is the endpoint's own GET, run in-process with the caller's key: the
// same authentication, rate limit, cache and credits, charged the same, and recorded.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyPluginAsync } from 'fastify';
import { Type, type TObject } from 'typebox';
import { accountEndpoints } from '../account/endpoints.ts';
import type { ApiEndpoint, EndpointDeclaration, ValidationDetail } from '../endpoints/types.ts';
import { ApiError, sendError } from '../server/errors.ts';
import { getInProcess } from '../server/in-process.ts';
import { checkPresentedKey } from '../server/plugins/auth.ts';
import { Meta } from '../server/plugins/openapi.ts';
import { fullQuerySchema } from '../server/query.ts';
import type { Stores } from '../store/types.ts';

/** A JSON-RPC message or batch: small. */
const BODY_LIMIT = 64 * 1024;

export interface McpOptions {
  stores: Stores;
  endpoints: readonly EndpointDeclaration[];
  version: string;
  /** The app's clock, for the count of failed keys per address. */
  now: () => number;
}

interface ToolOf {
  tool: Tool;
  endpoint: ApiEndpoint;
}

/** The error envelope's `error`. */
interface ErrorOf {
  code: string;
  message: string;
  requestId: string;
  details?: ValidationDetail[];
}

/** `socialnet.profile.posts` → `socialnet_profile_posts`. */
const toolName = (id: string): string => id.replace(/[.-]/g, '_');

const plain = (schema: TObject): Record<string, unknown> => JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;

function tools(endpoints: readonly EndpointDeclaration[]): Map<string, ToolOf> {
  const account = accountEndpoints.find((endpoint) => endpoint.id === 'account') as ApiEndpoint;
  const entries: [string, ApiEndpoint, TObject, string][] = [
    ...endpoints.map((endpoint): [string, ApiEndpoint, TObject, string] => [
      toolName(endpoint.id),
      endpoint,
      fullQuerySchema(endpoint),
      `${endpoint.summary}. ${endpoint.description} A live scrape costs 1 credit; a cached result (cache_max_age) costs none.`,
    ]),
    ['get_account', account, account.query, `${account.summary}. ${account.description}`],
  ];
  return new Map(
    entries.map(([name, endpoint, query, description]) => [
      name,
      {
        endpoint,
        tool: {
          name,
          title: `GET ${endpoint.path}`,
          description,
          inputSchema: { ...plain(query), type: 'object' } as Tool['inputSchema'],
          outputSchema: { ...plain(Type.Object({ data: endpoint.data, meta: Meta }, { additionalProperties: false })), type: 'object' } as Tool['outputSchema'],
        },
      },
    ]),
  );
}

export const mcpPlugin: FastifyPluginAsync<McpOptions> = async (app, { stores, endpoints, version, now }) => {
  const byName = tools(endpoints);

  app.post('/mcp', { bodyLimit: BODY_LIMIT, schema: { hide: true } }, async (request, reply) => {
    // The key is checked here (without counting a request, but counting a failure against the
    // address as the API does) so that no one lists tools without one; each call then goes
    // through the API's own authentication and limits.
    const key = await checkPresentedKey(request, stores, now());
    const server = new Server({ name: 'pagescrape', version }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...byName.values()].map((entry) => entry.tool) }));
    server.setRequestHandler(CallToolRequestSchema, async (call): Promise<CallToolResult> => {
      const found = byName.get(call.params.name);
      if (!found) return { isError: true, content: [{ type: 'text', text: `No tool ${call.params.name}.` }] };
      const query = new URLSearchParams();
      for (const [name, value] of Object.entries(call.params.arguments ?? {})) {
        if (value !== undefined && value !== null) query.set(name, String(value));
      }
      // Held to the size of an HTTP request: arguments are no way around it.
      const answer = await getInProcess(app, `${found.endpoint.path}${query.size > 0 ? `?${query.toString()}` : ''}`, { 'x-api-key': key });
      const body = JSON.parse(answer.body) as Record<string, unknown> & { error?: ErrorOf };
      if (answer.status === 200) return { content: [{ type: 'text', text: answer.body }], structuredContent: body };
      const error = body.error;
      const details = error?.details ?? [];
      return {
        isError: true,
        content: [
          {
            type: 'text',
            text: error
              ? [`${error.code} (HTTP ${answer.status}): ${error.message} Request id ${error.requestId}.`, ...details.map((detail) => `- ${detail.path}: ${detail.message}`)].join('\n')
              : `HTTP ${answer.status}`,
          },
        ],
        _meta: { status: answer.status, ...(error ? { code: error.code, requestId: error.requestId } : {}), ...(details.length > 0 ? { details } : {}) },
      };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    // The transport answers on the raw response: the headers set so far (request id, nosniff) go with it.
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  });

  // Stateless: no stream to open, no session to end.
  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp',
      schema: { hide: true },
      handler: (request, reply) =>
        sendError(reply.header('allow', 'POST'), new ApiError('METHOD_NOT_ALLOWED', `Method ${method} is not allowed here; MCP clients POST to /mcp (stateless Streamable HTTP).`), request.id),
    });
  }
};

