// `client.monitors`: pages watched on a schedule. Each method is one call of the API's
// /v1/monitors endpoints (their types are generated from the same declarations, generated.ts).
import type { Monitor, MonitorCreate, MonitorPaging, MonitorRun, MonitorUpdate } from './generated.ts';
import type { ApiResponse, RequestOptions } from './types.ts';

export type Send = <T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, query?: Record<string, unknown>, options?: RequestOptions) => Promise<ApiResponse<T>>;

const at = (id: string, tail = ''): string => `/v1/monitors/${encodeURIComponent(id)}${tail}`;

export class Monitors {
  readonly #send: Send;

  constructor(send: Send) {
    this.#send = send;
  }

  /** Creates a monitor (`POST /v1/monitors`): its first run is at once, then every `interval` or at the times of `cron`. */
  create(monitor: MonitorCreate, options?: RequestOptions): Promise<ApiResponse<Monitor>> {
    return this.#send('POST', '/v1/monitors', monitor, {}, options);
  }

  /** The team's monitors, newest first, a page at a time (`paging.cursor`). */
  list(query: { cursor?: string; limit?: number } = {}, options?: RequestOptions): Promise<ApiResponse<{ monitors: Monitor[]; paging: MonitorPaging }>> {
    return this.#send('GET', '/v1/monitors', undefined, query, options);
  }

  /** Every monitor of the team, following the pages to their end. */
  async *all(options?: RequestOptions): AsyncGenerator<Monitor> {
    let cursor: string | undefined;
    for (;;) {
      const page = await this.list({ limit: 100, ...(cursor ? { cursor } : {}) }, options);
      yield* page.data.monitors;
      if (!page.data.paging.hasMore || !page.data.paging.cursor) return;
      cursor = page.data.paging.cursor;
    }
  }

  get(id: string, options?: RequestOptions): Promise<ApiResponse<Monitor>> {
    return this.#send('GET', at(id), undefined, {}, options);
  }

  /** Changes its schedule, `watch`, `label` or `status`. */
  update(id: string, changes: MonitorUpdate, options?: RequestOptions): Promise<ApiResponse<Monitor>> {
    return this.#send('PATCH', at(id), changes, {}, options);
  }

  pause(id: string, options?: RequestOptions): Promise<ApiResponse<Monitor>> {
    return this.update(id, { status: 'paused' }, options);
  }

  /** Resumes it: a run at once, then on schedule. */
  resume(id: string, options?: RequestOptions): Promise<ApiResponse<Monitor>> {
    return this.update(id, { status: 'active' }, options);
  }

  delete(id: string, options?: RequestOptions): Promise<ApiResponse<{ id: string; deleted: boolean }>> {
    return this.#send('DELETE', at(id), undefined, {}, options);
  }

  /** Its runs, newest first: each one's slot, outcome, credits, change and patch, error. */
  runs(id: string, query: { cursor?: string; limit?: number } = {}, options?: RequestOptions): Promise<ApiResponse<{ runs: MonitorRun[]; paging: MonitorPaging }>> {
    return this.#send('GET', at(id, '/runs'), undefined, query, options);
  }

  /** Runs it now and answers with the run (charged like any live scrape). */
  run(id: string, options?: RequestOptions): Promise<ApiResponse<MonitorRun>> {
    return this.#send('POST', at(id, '/run'), undefined, {}, options);
  }
}
