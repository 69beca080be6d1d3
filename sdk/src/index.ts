// @pagescrape/sdk: the typed client of the public-page data extraction API.
export { PageScrape, Listing, isRetryable, newIdempotencyKey, type ItemOf, type PagedPath } from './client.ts';
export { Monitors } from './monitors.ts';
export { Jobs, type CreateJobOptions, type Job, type JobItem, type JobRequest, type WaitOptions } from './jobs.ts';
export { PageScrapeError, ConnectionError, TimeoutError, UnexpectedResponseError, type ErrorDetail, type PageScrapeErrorInit } from './errors.ts';
export * from './generated.ts';
export type { ApiResponse, ClientOptions, PaginateOptions, RequestOptions, RetryEvent } from './types.ts';
export { verifyWebhook, WebhookVerificationError, type VerifyOptions, type WebhookEvent, type WebhookHeaders } from './webhook-signature.ts';
export { Webhooks, type NewWebhook, type WebhookAttempt, type WebhookDelivery, type WebhookEndpoint, type WebhookEndpointWithSecret, type WebhookEventType } from './webhooks.ts';
