// The typed outcomes an extractor may end with instead of data. Extractors know nothing of
// HTTP status codes or credits; the server maps each kind to its answer.

export type OutcomeKind =
  | 'not_found' // content does not exist, was deleted, is private, or has no public posts
  | 'gated' // age-restricted or otherwise gated page that the request did not allow
  | 'blocked' // 429, captcha, checkpoint, login wall, GraphQL rate limit
  | 'transient' // 5xx, reset, timeout: retried inside the budget, then reported as this
  | 'rejected_cursor' // the upstream rejected the position the cursor carried
  | 'unrecognised' // the page's structure is not what the platform's README describes
  | 'overloaded'; // the service's memory budget for upstream answers had no room in time (not the upstream's fault)

export class UpstreamOutcome extends Error {
  readonly kind: OutcomeKind;
  readonly platform: string;

  constructor(kind: OutcomeKind, platform: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UpstreamOutcome';
    this.kind = kind;
    this.platform = platform;
  }
}

export const isUpstreamOutcome = (error: unknown): error is UpstreamOutcome =>
  error instanceof UpstreamOutcome;
