// The steps of a linkpage-a live scrape, each timed alone on the pages `npm run bench:live`
// asks for (the sandbox's `/bench{n}` profiles): where a scrape's CPU goes, step by step, beside
// the whole that bench:live measures. CPU time per step (this process, all threads), in µs.
//   decoding:   the compressed answer (brotli at the sandbox's quality, and gzip), then its
//               bytes as text (`utf8Text`, beside Buffer's toString);
//   extraction: the walk over the page's tags, the payload's JSON.parse, its decoding (devalue),
//               the mapping, then the result's schema check, serialisation and encoding;
//   the store:  a reservation, its settlement and the result's row, through the SQLite store on a
//               file, 10 of each queued in one turn (one group commit), as under load; its
//               background thread's checkpoints included.
// Usage: npm run bench:live-steps [-- --ms 1000]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { brotliCompressSync, brotliDecompressSync, constants, gunzipSync, gzipSync } from 'node:zlib';
import { endpoints } from '../src/endpoints/index.ts';
import { scanPage } from '../src/platforms/linkpage-a/page.ts';
import { NuxtPayload, profileOf } from '../src/platforms/linkpage-a/payload.ts';
import { mapProfile, profileNode } from '../src/platforms/linkpage-a/mapping.ts';
import { profilePageSameAs } from '../src/platforms/shared/json-ld.ts';
import { compileEndpoints } from '../src/server/scrape-run.ts';
import { openSqliteStores } from '../src/store/sqlite/index.ts';
import { utf8Text } from '../src/upstream/body.ts';
import { platforms } from '../sandbox/platforms/index.ts';

const { values } = parseArgs({ options: { ms: { type: 'string', default: '1000' } } });
const budgetMs = Number(values.ms);
const PAGES = 200;
const GROUP = 10;

const platform = platforms.find((candidate) => candidate.name === 'linkpage-a');
const runtime = compileEndpoints(endpoints).get('linkpage-a.profile');
if (!platform || !runtime) throw new Error('no linkpage-a sandbox or endpoint');
const headers = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/142.0 Safari/537.36', 'accept-language': 'en-US,en;q=0.9', accept: 'text/html' };

interface Page {
  username: string;
  bytes: Buffer;
  html: string;
  brotli: Buffer;
  gzip: Buffer;
}
const pages: Page[] = [];
for (let n = 0; n < PAGES; n += 1) {
  const answer = await platform.handle({ method: 'GET', path: `/bench${n}`, query: new URLSearchParams(), headers, body: '' }, { seed: 'bench', attempt: 1, slowMs: 0 });
  if ('reset' in answer) throw new Error('the sandbox reset the connection');
  const bytes = Buffer.from(String(answer.body));
  // The sandbox's own levels (sandbox/server.ts).
  pages.push({ username: `bench${n}`, bytes, html: utf8Text(bytes), brotli: brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } }), gzip: gzipSync(bytes, { level: 4 }) });
}

/** CPU µs per call of `run`, over the pages in turn. */
function cpuPerCall(run: (page: Page) => unknown): number {
  for (let i = 0; i < 2 * PAGES; i += 1) run(pages[i % PAGES] as Page);
  let calls = 0;
  const start = performance.now();
  const before = process.cpuUsage();
  while (performance.now() - start < budgetMs) {
    for (let i = 0; i < PAGES; i += 1) run(pages[i] as Page);
    calls += PAGES;
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}

const print = (label: string, micros: number) => console.log(`   ${label.padEnd(52)} ${micros.toFixed(1).padStart(7)} µs`);
const average = (pick: (page: Page) => number) => Math.round(pages.reduce((sum, page) => sum + pick(page), 0) / PAGES);
console.log(`linkpage-a pages /bench0../bench${PAGES - 1}: ${average((p) => p.bytes.length)} bytes, ${average((p) => p.brotli.length)} of brotli, ${average((p) => p.gzip.length)} of gzip`);

console.log('decoding');
print('brotli', cpuPerCall((p) => brotliDecompressSync(p.brotli)));
print('gzip', cpuPerCall((p) => gunzipSync(p.gzip)));
print('bytes to text (utf8Text)', cpuPerCall((p) => utf8Text(p.bytes)));
print("bytes to text (Buffer's toString)", cpuPerCall((p) => p.bytes.toString('utf8')));

console.log('extraction');
const scanned = new Map(pages.map((p) => [p.username, scanPage(p.html)]));
const payloadOf = (p: Page): string => scanned.get(p.username)?.payload ?? '';
const decoded = new Map(pages.map((p) => [p.username, profileOf(payloadOf(p), p.username)]));
const mapped = (p: Page) => {
  const found = decoded.get(p.username);
  const scan = scanned.get(p.username);
  if (found?.kind !== 'profile' || !scan) throw new Error(`no profile on ${p.username}`);
  return { profile: mapProfile(profileNode(found.profile), profilePageSameAs(scan.jsonLd), scan.head) };
};
const data = new Map(pages.map((p) => [p.username, { ...mapped(p), fetchedAt: new Date(0).toISOString() }]));
const json = new Map([...data].map(([username, value]) => [username, JSON.stringify(value)]));
const parse = cpuPerCall((p) => new NuxtPayload(payloadOf(p)));
print('the walk over the tags (scanPage)', cpuPerCall((p) => scanPage(p.html)));
print("the payload's JSON.parse", parse);
print("the payload's decoding (profileOf less JSON.parse)", cpuPerCall((p) => profileOf(payloadOf(p), p.username)) - parse);
print('the mapping (with JSON-LD and metadata)', cpuPerCall(mapped));
print("the result's schema check", cpuPerCall((p) => runtime.checkData(data.get(p.username))));
print("the result's JSON.stringify", cpuPerCall((p) => JSON.stringify(data.get(p.username))));
print("the result's encoding (Buffer.from)", cpuPerCall((p) => Buffer.from(json.get(p.username) ?? '')));

console.log(`the store (SQLite file, ${GROUP} of each in one group commit; all threads)`);
const dir = mkdtempSync(join(tmpdir(), 'bench-live-steps-'));
const stores = openSqliteStores({ path: join(dir, 'steps.sqlite') });
try {
  const team = await stores.accounts.createTeam({ name: 'bench', credits: 1_000_000_000, rateLimit: 100 });
  const key = await stores.accounts.createKey({ teamId: team.id, name: 'bench', hash: 'h'.repeat(64), prefix: 'ps_', last4: '0000' });
  const day = new Date().toISOString().slice(0, 10);
  let n = 0;
  const reserve = async () => {
    const reservation = await stores.ledger.reserve(team.id, 1, `req_${(n += 1)}`, Date.now() + 60_000, { id: key.id, day });
    if (!reservation.ok) throw new Error('out of credits');
    return reservation.reservationId;
  };
  /** CPU µs per operation, `GROUP` of them started in one turn, then the next group. */
  const storeCpu = async (operation: () => Promise<unknown>) => {
    for (let i = 0; i < 50; i += 1) await Promise.all(Array.from({ length: GROUP }, operation));
    let operations = 0;
    const start = performance.now();
    const before = process.cpuUsage();
    while (performance.now() - start < budgetMs) {
      await Promise.all(Array.from({ length: GROUP }, operation));
      operations += GROUP;
    }
    const used = process.cpuUsage(before);
    return (used.user + used.system) / operations;
  };
  const reserved = await storeCpu(reserve);
  print('a reservation (ledger.reserve)', reserved);
  const settled = await storeCpu(async () => stores.ledger.commit(await reserve()));
  print('its settlement (ledger.commit, less the reservation)', settled - reserved);
  const value = json.get('bench1') ?? '';
  print("the result's row (cache.set)", await storeCpu(() => stores.cache.set(`key${(n += 1)}`, `target${n}`, { value, storedAt: Date.now() })));
} finally {
  await stores.close();
  rmSync(dir, { recursive: true, force: true });
}
