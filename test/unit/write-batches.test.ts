// Writes gathered by key (store/write-batches.ts): the first goes at once, those asked during a
// write of the same key go in the next, at most `max` at a time; each caller gets its own answer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WriteBatches } from '../../src/store/write-batches.ts';

test('writes asked during a write of their key go together in the next, at most max at a time, each answered', async () => {
  const writes: { key: string; items: number[]; done: () => void }[] = [];
  const batches = new WriteBatches<number, string>(
    (key, items) => new Promise((resolve) => writes.push({ key, items, done: () => resolve(items.map((n) => `${key}:${n}`)) })),
    2,
  );
  const answers = [batches.add('a', 1), batches.add('a', 2), batches.add('a', 3), batches.add('a', 4), batches.add('b', 5)];
  assert.deepEqual(writes.map(({ key, items }) => [key, items]), [['a', [1]], ['b', [5]]], 'the first of each key at once');
  writes[0]?.done();
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(writes[2]?.items, [2, 3], 'then at most two of those that waited');
  writes[2]?.done();
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(writes[3]?.items, [4]);
  writes[3]?.done();
  writes[1]?.done();
  assert.deepEqual(await Promise.all(answers), ['a:1', 'a:2', 'a:3', 'a:4', 'b:5']);
});

test('a failed write fails its own batch only', async () => {
  let calls = 0;
  const batches = new WriteBatches<number, number>(async (_key, items) => {
    calls += 1;
    if (items.includes(1)) throw new Error('no');
    return items;
  });
  const [first, second] = [batches.add('k', 1), batches.add('k', 2)];
  await assert.rejects(first, /no/);
  assert.equal(await second, 2);
  assert.equal(calls, 2);
});
