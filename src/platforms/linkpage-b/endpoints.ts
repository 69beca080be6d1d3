// The linkpage-b endpoints: query, data schema and extractor of each.
import { Type } from 'typebox';
import { extractPage } from './extract.ts';
import { parseLinkpageBUrl } from './urls.ts';
import { endpoint } from '../../endpoints/define.ts';
import { normaliseUrl } from '../../endpoints/normalise.ts';
import { DateTime, Obj, UrlParam } from '../../endpoints/schemas/common.ts';
import { LinkpageBPage } from './schema.ts';

/** The OpenAPI tag's description of every linkpage-b endpoint. */
export const description =
  'linkpage-b, a link-in-bio service: public pages with their links, social links, pinned links and store.';

export const linkpageBPage = endpoint({
  name: 'page',
  summary: 'linkpage-b link-in-bio page',
  description:
    'A public linkpage-b page: identity, theme, social links, links (groups with their children), pinned ' +
    'links and the store. Sensitive or 18+ pages are returned normally.',
  query: Type.Object(
    { url: UrlParam('Page URL: `https://linkpage-b.example/{username}`.') },
    { additionalProperties: false },
  ),
  data: Obj({ page: LinkpageBPage, fetchedAt: DateTime() }),
  normalise: normaliseUrl(parseLinkpageBUrl),
  exampleQuery: { url: 'https://linkpage-b.example/luna.voss' },
  extract: extractPage,
});
