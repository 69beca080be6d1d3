// The envelope of every answer: `meta` beside a success's `data`, and `error` of a failure. The
// OpenAPI document (src/server/plugins/route-schemas.ts), the MCP tools and the SDK's types
// (scripts/sdk-types.ts) take them from here.
import { Type } from 'typebox';
import { DateTime, Obj } from './common.ts';

export const Meta = Obj({
  requestId: Type.String({ description: 'Request identifier, prefix `req_`; also the `x-request-id` header.' }),
  creditsCharged: Type.Integer({ description: '1 on a live scrape, 0 on a cache hit (and on a live scrape whose credit was already refunded as abandoned).' }),
  creditsRemaining: Type.Integer({ description: 'Balance right after this request.' }),
  cached: Type.Boolean({ description: 'True on a cache hit.' }),
  cachedAt: Type.Optional(DateTime('When the cached result was scraped; present on a cache hit only.')),
  stale: Type.Optional(Type.Boolean({ description: 'True when a cached result stands in for a live scrape that failed (`stale_if_error`).' })),
  test: Type.Optional(Type.Boolean({ description: 'True for a test-mode key (`psk_test_`): the answer comes from the built-in sandbox and costs nothing.' })),
});

export const ErrorEnvelope = Obj({
  error: Obj({
    code: Type.String(),
    message: Type.String(),
    requestId: Type.String(),
    details: Type.Optional(Type.Array(Obj({ path: Type.String(), message: Type.String() }), { description: 'Validation errors only.' })),
  }),
});
