import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { newRequestId } from '../../src/server/ids.ts';

test('request ids: req_, then the time in 8 characters that sort as it does, then 24 random URL-safe characters', async () => {
  const earlier = newRequestId();
  const same = newRequestId();
  await sleep(3);
  const later = newRequestId();
  for (const id of [earlier, same, later]) assert.match(id, /^req_[0-9A-Za-z]{8}[A-Za-z0-9_-]{24}$/);
  assert.notEqual(earlier, same);
  // Byte order, as the store's index compares them.
  assert.ok(Buffer.compare(Buffer.from(earlier.slice(0, 12)), Buffer.from(later.slice(0, 12))) < 0);
  assert.ok(earlier.slice(0, 12) <= same.slice(0, 12));
});
