// `npm run -s docs:examples`: writes src/docs/examples.json, the example answer of every endpoint
// in the reference page, taken from the service answering each endpoint's `exampleQuery` against
// the sandbox upstream. Identifiers that change from run to run (request ids, tokens, team and
// key ids) are replaced by stable ones, and the scraped lists are cut to their first three items;
// a test checks that the scraped data is what this script gets now.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { accountEndpoints } from '../src/account/endpoints.ts';
import { loadConfig, UNPACED_ENV } from '../src/config.ts';
import { EXAMPLES_FILE, EXAMPLE_LIST_LENGTH } from '../src/docs/examples.ts';
import { endpoints } from '../src/endpoints/index.ts';
import type { ApiEndpoint } from '../src/endpoints/types.ts';
import { upstreamClient } from '../src/main.ts';
import { buildApp } from '../src/server/app.ts';
import { generateKey } from '../src/server/keys.ts';
import { openSqliteStores } from '../src/store/sqlite/index.ts';
import { startSandbox } from '../sandbox/server.ts';

/** A stable stand-in for a value that changes from run to run: `prefix` and a hash of `seed`. */
const stable = (prefix: string, seed: string, length = 24): string => prefix + createHash('sha256').update(seed).digest('base64url').slice(0, length);

/** Lists cut to their first items, recursively: an example shows the shape, not the whole page. */
function shorten(value: unknown): unknown {
  if (Array.isArray(value)) return value.slice(0, EXAMPLE_LIST_LENGTH).map(shorten);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, shorten(inner)]));
  return value;
}

/** The example answers of every endpoint, by endpoint id. */
export async function collectExamples(): Promise<Record<string, unknown>> {
  const sandbox = await startSandbox({ seed: 'docs', portBase: 0, host: '127.0.0.1' });
  const dir = mkdtempSync(join(tmpdir(), 'docs-examples-'));
  const config = loadConfig({ ...sandbox.env, ...UNPACED_ENV, DATA_DIR: dir, CURSOR_SECRET: 'docs-examples-cursor-secret-0123456789' });
  const stores = openSqliteStores({ path: join(dir, 'service.db') });
  const client = upstreamClient(config);
  const app = await buildApp({ stores, endpoints, cursorSecret: config.cursorSecret, upstream: (platform, signal, deadline) => client.bind(platform, signal, deadline) });
  try {
    const team = await stores.accounts.createTeam({ name: 'acme', credits: 1_000, rateLimit: 100 });
    const generated = generateKey();
    const key = await stores.accounts.createKey({ teamId: team.id, name: 'production', hash: generated.hash, prefix: generated.prefix, last4: generated.last4 });
    const replacements = new Map<string, string>([
      [team.id, stable('team_', 'team', 20)],
      [key.id, stable('key_', 'key', 20)],
    ]);
    const examples: Record<string, unknown> = {};
    const all: ApiEndpoint[] = [...endpoints, ...accountEndpoints];
    for (const endpoint of all) {
      const scrapes = endpoints.includes(endpoint as (typeof endpoints)[number]);
      let query = endpoint.exampleQuery;
      if (!scrapes) {
        // Request records are written in the background: write them before the account is read.
        await app.writeRecords();
        // The usage of the day the examples were made, which holds the scrapes above.
        if (endpoint.id === 'account.usage') query = { from: new Date().toISOString().slice(0, 10), to: new Date().toISOString().slice(0, 10) };
      }
      const url = `${endpoint.path}?${new URLSearchParams(query)}`;
      const response = await app.inject({ method: 'GET', url, headers: { 'x-api-key': generated.key } });
      if (response.statusCode !== 200) throw new Error(`${url} answered ${response.statusCode}: ${response.body}`);
      const body = JSON.parse(response.body) as unknown;
      examples[endpoint.id] = scrapes ? shorten(body) : body;
    }
    // Request ids and tokens are random: each is replaced by a stand-in derived from the order in
    // which it first appears, the same everywhere it appears.
    let text = JSON.stringify(examples);
    text = text.replace(/"(requestId|cursor|pageToken)":"([^"]+)"/g, (_match, field: string, value: string) => {
      if (!replacements.has(value)) replacements.set(value, field === 'requestId' ? stable('req_', `request ${replacements.size}`) : stable('', `token ${replacements.size}`, 48));
      return `"${field}":"${replacements.get(value)}"`;
    });
    for (const [from, to] of replacements) text = text.replaceAll(from, to);
    return JSON.parse(text) as Record<string, unknown>;
  } finally {
    await app.close();
    await client.close();
    await stores.close();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  writeFileSync(EXAMPLES_FILE, `${JSON.stringify(await collectExamples(), null, 2)}\n`);
  console.log(`wrote ${EXAMPLES_FILE}`);
}
