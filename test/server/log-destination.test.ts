// The service's log destination (main.ts): lines gathered and written 4 KiB at a time, yet none
// held longer than a moment, and none lost when the process exits, however it exits short of
// SIGKILL.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import pino from 'pino';
import { logDestination } from '../../src/main.ts';

const dir = mkdtempSync(join(tmpdir(), 'log-destination-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { msg: string });

test('a line is written within a moment though the 4 KiB are not reached', async () => {
  const file = join(dir, 'idle.log');
  const destination = logDestination(file);
  const log = pino({ level: 'info' }, destination);
  log.info('alone');
  // Gathered, not written per line.
  assert.equal(readFileSync(file, 'utf8'), '');
  const deadline = Date.now() + 5_000;
  while (readFileSync(file, 'utf8') === '' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(
    lines(file).map((line) => line.msg),
    ['alone'],
  );
  destination.end();
});

test('many lines go out in a few writes, whole and in order', async () => {
  const file = join(dir, 'busy.log');
  const destination = logDestination(file);
  const log = pino({ level: 'info' }, destination);
  for (let i = 0; i < 1_000; i += 1) log.info({ i }, 'line');
  destination.flushSync();
  assert.deepEqual(
    lines(file).map((line) => (line as unknown as { i: number }).i),
    Array.from({ length: 1_000 }, (_, i) => i),
  );
  destination.end();
});

test('end() writes out what is gathered; a line logged after it is dropped, not thrown at the caller', () => {
  const file = join(dir, 'ended.log');
  const destination = logDestination(file);
  const log = pino({ level: 'info' }, destination);
  log.info('before');
  destination.end();
  assert.deepEqual(
    lines(file).map((line) => line.msg),
    ['before'],
  );
  for (let i = 0; i < 100; i += 1) log.info({ padding: 'x'.repeat(100) }, 'after');
  assert.deepEqual(
    lines(file).map((line) => line.msg),
    ['before'],
  );
});

test("pino's logger.flush() writes out what is gathered, then calls back", async () => {
  const file = join(dir, 'flush.log');
  const destination = logDestination(file);
  const log = pino({ level: 'info' }, destination);
  log.info('gathered');
  assert.equal(readFileSync(file, 'utf8'), '');
  await new Promise<void>((resolve, reject) => log.flush((err) => (err ? reject(err) : resolve())));
  assert.deepEqual(
    lines(file).map((line) => line.msg),
    ['gathered'],
  );
  destination.end();
});

for (const [how, code] of [
  ['process.exit()', 'process.exit(3)'],
  ['an uncaught exception', 'setImmediate(() => { throw new Error("boom") })'],
] as const) {
  test(`lines gathered are written when the process ends by ${how}`, async () => {
    const file = join(dir, `exit-${code.length}.log`);
    const script = `import pino from 'pino'; import { logDestination } from ${JSON.stringify(new URL('../../src/main.ts', import.meta.url).href)};
      const log = pino({ level: 'info' }, logDestination(${JSON.stringify(file)}));
      log.info('first'); log.info('last'); ${code};`;
    const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', '--input-type=module', '-e', script], { cwd: new URL('../..', import.meta.url).pathname, stdio: 'ignore' });
    const [exitCode] = (await once(child, 'exit')) as [number];
    assert.notEqual(exitCode, 0);
    assert.deepEqual(
      lines(file).map((line) => line.msg),
      ['first', 'last'],
    );
  });
}
