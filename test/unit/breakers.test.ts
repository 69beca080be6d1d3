// The circuit breaker of a platform, on a clock of the test's own.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Breakers, type BreakerSettings } from '../../src/server/breakers.ts';

const SETTINGS: BreakerSettings = { minRequests: 10, windowMs: 30_000, failureRatio: 0.5, coolDownMs: 15_000, maxCoolDownMs: 120_000 };

function breakers() {
  const clock = { now: 1_000_000 };
  return { clock, b: new Breakers(SETTINGS, () => clock.now) };
}

test('stays closed below the minimum of scrapes or below the failure share; failures make it degraded', () => {
  const { b } = breakers();
  assert.deepEqual(b.status('p'), { state: 'ok', lastSuccessAt: null });
  for (let i = 0; i < 9; i++) b.record('p', true);
  assert.deepEqual(b.admit('p'), { ok: true, probe: false }, '9 failures are fewer than 10 scrapes');
  assert.equal(b.status('p').state, 'degraded');
  const other = breakers().b;
  for (let i = 0; i < 6; i++) other.record('p', false);
  for (let i = 0; i < 5; i++) other.record('p', true);
  assert.equal(other.admit('p').ok, true, '5 of 11 is under half');
});

test('opens at half failing over the window; answers with the cool-down; one probe after it; a success closes it', () => {
  const { b, clock } = breakers();
  for (let i = 0; i < 5; i++) b.record('p', false);
  for (let i = 0; i < 5; i++) b.record('p', true);
  assert.deepEqual(b.admit('p'), { ok: false, retryAfterSeconds: 15 });
  assert.equal(b.status('p').state, 'down');
  assert.equal(b.admit('q').ok, true, 'other platforms are not affected');
  clock.now += 14_001;
  assert.deepEqual(b.admit('p'), { ok: false, retryAfterSeconds: 1 });
  clock.now += 1_000;
  assert.deepEqual(b.admit('p'), { ok: true, probe: true });
  assert.deepEqual(b.admit('p'), { ok: false, retryAfterSeconds: 1 }, 'one probe at a time');
  b.record('p', false);
  assert.deepEqual(b.admit('p'), { ok: true, probe: false });
  assert.deepEqual(b.status('p'), { state: 'ok', lastSuccessAt: new Date(clock.now).toISOString() });
});

test('a failed probe opens it again for twice as long, up to the bound; a released probe lets the next one try', () => {
  const { b, clock } = breakers();
  for (let i = 0; i < 10; i++) b.record('p', true);
  const waits: number[] = [];
  for (let round = 0; round < 5; round++) {
    const refused = b.admit('p');
    assert.equal(refused.ok, false);
    waits.push((refused as { retryAfterSeconds: number }).retryAfterSeconds);
    clock.now += waits.at(-1)! * 1000;
    assert.deepEqual(b.admit('p'), { ok: true, probe: true });
    b.record('p', true);
  }
  assert.deepEqual(waits, [15, 30, 60, 120, 120]);
  clock.now += 120_000;
  assert.deepEqual(b.admit('p'), { ok: true, probe: true });
  b.release('p');
  assert.deepEqual(b.admit('p'), { ok: true, probe: true }, 'released without an outcome: still open, next request probes');
});

test('failures older than the window do not count', () => {
  const { b, clock } = breakers();
  for (let i = 0; i < 9; i++) b.record('p', true);
  clock.now += 30_001;
  b.record('p', true);
  assert.equal(b.admit('p').ok, true);
  assert.equal(b.status('p').state, 'degraded');
  clock.now += 30_001;
  assert.equal(b.status('p').state, 'ok');
});

test('under load the window keeps the latest 10,000 scrapes: failures that have left it no longer count', () => {
  const { b } = breakers();
  for (let i = 0; i < 5_001; i++) b.record('p', false);
  for (let i = 0; i < 4_999; i++) b.record('p', true);
  assert.equal(b.admit('p').ok, true, '4,999 failures of 10,000 are under half');
  // Each success pushes out the oldest scrape: the failures leave the window last.
  for (let i = 0; i < 9_999; i++) b.record('p', false);
  assert.equal(b.status('p').state, 'degraded', 'one failure is left');
  b.record('p', false);
  assert.equal(b.status('p').state, 'ok', 'the failures have all left the window');
  for (let i = 0; i < 4_999; i++) b.record('p', true);
  assert.equal(b.admit('p').ok, true, '4,999 failures of the latest 10,000');
  b.record('p', true);
  assert.equal(b.admit('p').ok, false, 'half of the latest 10,000 failed');
});
