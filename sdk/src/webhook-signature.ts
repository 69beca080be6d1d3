// Verifying a webhook delivery as the Standard Webhooks specification says, with nothing but
// node:crypto: the HMAC-SHA256 of `id.timestamp.body` under the secret (the base64 after
// `whsec_`), compared in constant time with each `v1,` signature of `webhook-signature`; a
// timestamp more than 5 minutes away from now is refused, so that a captured delivery cannot be
// replayed later. Any Standard Webhooks library verifies the same deliveries.
import { createHmac, timingSafeEqual } from 'node:crypto';

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

/** Headers as a `Headers` object, or a plain record (Node's `IncomingHttpHeaders`, any case). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** The largest distance between the delivery's timestamp and now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Now, in epoch ms (default `Date.now()`). */
  now?: number;
}

/** A delivery's body, as its JSON holds it. */
export interface WebhookEvent<D = Record<string, unknown>> {
  type: string;
  timestamp: string;
  data: D;
}

const header = (headers: WebhookHeaders, name: string): string | undefined => {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * Checks that `body` (the raw body, exactly as received) was signed with `secret` (`whsec_…`)
 * less than 5 minutes ago, and answers it parsed. Throws `WebhookVerificationError` otherwise.
 */
export function verifyWebhook<D = Record<string, unknown>>(body: string | Uint8Array, headers: WebhookHeaders, secret: string, options: VerifyOptions = {}): WebhookEvent<D> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature');
  if (!/^\d{1,15}$/.test(timestamp)) throw new WebhookVerificationError('Invalid webhook-timestamp');
  const tolerance = options.toleranceSeconds ?? 300;
  const now = Math.floor((options.now ?? Date.now()) / 1_000);
  const sent = Number(timestamp);
  if (now - sent > tolerance) throw new WebhookVerificationError('Message timestamp too old');
  if (sent - now > tolerance) throw new WebhookVerificationError('Message timestamp too new');
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  if (key.length === 0) throw new WebhookVerificationError('The secret is empty');
  const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${text}`).digest();
  const matches = signatures.split(' ').some((signature) => {
    const [version, value] = signature.split(',', 2);
    if (version !== 'v1' || value === undefined) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError('No matching signature found');
  try {
    return JSON.parse(text) as WebhookEvent<D>;
  } catch {
    throw new WebhookVerificationError('The body is not JSON');
  }
}
