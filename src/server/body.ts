// JSON request bodies: validated whole against their declaration's schema, every problem listed
// in `details` with its JSON path (`requests[12].params.username`); nothing is done on a 422.
import type { IncomingHttpHeaders } from 'node:http';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import type { TObject } from 'typebox';
import type { ValidationDetail } from '../endpoints/types.ts';
import { ApiError } from './errors.ts';

/** Whether a request announces a body (chunked, or a length other than 0). */
export const announcesBody = (headers: IncomingHttpHeaders): boolean =>
  headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');

/** `/requests/12/params/username` → `requests[12].params.username`. */
export function jsonPath(pointer: string, child?: string): string {
  const parts = pointer === '' ? [] : pointer.slice(1).split('/').map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (child !== undefined) parts.push(child);
  return parts.reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path === '' ? part : `${path}.${part}`), '');
}

function describe(error: ErrorObject): ValidationDetail {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { path: jsonPath(error.instancePath, String(params.missingProperty)), message: 'Required' };
    case 'additionalProperties':
      return { path: jsonPath(error.instancePath, String(params.additionalProperty)), message: 'Is not a field of this request' };
    case 'type': {
      const types = ([] as string[]).concat(params.type as string | string[]).map((type) => (type === 'integer' ? 'a whole number' : type === 'null' ? 'null' : `a ${type}`));
      return { path: jsonPath(error.instancePath), message: `Must be ${types.join(' or ')}` };
    }
    case 'minimum':
      return { path: jsonPath(error.instancePath), message: `Must be at least ${String(params.limit)}` };
    case 'maximum':
      return { path: jsonPath(error.instancePath), message: `Must be at most ${String(params.limit)}` };
    default:
      return { path: jsonPath(error.instancePath), message: error.message ?? 'Invalid' };
  }
}

export class BodyValidator {
  readonly #validate: ValidateFunction;

  constructor(schema: TObject, ajv: Ajv) {
    this.#validate = ajv.compile(schema);
  }

  /** A Fastify validator: the body, or a 422 listing every problem. */
  readonly check = (body: unknown): { value: unknown } | { error: ApiError } => {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return { error: new ApiError('VALIDATION_ERROR', 'The request body is invalid; see details.', { details: [{ path: '', message: 'Must be a JSON object' }] }) };
    }
    if (this.#validate(body)) return { value: body };
    const seen = new Set<string>();
    const details: ValidationDetail[] = [];
    for (const error of this.#validate.errors ?? []) {
      const detail = describe(error);
      if (seen.has(detail.path)) continue;
      seen.add(detail.path);
      details.push(detail);
    }
    return { error: new ApiError('VALIDATION_ERROR', 'The request body is invalid; see details.', { details }) };
  };
}
