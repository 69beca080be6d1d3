// Liveness and readiness for load balancers and orchestrators.
import type { FastifyPluginCallback } from 'fastify';
import type { Stores } from '../../store/types.ts';
import { ApiError, JSON_TYPE } from '../errors.ts';

export const healthPlugin: FastifyPluginCallback<{ stores: Stores }> = (app, { stores }, done) => {
  const hidden = { schema: { hide: true } };
  app.get('/healthz', hidden, async (_request, reply) => reply.header('content-type', JSON_TYPE).send('{"status":"ok"}'));
  app.get('/readyz', hidden, async (request, reply) => {
    try {
      await stores.ping();
      // Reachable is not enough: a full disk or a read-only file fail every live scrape.
      await stores.probeWrite();
    } catch (error) {
      request.log.error({ err: error }, 'readiness check failed');
      throw new ApiError('SERVICE_UNAVAILABLE', 'The store is unreachable or cannot write.', { headers: { 'retry-after': '5' }, cause: error });
    }
    return reply.header('content-type', JSON_TYPE).send('{"status":"ready"}');
  });
  done();
};
