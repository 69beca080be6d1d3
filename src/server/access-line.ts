// Each request's access line, written as pino writes `log.info(fields, 'request')`, byte for
// byte and into the same stream, but composed here from a fixed list of fields. pino's general
// path walks the object key by key (serializers, stringifiers, an escape loop per string,
// message formatting) and built the line from a dozen pieces: with a line per request it cost
// a cache hit 3.4 µs of main-thread CPU more than this (38.2 -> 36.5 µs with the gathered
// destination of log-destination.ts; 39.4 -> 34.7 µs for both: `node bench/compare.ts`).
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';

export interface AccessFields {
  requestId: string;
  team: string | null;
  endpoint: string | null;
  method: string;
  path: string;
  status: number;
  credits: number;
  cached: boolean;
  durationMs: number;
}

const INFO = 30;

/** pino's parts of a line, read through its exported symbols. */
interface PinoParts {
  levelVal: number;
  [pino.symbols.lsCacheSym]: Record<number, string>;
  [pino.symbols.timeSym]: () => string;
  [pino.symbols.chindingsSym]: string;
  [pino.symbols.endSym]: string;
  [pino.symbols.streamSym]: { write: (line: string) => unknown };
  [pino.symbols.messageKeySym]: string;
  [pino.symbols.mixinSym]?: unknown;
  [pino.symbols.formattersSym]?: { log?: unknown };
  [pino.symbols.hooksSym]?: { logMethod?: unknown };
  [pino.symbols.serializersSym]?: Record<string, unknown>;
  [pino.symbols.stringifiersSym]?: Record<string | symbol, unknown>;
  [pino.symbols.nestedKeySym]?: string | null;
}

/** Exported by pino at run time, absent from its type declarations. */
const MSG_PREFIX = (pino.symbols as unknown as { msgPrefixSym: symbol }).msgPrefixSym;

const FIELDS: readonly (keyof AccessFields)[] = ['requestId', 'team', 'endpoint', 'method', 'path', 'status', 'credits', 'cached', 'durationMs'];

const isPlainPino = (log: FastifyBaseLogger): log is FastifyBaseLogger & PinoParts => {
  const parts = log as unknown as Partial<PinoParts>;
  return (
    typeof parts.levelVal === 'number' &&
    typeof parts[pino.symbols.streamSym]?.write === 'function' &&
    typeof parts[pino.symbols.timeSym] === 'function' &&
    typeof parts[pino.symbols.lsCacheSym]?.[INFO] === 'string' &&
    parts[pino.symbols.mixinSym] === undefined &&
    parts[pino.symbols.formattersSym]?.log === undefined &&
    parts[pino.symbols.hooksSym]?.logMethod === undefined &&
    !parts[pino.symbols.nestedKeySym] &&
    !(parts as Record<symbol, unknown>)[MSG_PREFIX] &&
    // Redaction (pino's stringifiers) or a serializer of one of the fields would change the line.
    Reflect.ownKeys(parts[pino.symbols.stringifiersSym] ?? {}).length === 0 &&
    !FIELDS.some((field) => parts[pino.symbols.serializersSym]?.[field] !== undefined)
  );
};

/**
 * The writer of access lines to `log`, at its level `info`. A logger that is not pino, or whose
 * lines pino would shape otherwise (a mixin, a log formatter or hook, a nested key, a message
 * prefix, redaction, a serializer of one of the fields), gets them through `log.info`.
 */
export function accessLine(log: FastifyBaseLogger): (fields: AccessFields) => void {
  if (!isPlainPino(log)) return (fields) => log.info(fields, 'request');
  const level = log[pino.symbols.lsCacheSym][INFO] as string;
  const time = log[pino.symbols.timeSym];
  const stream = log[pino.symbols.streamSym];
  const message = `,${JSON.stringify(log[pino.symbols.messageKeySym])}:"request"`;
  return (f) => {
    if (log.levelVal > INFO) return;
    // The strings through JSON.stringify: the path is the client's; the others are safe today
    // (ids, route names, an HTTP method token), and escaping them costs little.
    stream.write(
      `${level}${time()}${log[pino.symbols.chindingsSym]},"requestId":${JSON.stringify(f.requestId)},"team":${JSON.stringify(f.team)},"endpoint":${JSON.stringify(f.endpoint)}` +
        `,"method":${JSON.stringify(f.method)},"path":${JSON.stringify(f.path)},"status":${f.status},"credits":${f.credits},"cached":${f.cached},"durationMs":${f.durationMs}` +
        `${message}${log[pino.symbols.endSym]}`,
    );
  };
}
