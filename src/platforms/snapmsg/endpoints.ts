// The snapmsg endpoints: query, data schema and extractor of each.
import { Type } from 'typebox';
import { extractProfile, extractSpotlightComments } from './extract.ts';
import { normaliseSnapmsgUsername, parseSpotlightUrl } from './urls.ts';
import { endpoint } from '../../endpoints/define.ts';
import { normaliseParam, normaliseUrl } from '../../endpoints/normalise.ts';
import { Bool, DateTime, Int, Obj, QueryText, Str, TokenParam, UrlParam } from '../../endpoints/schemas/common.ts';
import { SnapmsgComment, SnapmsgProfile } from './schema.ts';

/** The OpenAPI tag's description of every snapmsg endpoint. */
export const description =
  'snapmsg, a messaging app with public web profiles: profiles with their story, lenses and highlights, and the ' +
  'comments on public Spotlight videos.';

export const snapmsgProfile = endpoint({
  name: 'profile',
  summary: 'snapmsg public profile',
  description:
    'A snapmsg profile by username: public profile details, current story, lenses, curated and Spotlight ' +
    'highlights (the first batch the profile page embeds) and related accounts. An existing account without ' +
    'a public profile answers with `profileType: "userInfo"` and empty, zero or null fields.',
  query: Type.Object(
    {
      username: QueryText(
        16,
        'snapmsg username, with or without a leading `@`: 3 to 15 characters, a letter first, then letters, digits, `.`, `_`, `-`; case-insensitive.',
      ),
    },
    { additionalProperties: false },
  ),
  data: Obj({ profile: SnapmsgProfile, fetchedAt: DateTime() }),
  normalise: normaliseParam('username', normaliseSnapmsgUsername),
  exampleQuery: { username: 'lunavoss' },
  extract: extractProfile,
});

export const snapmsgSpotlightComments = endpoint({
  name: 'spotlight.comments',
  summary: 'Comments on a snapmsg Spotlight video',
  description:
    'Comments on a public Spotlight video, in the platform’s ranking order, one upstream batch per call. ' +
    'Pass `paging.cursor` back as `cursor` (with the same `url`) for the next batch; at the end `paging.cursor` ' +
    'is `""` and `paging.hasMore` is false. A video with comments turned off answers with no comments.',
  query: Type.Object(
    {
      url: UrlParam(
        'Spotlight video URL: `https://www.snapmsg.example/spotlight/{id}` or `https://www.snapmsg.example/@{username}/spotlight/{id}`.',
      ),
      cursor: Type.Optional(TokenParam('`paging.cursor` of a previous response, to fetch the next batch.')),
    },
    { additionalProperties: false },
  ),
  data: Obj({
    comments: Type.Array(SnapmsgComment),
    count: Int({ description: 'Number of comments in this batch.' }),
    paging: Obj({
      cursor: Str({ description: 'Opaque cursor of the next batch; `""` at the end.' }),
      hasMore: Bool(),
    }),
    fetchedAt: DateTime(),
  }),
  paging: { param: 'cursor', field: 'cursor', flag: 'hasMore', end: '', items: 'comments' },
  normalise: normaliseUrl(parseSpotlightUrl),
  exampleQuery: { url: 'https://www.snapmsg.example/spotlight/starTrails_Sintra_0001' },
  extract: extractSpotlightComments,
});
