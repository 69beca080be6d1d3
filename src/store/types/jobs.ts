// Batch jobs: many requests handed over at once, their items run and charged as they go.

export type JobStatus = 'queued' | 'running' | 'completed' | 'cancelled';
/** `running`: claimed by a node now (the API shows it as `pending`). */
export type JobItemStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface Job {
  /** `job_…`. */
  id: string;
  teamId: string;
  /** The key that created it: its items are charged to it (daily credit limit) and run in its mode. */
  keyId: string;
  test: boolean;
  label: string | null;
  status: JobStatus;
  /** Epoch ms. */
  createdAt: number;
  startedAt: number | null;
  completedAt: number | null;
  total: number;
  /** Items not ended yet (waiting or running). */
  pending: number;
  succeeded: number;
  failed: number;
  cancelled: number;
  /** Pages stored, every item's. */
  pages: number;
  creditsCharged: number;
  /** `1d`…`30d`, or null: every page live unless the item says otherwise. */
  cacheMaxAge: string | null;
  maxPages: number;
}

export interface NewJobItem {
  /** The endpoint's path. */
  endpoint: string;
  /** The endpoint's query parameters, as given (strings). */
  params: Record<string, string>;
}

export interface NewJob {
  teamId: string;
  keyId: string;
  test: boolean;
  label: string | null;
  cacheMaxAge: string | null;
  maxPages: number;
  items: readonly NewJobItem[];
}

/** Where one item is: its job and its place in the job's requests. */
export interface ItemRef {
  jobId: string;
  index: number;
}

export interface JobItem extends ItemRef {
  endpoint: string;
  params: Record<string, string>;
  status: JobItemStatus;
  /** Each stored page's `data`, serialised, in order. */
  pages: string[];
  creditsCharged: number;
  error: { code: string; message: string } | null;
  attempts: number;
  /** Epoch ms; null until it ends. */
  finishedAt: number | null;
}

/** An item a node has claimed to run, with what it needs of its job. */
export interface ClaimedItem extends ItemRef {
  teamId: string;
  keyId: string;
  test: boolean;
  endpoint: string;
  params: Record<string, string>;
  /** Claims so far, this one included. */
  attempts: number;
  maxPages: number;
  /** The job's `cache_max_age` (an item's own, in `params`, wins). */
  cacheMaxAge: string | null;
  /** Pages stored by earlier runs (a run that died or failed part way), and the last of them, to go on from. */
  storedPages: number;
  lastPage: string | null;
}

export interface JobPage {
  jobs: Job[];
  /** Null on the last page. */
  next: string | null;
}

/** How an item ends. */
export type ItemOutcome = { status: 'succeeded' } | { status: 'failed'; error: { code: string; message: string } };

/**
 * Batch jobs and their items: a queue in the database that any node claims from. An item is
 * claimed by one node at a time until a lock deadline (renewed while it runs); one whose node
 * died is taken up by another once that deadline has passed (`rescue`; on PostgreSQL pg-boss's
 * heartbeat, store/postgres/queue.ts). Claims let each team run
 * at most `perTeam` items at once across all nodes, and let teams take turns (the team with the
 * fewest running, then the one served longest ago). A page of an item is stored in the same
 * transaction that commits its credit's reservation: stored and charged together, or neither.
 */
export interface JobStore {
  /** Creates a job with its items, unless the team already has `maxActive` queued or running jobs (null). */
  create(job: NewJob, maxActive: number, now: number): Promise<Job | null>;
  get(teamId: string, id: string): Promise<Job | null>;
  /** Newest first. RangeError for a malformed cursor. */
  list(teamId: string, limit: number, cursor?: string | null): Promise<JobPage>;
  /** Items not started never run: cancelled. Null for an unknown job. */
  cancel(teamId: string, id: string, now: number): Promise<Job | null>;
  /** Queues the failed items again; `running` while the job is queued or running. */
  retry(teamId: string, id: string, now: number): Promise<Job | 'running' | null>;
  claim(owner: string, lockUntil: number, now: number, perTeam: number): Promise<ClaimedItem | null>;
  /** Up to `max` claims at once (PostgreSQL: in one transaction, one fetch of the queue). */
  claimUpTo(owner: string, lockUntil: number, now: number, perTeam: number, max: number): Promise<ClaimedItem[]>;
  /** Extends the claim `owner` holds; false when it is no longer its own. */
  renew(item: ItemRef, owner: string, lockUntil: number): Promise<boolean>;
  /**
   * Stores one page of the item `owner` holds and commits its reservation (null: a cached page,
   * free) in the same transaction. `saved` false (nothing done): the claim is no longer its own,
   * and the caller refunds. `charged` false: the reservation had been refunded as abandoned.
   */
  savePage(item: ItemRef, owner: string, data: string, reservationId: string | null, now: number): Promise<{ saved: boolean; charged: boolean }>;
  /**
   * `savePage` of the item's last page and `finish` of the item as succeeded, in one transaction
   * (on PostgreSQL one statement, shared with other items of the job ending at the same time):
   * `ended` is the job when the item's end ended it (its last pending item), otherwise null.
   */
  saveLastPage(item: ItemRef, owner: string, data: string, reservationId: string | null, now: number): Promise<{ saved: boolean; charged: boolean; ended: Job | null }>;
  /** Ends the item `owner` holds; the job ends with its last item (recording `job.completed`). Its job as it is then; null when the claim is not its own. */
  finish(item: ItemRef, owner: string, outcome: ItemOutcome, now: number): Promise<Job | null>;
  /** Puts the item `owner` holds back in the queue, to run again from `at` (epoch ms); `error`: why (kept until it ends). `refund`: the claim is given back (shutdown), not counted as an attempt. */
  requeue(item: ItemRef, owner: string, at: number, error: { code: string; message: string } | null, giveBack?: boolean): Promise<boolean>;
  /** Queues again the items whose claim passed its deadline (their node died); returns how many. */
  rescue(now: number): Promise<number>;
  /** A job's items in order from `after` (exclusive), with their pages; `status` `pending` includes running ones. */
  items(jobId: string, options: { after?: number; limit: number; status?: 'pending' | 'succeeded' | 'failed' | 'cancelled' }): Promise<JobItem[]>;
  /** Items waiting and running, every team's. */
  depth(): Promise<{ pending: number; running: number }>;
  /** Deletes the jobs (with their items) that ended before `before` (epoch ms); returns how many. */
  prune(before: number): Promise<number>;
  /** Where the errors of the queue's own background work go (PostgreSQL: pg-boss's supervisor and maintenance); absent: it has none. */
  onQueueError?(report: (error: Error) => void): void;
}
