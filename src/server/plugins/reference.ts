// The docs page (/docs/): Scalar's API reference, reading the service's /openapi.json. Scalar's
// module carries its 4.9 MB browser script as a string literal, about 20 MB of heap once
// imported: it is imported at the first request for the page or its script, not at start, and
// what it renders is kept, the script as bytes (UTF-8 and gzipped, outside the heap).
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import Fastify, { type FastifyPluginAsync, type FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import { DomUtils, parseDocument } from 'htmlparser2';
import { acceptsGzip } from '../gzip.ts';

const DOCS_PREFIX = '/docs';
/** Where the reference's page and script are served, as @scalar/fastify-api-reference serves them. */
const PAGE_PATH = `${DOCS_PREFIX}/`;
const SCRIPT_PATH = `${DOCS_PREFIX}/js/scalar.js`;
/** What Scalar's script shows in an empty key field, and what the service's copy shows instead. */
export const SCALAR_KEY_PLACEHOLDER = 'QUxMIFlPVVIgQkFTRSBBUkUgQkVMT05HIFRPIFVT';
export const KEY_PLACEHOLDER = 'YOUR_API_KEY';

/** Scalar's configuration of the page: it loads nothing from elsewhere (no fonts, no telemetry, no developer toolbar, no hosted proxy). */
const CONFIGURATION = {
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
} as const;

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

interface Reference {
  page: string;
  /** The page's policy, with the hash of its inline start-up script. */
  policy: string;
  /** The adapted script, UTF-8. */
  script: Buffer;
  /** The same, gzipped (1.4 MB), for browsers that take it. */
  gzipped: Buffer;
}

/**
 * The page and script as Scalar's Fastify plugin renders them, taken from an instance of their
 * own (Scalar offers no other way to them), the script adapted and compressed in the thread pool.
 */
async function render(publicBaseUrl: string | undefined): Promise<Reference> {
  const { default: scalar } = await import('@scalar/fastify-api-reference');
  const instance = Fastify({ logger: false });
  try {
    await instance.register(scalar, { routePrefix: DOCS_PREFIX, configuration: CONFIGURATION });
    const [page, script] = await Promise.all([instance.inject({ method: 'GET', url: PAGE_PATH }), instance.inject({ method: 'GET', url: SCRIPT_PATH })]);
    if (page.statusCode !== 200 || script.statusCode !== 200) throw new Error(`Scalar's reference answered ${page.statusCode} and ${script.statusCode}`);
    const adapted = Buffer.from(adaptScalarScript(script.body));
    return { page: page.body, policy: docsPolicy(page.body, publicBaseUrl), script: adapted, gzipped: await promisify(gzip)(adapted) };
  } finally {
    await instance.close();
  }
}

const hidden = { schema: { hide: true }, logLevel: 'silent' } as const;

const reference: FastifyPluginAsync<{ publicBaseUrl?: string | undefined }> = async (app, options) => {
  let rendered: Promise<Reference> | null = null;
  const load = (): Promise<Reference> => {
    // A failure is not kept: the next request tries again.
    rendered ??= render(options.publicBaseUrl).catch((error: unknown) => {
      rendered = null;
      throw error;
    });
    return rendered;
  };
  const html = (reply: FastifyReply, { page, policy }: Reference) =>
    reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('content-security-policy', policy)
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'no-referrer')
      .send(page);

  app.get(DOCS_PREFIX, hidden, async (_request, reply) => reply.redirect(PAGE_PATH, 301));
  app.get(PAGE_PATH, hidden, async (_request, reply) => html(reply, await load()));
  // Browsers keep the script for a day: it changes only with the package's version.
  app.get(SCRIPT_PATH, hidden, async (request, reply) => {
    const { script, gzipped } = await load();
    reply.header('content-type', 'application/javascript; charset=utf-8').header('cache-control', 'public, max-age=86400').header('vary', 'accept-encoding');
    return acceptsGzip(request.headers['accept-encoding']) ? reply.header('content-encoding', 'gzip').send(gzipped) : reply.send(script);
  });
  // Browsers ask for an icon; the service has none to show.
  app.get('/favicon.ico', hidden, async (_request, reply) => reply.code(204).send());
  // The service's front page is its reference.
  app.get('/', hidden, async (_request, reply) => reply.redirect(DOCS_PREFIX, 302));
};

export const referencePlugin = fp(reference, { name: 'reference' });
