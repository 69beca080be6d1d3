// The SDK's types come from the endpoint declarations: sdk/src/generated.ts is what
// `npm run -s sdk:types` writes from them now (the typecheck compiles it), and it names every
// endpoint with its paging.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { generate, GENERATED } from '../../scripts/sdk-types.ts';
import { accountEndpoints } from '../../src/account/endpoints.ts';
import { endpoints } from '../../src/endpoints/index.ts';
import { ENDPOINTS, type Endpoints, type SnapmsgProfileQuery } from '../../sdk/src/generated.ts';

test('sdk/src/generated.ts is up to date with the declarations (else: npm run -s sdk:types)', async () => {
  assert.equal(readFileSync(GENERATED, 'utf8'), await generate());
});

test('every endpoint is in it, with its paging as declared', () => {
  assert.deepEqual(Object.keys(ENDPOINTS).sort(), [...endpoints, ...accountEndpoints].map((e) => e.path).sort());
  for (const endpoint of [...endpoints, ...accountEndpoints]) {
    assert.deepEqual(ENDPOINTS[endpoint.path as keyof typeof ENDPOINTS].paging, endpoint.paging ?? null, endpoint.path);
  }
  // Compile-time: the query type takes the declared parameters and the common ones.
  const query: SnapmsgProfileQuery = { username: 'lunavoss', cache_max_age: '1d', stale_if_error: '7d' };
  const typed: Endpoints['/v1/snapmsg/profile']['query'] = query;
  assert.equal(typed.username, 'lunavoss');
});
