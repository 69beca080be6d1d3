// The OpenAPI document and the docs page: each endpoint's route schema, generated from its
// declaration, collected by @fastify/swagger as the routes are added; /openapi.json and /docs.
// The document carries the guide (src/docs/guide.ts), an example answer per endpoint
// (src/docs/examples.json) and code samples per endpoint (src/docs/samples.ts).
// The route schemas are in route-schemas.ts, the reference page at /docs in reference.ts.
import swagger from '@fastify/swagger';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { WEBHOOKS_TAG } from '../../webhooks/endpoints.ts';
import { MONITORS_TAG } from '../../work/monitors/endpoints.ts';
import { JOBS_TAG } from '../../jobs/endpoints.ts';
import { ACCOUNT_TAG, accountEndpoints } from '../../account/endpoints.ts';
import { guide } from '../../docs/guide.ts';
import { codeSamples } from '../../docs/samples.ts';
import type { ApiEndpoint, EndpointDeclaration } from '../../endpoints/types.ts';
import { JSON_TYPE } from '../errors.ts';

/** One OpenAPI tag per platform, described by the platform's endpoint declarations. */
function platformTags(endpoints: readonly EndpointDeclaration[]): { name: string; description: string }[] {
  const descriptions = new Map<string, string>();
  for (const endpoint of endpoints) {
    const known = descriptions.get(endpoint.platform);
    if (known !== undefined && known !== endpoint.platformDescription) {
      throw new Error(`the endpoints of ${endpoint.platform} describe their platform differently (${endpoint.id})`);
    }
    descriptions.set(endpoint.platform, endpoint.platformDescription);
  }
  return [...descriptions].map(([name, description]) => ({ name, description }));
}

/**
 * The address the server listens on as a URL, or null before it listens. A wildcard address
 * (all interfaces) is named by its loopback address, as Fastify names it when it starts.
 */
export function listeningUrl(app: FastifyInstance): string | null {
  const address = app.server.address();
  if (address === null || typeof address === 'string') return null;
  const host = address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '::1' : address.address;
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

export interface OpenApiOptions {
  endpoints: readonly EndpointDeclaration[];
  /** The address the document names in `servers`; by default the one the service listens on. */
  publicBaseUrl?: string | undefined;
}

export const STATUS_TAG = { name: 'status', description: "Each platform's state as the service sees it. Public and free." };

/** Registered before the routes, whose schemas it collects. */
const openApi: FastifyPluginAsync<OpenApiOptions> = async (app, options) => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Public-Page Data Extraction API',
        version: '1.0.0',
        // The project grants no licence to others (package.json: UNLICENSED).
        license: { name: 'Proprietary; all rights reserved', identifier: 'LicenseRef-Proprietary' },
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The API key.' },
          bearer: { type: 'http', scheme: 'bearer', description: 'The API key as a bearer token.' },
        },
      },
      security: [{ apiKey: [] }, { bearer: [] }],
      tags: [...platformTags(options.endpoints), ACCOUNT_TAG, WEBHOOKS_TAG, JOBS_TAG, MONITORS_TAG, STATUS_TAG],
    },
    // Built on the first request for the document, so after the server listens.
    transformObject: (document) => {
      if (!('openapiObject' in document)) return document.swaggerObject;
      const { openapi, info, ...rest } = document.openapiObject;
      const url = options.publicBaseUrl ?? listeningUrl(app) ?? '/';
      const all: ApiEndpoint[] = [...options.endpoints, ...accountEndpoints];
      const paths = rest.paths as Record<string, { get?: Record<string, unknown> }> | undefined;
      for (const endpoint of all) {
        const operation = paths?.[endpoint.path]?.get;
        if (operation) operation['x-codeSamples'] = codeSamples(endpoint, url);
      }
      return { openapi, info: info && { ...info, description: guide(all, url) }, servers: [{ url, description: 'This service.' }], ...rest };
    },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('content-type', JSON_TYPE).send(JSON.stringify(app.swagger())),
  );
};

export const openApiPlugin = fp(openApi, { name: 'openapi' });
