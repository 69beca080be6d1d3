// Reading an upstream answer's body for the client (client.ts): decoded, capped in size while
// streaming, and counted against the memory budget for upstream bodies as it is buffered.
import { isAscii, isUtf8, transcode } from 'node:buffer';
import { pipeline, Readable, type Transform } from 'node:stream';
import type { MemoryBudget, MemoryLease } from './memory.ts';
import { UpstreamOutcome } from './outcomes.ts';
import { decodeWhole, decoderFor, encodingOf, Transient, type Encoding } from './transport.ts';

/**
 * The bytes one `Upstream` call holds: its lease, and how much of it the latest attempt's
 * answer took. It travels with the request object of each hop (a symbol key survives copies).
 */
export interface BodyCharge {
  lease: MemoryLease;
  bytes: number;
}

/**
 * Compressed bodies up to this size (or the cap, when smaller) are read whole and decoded in one
 * synchronous call, into at most `WHOLE_MAX_DECODED` bytes; larger ones, or ones that decode to
 * more, through a streaming decoder. One call costs 23 µs of CPU for a linkpage-a page (3 KB of
 * gzip, 9 KB decoded) where a stream cost 105 µs, and 66 µs for a shopfront page (6 KB of br, 40
 * KB decoded) where a stream cost 160-220 µs (a Transform per body, its callbacks and a round
 * trip to the thread pool per chunk); decoding was 11% of the service's profile in `npm run
 * bench:live`. The bounds keep a call's hold on the event loop to about a millisecond, whatever
 * the upstream sends (a gzip bomb included).
 */
const WHOLE_MAX_COMPRESSED = 64 * 1024;
const WHOLE_MAX_DECODED = 1024 * 1024;

/** `head`, then what is left of `rest`: the body's compressed bytes, for a streaming decoder. */
async function* compressedBytes(head: readonly Buffer[], rest: AsyncIterator<Buffer> | null): AsyncGenerator<Buffer> {
  yield* head;
  if (rest === null) return;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
}

/**
 * Reads and decodes the body, never holding more than the size cap, and takes its decoded
 * bytes from the memory budget as they are buffered (the whole declared length up front when
 * it is known; a compressed body's bytes while it is read whole): they stay in `charge` when
 * the body is returned, and go back when it fails.
 */
export async function readBody(
  limits: { cap: number; memoryWaitMs: number; memory: MemoryBudget },
  platform: string,
  raw: Readable,
  encodingHeader: string | undefined,
  declaredLength: string | undefined,
  charge: BodyCharge | undefined,
  signal: AbortSignal,
  deadline: number,
): Promise<string> {
  const { cap } = limits;
  const tooLarge = () => new UpstreamOutcome('unrecognised', platform, `response larger than ${cap} bytes`);
  // Destroying an unread undici body emits an 'error' (RequestAbortedError): without a listener
  // it would be an uncaught exception. Read errors still reach the loops below.
  raw.on('error', () => undefined);
  if (declaredLength !== undefined && Number(declaredLength) > cap && !encodingHeader) {
    raw.destroy();
    throw tooLarge();
  }
  let encoding: Encoding | null;
  try {
    encoding = encodingOf(encodingHeader);
  } catch (error) {
    raw.destroy();
    if (error instanceof UpstreamOutcome) throw new UpstreamOutcome('unrecognised', platform, error.message);
    throw error;
  }
  let decoder: Transform | null = null;
  // Bytes of this body taken from the budget so far (at least `size`).
  let taken = 0;
  const reserve = async (bytes: number) => {
    if (!charge) return;
    const wait = Math.min(limits.memoryWaitMs, deadline - Date.now());
    const granted = charge.lease.take(bytes, wait, signal);
    if (granted !== true && !(await granted)) {
      const { used, capacity } = limits.memory;
      throw new UpstreamOutcome('overloaded', platform, `no memory for the upstream answer: ${used} of ${capacity} bytes held by answers in flight`);
    }
    taken += bytes;
    charge.bytes += bytes;
  };
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    let source: AsyncIterable<Buffer> | Iterable<Buffer> = raw;
    if (encoding !== null) {
      const iterator = raw[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
      const head: Buffer[] = [];
      let read = 0;
      let ended = false;
      const wholeLimit = Math.min(WHOLE_MAX_COMPRESSED, cap);
      for (;;) {
        const next = await iterator.next();
        if (next.done) {
          ended = true;
          break;
        }
        head.push(next.value);
        read += next.value.length;
        // Past the limit the body is decoded as a stream, which takes its decoded bytes (capped) as they come.
        if (read > wholeLimit) break;
        if (read > taken) await reserve(read - taken);
      }
      if (ended) {
        const decoded = decodeWhole(encoding, head.length === 1 ? (head[0] as Buffer) : Buffer.concat(head, read), Math.min(cap, WHOLE_MAX_DECODED));
        if (decoded === null && cap <= WHOLE_MAX_DECODED) throw tooLarge();
        if (decoded !== null) {
          size = decoded.length;
          chunks.push(decoded);
          if (size > taken) await reserve(size - taken);
        }
      }
      if (chunks.length === 0) {
        // Too large to decode in one call: a streaming decoder, from the bytes read so far.
        decoder = decoderFor(encoding);
        pipeline(Readable.from(compressedBytes(head, ended ? null : iterator), { objectMode: false }), decoder, () => undefined);
        source = decoder;
      } else {
        source = [];
      }
    } else {
      const known = Number(declaredLength);
      if (declaredLength !== undefined && Number.isSafeInteger(known) && known > 0) await reserve(known);
    }
    for await (const chunk of source) {
      size += chunk.length;
      if (size > cap) {
        raw.destroy();
        decoder?.destroy();
        throw tooLarge();
      }
      if (size > taken) await reserve(size - taken);
      chunks.push(chunk);
    }
  } catch (error) {
    // Free the connection: a body left half-read (e.g. after a decoding error) holds it forever.
    raw.destroy();
    decoder?.destroy();
    charge?.lease.give(taken);
    if (charge) charge.bytes -= taken;
    if (error instanceof UpstreamOutcome) throw error;
    // Any failure while reading (reset, timeout or budget abort, corrupt gzip/deflate/br) is transient.
    throw new Transient(`reading the upstream body failed: ${(error as Error).message}`, { cause: error });
  }
  // A body shorter than its reservation gives back the difference.
  if (charge && taken > size) {
    charge.lease.give(taken - size);
    charge.bytes -= taken - size;
  }
  return utf8Text(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
}

/**
 * The body as text, as `toString('utf8')` makes it. V8 decodes UTF-8 that holds any non-ASCII
 * character one character at a time; ICU's converter behind `transcode` makes the same UTF-16
 * 3 to 7 times faster: 35 -> 9 µs for a 9 KB linkpage-a page with two accented letters (3% of
 * a live scrape's CPU in `npm run bench:live`), 1.2 -> 0.5 ms for the largest snapmsg page,
 * 143 -> 20 µs for a shopfront page (sandbox pages, this function against `toString`). It
 * throws on invalid UTF-8, which `toString` decodes with replacement characters: that, and
 * ASCII (which V8 copies in one pass), are left to `toString`.
 */
export function utf8Text(bytes: Buffer): string {
  if (isAscii(bytes) || !isUtf8(bytes)) return bytes.toString('utf8');
  return transcode(bytes, 'utf8', 'utf16le').toString('utf16le');
}
