// The access line composed by hand (access-line.ts) is the line pino writes for the same fields.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { accessLine, type AccessFields } from '../../src/server/access-line.ts';

const capture = () => {
  const lines: string[] = [];
  return { lines, stream: { write: (line: string) => void lines.push(line) } };
};
const fields = (over: Partial<AccessFields> = {}): AccessFields => ({
  requestId: 'req_0Vd6ZMgQOC65Goop_UIWzDqNDH6Fbgl6',
  team: 'team_1',
  endpoint: 'linkpage-a.profile',
  method: 'GET',
  path: '/v1/linkpage-a/profile',
  status: 200,
  credits: 0,
  cached: true,
  durationMs: 0.42,
  ...over,
});

test('the line is byte for byte what pino writes for log.info(fields, "request"), escapes included', () => {
  const cases = [
    fields(),
    fields({ team: null, endpoint: null, status: 404, credits: 1, cached: false, durationMs: 12 }),
    fields({ path: '/v1/x"\\\n\u0001é👇/\u2028', method: 'PATCH' }),
  ];
  for (const given of cases) {
    const a = capture();
    const b = capture();
    // A fixed time, so that both lines can be compared whole.
    const options = { level: 'info', timestamp: () => ',"time":1700000000000' };
    accessLine(pino(options, a.stream))(given);
    pino(options, b.stream).info(given, 'request');
    assert.equal(a.lines.length, 1);
    assert.equal(a.lines[0], b.lines[0]);
    assert.deepEqual(JSON.parse(a.lines[0] as string), JSON.parse(b.lines[0] as string));
  }
});

test('with pino defaults the line carries level, time, pid and hostname first, the message last', () => {
  const a = capture();
  accessLine(pino({ level: 'info' }, a.stream))(fields());
  const line = JSON.parse(a.lines[0] as string) as Record<string, unknown>;
  assert.deepEqual(Object.keys(line), ['level', 'time', 'pid', 'hostname', 'requestId', 'team', 'endpoint', 'method', 'path', 'status', 'credits', 'cached', 'durationMs', 'msg']);
  assert.equal(line.level, 30);
  assert.equal(line.pid, process.pid);
  assert.ok(Math.abs((line.time as number) - Date.now()) < 60_000);
});

test('nothing is written above level info, and the level is read at each line', () => {
  const a = capture();
  const log = pino({ level: 'warn' }, a.stream);
  const write = accessLine(log);
  write(fields());
  assert.deepEqual(a.lines, []);
  log.level = 'info';
  write(fields());
  assert.equal(a.lines.length, 1);
});

test('a logger whose lines pino shapes otherwise gets them through log.info, as pino writes them', () => {
  const shaped: pino.LoggerOptions[] = [
    { mixin: () => ({ node: 'n1' }) },
    { redact: ['path'] },
    { serializers: { team: (team: string) => `t:${team}` } },
    { nestedKey: 'fields' },
    { msgPrefix: '[api] ' },
    { formatters: { log: (object: Record<string, unknown>) => ({ ...object, shaped: true }) } },
    { hooks: { logMethod(args, method) { method.apply(this, [args[0], `hooked ${String(args[1])}`] as Parameters<typeof method>); } } },
  ];
  for (const options of shaped) {
    const a = capture();
    const b = capture();
    const common = { level: 'info', timestamp: () => ',"time":1700000000000', ...options };
    accessLine(pino(common, a.stream))(fields());
    pino(common, b.stream).info(fields(), 'request');
    assert.equal(a.lines[0], b.lines[0], JSON.stringify(Object.keys(options)));
  }
});

test("Fastify's own serializers (req, res, err) leave the composed line in use", () => {
  const a = capture();
  const log = pino({ level: 'info', serializers: { req: () => 'r', res: () => 's', err: pino.stdSerializers.err } }, a.stream);
  const info = log.info.bind(log);
  let throughInfo = 0;
  log.info = ((...args: Parameters<typeof info>) => {
    throughInfo += 1;
    info(...args);
  }) as typeof log.info;
  accessLine(log)(fields());
  assert.equal(throughInfo, 0);
  assert.equal(a.lines.length, 1);
});
