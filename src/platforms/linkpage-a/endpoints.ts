// The linkpage-a endpoints: query, data schema and extractor of each.
import { Type } from 'typebox';
import { extractProfile } from './extract.ts';
import { parseLinkpageAUrl } from './urls.ts';
import { endpoint } from '../../endpoints/define.ts';
import { normaliseUrl } from '../../endpoints/normalise.ts';
import { DateTime, Obj, UrlParam } from '../../endpoints/schemas/common.ts';
import { LinkpageAProfile } from './schema.ts';

/** The OpenAPI tag's description of every linkpage-a endpoint. */
export const description =
  'linkpage-a, a link-in-bio service: public profiles with their links, social links, contact details and gallery.';

export const linkpageAProfile = endpoint({
  name: 'profile',
  summary: 'linkpage-a link-in-bio profile',
  description:
    'A public linkpage-a profile: identity, theme, social and featured links, contact details, gallery, ' +
    'sections and page metadata. A private profile is 404.',
  query: Type.Object(
    {
      url: UrlParam('Profile URL: `https://linkpage-a.example/{username}` or `https://linkpage-a.example/@{username}`.'),
    },
    { additionalProperties: false },
  ),
  data: Obj({ profile: LinkpageAProfile, fetchedAt: DateTime() }),
  normalise: normaliseUrl(parseLinkpageAUrl),
  exampleQuery: { url: 'https://linkpage-a.example/luna.voss' },
  extract: extractProfile,
});
