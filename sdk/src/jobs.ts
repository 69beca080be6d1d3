// Batch jobs: hand over many requests at once, follow the job's progress, read its results as
// they stream. `client.jobs.create(requests)`, `wait(id, { onProgress })`, `results(id)`.
import type { Job, JobItem, JobRequest } from './generated.ts';
import { UnexpectedResponseError } from './errors.ts';
import type { ApiResponse, RequestOptions } from './types.ts';

// A job, its items and one request of a job, generated from the declarations of the /v1/jobs endpoints.
export type { Job, JobItem, JobRequest };

export interface CreateJobOptions extends RequestOptions {
  /** A cached result of at most this age is used for 0 credits (an item's own `cache_max_age` wins). */
  cacheMaxAge?: '1d' | '3d' | '7d' | '14d' | '30d';
  /** A listing's item follows its cursor to the end or this many pages (1–100; default 1). */
  maxPages?: number;
  label?: string;
  /** Makes a retried creation safe; by default the client makes one up for each `create`. */
  idempotencyKey?: string;
}

export interface WaitOptions {
  /** Called with the job at each poll while it runs. */
  onProgress?: (job: Job) => void;
  /** Between polls; default 1,000 ms. */
  intervalMs?: number;
  signal?: AbortSignal;
}

/** What the jobs use of the client (`PageScrape`): its calls, and its streamed reads. */
export interface JobsClient {
  send<T>(method: 'GET' | 'POST', path: string, body?: unknown, query?: Record<string, unknown>, options?: RequestOptions): Promise<ApiResponse<T>>;
  stream(path: string, options?: { signal?: AbortSignal }): Promise<Response>;
}

export class Jobs {
  readonly #client: JobsClient;

  constructor(client: JobsClient) {
    this.#client = client;
  }

  /** Queues the requests as one job (202); answers the job. */
  async create(requests: readonly JobRequest[], options: CreateJobOptions = {}): Promise<Job> {
    const body = {
      requests,
      ...(options.cacheMaxAge ? { cache_max_age: options.cacheMaxAge } : {}),
      ...(options.maxPages ? { max_pages: options.maxPages } : {}),
      ...(options.label ? { label: options.label } : {}),
    };
    const answer = await this.#client.send('POST', '/v1/jobs', body, {}, options);
    return answer.data as Job;
  }

  async get(id: string, options: RequestOptions = {}): Promise<Job> {
    return (await this.#client.send('GET', `/v1/jobs/${encodeURIComponent(id)}`, undefined, {}, options)).data as Job;
  }

  /** A page of the team's jobs, newest first; pass `paging.cursor` back for the next. */
  async list(options: RequestOptions & { cursor?: string; limit?: number } = {}): Promise<{ jobs: Job[]; paging: { cursor: string | null; hasMore: boolean } }> {
    const { cursor, limit, ...rest } = options;
    return (await this.#client.send('GET', '/v1/jobs', undefined, { cursor, limit }, rest)).data as { jobs: Job[]; paging: { cursor: string | null; hasMore: boolean } };
  }

  /** Items not started never run (nor are charged). */
  async cancel(id: string, options: RequestOptions = {}): Promise<Job> {
    return (await this.#client.send('POST', `/v1/jobs/${encodeURIComponent(id)}/cancel`, undefined, {}, options)).data as Job;
  }

  /** Queues the failed items again (`ConflictError` while the job runs). */
  async retry(id: string, options: RequestOptions = {}): Promise<Job> {
    return (await this.#client.send('POST', `/v1/jobs/${encodeURIComponent(id)}/retry`, undefined, {}, options)).data as Job;
  }

  /** Polls the job until it has ended (completed or cancelled, nothing pending); answers it. */
  async wait(id: string, options: WaitOptions = {}): Promise<Job> {
    for (;;) {
      const job = await this.get(id, { signal: options.signal });
      options.onProgress?.(job);
      if (job.pending === 0 && (job.status === 'completed' || job.status === 'cancelled')) return job;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, options.intervalMs ?? 1_000);
        options.signal?.addEventListener('abort', () => (clearTimeout(timer), reject(options.signal?.reason)), { once: true });
      });
    }
  }

  /** Every item of the job that has ended, in order, read from the NDJSON stream as it arrives. */
  async *results(id: string, options: { signal?: AbortSignal } = {}): AsyncGenerator<JobItem> {
    const response = await this.#client.stream(`/v1/jobs/${encodeURIComponent(id)}/results.ndjson`, options);
    if (!response.body) return;
    const decoder = new TextDecoder();
    let buffered = '';
    const reader = response.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffered += decoder.decode(value, { stream: true });
        let newline: number;
        while ((newline = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, newline);
          buffered = buffered.slice(newline + 1);
          if (line.trim()) yield parse(line);
        }
      }
      buffered += decoder.decode();
      if (buffered.trim()) yield parse(buffered);
    } finally {
      reader.releaseLock();
    }
  }
}

function parse(line: string): JobItem {
  try {
    return JSON.parse(line) as JobItem;
  } catch {
    throw new UnexpectedResponseError('A line of the results stream is not JSON.', { code: 'UNEXPECTED_RESPONSE', status: 200 });
  }
}
