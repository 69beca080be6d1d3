// Extraction speed of the largest pages the sandbox generates, per platform and endpoint,
// against JSON.parse of the JSON those pages embed (every <script> body that is JSON, or the
// JSON/NDJSON body of an API answer) — the least any extractor must do. The upstream answers
// are recorded once from the sandbox and replayed, so only extraction is timed.
// Usage: npm run bench:extract [-- --ms 1500]
import { parseArgs } from 'node:util';
import { endpoints } from '../src/endpoints/index.ts';
import type { ExtractContext, UpstreamPosition } from '../src/endpoints/types.ts';
import type { Upstream, UpstreamRequest, UpstreamResponse } from '../src/upstream/types.ts';
import type { SandboxPlatform } from '../sandbox/common.ts';
import { platforms } from '../sandbox/platforms/index.ts';
import { SOCIALNET_CATALOGUE } from '../sandbox/platforms/socialnet/catalogue.ts';

const { values } = parseArgs({ options: { ms: { type: 'string', default: '1500' } } });
const budgetMs = Number(values.ms);

const BROWSER = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/142.0 Safari/537.36', 'accept-language': 'en-US,en;q=0.9' };
const PAGE = { ...BROWSER, accept: 'text/html,application/xhtml+xml', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', 'sec-fetch-site': 'none' };
const API = { ...BROWSER, accept: 'application/json', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty', 'sec-fetch-site': 'same-origin' };

const repliesQuery = Object.fromEntries(new URLSearchParams(SOCIALNET_CATALOGUE.find((entry) => entry.description.startsWith('Comment with 260 replies'))?.query ?? ''));

const CASES: { id: string; query: Record<string, string>; page2?: boolean }[] = [
  { id: 'socialnet.profile.posts', query: { url: 'https://www.socialnet.example/metrodailynews' } },
  { id: 'socialnet.profile.posts', query: { url: 'https://www.socialnet.example/metrodailynews' }, page2: true },
  { id: 'socialnet.profile.reels', query: { url: 'https://www.socialnet.example/metrodailynews' } },
  { id: 'socialnet.profile.reels', query: { url: 'https://www.socialnet.example/metrodailynews' }, page2: true },
  { id: 'socialnet.post.comment.replies', query: repliesQuery },
  { id: 'socialnet.profile', query: { url: 'https://www.socialnet.example/metrodailynews' } },
  { id: 'snapmsg.profile', query: { username: 'bigcreator' } },
  { id: 'snapmsg.spotlight.comments', query: { url: 'https://www.snapmsg.example/spotlight/bigThread_hundreds_0001' } },
  { id: 'linkpage-a.profile', query: { url: 'https://linkpage-a.example/big-catalogue' } },
  { id: 'linkpage-b.page', query: { url: 'https://linkpage-b.example/big.catalogue' } },
  { id: 'shopfront.shop', query: { url: 'https://www.shopfront.example/shop/bighaul' } },
];

// socialnet numbers its requests (__req); the number does not change the answer.
const keyOf = (request: UpstreamRequest) => `${request.method ?? 'GET'} ${request.path} ${(request.body ?? '').replace(/__req=\w+/, '')}`;

/** An upstream that asks the sandbox platform's handler directly and records every answer. */
function recording(platform: SandboxPlatform, record: Map<string, UpstreamResponse>): Upstream {
  let attempt = 0;
  return async (request) => {
    const url = new URL(request.path, 'http://sandbox.invalid');
    const answer = await platform.handle(
      { method: request.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: { ...(request.kind === 'page' ? PAGE : API), ...request.headers }, body: request.body ?? '' },
      { seed: 'bench', attempt: (attempt += 1), slowMs: 0 },
    );
    if ('reset' in answer) throw new Error('sandbox reset the connection');
    const response: UpstreamResponse = { status: answer.status, headers: answer.headers ?? {}, body: String(answer.body), path: request.path };
    record.set(keyOf(request), response);
    return response;
  };
}

const replaying = (record: Map<string, UpstreamResponse>): Upstream => async (request) => {
  const response = record.get(keyOf(request));
  if (!response) throw new Error(`not recorded: ${keyOf(request)}`);
  return response;
};

/** Every JSON document the answers carry: JSON <script> bodies, JSON and NDJSON API bodies. */
function embeddedJson(bodies: string[]): string[] {
  const out: string[] = [];
  const isJson = (text: string) => {
    try {
      JSON.parse(text);
      return true;
    } catch {
      return false;
    }
  };
  for (const body of bodies) {
    const trimmed = body.replace(/^for \(;;\);/, '').trim();
    if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
      if (isJson(trimmed)) out.push(trimmed);
      else for (const line of trimmed.split('\n')) if (isJson(line)) out.push(line);
      continue;
    }
    for (const match of body.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script\s*>/gi)) {
      const text = (match[1] ?? '').trim();
      if (text && isJson(text)) out.push(text);
    }
  }
  return out;
}

function opsPerSecond(run: () => unknown): number {
  for (let i = 0; i < 20; i += 1) run();
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < budgetMs) {
    run();
    n += 1;
  }
  return n / ((performance.now() - start) / 1000);
}

async function asyncOpsPerSecond(run: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 20; i += 1) await run();
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < budgetMs) {
    await run();
    n += 1;
  }
  return n / ((performance.now() - start) / 1000);
}

const log = { debug() {}, info() {}, warn() {}, error() {} } as unknown as ExtractContext['log'];
console.log('endpoint (page)                          bytes      extract/s   JSON.parse/s   ratio');
for (const item of CASES) {
  const endpoint = endpoints.find((candidate) => candidate.id === item.id);
  const platform = platforms.find((candidate) => candidate.name === endpoint?.platform);
  if (!endpoint?.extractor || !platform) throw new Error(`no extractor or sandbox for ${item.id}`);
  const normalised = endpoint.normalise(item.query);
  if (!normalised.ok) throw new Error(`${item.id}: ${JSON.stringify(normalised.details)}`);
  const params = normalised.params;
  const extractor = endpoint.extractor;
  const context = (upstream: Upstream): ExtractContext => ({ signal: new AbortController().signal, deadline: Date.now() + 600_000, log, upstream });

  let position: UpstreamPosition | null = null;
  if (item.page2) {
    const first = await extractor({ params, position: null }, context(recording(platform, new Map())));
    position = first.next ?? null;
  }
  // Warm the platform's session (socialnet) before recording what one extraction needs.
  await extractor({ params, position }, context(recording(platform, new Map())));
  const record = new Map<string, UpstreamResponse>();
  await extractor({ params, position }, context(recording(platform, record)));
  const upstream = replaying(record);
  const bodies = [...record.values()].map((response) => response.body);
  const bytes = bodies.reduce((sum, body) => sum + Buffer.byteLength(body), 0);
  const payloads = embeddedJson(bodies);
  const extract = await asyncOpsPerSecond(() => extractor({ params, position }, context(upstream)));
  const parse = opsPerSecond(() => {
    for (const payload of payloads) JSON.parse(payload);
  });
  const label = `${item.id}${item.page2 ? ' (page 2)' : ''}`;
  console.log(`${label.padEnd(40)} ${String(bytes).padStart(8)} ${extract.toFixed(0).padStart(12)} ${parse.toFixed(0).padStart(14)} ${(extract / parse).toFixed(2).padStart(7)}x`);
}
console.log('ratio = extraction rate / JSON.parse rate of the same answers (target >= 0.5x)');
