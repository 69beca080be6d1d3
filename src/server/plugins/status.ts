// GET /v1/status: public (no key, not counted, free). The state of each platform as this node's
// circuit breakers see it (`ok`, `degraded`, `down`) and the time of its last successful scrape.
import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import { DateTime, Nullable, Obj } from '../../endpoints/schemas/common.ts';
import type { Breakers } from '../breakers.ts';
import { JSON_TYPE } from '../errors.ts';
import { PlainQueryValidator, queryAjv } from '../query.ts';
import { ErrorEnvelope } from '../../endpoints/schemas/envelope.ts';

export interface StatusOptions {
  platforms: readonly string[];
  breakers: Breakers;
}

const PlatformStatus = Obj({
  state: Type.Unsafe<'ok' | 'degraded' | 'down'>({
    type: 'string',
    enum: ['ok', 'degraded', 'down'],
    description: '`ok`: scrapes succeed; `degraded`: some failed in the last 30 seconds; `down`: requests are paused for a cool-down and answered 502 at once.',
  }),
  lastSuccessAt: Nullable(DateTime('The last successful scrape on this node; null when none since it started.')),
});

/** It takes no parameter: any is refused, as on every endpoint. */
const NoQuery = Type.Object({}, { additionalProperties: false });

const status: FastifyPluginAsync<StatusOptions> = async (app, { platforms, breakers }) => {
  const query = new PlainQueryValidator(NoQuery, () => [], queryAjv());
  app.get(
    '/v1/status',
    {
      validatorCompiler: ({ httpPart }) => (httpPart === 'querystring' ? query.check : () => true),
      schema: {
        querystring: NoQuery,
        operationId: 'status',
        summary: 'The state of each platform',
        description: 'Public: no key, not counted by the rate limit, free.',
        tags: ['status'],
        security: [],
        response: {
          200: {
            description: 'Every platform, by name.',
            content: {
              'application/json': {
                schema: Obj({ data: Obj({ platforms: Type.Record(Type.String(), PlatformStatus) }), meta: Obj({ requestId: Type.String() }) }),
              },
            },
          },
          405: { description: 'A method other than GET.', content: { 'application/json': { schema: ErrorEnvelope } } },
          422: { description: 'A query parameter: it takes none.', content: { 'application/json': { schema: ErrorEnvelope } } },
        },
      },
    },
    async (request, reply) => {
      const data = { platforms: Object.fromEntries(platforms.map((platform) => [platform, breakers.status(platform)])) };
      return reply.header('content-type', JSON_TYPE).header('cache-control', 'no-store').send(JSON.stringify({ data, meta: { requestId: request.id } }));
    },
  );
};

export const statusPlugin = fp(status, { name: 'status' });
