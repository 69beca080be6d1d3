// Service-issued cursors. Each one seals the upstream position with AES-256-GCM under a key
// derived from the server secret: the client can neither read nor alter it, and a cursor is
// bound to the endpoint and target that produced it and to the time of that scrape.
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import type { TargetParams, UpstreamPosition } from '../endpoints/types.ts';

export const CURSOR_LIFETIME_MS = 24 * 60 * 60 * 1000;
const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

interface SealedPayload {
  v: number;
  /** endpoint id */
  e: string;
  /** digest of the canonical target parameters */
  t: string;
  /** upstream position */
  p: UpstreamPosition;
  /** epoch ms of the live scrape that produced the position */
  s: number;
}

export interface OpenedCursor {
  position: UpstreamPosition;
  scrapedAt: number;
}

export type CursorProblem = 'malformed' | 'foreign';

/** JSON of an object's entries in key order: equal objects give equal text whatever their key order. */
export const canonicalJson = (value: Readonly<Record<string, unknown>>): string =>
  JSON.stringify(Object.keys(value).sort().map((name) => [name, value[name]]));

/** Stable digest of a target's canonical parameters (key order does not matter). */
export function targetDigest(params: TargetParams): string {
  return createHash('sha256').update(canonicalJson(params)).digest('base64url').slice(0, 22);
}

export class CursorSealer {
  readonly #key: Buffer;

  constructor(secret: string) {
    if (secret.length < 16) throw new Error('The cursor secret must be at least 16 characters');
    this.#key = Buffer.from(hkdfSync('sha256', secret, 'cursor-salt', 'cursor-v1', 32));
  }

  seal(endpointId: string, target: TargetParams, position: UpstreamPosition, scrapedAt: number): string {
    const payload: SealedPayload = { v: VERSION, e: endpointId, t: targetDigest(target), p: position, s: scrapedAt };
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const body = Buffer.concat([cipher.update(JSON.stringify(payload), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  /**
   * Opens a cursor issued for `endpointId` and `target`. Expiry is not judged here: a cached
   * next page may still be served for an expired cursor.
   */
  open(token: string, endpointId: string, target: TargetParams): { ok: true; cursor: OpenedCursor } | { ok: false; problem: CursorProblem } {
    if (!/^[A-Za-z0-9_-]+$/.test(token)) return { ok: false, problem: 'malformed' };
    const raw = Buffer.from(token, 'base64url');
    if (raw.length <= IV_BYTES + TAG_BYTES) return { ok: false, problem: 'malformed' };
    // Only the canonical encoding: no altered unused bits in the last character.
    if (raw.toString('base64url') !== token) return { ok: false, problem: 'malformed' };
    let payload: SealedPayload;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, IV_BYTES));
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      const plain = Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]);
      payload = JSON.parse(plain.toString('utf8')) as SealedPayload;
    } catch {
      return { ok: false, problem: 'malformed' };
    }
    if (payload.v !== VERSION || typeof payload.s !== 'number' || typeof payload.p !== 'object' || payload.p === null) {
      return { ok: false, problem: 'malformed' };
    }
    if (payload.e !== endpointId || payload.t !== targetDigest(target)) return { ok: false, problem: 'foreign' };
    return { ok: true, cursor: { position: payload.p, scrapedAt: payload.s } };
  }
}
