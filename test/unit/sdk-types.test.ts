// The SDK's types come from the endpoint declarations: sdk/src/generated.ts (and envelope.ts) is what
// `npm run -s sdk:types` writes from them now (the typecheck compiles it), and it names every
// endpoint with its paging.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { generate, GENERATED } from '../../scripts/sdk-types.ts';
import { accountEndpoints } from '../../src/account/endpoints.ts';
import { endpoints } from '../../src/endpoints/index.ts';
import { ENDPOINTS, ERRORS, type Endpoints, type SnapmsgProfileQuery } from '../../sdk/src/generated.ts';

test('sdk/src/generated.ts and envelope.ts are up to date with the declarations (else: npm run -s sdk:types)', async () => {
  const files = await generate();
  for (const part of ['envelope', 'api'] as const) assert.equal(readFileSync(GENERATED[part], 'utf8'), files[part], GENERATED[part]);
});

test('every endpoint is in it, with its paging as declared', () => {
  assert.deepEqual(Object.keys(ENDPOINTS).sort(), [...endpoints, ...accountEndpoints].map((e) => e.path).sort());
  for (const endpoint of [...endpoints, ...accountEndpoints]) {
    assert.deepEqual(ENDPOINTS[endpoint.path as keyof typeof ENDPOINTS].paging, endpoint.paging ?? null, endpoint.path);
  }
  // Every listing names the array of `data` that holds its items, and the table its parameters.
  for (const endpoint of [...endpoints, ...accountEndpoints]) {
    if (endpoint.paging) {
      const items = (endpoint.data.properties as Record<string, { type?: unknown }>)[endpoint.paging.items];
      assert.equal(items?.type, 'array', `${endpoint.path}: data.${endpoint.paging.items} is the listing`);
    }
    const params = ENDPOINTS[endpoint.path as keyof typeof ENDPOINTS].params as readonly string[];
    for (const name of Object.keys(endpoint.query.properties)) assert.ok(params.includes(name), `${endpoint.path} --${name}`);
  }
  // Compile-time: the query type takes the declared parameters and the common ones.
  const query: SnapmsgProfileQuery = { username: 'lunavoss', cache_max_age: '1d', stale_if_error: '7d' };
  const typed: Endpoints['/v1/snapmsg/profile']['query'] = query;
  assert.equal(typed.username, 'lunavoss');
});

test("sdk/README.md lists every error class with its code and status", () => {
  const readme = readFileSync(new URL('../../sdk/README.md', import.meta.url), 'utf8');
  for (const [code, { status, error }] of Object.entries(ERRORS)) assert.ok(readme.includes(`| \`${error.name}\` | \`${code}\` | ${status} |`), code);
});
