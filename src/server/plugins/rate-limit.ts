// The per-team rate limit of API routes: a rolling window counted after authentication, with
// the x-ratelimit-* headers on every answer that passed it.
import type { FastifyPluginCallback, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import type { RateDecision, RateLimiter } from '../../store/types.ts';
import { ApiError } from '../errors.ts';

export const RATE_WINDOW_MS = 60_000;

function rateHeaders(reply: FastifyReply, decision: RateDecision): void {
  reply.header('x-ratelimit-limit', decision.limit);
  reply.header('x-ratelimit-remaining', decision.remaining);
  reply.header('x-ratelimit-reset', decision.resetSeconds);
}

export const rateLimited = (decision: RateDecision, what: string) => {
  const wait = Math.max(1, decision.resetSeconds);
  return new ApiError('RATE_LIMITED', `${what} Retry in ${wait} s.`, { headers: { 'retry-after': String(wait) } });
};

const rateLimit: FastifyPluginCallback<{ limiter: RateLimiter; now: () => number }> = (app, { limiter, now }, done) => {
  app.addHook('onRequest', async (request, reply) => {
    const { team } = request.caller;
    const decision = await limiter.hit(`team:${team.id}`, team.rateLimit, RATE_WINDOW_MS, now());
    rateHeaders(reply, decision);
    if (!decision.allowed) throw rateLimited(decision, `Rate limit of ${decision.limit} requests per 60 seconds exceeded.`);
  });
  done();
};

/** Counts every request of the context it is registered in; registered after `auth`. */
export const rateLimitPlugin = fp(rateLimit, { name: 'rate-limit', dependencies: ['auth'] });
