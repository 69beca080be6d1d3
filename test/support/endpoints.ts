// The registered endpoint declarations by id, as the core sees them (extractor included).
import { endpoints } from '../../src/endpoints/index.ts';
import type { EndpointDeclaration, Extractor } from '../../src/endpoints/types.ts';

export function declared(id: string): EndpointDeclaration {
  const found = endpoints.find((endpoint) => endpoint.id === id);
  if (found === undefined) throw new Error(`no endpoint ${id}`);
  return found;
}

export function extractorOf(id: string): Extractor {
  const { extractor } = declared(id);
  if (extractor === undefined) throw new Error(`endpoint ${id} has no extractor`);
  return extractor;
}

export const endpointsOf = (platform: string): EndpointDeclaration[] => endpoints.filter((endpoint) => endpoint.platform === platform);
