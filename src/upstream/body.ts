// Reading an upstream answer's body for the client (client.ts): decoded, capped in size while
// streaming, and counted against the memory budget for upstream bodies as it is buffered.
import type { Readable, Transform } from 'node:stream';
import type { MemoryBudget, MemoryLease } from './memory.ts';
import { UpstreamOutcome } from './outcomes.ts';
import { decoderFor, Transient } from './transport.ts';

/**
 * The bytes one `Upstream` call holds: its lease, and how much of it the latest attempt's
 * answer took. It travels with the request object of each hop (a symbol key survives copies).
 */
export interface BodyCharge {
  lease: MemoryLease;
  bytes: number;
}

/**
 * Reads and decodes the body, never holding more than the size cap, and takes its decoded
 * bytes from the memory budget as they are buffered (the whole declared length up front when
 * it is known): they stay in `charge` when the body is returned, and go back when it fails.
 */
export async function readBody(
  limits: { cap: number; memoryWaitMs: number; memory: MemoryBudget },
  platform: string,
  raw: Readable,
  encoding: string | undefined,
  declaredLength: string | undefined,
  charge: BodyCharge | undefined,
  signal: AbortSignal,
  deadline: number,
): Promise<string> {
  const { cap } = limits;
  const tooLarge = () => new UpstreamOutcome('unrecognised', platform, `response larger than ${cap} bytes`);
  // Destroying an unread undici body emits an 'error' (RequestAbortedError): without a listener
  // it would be an uncaught exception. Read errors still reach the loop below.
  raw.on('error', () => undefined);
  if (declaredLength !== undefined && Number(declaredLength) > cap && !encoding) {
    raw.destroy();
    throw tooLarge();
  }
  let decoder: Transform | null;
  try {
    decoder = decoderFor(encoding);
  } catch (error) {
    raw.destroy();
    if (error instanceof UpstreamOutcome) throw new UpstreamOutcome('unrecognised', platform, error.message);
    throw error;
  }
  const source: Readable = decoder ? raw.pipe(decoder) : raw;
  if (decoder) raw.on('error', (error) => decoder.destroy(error));
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
    const known = Number(declaredLength);
    if (!encoding && declaredLength !== undefined && Number.isSafeInteger(known) && known > 0) await reserve(known);
    for await (const chunk of source) {
      size += (chunk as Buffer).length;
      if (size > cap) {
        raw.destroy();
        decoder?.destroy();
        throw tooLarge();
      }
      if (size > taken) await reserve(size - taken);
      chunks.push(chunk as Buffer);
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
  return Buffer.concat(chunks, size).toString('utf8');
}
