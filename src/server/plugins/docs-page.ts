// The reference page at /docs: Scalar (@scalar/fastify-api-reference) over /openapi.json, its
// script served by the service itself (adapted, gzipped once, kept a day by browsers) and the
// page under a strict Content-Security-Policy.
import scalar from '@scalar/fastify-api-reference';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { FastifyInstance, onSendHookHandler } from 'fastify';
import { DomUtils, parseDocument } from 'htmlparser2';
import { acceptsGzip } from '../gzip.ts';

const DOCS_PREFIX = '/docs';
/** Where the reference's page and script are served (by @scalar/fastify-api-reference). */
const PAGE_PATH = `${DOCS_PREFIX}/`;
const SCRIPT_PATH = `${DOCS_PREFIX}/js/scalar.js`;
/** What Scalar's script shows in an empty key field, and what the service's copy shows instead. */
export const SCALAR_KEY_PLACEHOLDER = 'QUxMIFlPVVIgQkFTRSBBUkUgQkVMT05HIFRPIFVT';
export const KEY_PLACEHOLDER = 'YOUR_API_KEY';

/**
 * The service's copy of Scalar's script, with two changes Scalar has no setting for: an empty
 * key field shows a plain name for the key, not Scalar's example value (a made-up string that
 * reads like a real key); and Zod, inside the script, is told not to compile its validators
 * with `Function`, which the page's policy forbids (Zod would only try and fall back, but each
 * try is a violation of the policy).
 */
export const adaptScalarScript = (source: string): string =>
  `globalThis.__zod_globalConfig = { ...globalThis.__zod_globalConfig, jitless: true };\n${source.replaceAll(SCALAR_KEY_PLACEHOLDER, KEY_PLACEHOLDER)}`;

/**
 * The docs page's Content-Security-Policy: scripts from the service and the page's own inline
 * start-up script (by its hash); requests to the service (and to the API's public address, where
 * "Test Request" sends them); no frame may hold it. Styles may be inline: Scalar writes its
 * stylesheets into the page as it runs.
 */
export function docsPolicy(page: string, publicBaseUrl?: string): string {
  const inline = DomUtils.findAll((element) => element.name === 'script' && element.attribs.src === undefined, parseDocument(page).children);
  const hashes = inline.map((element) => `'sha256-${createHash('sha256').update(DomUtils.textContent(element)).digest('base64')}'`);
  return [
    "default-src 'none'",
    `script-src 'self' ${hashes.join(' ')}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    `connect-src 'self'${publicBaseUrl ? ` ${new URL(publicBaseUrl).origin}` : ''}`,
    "form-action 'none'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

const gzipAsync = promisify(gzip);

/** Adds the reference page, its script, a favicon answer and `/` (which leads to the page) to `app`. */
export async function docsPage(app: FastifyInstance, publicBaseUrl: string | undefined): Promise<void> {
  // The reference's script is 4.9 MB: it goes gzipped (1.4 MB) to browsers that take it,
  // adapted (adaptScalarScript) and compressed once, in the thread pool, on the first request,
  // and browsers keep it for a day (it changes only with the package's version). The hooks are
  // the script's and the page's routes' alone, added as the plugin declares them, so that no
  // other answer pays for them.
  let gzipped: Promise<Buffer> | null = null;
  let script: string | null = null;
  const serveScript: onSendHookHandler = async (request, reply, payload) => {
    if (typeof payload !== 'string' || reply.statusCode !== 200) return payload;
    script ??= adaptScalarScript(payload);
    reply.header('cache-control', 'public, max-age=86400').header('vary', 'accept-encoding');
    if (!acceptsGzip(request.headers['accept-encoding'])) return script;
    gzipped ??= gzipAsync(script);
    reply.header('content-encoding', 'gzip').removeHeader('content-length');
    return gzipped;
  };
  // The page is the same at every request (the configuration below): its policy, with the hash
  // of its inline start-up script, is worked out from the first one.
  let policy: string | null = null;
  const securePage: onSendHookHandler = async (_request, reply, payload) => {
    if (typeof payload !== 'string' || reply.statusCode !== 200) return payload;
    policy ??= docsPolicy(payload, publicBaseUrl);
    reply.header('content-security-policy', policy).header('x-frame-options', 'DENY').header('referrer-policy', 'no-referrer');
    return payload;
  };
  app.addHook('onRoute', (route) => {
    const hook = route.url === SCRIPT_PATH ? serveScript : route.url === PAGE_PATH ? securePage : null;
    if (hook) route.onSend = [...[route.onSend ?? []].flat(), hook];
  });
  // The reference page: Scalar, whose script the plugin serves itself (/docs/js/scalar.js). It
  // loads nothing from elsewhere: no fonts, no telemetry, no developer toolbar, no hosted proxy.
  await app.register(scalar, {
    routePrefix: DOCS_PREFIX,
    logLevel: 'silent',
    configuration: {
      url: '/openapi.json',
      pageTitle: 'Public-Page Data Extraction API: reference',
      theme: 'default',
      withDefaultFonts: false,
      telemetry: false,
      showDeveloperTools: 'never',
      hideClientButton: true,
      // Only the samples the declarations generate (x-codeSamples): curl, the SDK, Python.
      hiddenClients: true,
      defaultHttpClient: { targetKey: 'shell', clientKey: 'curl' },
      mcp: { disabled: true },
      agent: { disabled: true },
      // The guide's code blocks wrap their long lines (an address longer than the column, say)
      // rather than hiding them behind a scrollbar.
      customCss: '.scalar-app .markdown pre code { white-space: pre-wrap; overflow-wrap: anywhere; }',
    },
  });
  // Browsers ask for an icon; the service has none to show.
  app.get('/favicon.ico', { schema: { hide: true } }, async (_request, reply) => reply.code(204).send());
  // The service's front page is its reference.
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/docs', 302));
}
