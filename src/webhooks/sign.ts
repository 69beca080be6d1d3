// Signing as the Standard Webhooks specification says, with its own library: `webhook-id`,
// `webhook-timestamp` (Unix seconds of the attempt) and `webhook-signature` (`v1,<base64
// HMAC-SHA256 of id.timestamp.body>`), space-separated while a rotated-out secret still signs.
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { WebhookEndpoint } from '../store/types.ts';

/** A new signing secret: `whsec_` and 32 random bytes in base64 (the specification's form). */
export const newSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/** The secrets that sign at `now`: the current one, and the previous one until its overlap ends. */
export function signingSecrets(endpoint: Pick<WebhookEndpoint, 'secret' | 'previousSecret' | 'previousSecretUntil'>, now: number): string[] {
  const secrets = [endpoint.secret];
  if (endpoint.previousSecret !== null && endpoint.previousSecretUntil !== null && now < endpoint.previousSecretUntil) secrets.push(endpoint.previousSecret);
  return secrets;
}

/** The three headers of one attempt, sent at `now` (epoch ms). */
export function signedHeaders(id: string, payload: string, secrets: readonly string[], now: number): Record<string, string> {
  const at = new Date(Math.floor(now / 1_000) * 1_000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(at.getTime() / 1_000),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(id, at, payload)).join(' '),
  };
}
