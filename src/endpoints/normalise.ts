// Normalisers shared by endpoints: the rules that turn a validated query into the canonical
// target parameters.
import type { NormaliseResult, RawQuery } from './types.ts';

type ParamCheck<K extends string> = ({ ok: true } & Record<K, string>) | { ok: false; message: string };

/**
 * A platform's rule run on one query parameter, which the target keeps in its canonical form;
 * a missing or empty parameter is `Required`, and every refusal is a detail on that parameter.
 */
export const normaliseParam =
  <K extends string>(param: K, parse: (input: string) => ParamCheck<K>) =>
  (query: RawQuery): NormaliseResult => {
    const raw = query[param];
    if (raw === undefined || raw === '') return { ok: false, details: [{ path: param, message: 'Required' }] };
    const result = parse(raw);
    return result.ok
      ? { ok: true, params: { [param]: result[param] } }
      : { ok: false, details: [{ path: param, message: result.message }] };
  };

/** A platform's URL rule run on the `url` parameter. */
export const normaliseUrl = (parse: (input: string) => ParamCheck<'url'>) => normaliseParam('url', parse);
