import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import pino from 'pino';
import { lazyRequestLogger } from '../../src/server/request-logger.ts';

const capture = () => {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (chunk: string) => void lines.push(JSON.parse(chunk) as Record<string, unknown>) });
  return { logger, lines };
};

test("a request's logger makes its pino child at its first use, and once", () => {
  const { logger, lines } = capture();
  let children = 0;
  const child = logger.child.bind(logger);
  const counted = Object.assign(Object.create(logger) as typeof logger, {
    child: (...args: Parameters<typeof logger.child>) => {
      children += 1;
      return child(...args);
    },
  });
  const log = lazyRequestLogger.call(Fastify(), counted, { requestId: 'req_1' }, {}, undefined as never);
  assert.equal(children, 0, 'no child before a line is written');
  log.warn({ problem: 'x' }, 'first');
  log.info('second');
  log.debug('below the level');
  assert.equal(children, 1);
  assert.deepEqual(
    lines.map((line) => [line.requestId, line.msg, line.level]),
    [
      ['req_1', 'first', 40],
      ['req_1', 'second', 30],
    ],
  );
  assert.equal(lines[0]?.problem, 'x');
  assert.equal(log.level, 'info');
  log.level = 'debug';
  log.debug('now written');
  assert.equal(lines.at(-1)?.msg, 'now written');
  const grandchild = log.child({ step: 2 }) as pino.Logger;
  assert.deepEqual(grandchild.bindings(), { requestId: 'req_1', step: 2 });
});

test("through Fastify: a request's own lines carry its id, and a request that logs nothing makes no child", async () => {
  const { logger, lines } = capture();
  let children = 0;
  const app = Fastify({
    loggerInstance: logger,
    disableRequestLogging: true,
    childLoggerFactory: lazyRequestLogger,
  });
  const real = logger.child.bind(logger);
  logger.child = ((...args: Parameters<typeof logger.child>) => {
    children += 1;
    return real(...args);
  }) as typeof logger.child;
  app.get('/quiet', async () => 'ok');
  app.get('/noisy', async (request) => {
    request.log.warn('something to say');
    return 'ok';
  });
  const quiet = await app.inject({ url: '/quiet' });
  assert.equal(quiet.statusCode, 200);
  assert.equal(children, 0);
  const noisy = await app.inject({ url: '/noisy' });
  assert.equal(noisy.statusCode, 200);
  assert.equal(children, 1);
  const said = lines.find((line) => line.msg === 'something to say');
  assert.match(String(said?.reqId), /^req-/, 'the line carries the request id');
  await app.close();
});
