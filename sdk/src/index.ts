// @pagescrape/sdk: the typed client of the public-page data extraction API.
export { PageScrape, Listing, type ItemOf, type PagedPath } from './client.ts';
export { Jobs, type CreateJobOptions, type Job, type JobItem, type JobRequest, type WaitOptions } from './jobs.ts';
export { PageScrapeError, ConnectionError, TimeoutError, UnexpectedResponseError, type ErrorDetail, type PageScrapeErrorInit } from './errors.ts';
export * from './generated.ts';
export type { ApiResponse, ClientOptions, PaginateOptions, RequestOptions, RetryEvent } from './types.ts';
