// `client.webhooks`: the /v1/webhooks endpoints (register, list, show, delete, rotate the
// secret, send a test, the deliveries log, redeliver). Verify what arrives with `verifyWebhook`.
import type { NewWebhook, WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEndpointWithSecret } from './generated.ts';
import type { ApiResponse, RequestOptions } from './types.ts';

// An endpoint, its deliveries and their attempts, generated from the declarations of the
// /v1/webhooks endpoints.
export type { NewWebhook, WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEndpointWithSecret };

/** The event types a webhook can be sent (`*` in `events`: all of them). */
export type WebhookEventType = Exclude<NewWebhook['events'][number], '*'>;

export type Send = <D>(method: 'GET' | 'POST' | 'DELETE', path: string, body: unknown, options: RequestOptions) => Promise<ApiResponse<D>>;

const id = (value: string): string => encodeURIComponent(value);

export class Webhooks {
  readonly #send: Send;

  constructor(send: Send) {
    this.#send = send;
  }

  /** Registers an endpoint; the answer's `data.secret` is shown this once. */
  create(webhook: NewWebhook, options: RequestOptions = {}): Promise<ApiResponse<WebhookEndpointWithSecret>> {
    return this.#send('POST', '/v1/webhooks', webhook, options);
  }

  list(options: RequestOptions = {}): Promise<ApiResponse<{ webhooks: WebhookEndpoint[] }>> {
    return this.#send('GET', '/v1/webhooks', undefined, options);
  }

  get(webhookId: string, options: RequestOptions = {}): Promise<ApiResponse<WebhookEndpoint>> {
    return this.#send('GET', `/v1/webhooks/${id(webhookId)}`, undefined, options);
  }

  delete(webhookId: string, options: RequestOptions = {}): Promise<ApiResponse<{ id: string; deleted: boolean }>> {
    return this.#send('DELETE', `/v1/webhooks/${id(webhookId)}`, undefined, options);
  }

  /** A new secret (shown this once); the old one keeps signing beside it for 24 hours. */
  rotateSecret(webhookId: string, options: RequestOptions = {}): Promise<ApiResponse<WebhookEndpointWithSecret>> {
    return this.#send('POST', `/v1/webhooks/${id(webhookId)}/rotate-secret`, undefined, options);
  }

  /** Sends a `webhook.test` event to this endpoint. */
  test(webhookId: string, options: RequestOptions = {}): Promise<ApiResponse<{ eventId: string }>> {
    return this.#send('POST', `/v1/webhooks/${id(webhookId)}/test`, undefined, options);
  }

  /** A page of the endpoint's deliveries, newest first; pass `data.paging.cursor` for the next. */
  deliveries(webhookId: string, cursor?: string, options: RequestOptions = {}): Promise<ApiResponse<{ deliveries: WebhookDelivery[]; paging: { cursor: string | null; hasNextPage: boolean } }>> {
    return this.#send('GET', `/v1/webhooks/${id(webhookId)}/deliveries${cursor === undefined ? '' : `?cursor=${encodeURIComponent(cursor)}`}`, undefined, options);
  }

  /** One more attempt of a delivery (`msg_…`) now, with the same `webhook-id`. */
  redeliver(deliveryId: string, options: RequestOptions = {}): Promise<ApiResponse<{ id: string; state: string; nextAttemptAt: string | null }>> {
    return this.#send('POST', `/v1/webhooks/deliveries/${id(deliveryId)}/redeliver`, undefined, options);
  }
}
