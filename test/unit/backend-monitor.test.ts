// The health probe that tells a backend that stopped answering from one that is merely busy.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BackendMonitor } from '../../src/store/monitor.ts';
import { StoreUnavailableError } from '../../src/store/types.ts';

describe('BackendMonitor', () => {
  test('three probes in a row without an answer mark the backend down; one answer brings it back', async () => {
    let answering = true;
    const monitor = new BackendMonitor('TestDB', () => (answering ? Promise.resolve() : new Promise(() => {})), { intervalMs: 20, timeoutMs: 40 });
    try {
      await sleep(120);
      assert.equal(monitor.down, false);
      monitor.assertUp();
      answering = false;
      const stopped = Date.now();
      while (!monitor.down) {
        assert.ok(Date.now() - stopped < 2_000, 'noticed');
        await sleep(10);
      }
      assert.ok(Date.now() - stopped >= 3 * 40, 'not before three probes went unanswered');
      assert.throws(() => monitor.assertUp(), (error: unknown) => error instanceof StoreUnavailableError && /TestDB is unreachable/.test(error.message));
      answering = true;
      while (monitor.down) {
        assert.ok(Date.now() - stopped < 4_000, 'back');
        await sleep(10);
      }
      monitor.assertUp();
    } finally {
      monitor.stop();
    }
  });

  test('failed probes count like unanswered ones; fewer than three in a row do not mark it down', async () => {
    let failures = 0;
    const monitor = new BackendMonitor(
      'TestDB',
      async () => {
        // Fails twice, then answers, over and over.
        failures = (failures + 1) % 3;
        if (failures !== 0) throw new Error('refused');
      },
      { intervalMs: 10, timeoutMs: 50 },
    );
    try {
      for (let i = 0; i < 20; i++) {
        await sleep(10);
        assert.equal(monitor.down, false);
      }
    } finally {
      monitor.stop();
    }
  });
});
