// The endpoints as tools for AI agents: a Model Context Protocol server at /mcp (Streamable
// HTTP, stateless), on the official SDK. One tool per scraping endpoint, generated from its
// declaration (input schema from its query schema, output schema from its data schema), plus
// `get_account`. Every POST is admitted as an API request is: the same authentication, and one
// request counted against the team's rate limit per message (batches: MCP 2025-03-26 and
// earlier only, at most MAX_BATCH messages). A tool call is the endpoint's own GET, run
// in-process under the POST's admission (counted once, with the POST): the same cache and
// credits, charged the same, and recorded. A scraping tool takes an optional `idempotencyKey`,
// sent as the request's `Idempotency-Key` header (src/work/idempotency.ts).
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyPluginAsync } from 'fastify';
import { Type, type TObject } from 'typebox';
import { accountEndpoints } from '../account/endpoints.ts';
import type { ApiEndpoint, EndpointDeclaration, ValidationDetail } from '../endpoints/types.ts';
import { ApiError, sendError } from '../server/errors.ts';
import { callInProcess, getInProcess } from '../server/in-process.ts';
import { monitorOperations, type MonitorOperation } from '../work/monitors/endpoints.ts';
import { jobEndpoints } from '../jobs/endpoints.ts';
import type { Door } from '../server/plugins/auth.ts';
import { Meta } from '../endpoints/schemas/envelope.ts';
import { fullQuerySchema } from '../server/query.ts';

/** A JSON-RPC message or batch: small. */
const BODY_LIMIT = 64 * 1024;
/** Messages in one JSON-RPC batch, at most (each counted against the rate limit). */
export const MAX_BATCH = 10;
/** The first MCP version without JSON-RPC batches. */
const UNBATCHED_SINCE = '2025-06-18';

export interface McpOptions {
  /** Admits each POST as an API request, and its tool calls under that admission. */
  door: Door;
  endpoints: readonly EndpointDeclaration[];
  version: string;
  /** The app's clock, for the count of failed keys per address. */
  now: () => number;
}

interface ToolOf {
  tool: Tool;
  endpoint: ApiEndpoint;
  /** A scraping tool: it takes `idempotencyKey`. */
  scrapes: boolean;
  /** A monitors' operation: its arguments are its path parameters, query and body together. */
  operation?: MonitorOperation;
  /** A batch job tool: its method, and the path parameter its arguments carry. */
  job?: { method: 'GET' | 'POST'; id: boolean };
}

/** The batch job endpoints offered as tools: submit a job, follow it, read its results. */
const JOB_TOOLS: Record<string, string> = { 'jobs.create': 'create_job', 'jobs.get': 'get_job', 'jobs.results': 'get_job_results' };

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

/** The argument of a scraping tool that is the request's `Idempotency-Key`, not a query parameter. */
export const IDEMPOTENCY_ARGUMENT = 'idempotencyKey';
const IdempotencyArgument = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^[\\x21-\\x7e]+$',
  description:
    'Optional. Makes the call safe to repeat: give a fresh value (a UUID) and send the very same call again with it if you are unsure whether it went through (a timeout, a lost connection); within 24 hours the same call with the same key answers the first success again, charged nothing more. The same key with other arguments is refused (IDEMPOTENCY_KEY_REUSED); while the first is still running, IDEMPOTENCY_IN_PROGRESS (retry after 1 s). 1 to 255 visible ASCII characters.',
});
/** A scraping tool's input: the endpoint's query and the optional `idempotencyKey`. */
const withIdempotencyKey = (query: TObject): TObject => Type.Object({ ...query.properties, [IDEMPOTENCY_ARGUMENT]: Type.Optional(IdempotencyArgument) }, { additionalProperties: false });

function tools(endpoints: readonly EndpointDeclaration[]): Map<string, ToolOf> {
  const account = accountEndpoints.find((endpoint) => endpoint.id === 'account') as ApiEndpoint;
  const entries: [string, ApiEndpoint, TObject, string, boolean][] = [
    ...endpoints.map((endpoint): [string, ApiEndpoint, TObject, string, boolean] => [
      toolName(endpoint.id),
      endpoint,
      withIdempotencyKey(fullQuerySchema(endpoint)),
      `${endpoint.summary}. ${endpoint.description} A live scrape costs 1 credit; a cached result (cache_max_age) costs none. To retry a call that may have gone through without paying twice, give it an idempotencyKey (a fresh UUID) and repeat the same call with the same key.`,
      true,
    ]),
    ['get_account', account, account.query, `${account.summary}. ${account.description}`, false],
  ];
  const monitorTools = monitorOperations.map((operation): [string, ToolOf] => {
    const properties = { ...operation.params.properties, ...operation.query.properties, ...(operation.body?.properties ?? {}) };
    const required = [...((operation.params as { required?: string[] }).required ?? []), ...((operation.body as { required?: string[] } | null)?.required ?? [])];
    // Query parameters are strings on the wire; a tool takes the page size as a number too.
    const input = Type.Object(properties, { additionalProperties: false });
    return [
      toolName(operation.id),
      {
        endpoint: { id: operation.id, path: operation.path, summary: operation.summary, description: operation.description, query: operation.query, data: operation.data as TObject, exampleQuery: {} },
        operation,
        scrapes: false,
        tool: {
          name: toolName(operation.id),
          title: `${operation.method} ${operation.path}`,
          description: `${operation.summary}. ${operation.description}`,
          inputSchema: { ...plain(input), required, type: 'object' } as Tool['inputSchema'],
          outputSchema: { ...plain(Type.Object({ data: operation.data, meta: Meta }, { additionalProperties: false })), type: 'object' } as Tool['outputSchema'],
        },
      },
    ];
  });
  const jobTools = jobEndpoints
    .filter((route) => route.id in JOB_TOOLS && route.data)
    .map((route): [string, ToolOf] => {
      const name = JOB_TOOLS[route.id] as string;
      const input = route.body ?? Type.Object({ ...route.params.properties, ...route.query.properties }, { additionalProperties: false });
      return [
        name,
        {
          endpoint: { id: route.id, path: route.path, summary: route.summary, description: route.description, query: route.query, data: route.data as TObject, exampleQuery: {} },
          job: { method: route.method, id: 'id' in route.params.properties },
          scrapes: false,
          tool: {
            name,
            title: `${route.method} ${route.path}`,
            description: `${route.summary}. ${route.description}${route.body ? ` Through MCP a job's requests must fit in a message of ${BODY_LIMIT / 1024} KiB; larger jobs go through the API.` : ''}`,
            inputSchema: { ...plain(input), type: 'object' } as Tool['inputSchema'],
            outputSchema: { ...plain(Type.Object({ data: route.data as TObject, meta: Meta }, { additionalProperties: false })), type: 'object' } as Tool['outputSchema'],
          },
        },
      ];
    });
  return new Map([
    ...entries.map(([name, endpoint, query, description, scrapes]): [string, ToolOf] => [
      name,
      {
        endpoint,
        scrapes,
        tool: {
          name,
          title: `GET ${endpoint.path}`,
          description,
          inputSchema: { ...plain(query), type: 'object' } as Tool['inputSchema'],
          outputSchema: { ...plain(Type.Object({ data: endpoint.data, meta: Meta }, { additionalProperties: false })), type: 'object' } as Tool['outputSchema'],
        },
      },
    ]),
    ...monitorTools,
    ...jobTools,
  ]);
}

/** A monitors' tool call as its request: the path with its parameters, the query, and the body of the rest. */
function operationRequest(operation: MonitorOperation, args: Record<string, unknown>): { url: string; body: Record<string, unknown> | undefined } {
  let path = operation.path;
  const query = new URLSearchParams();
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(args)) {
    if (value === undefined) continue;
    if (name in operation.params.properties) path = path.replace(`{${name}}`, encodeURIComponent(String(value)));
    else if (name in operation.query.properties) query.set(name, String(value));
    else body[name] = value;
  }
  return { url: `${path}${query.size > 0 ? `?${query.toString()}` : ''}`, body: operation.body ? body : undefined };
}

/** Why a JSON-RPC batch is refused, or null: none under a version without batches, none empty, none beyond MAX_BATCH. */
function batchProblem(size: number, protocolVersion: string | string[] | undefined): string | null {
  // Without the header the transport takes the client for MCP 2025-03-26, which has batches.
  if (typeof protocolVersion === 'string' && protocolVersion >= UNBATCHED_SINCE) return `Invalid Request: MCP ${protocolVersion} has no JSON-RPC batches; send one message per POST.`;
  if (size === 0) return 'Invalid Request: an empty batch.';
  if (size > MAX_BATCH) return `Invalid Request: a batch holds at most ${MAX_BATCH} messages.`;
  return null;
}

/**
 * The SDK (and Zod under it), imported at the first POST rather than at start: about 20 MB
 * resident that a service no agent talks to never holds.
 */
const importSdk = () => Promise.all([import('@modelcontextprotocol/sdk/server/index.js'), import('@modelcontextprotocol/sdk/server/streamableHttp.js'), import('@modelcontextprotocol/sdk/types.js')]);
let sdk: ReturnType<typeof importSdk> | null = null;
const loadSdk = () => (sdk ??= importSdk());

export const mcpPlugin: FastifyPluginAsync<McpOptions> = async (app, { door, endpoints, version, now }) => {
  // The tools, built at the first POST too.
  let byNameOnce: Map<string, ToolOf> | null = null;

  app.post('/mcp', { bodyLimit: BODY_LIMIT, schema: { hide: true } }, async (request, reply) => {
    // Admitted as an API request, before anything else: each message counts, a refused batch once.
    const batch = Array.isArray(request.body) ? request.body : null;
    const problem = batch && batchProblem(batch.length, request.headers['mcp-protocol-version']);
    const admission = await door.admit(request, now(), batch && !problem ? batch.length : 1);
    door.enforce(request, reply, admission);
    if (problem) return reply.code(400).send({ jsonrpc: '2.0', error: { code: -32600, message: problem }, id: null });
    const [{ Server }, { StreamableHTTPServerTransport }, { CallToolRequestSchema, ListToolsRequestSchema }] = await loadSdk();
    const byName = (byNameOnce ??= tools(endpoints));
    const server = new Server({ name: 'pagescrape', version }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...byName.values()].map((entry) => entry.tool) }));
    server.setRequestHandler(CallToolRequestSchema, async (call): Promise<CallToolResult> => {
      const found = byName.get(call.params.name);
      if (!found) return { isError: true, content: [{ type: 'text', text: `No tool ${call.params.name}.` }] };
      let answer: { status: number; body: string };
      if (found.operation) {
        const { operation } = found;
        const { url, body } = operationRequest(operation, call.params.arguments ?? {});
        answer = await door.handing(admission, (headers) => callInProcess(app, operation.method, url, headers, body));
      } else if (found.job) {
        const { job } = found;
        const args = { ...(call.params.arguments ?? {}) } as Record<string, unknown>;
        let path = found.endpoint.path;
        if (job.id) {
          path = path.replace('{id}', encodeURIComponent(String(args.id ?? '')));
          delete args.id;
        }
        const query = new URLSearchParams();
        if (job.method !== 'POST') {
          for (const [name, value] of Object.entries(args)) {
            if (value !== undefined && value !== null) query.set(name, String(value));
          }
        }
        const url = `${path}${query.size > 0 ? `?${query.toString()}` : ''}`;
        answer = await door.handing(admission, (headers) => callInProcess(app, job.method, url, headers, job.method === 'POST' ? args : undefined));
      } else {
        const query = new URLSearchParams();
        const extra: Record<string, string> = {};
        for (const [name, value] of Object.entries(call.params.arguments ?? {})) {
          if (value === undefined || value === null) continue;
          // Checked by the route as the header is, with the same 422.
          if (found.scrapes && name === IDEMPOTENCY_ARGUMENT) extra['idempotency-key'] = String(value);
          else query.set(name, String(value));
        }
        // Held to the size of an HTTP request: arguments are no way around it.
        const url = `${found.endpoint.path}${query.size > 0 ? `?${query.toString()}` : ''}`;
        answer = await door.handing(admission, (headers) => getInProcess(app, url, { ...headers, ...extra }));
      }
      const body = JSON.parse(answer.body) as Record<string, unknown> & { error?: ErrorOf };
      if (answer.status >= 200 && answer.status < 300) return { content: [{ type: 'text', text: answer.body }], structuredContent: body };
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
    // The transport answers on the raw response: the headers set so far (request id, nosniff, x-ratelimit-*) go with it.
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

