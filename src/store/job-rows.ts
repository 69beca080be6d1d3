// A batch job's and an item's rows as both stores read them (the same columns in SQLite and
// PostgreSQL), and the cursor of the listing of jobs.
import type { Job, JobItem } from './types.ts';

type Row = Record<string, unknown>;

const num = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

export const JOB_COLUMNS =
  'id, team_id, key_id, test, label, status, created_at, started_at, completed_at, total, pending, succeeded, failed, cancelled, pages, credits, cache_max_age, max_pages';

export const toJob = (r: Row): Job => ({
  id: r.id as string,
  teamId: r.team_id as string,
  keyId: r.key_id as string,
  test: Boolean(r.test),
  label: (r.label as string | null) ?? null,
  status: r.status as Job['status'],
  createdAt: Number(r.created_at),
  startedAt: num(r.started_at),
  completedAt: num(r.completed_at),
  total: Number(r.total),
  pending: Number(r.pending),
  succeeded: Number(r.succeeded),
  failed: Number(r.failed),
  cancelled: Number(r.cancelled),
  pages: Number(r.pages),
  creditsCharged: Number(r.credits),
  cacheMaxAge: (r.cache_max_age as string | null) ?? null,
  maxPages: Number(r.max_pages),
});

export const ITEM_COLUMNS = 'job_id, idx, endpoint, params, status, credits, error_code, error_message, attempts, finished_at';

export const toItem = (r: Row, pages: string[]): JobItem => ({
  jobId: r.job_id as string,
  index: Number(r.idx),
  endpoint: r.endpoint as string,
  params: JSON.parse(r.params as string) as Record<string, string>,
  status: r.status as JobItem['status'],
  pages,
  creditsCharged: Number(r.credits),
  error: r.error_code === null || r.error_code === undefined ? null : { code: r.error_code as string, message: (r.error_message as string | null) ?? '' },
  attempts: Number(r.attempts),
  finishedAt: num(r.finished_at),
});

/** The listing's position: after the job created at `at` with id `id` (newest first). */
export function encodeJobCursor(job: Pick<Job, 'createdAt' | 'id'>): string {
  return Buffer.from(JSON.stringify([job.createdAt, job.id])).toString('base64url');
}

export function decodeJobCursor(cursor: string): { at: number; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof at === 'number' && Number.isSafeInteger(at) && typeof id === 'string' && id.length <= 100) return { at, id };
  } catch {
    // Reported below.
  }
  throw new RangeError('malformed cursor');
}

/** The data of a `job.completed` event: the job as the API shows it. */
export const jobEventData = (job: Job): Record<string, unknown> => ({
  id: job.id,
  label: job.label,
  status: job.status,
  total: job.total,
  succeeded: job.succeeded,
  failed: job.failed,
  cancelled: job.cancelled,
  pages: job.pages,
  creditsCharged: job.creditsCharged,
  completedAt: job.completedAt === null ? null : new Date(job.completedAt).toISOString(),
});

/** The most items a listing answers at once. */
export const MAX_ITEMS_PAGE = 1_000;
