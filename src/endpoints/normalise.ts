// Normalisers shared by endpoints: the rules that turn a validated query into the canonical
// target parameters.
import type { NormaliseResult, RawQuery } from './types.ts';

/** A platform's URL rule run on the `url` parameter; every refusal is a detail on `url`. */
export const normaliseUrl =
  (parse: (input: string) => { ok: true; url: string } | { ok: false; message: string }) =>
  (query: RawQuery): NormaliseResult => {
    const raw = query.url;
    if (raw === undefined || raw === '') return { ok: false, details: [{ path: 'url', message: 'Required' }] };
    const result = parse(raw);
    return result.ok
      ? { ok: true, params: { url: result.url } }
      : { ok: false, details: [{ path: 'url', message: result.message }] };
  };
