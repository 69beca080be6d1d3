// Liveness and readiness for load balancers and orchestrators. `/readyz` names each backend
// (`sqlite`; or `postgres` and `redis`) with its state, so that an operator sees which is down.
import type { FastifyPluginCallback } from 'fastify';
import type { Stores } from '../../store/types.ts';
import { ApiError, errorBody, JSON_TYPE } from '../errors.ts';

export const healthPlugin: FastifyPluginCallback<{ stores: Stores }> = (app, { stores }, done) => {
  const hidden = { schema: { hide: true } };
  app.get('/healthz', hidden, async (_request, reply) => reply.header('content-type', JSON_TYPE).send('{"status":"ok"}'));
  app.get('/readyz', hidden, async (request, reply) => {
    // Reachable is not enough: a full disk or a read-only database fail every live scrape.
    const backends = await stores.backends();
    const down = Object.keys(backends).filter((name) => backends[name] === 'down');
    reply.header('content-type', JSON_TYPE);
    if (down.length === 0) return reply.send(JSON.stringify({ status: 'ready', backends }));
    request.log.error({ backends }, 'readiness check failed');
    // The error envelope, with the readiness fields beside it.
    const error = new ApiError('SERVICE_UNAVAILABLE', `Not ready: ${down.join(' and ')} ${down.length > 1 ? 'are' : 'is'} unreachable or cannot write.`);
    const envelope = JSON.parse(errorBody(error, request.id)) as Record<string, unknown>;
    return reply
      .code(503)
      .header('retry-after', '5')
      .send(JSON.stringify({ status: 'not ready', backends, ...envelope }));
  });
  done();
};
