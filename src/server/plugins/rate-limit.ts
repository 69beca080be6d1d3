// The rate limits' window, headers and error: a team's rolling window is counted when its
// request is admitted (auth.ts), failed authentications per address likewise.
import type { FastifyReply } from 'fastify';
import type { RateDecision } from '../../store/types.ts';
import { ApiError } from '../errors.ts';

export const RATE_WINDOW_MS = 60_000;

/** The x-ratelimit-* headers of an admitted request, in the order they are sent. */
export const rateHeaderValues = (decision: RateDecision) =>
  ({ 'x-ratelimit-limit': decision.limit, 'x-ratelimit-remaining': decision.remaining, 'x-ratelimit-reset': decision.resetSeconds }) as const;

export function rateHeaders(reply: FastifyReply, decision: RateDecision): void {
  reply.headers(rateHeaderValues(decision));
}

export const rateLimited = (decision: RateDecision, what: string) => {
  const wait = Math.max(1, decision.resetSeconds);
  return new ApiError('RATE_LIMITED', `${what} Retry in ${wait} s.`, { headers: { 'retry-after': String(wait) } });
};
