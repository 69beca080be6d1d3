// How a platform declares itself and its endpoints. A platform writes its id once
// (`definePlatform`), each endpoint a short name (`endpoint`); the endpoint's id
// (`socialnet.profile.posts`) and path (`/v1/socialnet/profile/posts`) are derived from them.
//
// `endpoint` ties the extractor to the data schema: the extractor must return exactly
// `Static<typeof data>` without `fetchedAt` and `paging` (the core adds those), so a field that is
// missing, misnamed or of the wrong nullability is a compile error in the platform's mapping.
import type { Static, TObject } from 'typebox';
import type { EndpointDeclaration, Extractor } from './types.ts';
import { UpstreamOutcome } from '../upstream/outcomes.ts';
import { UnrecognisedData } from '../platforms/shared/read.ts';

/** What an extractor returns for an endpoint whose `data` schema is `D`. */
export type ExtractedData<D extends TObject> = Omit<Static<D>, 'fetchedAt' | 'paging'>;

/** An endpoint as its platform writes it: everything but the derived id, path and platform. */
export interface EndpointDefinition<D extends TObject> extends Omit<
  EndpointDeclaration,
  'id' | 'path' | 'platform' | 'platformDescription' | 'data' | 'extractor'
> {
  /** Dotted name below the platform, e.g. `profile.posts`: id `{platform}.{name}`, path `/v1/{platform}/{name with /}`. */
  name: string;
  data: D;
  extract: Extractor<ExtractedData<D>>;
}

/** An endpoint definition with its data type checked and then erased, ready for `definePlatform`. */
export type PlatformEndpoint = EndpointDefinition<TObject> & { extract: Extractor };

export const endpoint = <D extends TObject>(definition: EndpointDefinition<D>): PlatformEndpoint =>
  definition as unknown as PlatformEndpoint;

export interface Platform {
  /** `socialnet`: the first segment of every endpoint id and path of the platform. */
  id: string;
  endpoints: readonly EndpointDeclaration[];
}

/** `extract`, with a page its mapping does not recognise (`UnrecognisedData`) as the platform's `unrecognised` outcome. */
export function withPlatformOutcomes<T>(platformId: string, extract: Extractor<T>): Extractor<T> {
  return async (request, context) => {
    try {
      return await extract(request, context);
    } catch (error) {
      if (error instanceof UnrecognisedData) throw new UpstreamOutcome('unrecognised', platformId, `${platformId} page not recognised: ${error.message}`, { cause: error });
      throw error;
    }
  };
}

/**
 * A platform and its endpoints, as the core sees them. A mapping that finds a page not as the
 * platform's README describes it throws `UnrecognisedData`; it reaches the core as the platform's
 * `unrecognised` outcome.
 */
export function definePlatform(platform: {
  id: string;
  /** What the platform is, for the OpenAPI tag that groups its endpoints. */
  description: string;
  endpoints: readonly PlatformEndpoint[];
}): Platform {
  return {
    id: platform.id,
    endpoints: platform.endpoints.map(({ name, extract, ...rest }) => ({
      ...rest,
      id: `${platform.id}.${name}`,
      path: `/v1/${platform.id}/${name.replaceAll('.', '/')}`,
      platform: platform.id,
      platformDescription: platform.description,
      extractor: withPlatformOutcomes(platform.id, extract),
    })),
  };
}
