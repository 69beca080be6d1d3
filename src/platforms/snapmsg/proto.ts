// Converters for snapmsg's protobuf-flavoured JSON (README.md, "Payload conventions"): int64s
// are decimal strings, doubles may be written as strings, and times are int64 epoch
// milliseconds or seconds. A JSON number is accepted for an int64 too.
import { converter } from '../shared/read.ts';

const INT64 = /^-?[0-9]+$/;

/** An int64: a decimal string (or a JSON integer) below 2^53. Empty default `0` (proto3's). */
export const int64 = converter(
  'an int64 decimal string',
  (value) => {
    const n = typeof value === 'string' && INT64.test(value) ? Number(value) : value;
    return typeof n === 'number' && Number.isSafeInteger(n) ? n : undefined;
  },
  0,
);

/** A double: a finite JSON number, or a numeric string as protobuf JSON allows. Empty default `0`. */
export const double = converter(
  'a number',
  (value) => {
    const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
    return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
  },
  0,
);

const isoOf = (epochMs: number | undefined): string | undefined => {
  if (epochMs === undefined) return undefined;
  const date = new Date(epochMs);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
};

/** `ms`: int64 epoch milliseconds as ISO 8601 UTC with milliseconds. */
export const msTime = converter('int64 epoch milliseconds', (value) => isoOf(int64.from(value)));

/** `sec`: int64 epoch seconds as ISO 8601 UTC with milliseconds. */
export const secTime = converter('int64 epoch seconds', (value) => {
  const seconds = int64.from(value);
  return isoOf(seconds === undefined ? undefined : seconds * 1000);
});
