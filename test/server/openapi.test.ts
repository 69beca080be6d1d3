// The OpenAPI 3.1 document at /openapi.json, generated from the endpoint declarations, and the
// docs page at /docs, served entirely by the service itself.
import { accountChanges } from '../../src/account/changes.ts';
import { WEBHOOKS_TAG, webhookActions } from '../../src/webhooks/endpoints.ts';
import { MONITORS_TAG, monitorOperations } from '../../src/work/monitors/endpoints.ts';
import { JOBS_TAG, jobEndpoints } from '../../src/jobs/endpoints.ts';
import { ACCOUNT_TAG, accountEndpoints } from '../../src/account/endpoints.ts';
import { acceptsGzip } from '../../src/server/gzip.ts';
import { STATUS_TAG } from '../../src/server/plugins/openapi.ts';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { endpoints } from '../../src/endpoints/index.ts';
import type { EndpointDeclaration } from '../../src/endpoints/types.ts';
import { exampleQuery, FIXTURE_OF, readFixture, startHarness, type Harness } from '../api/harness.ts';
import { loadConfig } from '../../src/config.ts';
import { buildApp } from '../../src/server/app.ts';
import { servedDocument } from '../openapi/served.ts';

// ajv-formats is CommonJS: its function is both module.exports and module.exports.default.
const addFormats = addFormatsModule.default;

type Json = Record<string, unknown>;

const ERROR_CODE_OF: Record<string, string[]> = {
  400: ['BAD_REQUEST'],
  401: ['UNAUTHORIZED'],
  402: ['INSUFFICIENT_CREDITS'],
  403: ['FORBIDDEN'],
  404: ['NOT_FOUND'],
  405: ['METHOD_NOT_ALLOWED'],
  409: ['IDEMPOTENCY_IN_PROGRESS', 'CONFLICT'],
  422: ['VALIDATION_ERROR', 'IDEMPOTENCY_KEY_REUSED'],
  429: ['RATE_LIMITED'],
  500: ['INTERNAL_ERROR'],
  501: ['NOT_IMPLEMENTED'],
  502: ['UPSTREAM_BLOCKED', 'UPSTREAM_UNRECOGNISED'],
  503: ['SERVICE_UNAVAILABLE'],
};
const ALWAYS = ['401', '402', '403', '404', '405', '409', '422', '429', '500', '501', '502', '503'];

const newAjv = () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv, ['date-time', 'uri']);
  return ajv;
};

/** JSON round trip: drops TypeBox's symbol keys so schemas compare as plain JSON. */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

/**
 * `plain`, with `const: x` written as the equivalent `enum: [x]`, the form @fastify/swagger
 * emits (JSON Schema gives both the same meaning).
 */
const constAsEnum = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value), (_key, node: unknown) => {
    if (!node || typeof node !== 'object' || Array.isArray(node) || !('const' in node)) return node;
    const { const: only, ...rest } = node as Json;
    return { ...rest, enum: [only] };
  }) as unknown;

/** The contract fixture of an endpoint as the API serves it: tokens as strings, plus fetchedAt. */
function servedFixture(endpoint: EndpointDeclaration): Json {
  const fixture = readFixture(FIXTURE_OF[endpoint.id] ?? '');
  const data: Json = { ...fixture, fetchedAt: '2026-11-22T10:00:00.000Z' };
  if (endpoint.paging) {
    const paging = { ...(fixture.paging as Json) };
    const token = paging[endpoint.paging.field];
    if (token && typeof token === 'object' && '$position' in token) paging[endpoint.paging.field] = 'c2VhbGVkLWN1cnNvci1zdGFuZC1pbg';
    data.paging = paging;
  }
  return data;
}

/** Every sub-schema, depth first. */
function* walk(schema: unknown, path = ''): Generator<[string, Json]> {
  if (!schema || typeof schema !== 'object') return;
  if (Array.isArray(schema)) {
    for (const [index, item] of schema.entries()) yield* walk(item, `${path}/${index}`);
    return;
  }
  yield [path, schema as Json];
  for (const [key, value] of Object.entries(schema)) yield* walk(value, `${path}/${key}`);
}

describe('GET /openapi.json', () => {
  let h: Harness;
  let doc: Json;
  let paths: Record<string, Record<string, Json>>;
  before(async () => {
    h = await startHarness({ credits: 100 });
    const response = await h.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
    doc = JSON.parse(response.body) as Json;
    paths = doc.paths as Record<string, Record<string, Json>>;
  });
  after(() => h.close());

  test('is an OpenAPI 3.1 document with title, version and exactly the nine scraping, three account and the status /v1 paths, each a GET, the PATCHes of the account, and the operations of webhooks and monitors', () => {
    assert.equal(doc.openapi, '3.1.0');
    const info = doc.info as Json;
    assert.equal(typeof info.title, 'string');
    assert.equal(typeof info.version, 'string');
    assert.equal(endpoints.length, 9);
    const methods = new Map<string, string[]>([...endpoints, ...accountEndpoints, { path: '/v1/status' }].map((endpoint) => [endpoint.path, ['get']]));
    for (const change of accountChanges) methods.set(change.path, [...(methods.get(change.path) ?? []), 'patch']);
    for (const action of webhookActions) methods.set(action.path, [...(methods.get(action.path) ?? []), action.method.toLowerCase()]);
    for (const route of jobEndpoints) methods.set(route.path, [...(methods.get(route.path) ?? []), route.method.toLowerCase()]);
    for (const operation of monitorOperations) methods.set(operation.path, [...(methods.get(operation.path) ?? []), operation.method.toLowerCase()]);
    assert.deepEqual(Object.keys(paths).sort(), [...methods.keys()].sort());
    for (const [path, item] of Object.entries(paths)) {
      assert.match(path, /^\/v1\//);
      assert.deepEqual(Object.keys(item).sort(), methods.get(path)?.sort(), path);
    }
    const operationIds = Object.values(paths).flatMap((item) => Object.values(item).map((operation) => operation.operationId));
    assert.ok(operationIds.every((id) => typeof id === 'string' && id.length > 0));
    assert.equal(new Set(operationIds).size, operationIds.length, 'operationIds are unique');
    // 3.1 expresses null through the JSON Schema type, never the 3.0 `nullable` keyword.
    for (const [where, schema] of walk(doc)) assert.equal(schema.nullable, undefined, `3.0-style nullable at ${where}`);
  });

  test('each PATCH of the account: its JSON body (closed), path parameters, and 200, 400, 401, 403, 404 (with a parameter), 405, 422, 429, 500, 503', () => {
    for (const change of accountChanges) {
      const operation = paths[change.path]?.patch as Json;
      const body = ((operation.requestBody as Json).content as Record<string, Json>)['application/json'] as Json;
      assert.equal((body.schema as Json).additionalProperties, false);
      assert.deepEqual(body.example, change.example.body);
      const params = Object.keys(change.params.properties);
      assert.deepEqual(
        ((operation.parameters ?? []) as Json[]).map((parameter) => [parameter.in, parameter.name, parameter.required]),
        params.map((name) => ['path', name, true]),
      );
      const statuses = ['200', '400', '401', '403', '405', '422', '429', '500', '503', ...(params.length > 0 ? ['404'] : [])];
      assert.deepEqual(Object.keys(operation.responses as Json).sort(), statuses.sort());
      assert.deepEqual(operation.tags, [ACCOUNT_TAG.name]);
    }
  });

  test('each webhook endpoint: its method, path parameters, body or query, and its answers', () => {
    for (const action of webhookActions) {
      const operation = paths[action.path]?.[action.method.toLowerCase()] as Json;
      assert.ok(operation, `${action.method} ${action.path}`);
      assert.deepEqual(operation.tags, [WEBHOOKS_TAG.name]);
      const params = Object.keys(action.params.properties);
      assert.deepEqual(
        ((operation.parameters ?? []) as Json[]).filter((parameter) => parameter.in === 'path').map((parameter) => parameter.name),
        params,
      );
      const statuses = Object.keys(operation.responses as Json);
      for (const status of [String(action.status), '401', '405', '429', '500', '503']) assert.ok(statuses.includes(status), `${action.id} ${status}`);
      if (params.length > 0) assert.ok(statuses.includes('404'), action.id);
      if (action.changes) assert.ok(statuses.includes('403'), action.id);
      if (action.body) {
        const body = ((operation.requestBody as Json).content as Record<string, Json>)['application/json'] as Json;
        assert.equal((body.schema as Json).additionalProperties, false);
        assert.deepEqual(body.example, action.example.body);
        assert.ok(statuses.includes('422') && statuses.includes('409'), action.id);
      } else assert.equal(operation.requestBody, undefined, action.id);
    }
  });

  test('has a license, one tag per platform, described by its endpoint declarations, and the account, webhooks, jobs, monitors and status tags', () => {
    const license = (doc.info as Json).license as Json;
    assert.equal(typeof license.name, 'string');
    assert.equal(typeof license.identifier, 'string');
    const described = new Map(endpoints.map((endpoint) => [endpoint.platform, endpoint.platformDescription]));
    assert.deepEqual(doc.tags, [...[...described].map(([name, description]) => ({ name, description })), ACCOUNT_TAG, WEBHOOKS_TAG, JOBS_TAG, MONITORS_TAG, STATUS_TAG]);
    for (const tag of doc.tags as Json[]) assert.ok(String(tag.description).length > 20, String(tag.name));
    for (const endpoint of endpoints) assert.deepEqual(paths[endpoint.path]?.get?.tags, [endpoint.platform]);
  });

  test('/ redirects to the docs', async () => {
    const response = await h.app.inject({ method: 'GET', url: '/' });
    assert.equal(response.statusCode, 302);
    assert.equal(response.headers.location, '/docs');
  });

  test('before the service listens (requests injected in-process), servers names the document\'s own host', () => {
    assert.deepEqual(doc.servers, [{ url: '/', description: 'This service.' }]);
  });

  test('declares both key schemes (x-api-key header and bearer) and requires one of them', () => {
    const schemes = (doc.components as Json).securitySchemes as Record<string, Json>;
    assert.deepEqual(schemes.apiKey && { type: schemes.apiKey.type, in: schemes.apiKey.in, name: schemes.apiKey.name }, {
      type: 'apiKey',
      in: 'header',
      name: 'x-api-key',
    });
    assert.deepEqual(schemes.bearer && { type: schemes.bearer.type, scheme: schemes.bearer.scheme }, { type: 'http', scheme: 'bearer' });
    for (const endpoint of endpoints) {
      const security = (paths[endpoint.path]?.get?.security ?? doc.security) as Json[];
      assert.deepEqual(plain(security), [{ apiKey: [] }, { bearer: [] }], endpoint.path);
    }
  });

  for (const endpoint of endpoints) {
    describe(endpoint.path, () => {
      const operation = () => paths[endpoint.path]?.get as Json;

      test('lists every declared query parameter plus cache_max_age and stale_if_error, with the declared schema and required flag', () => {
        const parameters = (operation().parameters as Json[]).filter((parameter) => parameter.in !== 'header');
        const declared = endpoint.query.properties as Record<string, Json>;
        const required = new Set(endpoint.query.required ?? []);
        assert.deepEqual(parameters.map((parameter) => parameter.name).sort(), [...Object.keys(declared), 'cache_max_age', 'stale_if_error'].sort());
        for (const parameter of parameters) {
          const name = String(parameter.name);
          assert.equal(parameter.in, 'query', name);
          assert.equal(parameter.required, required.has(name), `${name} required flag`);
          if (name === 'cache_max_age' || name === 'stale_if_error') {
            assert.deepEqual((parameter.schema as Json).enum, ['1d', '3d', '7d', '14d', '30d']);
            continue;
          }
          const { description, ...schema } = plain(declared[name]) as Json;
          assert.deepEqual(parameter.schema, schema, `${name} schema`);
          assert.equal(parameter.description, description, `${name} description`);
        }
        if (endpoint.paging) assert.ok(parameters.some((parameter) => parameter.name === endpoint.paging?.param), 'token parameter');
      });

      test('takes an optional Idempotency-Key header, and documents the replay header of the 200', () => {
        const headers = (operation().parameters as Json[]).filter((parameter) => parameter.in === 'header');
        assert.deepEqual(headers.map((parameter) => [parameter.name, parameter.required]), [['idempotency-key', false]]);
        const schema = headers[0]?.schema as Json;
        assert.deepEqual([schema.type, schema.minLength, schema.maxLength], ['string', 1, 255]);
        assert.match(String(headers[0]?.description), /24 hours/);
        const ok = (operation().responses as Record<string, Json>)['200'] as Json;
        assert.ok((ok.headers as Json)['idempotent-replayed']);
        assert.ok(((operation().responses as Record<string, Json>)['409']?.headers as Json)['retry-after']);
      });

      test("the 200 schema's data is the declaration's data schema, nullable fields as anyOf with type null", () => {
        const responses = operation().responses as Record<string, Json>;
        const content = responses['200']?.content as Record<string, { schema: Json }>;
        const schema = content['application/json']?.schema as Json;
        assert.deepEqual((schema.properties as Json).data, constAsEnum(endpoint.data));
        assert.deepEqual([...(schema.required as string[])].sort(), ['data', 'meta']);
        const meta = (schema.properties as Json).meta as Json;
        assert.deepEqual(Object.keys(meta.properties as Json).sort(), ['cached', 'cachedAt', 'creditsCharged', 'creditsRemaining', 'requestId', 'stale', 'test']);
        // Every field the declaration makes nullable is nullable in the document, and vice versa.
        const nullableIn = (root: unknown) =>
          [...walk(root)].filter(([, node]) => Array.isArray(node.anyOf) && (node.anyOf as Json[]).some((option) => option.type === 'null')).map(([where]) => where);
        assert.deepEqual(nullableIn((schema.properties as Json).data), nullableIn(plain(endpoint.data)));
        if (endpoint.id === 'socialnet.profile') {
          // coverPhotoUrl, followers, following, rating and businessHours can be null.
          const profile = ((schema.properties as Json).data as { properties: { profile: { properties: Record<string, Json> } } }).properties.profile;
          for (const field of ['coverPhotoUrl', 'followers', 'following', 'rating', 'businessHours']) {
            const options = profile.properties[field]?.anyOf as Json[] | undefined;
            assert.ok(options?.some((option) => option.type === 'null'), `${field} is nullable`);
          }
        }
      });

      test('documents 200 and every error status with the error envelope and a matching example', () => {
        const responses = operation().responses as Record<string, Json>;
        const expected = ['200', ...ALWAYS, ...(endpoint.paging ? ['400'] : [])].sort();
        assert.deepEqual(Object.keys(responses).sort(), expected);
        const ajv = newAjv();
        for (const status of expected.filter((code) => code !== '200')) {
          const response = responses[status] as Json;
          assert.equal(typeof response.description, 'string', status);
          const media = (response.content as Record<string, Json>)['application/json'] as Json;
          const envelope = media.schema as Json;
          const error = (envelope.properties as Json).error as Json;
          assert.deepEqual(Object.keys(envelope.properties as Json), ['error'], status);
          assert.deepEqual([...(error.required as string[])].sort(), ['code', 'message', 'requestId'], status);
          assert.deepEqual(Object.keys(error.properties as Json).sort(), ['code', 'details', 'message', 'requestId'], status);
          const example = media.example as { error: { code: string; details?: unknown[] } };
          assert.ok(example, `${status} has an example`);
          const validate = ajv.compile(envelope);
          assert.ok(validate(example), `${status} example fits the envelope: ${ajv.errorsText(validate.errors)}`);
          assert.ok(ERROR_CODE_OF[status]?.includes(example.error.code), `${status} example code ${example.error.code}`);
          if (status === '422') assert.ok(Array.isArray(example.error.details) && example.error.details.length > 0);
          if (status === '429' || status === '503') assert.ok((response.headers as Json)['retry-after'], `${status} documents Retry-After`);
        }
      });

      test("the 200 schema compiles (JSON Schema 2020-12) and accepts the contract fixture and the live answer", async () => {
        const responses = operation().responses as Record<string, Json>;
        const schema = ((responses['200']?.content as Record<string, Json>)['application/json'] as Json).schema as Json;
        const ajv = newAjv();
        const validate = ajv.compile(schema);
        const meta = { requestId: 'req_3q2VbX9kT0mW7yZ1aC4dE6fG', creditsCharged: 1, creditsRemaining: 99, cached: false };
        const fixture = { data: servedFixture(endpoint), meta };
        assert.ok(validate(fixture), ajv.errorsText(validate.errors));
        // The schema is not vacuous: an unknown data field or a missing one is rejected.
        assert.equal(validate({ data: { ...fixture.data, unexpectedField: 1 }, meta }), false);
        const { fetchedAt: _fetchedAt, ...withoutFetchedAt } = fixture.data;
        assert.equal(validate({ data: withoutFetchedAt, meta }), false);
        // Real answers of the service fit it: a live scrape and a cache hit (with cachedAt).
        const live = await h.get(`${endpoint.path}?${exampleQuery(endpoint)}`);
        assert.equal(live.statusCode, 200, live.body);
        assert.ok(validate(live.json()), ajv.errorsText(validate.errors));
        const hit = await h.get(`${endpoint.path}?${exampleQuery(endpoint, { cache_max_age: '1d' })}`);
        assert.equal((hit.json() as { meta: { cached: boolean } }).meta.cached, true);
        assert.ok(validate(hit.json()), ajv.errorsText(validate.errors));
      });
    });
  }

  test("real error answers fit the documented envelope", async () => {
    const endpoint = endpoints[0] as EndpointDeclaration;
    const responses = (paths[endpoint.path]?.get as Json).responses as Record<string, Json>;
    const ajv = newAjv();
    const envelopeOf = (status: string) => ((responses[status]?.content as Record<string, Json>)['application/json'] as Json).schema as Json;
    const unauthorized = await h.get(`${endpoint.path}?${exampleQuery(endpoint)}`, {});
    assert.equal(unauthorized.statusCode, 401);
    const check401 = ajv.compile(envelopeOf('401'));
    assert.ok(check401(unauthorized.json()), ajv.errorsText(check401.errors));
    const invalid = await h.get(`${endpoint.path}?cache_max_age=2d`);
    assert.equal(invalid.statusCode, 422);
    const check422 = ajv.compile(envelopeOf('422'));
    assert.ok(check422(invalid.json()), ajv.errorsText(check422.errors));
  });
});

describe('servers in the served document', () => {
  test('by default, the address the service listens on', async () => {
    const { text, address } = await servedDocument();
    assert.match(address, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.deepEqual((JSON.parse(text) as Json).servers, [{ url: address, description: 'This service.' }]);
  });

  test('PUBLIC_BASE_URL when set (a path prefix kept, a trailing slash dropped)', async () => {
    const { text } = await servedDocument({ PUBLIC_BASE_URL: 'https://api.example.test/scrape/' });
    assert.deepEqual((JSON.parse(text) as Json).servers, [{ url: 'https://api.example.test/scrape', description: 'This service.' }]);
  });

  test('PUBLIC_BASE_URL must be an absolute http(s) URL without credentials, query or fragment', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'public-base-url-'));
    try {
      assert.equal(loadConfig({ DATA_DIR: dataDir }).publicBaseUrl, undefined);
      assert.equal(loadConfig({ DATA_DIR: dataDir, PUBLIC_BASE_URL: 'http://10.0.0.5:8080' }).publicBaseUrl, 'http://10.0.0.5:8080');
      for (const value of ['api.example.test', '/relative', 'ftp://api.example.test', 'https://user:pw@api.example.test', 'https://api.example.test/?x=1', 'https://api.example.test/#top']) {
        assert.throws(
          () => loadConfig({ DATA_DIR: dataDir, PUBLIC_BASE_URL: value }),
          (error: Error) => error.message.startsWith('PUBLIC_BASE_URL must be') && error.message.includes(value),
          value,
        );
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('two endpoints of one platform that describe it differently are a mistake found at start', async () => {
    const [first, second, ...rest] = endpoints as EndpointDeclaration[];
    assert.equal(first?.platform, second?.platform);
    const contradicting = [first as EndpointDeclaration, { ...(second as EndpointDeclaration), platformDescription: 'Another text.' }, ...rest];
    const harness = await startHarness();
    try {
      await assert.rejects(
        buildApp({ stores: harness.stores, endpoints: contradicting, cursorSecret: 'test-cursor-secret-0123456789abcdef' }),
        new RegExp(`endpoints of ${first?.platform} describe their platform differently`),
      );
    } finally {
      await harness.close();
    }
  });
});

describe('GET /docs', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  /** GET `url`, following redirects (relative to the previous URL) up to five times. */
  async function follow(url: string) {
    let current = new URL(url, 'http://service.local');
    for (let hop = 0; hop < 5; hop++) {
      const response = await h.app.inject({ method: 'GET', url: current.pathname + current.search });
      if (response.statusCode < 300 || response.statusCode >= 400) return { response, url: current };
      current = new URL(String(response.headers.location), current);
    }
    throw new Error(`too many redirects from ${url}`);
  }

  test('is HTML whose scripts are all served by the service and that names no external host', async () => {
    const { response, url } = await follow('/docs');
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/html/);
    const html = response.body;
    assert.match(html, /<html/i);
    assert.match(html, /<title>Public-Page Data Extraction API: reference<\/title>/);
    assert.doesNotMatch(html, /(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i, 'no absolute or protocol-relative URL');
    const references = [...html.matchAll(/<(?:script|link)\b[^>]*?\b(?:src|href)\s*=\s*["']([^"']+)["']/gi)].map((match) => match[1] as string);
    assert.ok(references.length >= 1, 'the page loads its own script');
    for (const reference of references) {
      const target = new URL(reference, url);
      assert.equal(target.host, 'service.local', `${reference} is served by the service`);
      const asset = await h.app.inject({ method: 'GET', url: target.pathname + target.search });
      assert.equal(asset.statusCode, 200, `${reference}: ${asset.statusCode}`);
      assert.ok(asset.body.length > 0, reference);
    }
  });

  test('the reference (Scalar) reads the service\'s own document, with no telemetry, remote fonts, toolbar or generated clients', async () => {
    const { response } = await follow('/docs');
    const configuration = /createApiReference\('#app', (\{[\s\S]*?\})\)\s*<\/script>/.exec(response.body)?.[1];
    assert.ok(configuration, 'the page configures the reference');
    const parsed = JSON.parse(configuration) as Record<string, unknown>;
    assert.equal(parsed.url, '/openapi.json');
    assert.deepEqual([parsed.telemetry, parsed.withDefaultFonts, parsed.showDeveloperTools, parsed.hiddenClients], [false, false, 'never', true]);
    const spec = await h.app.inject({ method: 'GET', url: String(parsed.url) });
    assert.equal(spec.statusCode, 200);
    assert.equal((spec.json() as Json).openapi, '3.1.0');
  });

  test('its 4.9 MB script goes gzipped to a client that takes gzip, as it is to one that does not, and is kept for a day', async () => {
    const plain = await h.app.inject({ method: 'GET', url: '/docs/js/scalar.js' });
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.headers['cache-control'], 'public, max-age=86400');
    for (let round = 0; round < 2; round++) {
      const packed = await h.app.inject({ method: 'GET', url: '/docs/js/scalar.js', headers: { 'accept-encoding': 'br, gzip;q=0.8' } });
      assert.equal(packed.headers['content-encoding'], 'gzip');
      assert.equal(packed.headers.vary, 'accept-encoding');
      assert.ok(packed.rawPayload.length < plain.rawPayload.length / 2, `${packed.rawPayload.length} bytes`);
      assert.equal(Number(packed.headers['content-length']), packed.rawPayload.length);
      assert.equal(gunzipSync(packed.rawPayload).toString(), plain.body);
    }
    assert.equal((await h.app.inject({ method: 'GET', url: '/docs/js/scalar.js', headers: { 'accept-encoding': 'gzip;q=0' } })).headers['content-encoding'], undefined);
    assert.deepEqual(
      ['gzip', 'GZIP', 'deflate, *', 'br;q=1, gzip;q=0.1', 'gzip;q=0', 'br', '', undefined].map((header) => acceptsGzip(header)),
      [true, true, true, true, false, false, false, false],
    );
  });

  test('/ leads to it, and the browser\'s icon request is answered', async () => {
    const root = await h.app.inject({ method: 'GET', url: '/' });
    assert.deepEqual([root.statusCode, root.headers.location], [302, '/docs']);
    assert.equal((await h.app.inject({ method: 'GET', url: '/favicon.ico' })).statusCode, 204);
  });
});
