// Building blocks shared by every endpoint's data schema. Nullability is always explicit:
// `Nullable(X)` is the only way a field may carry `null`, so the OpenAPI document and the
// output check agree on it.
import { Type, type TSchema } from 'typebox';

/** A value that is either `schema` or JSON null. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** ISO 8601 UTC date-time string with milliseconds, e.g. `2024-05-01T12:00:00.000Z`. */
export const DateTime = (description?: string) =>
  Type.String({ format: 'date-time', ...(description ? { description } : {}) });

/** Absolute URL string. */
export const Url = (description?: string) => Type.String({ ...(description ? { description } : {}) });

/** An object whose shape the API leaves open: any JSON object, passed through unchanged. */
export const OpenObject = (description?: string) =>
  Type.Object({}, { additionalProperties: true, ...(description ? { description } : {}) });

/** `{type, count}` reaction breakdown used by socialnet posts, comments and replies. */
export const ReactionByType = Type.Object(
  { type: Type.String(), count: Type.Integer() },
  { additionalProperties: false },
);

/** Closed object: every field is declared, nothing else may appear. */
export const Obj = <P extends Record<string, TSchema>>(properties: P, description?: string) =>
  Type.Object(properties, { additionalProperties: false, ...(description ? { description } : {}) });

// ---- query parameters (every query value arrives as a string) ----

/** A string query parameter of at most `maxLength` characters. */
export const QueryText = (maxLength: number, description: string) =>
  Type.String({ minLength: 1, maxLength, description });

/** `url` parameter: absolute http(s) URL on one of the platform's hosts, at most 2,048 characters. */
export const UrlParam = (description: string) => QueryText(2048, description);

/** Cursor or page token: at most 4,096 characters. */
export const TokenParam = (description: string) => QueryText(4096, description);

/** A string parameter that takes one of `values` (rendered as a JSON Schema `enum`). */
export const EnumParam = <V extends string>(values: readonly V[], description: string, defaultValue?: V) =>
  Type.Unsafe<V>({ type: 'string', enum: [...values], description, ...(defaultValue ? { default: defaultValue } : {}) });

/** Boolean switch: `true`, `false`, `1` or `0`. */
export const BooleanParam = (description: string, defaultValue: boolean) =>
  EnumParam(['true', 'false', '1', '0'], `${description} Accepts \`true\`, \`false\`, \`1\`, \`0\`.`, String(defaultValue) as 'true' | 'false');

/** Reads a validated boolean switch, applying its default. */
export const readBoolean = (value: string | undefined, defaultValue: boolean): boolean =>
  value === undefined ? defaultValue : value === 'true' || value === '1';

// ---- short names for the data schemas' leaves ----

export const Str = Type.String;
export const Int = Type.Integer;
export const Bool = Type.Boolean;
/** A string or null. */
export const NStr = () => Nullable(Type.String());
