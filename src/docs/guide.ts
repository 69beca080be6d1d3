// The guide at the top of the reference page (the OpenAPI document's `info.description`, in
// Markdown): how to get a key and make a first call, credits and the cache, paging, rate limits,
// errors and what to do about each, retrying safely (Idempotency-Key), spending guards, test
// mode, the SDK, the command line and MCP. The tables
// come from the declarations and the error list, so the guide cannot drift from the API.
import type { ApiEndpoint } from '../endpoints/types.ts';
import { ADVICE_OF, STATUS_OF, type ErrorCode } from '../server/errors.ts';
import { curlCommand } from './samples.ts';

const code = (value: string | null): string => (value === null ? '`null`' : `\`${JSON.stringify(value)}\``);

function pagingTable(endpoints: readonly ApiEndpoint[]): string {
  const rows = endpoints
    .filter((endpoint) => endpoint.paging)
    .map((endpoint) => {
      const paging = endpoint.paging!;
      return `| \`${endpoint.path}\` | \`data.${paging.items}\` | \`${paging.param}\` | \`data.paging.${paging.field}\` | \`data.paging.${paging.flag}\` | ${code(paging.end)} |`;
    });
  return ['| endpoint | items | pass back as | from | more to come | at the end |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

function errorTable(): string {
  const rows = (Object.keys(STATUS_OF) as ErrorCode[]).map((error) => `| ${STATUS_OF[error]} | \`${error}\` | ${ADVICE_OF[error]} |`);
  return ['| status | code | what to do |', '|---|---|---|', ...rows].join('\n');
}

/** The guide, for a service at `baseUrl`, over `endpoints` (scraping and account). */
export function guide(endpoints: readonly ApiEndpoint[], baseUrl: string): string {
  const base = baseUrl.replace(/\/+$/, '');
  const first = endpoints.find((endpoint) => endpoint.id === 'snapmsg.profile') ?? endpoints[0];
  return `Read-only API that scrapes public, logged-out pages of five platforms on demand and returns clean, typed JSON. Every answer is one envelope: \`data\` (the endpoint's own) and \`meta\` (request id, credits, cache).

## Get a key

Keys belong to a team, which holds the credits. The account holder signs in to the dashboard (\`${base}/dashboard\`), opens **Keys** and creates one; it is shown once, and only its hash is kept. An operator can also make one with the command line: \`npm run -s admin -- key create --team TEAM_ID\`. A **test key** (\`psk_test_…\`, \`key create --test\`) calls a built-in sandbox for free; see *Test mode* below.

## First call

Send the key in \`x-api-key\` (or as \`Authorization: Bearer <key>\`):

\`\`\`sh
${first ? curlCommand(first, base) : ''}
\`\`\`

\`\`\`json
{
  "data": {
    "profile": { "username": "lunavoss", "…": "…" },
    "fetchedAt": "2026-11-20T09:30:00.000Z"
  },
  "meta": {
    "requestId": "req_…",
    "creditsCharged": 1,
    "creditsRemaining": 999,
    "cached": false
  }
}
\`\`\`

Every endpoint below shows its parameters, an example answer taken from the service, and the same call in curl, TypeScript (the SDK) and Python.

## Credits and the cache

- A live scrape that answers \`200\` costs **1 credit**. Errors cost nothing, and neither do the account and status endpoints.
- \`cache_max_age=1d|3d|7d|14d|30d\` returns a cached result of at most that age for **0 credits** (\`meta.cached: true\`, \`meta.cachedAt\`), and scrapes live otherwise. Without it, every call scrapes live and refreshes the cache.
- The cache is shared by all teams (the data is public): a result another team's request scraped is yours too. So a hit tells that somebody scraped that target with those parameters within the age you asked for, and \`meta.cachedAt\` is when some team's request scraped it, to the millisecond (it equals \`data.fetchedAt\`, as a live answer's does). It never tells which team, nor anything else of its requests.
- \`stale_if_error=1d|…|30d\`: when the live scrape fails with a \`502\` or a \`503\`, a cached result of at most that age is returned instead, for 0 credits, with \`meta.stale: true\`.
- \`GET /v1/account\` tells the balance; \`/v1/account/usage\` the requests and credits per day; \`/v1/account/requests\` every request.

## Paging

Listings come a page at a time. Pass the token of a page back, with the same parameters, to get the next one; each endpoint keeps the names its source uses:

${pagingTable(endpoints)}

Tokens last 24 hours and are bound to their endpoint and target (\`400 BAD_REQUEST\` otherwise). Every page is a request and, live, costs a credit. The SDK's \`client.paginate(path, query)\` and the command line's \`--all\` follow any listing to its end.

## Rate limits

Each team has a number of requests per rolling 60 seconds (100 by default). Every answer carries:

| header | meaning |
|---|---|
| \`X-RateLimit-Limit\` | requests allowed per 60 seconds |
| \`X-RateLimit-Remaining\` | requests left in the window |
| \`X-RateLimit-Reset\` | seconds until the window admits one more request (0 while requests remain) |
| \`Retry-After\` | on a \`429\` (and on some \`502\` and \`503\`): seconds to wait before retrying |
| \`X-Request-Id\` | the request's id, also \`meta.requestId\` |

## Errors

Every error is \`{ "error": { "code", "message", "requestId", "details"? } }\`; \`details\` lists each invalid parameter (\`path\`, \`message\`). Only a \`200\` is charged.

A parameter the endpoint does not declare is refused, never ignored: a typo such as \`cache-max-age=1d\` would otherwise be a live scrape where a free cache hit was meant. Its detail names it and the closest declared name, and every problem of the query comes back in the same \`422\`:

\`\`\`json
{ "error": { "code": "VALIDATION_ERROR", "message": "The query parameters are invalid; see details.", "requestId": "req_…",
  "details": [ { "path": "cache-max-age", "message": "Unknown parameter; did you mean cache_max_age?" } ] } }
\`\`\`

${errorTable()}

## Retrying safely

A request whose connection breaks before its answer arrives may or may not have been run, and charged. Send an \`Idempotency-Key\` header with any scraping request (1 to 255 visible ASCII characters; a fresh UUID per request) and send the very same request again with the same key until it gets an answer: it runs, and is charged, at most once.

\`\`\`sh
KEY=$(uuidgen)
curl -sS -H "x-api-key: $PAGESCRAPE_API_KEY" -H "Idempotency-Key: $KEY" '${base}/v1/snapmsg/profile?username=lunavoss'
# the connection dropped? the same again, with the same key:
curl -sS -i -H "x-api-key: $PAGESCRAPE_API_KEY" -H "Idempotency-Key: $KEY" '${base}/v1/snapmsg/profile?username=lunavoss'
\`\`\`

- The first \`2xx\` answer for a key is kept for 24 hours (per team and key mode). The same request with the same key gets it again, byte for byte (its \`meta.requestId\` is the first request's), with the header \`Idempotent-Replayed: true\`; nothing is charged, and it still counts against the rate limit.
- An answer other than \`2xx\` is not kept: the same key may be sent again and runs afresh. So a \`502\` or a \`503\` is retried with the same key until its \`200\`, charged once.
- \`409 IDEMPOTENCY_IN_PROGRESS\` (\`Retry-After: 1\`): the first request with this key is still being answered. Wait and send it again with the same key.
- \`422 IDEMPOTENCY_KEY_REUSED\`: the key was used within 24 hours for another request (another path or other parameters). Use a fresh key for each distinct request. An invalid key is a \`422 VALIDATION_ERROR\`.
- "The same request" is the method, the path and the parameters as the cache normalises them (\`cache_max_age\`, \`stale_if_error\` and the cursor included).

The SDK does this by itself: every scraping call sends a fresh key and reuses it on its own retries, so it retries every failure worth it, a connection cut after the request was sent and a timeout included, as well as \`408\`, \`409 IDEMPOTENCY_IN_PROGRESS\`, \`429\`, \`502\` and \`503\`. Give your own key to make a request safe to repeat across calls or processes:

\`\`\`ts
import { PageScrape } from '@pagescrape/sdk';
const client = new PageScrape(); // PAGESCRAPE_API_KEY, PAGESCRAPE_BASE_URL
const { data } = await client.snapmsgProfile({ username: 'lunavoss' }, { idempotencyKey: 'order-4711-profile' });
\`\`\`

The command line takes \`--idempotency-key\`; the MCP tools an \`idempotencyKey\` argument.

## Spending guards

- **Per-key daily credit limit** (\`dailyCreditLimit\`): a key given to one script or one customer's integration can be held to so many credits per UTC day. Past it, its live scrapes get \`402 KEY_CREDIT_LIMIT\` (the message says when it resets, at midnight UTC) while cached results (\`cache_max_age\`) are still served; the team's other keys are untouched. Exact under concurrent requests, across nodes. An owner sets it on the dashboard's **Keys** page (which shows each key's spend today), with \`PATCH /v1/account/keys/{id}\` \`{ "dailyCreditLimit": 500 }\` (\`null\` removes it), or the operator with \`npm run -s admin -- key create … --daily-credits N\` and \`key update KEY_ID --daily-credits N|none\`. A key may lower its own limit, never raise or remove it. \`GET /v1/account\` shows the calling key's limit and what it spent today (\`key.dailyCreditLimit\`, \`key.spentToday\`).
- **Low-balance alert** (\`lowBalanceAlert\`): set it on the dashboard's Overview or with \`PATCH /v1/account\` \`{ "lowBalanceAlert": 100 }\` (\`null\`: none). While the balance is below it (or at 0), every dashboard page shows a banner. The charge that takes the balance below it records a \`credits.low\` event once, the one that takes it to 0 a \`credits.exhausted\` event once, and a top-up to the alert or above re-arms both; these events are delivered to the team's webhooks.
- Both \`PATCH\` requests are free, take a JSON body (\`content-type: application/json\`) validated whole, and are made with a live key that the operator or an owner created (a test key or a member's key gets \`403\`).

## Webhooks

Register a URL and the team's events are POSTed to it: \`credits.low\` and \`credits.exhausted\` (the team's low-balance alert and the zero crossing), \`job.completed\`, \`monitor.changed\`, \`monitor.failed\`, and \`webhook.test\` on request. Free; an owner's key manages them (or the dashboard's **Webhooks** page).

\`\`\`sh
curl -s -X POST ${base}/v1/webhooks -H "x-api-key: $PAGESCRAPE_API_KEY" -H 'content-type: application/json' \\
  -d '{"url": "https://example.com/hooks/pagescrape", "events": ["credits.low", "credits.exhausted"]}'
\`\`\`

The answer carries the signing secret (\`whsec_…\`) this once. Each delivery is a \`POST\` of \`{ "type", "timestamp", "data" }\` signed as the [Standard Webhooks](https://www.standardwebhooks.com/) specification says: \`webhook-id\` (the same on every retry of one delivery: deduplicate on it), \`webhook-timestamp\`, \`webhook-signature\`. Verify it on the raw body before you trust it; the libraries also refuse a timestamp more than 5 minutes away, so a captured delivery cannot be replayed later. TypeScript (\`npm install standardwebhooks\`; or \`verifyWebhook(body, headers, secret)\` from the SDK, which needs nothing else):

\`\`\`ts
import { Webhook } from 'standardwebhooks';

const wh = new Webhook(process.env.WEBHOOK_SECRET!); // whsec_…
// rawBody: the request body exactly as received (a string or Buffer), not re-serialised JSON
const event = wh.verify(rawBody, {
  'webhook-id': req.headers['webhook-id'],
  'webhook-timestamp': req.headers['webhook-timestamp'],
  'webhook-signature': req.headers['webhook-signature'],
}) as { type: string; timestamp: string; data: Record<string, unknown> }; // throws when forged or stale
\`\`\`

Python (\`pip install standardwebhooks\`):

\`\`\`python
import os
from standardwebhooks.webhooks import Webhook

wh = Webhook(os.environ["WEBHOOK_SECRET"])  # whsec_…
event = wh.verify(raw_body, dict(request.headers))  # raises WebhookVerificationError when forged or stale
\`\`\`

Answer with a \`2xx\` within 10 seconds (do the work afterwards). Anything else, a redirect included, is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, then the delivery is marked failed; an endpoint failing every delivery for 5 days is disabled until a test or redelivery succeeds. \`GET /v1/webhooks/{id}/deliveries\` shows each attempt (status, time, the first 1 KB of your answer) and \`POST /v1/webhooks/deliveries/{id}/redeliver\` sends one again. \`POST /v1/webhooks/{id}/rotate-secret\` replaces the secret; for 24 hours both sign (two signatures in the header), and the libraries accept either. URLs must be \`https://\` on a public address: private, loopback and link-local addresses are refused, at registration and at every delivery.

## Batch jobs

Many targets at once: \`POST /v1/jobs\` with up to 10,000 \`requests\` (\`{ "endpoint": "/v1/snapmsg/profile", "params": { "username": "lunavoss" } }\`), optionally \`max_pages\` (1–100: a listing's item follows its cursor to the end or that many pages), \`cache_max_age\` and \`label\`. The whole body is checked first, each item's \`params\` by its endpoint's own rules; every problem comes back at once with its path (\`requests[12].params.username\`). The answer is \`202\` with the job and \`Location: /v1/jobs/{id}\`.

- Each item is scraped as a request would be, and charged the same (1 credit per live page kept, 0 per cached page), exactly once, when its result is stored. Items do not count against the rate limit; a few of a team's run at once, and teams take turns.
- A transient failure (\`502\`, \`503\`) is retried up to 3 attempts with back-off; \`402\` and other errors end the item, and the job goes on.
- Follow it with \`GET /v1/jobs/{id}\` (counts, pages, credits) or the \`job.completed\` event of a webhook; read the results with \`GET /v1/jobs/{id}/results?status=&cursor=\` or all at once, one item per line, with \`GET /v1/jobs/{id}/results.ndjson\` (gzip when asked). \`POST /v1/jobs/{id}/cancel\` stops the items not started (never charged); \`POST /v1/jobs/{id}/retry\` runs the failed ones again once the job has ended.
- SDK: \`await client.jobs.wait((await client.jobs.create(requests, { maxPages: 100 })).id, { onProgress })\`, then \`for await (const item of client.jobs.results(id))\`. Command line: \`npx ./sdk job create --file targets.ndjson --wait --out results.ndjson\`. MCP: \`create_job\`, \`get_job\`, \`get_job_results\`.

## Test mode

A test key (\`psk_test_…\`) works everywhere a key does (the API, the SDK, the command line, MCP). Its requests go to a sandbox the service runs itself, cost nothing, never touch the cache, count in a rate window of their own and carry \`meta.test: true\`. The sandbox serves made-up accounts such as \`lunavoss\`; the examples on this page come from it. A service whose test mode is off answers test keys \`403 FORBIDDEN\`.

## Monitors

A monitor scrapes a page on a schedule and tells you what changed, as an RFC 6902 JSON Patch of the typed data:

\`\`\`sh
curl -X POST ${base}/v1/monitors -H "x-api-key: $PAGESCRAPE_API_KEY" -H 'content-type: application/json' \\
  -d '{"endpoint":"/v1/snapmsg/profile","params":{"username":"lunavoss"},"interval":"1h","watch":["/profile/subscriberCount"]}'
\`\`\`

- \`interval\` (\`30s\`, \`15m\`, \`6h\`, \`1d\`; 15 minutes at least) or \`cron\` in \`timezone\`. The first run is at once; runs never overlap, and slots missed while the service was down collapse into one run.
- Each run is a live scrape, 1 credit when it succeeds; failed runs are refunded; without credits a run is \`skipped\` and free.
- A run is compared with the last successful one, without \`fetchedAt\` and cursors; with \`watch\`, only changes at or under those JSON Pointers count. A change records \`monitor.changed\` \`{ monitor, run, patch, previousAt }\` (sent to your webhooks); the third failure in a row \`monitor.failed\`, once. Lists of posts or comments are compared by their items' ids: a new post is one \`add\`.
- \`GET /v1/monitors/{id}/runs\` lists the runs with their patches; \`PATCH\` pauses (\`{"status":"paused"}\`) and resumes; \`POST /v1/monitors/{id}/run\` runs it now. The SDK's \`client.monitors\`, \`pagescrape monitor create … --every 1h --watch /profile/subscriberCount\`, the MCP tools \`monitors_*\` and the dashboard's Monitors page do the same.

## SDK, command line and MCP

- **TypeScript SDK** (\`@pagescrape/sdk\`, in the repository's \`sdk/\`): a typed method per endpoint (and \`accountUpdate\`, \`accountKeysUpdate\` for the settings above), \`paginate()\`, an \`Idempotency-Key\` on every scraping call so that it retries safely (a broken connection, a timeout, \`408\`/\`409\`/\`429\`/\`502\`/\`503\`, after \`Retry-After\`), an error class per code. It reads \`PAGESCRAPE_BASE_URL\` and \`PAGESCRAPE_API_KEY\`.
- **Command line**: \`npx ./sdk get /v1/shopfront/shop --url https://www.shopfront.example/shop/lunacooks --all --max-credits 50\` prints a whole listing as NDJSON; standard error tells its progress, each wait before a retry and, at the end, the pages, items and credits it took. \`--max-credits\` stops before a page that could pass the bound.
- **MCP** for AI agents at \`${base}/mcp\` (Streamable HTTP, the same key in \`x-api-key\`): one tool per endpoint, and \`get_account\`; a scraping tool takes an optional \`idempotencyKey\` (sent as the \`Idempotency-Key\` header) so that an agent may repeat a call without paying twice. Every POST counts against the rate limit as a request does (a tool call once, with its API request); JSON-RPC batches only under MCP 2025-03-26, at most 10 messages, each counted.

The OpenAPI document behind this page is at [\`/openapi.json\`](${base}/openapi.json).`;
}
