// The request records' writer (src/server/plugins/records.ts) against a store whose writes take
// as long as the test says: what one write takes, and what waits for the next.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Fastify from 'fastify';
import { metricsPlugin } from '../../src/server/plugins/metrics.ts';
import { recordsPlugin } from '../../src/server/plugins/records.ts';
import type { RequestRecord, Stores } from '../../src/store/types.ts';

const record = (n: number): RequestRecord => ({
  requestId: `req_${n}`,
  at: 1_800_000_000_000 + n,
  teamId: 'team_1',
  keyId: 'key_1',
  endpoint: '/v1/x',
  status: 200,
  errorCode: null,
  credits: 0,
  cached: true,
  durationMs: 1,
});

/** A store whose appends wait until `release()`; `calls` holds the ids of each append. */
async function writerWithSlowStore() {
  const calls: string[][] = [];
  const pending: (() => void)[] = [];
  const requests = {
    append: (records: readonly RequestRecord[]) => {
      calls.push(records.map((r) => r.requestId));
      return new Promise<void>((resolve) => pending.push(resolve));
    },
  };
  const app = Fastify({ logger: false });
  await app.register(metricsPlugin, {});
  await app.register(recordsPlugin, { stores: { requests } as unknown as Stores });
  await app.ready();
  const release = async () => {
    for (const resolve of pending.splice(0)) resolve();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { app, calls, release };
}

describe('request records writer', () => {
  test('a write takes the records waiting when it began; those added meanwhile wait for the next write', { timeout: 5_000 }, async () => {
    const { app, calls, release } = await writerWithSlowStore();
    for (let n = 1; n <= 3; n++) app.addRecord(record(n));
    const first = app.writeRecords();
    assert.deepEqual(calls, [['req_1', 'req_2', 'req_3']]);
    // Requests answered while the batch is being written.
    app.addRecord(record(4));
    app.addRecord(record(5));
    await release();
    await first;
    // Under a steady stream, writing until none waits would commit a small batch per round
    // trip to the store, and each commit empties the store's memory of keys and cache entries.
    assert.equal(calls.length, 1, 'the records added during the write were not written with it');

    const second = app.writeRecords();
    assert.deepEqual(calls[1], ['req_4', 'req_5']);
    await release();
    await second;
    await app.close();
  });

  test('a flush asked while a write is under way covers what was added before it was asked', { timeout: 5_000 }, async () => {
    const { app, calls, release } = await writerWithSlowStore();
    app.addRecord(record(1));
    const first = app.writeRecords();
    app.addRecord(record(2));
    const second = app.writeRecords();
    const third = app.writeRecords();
    await release();
    await first;
    await release();
    await Promise.all([second, third]);
    assert.deepEqual(calls, [['req_1'], ['req_2']], 'one more write after the first, with what waited when it began');
    await app.close();
  });

  test('closing writes every record, those answered during its own last write too', { timeout: 5_000 }, async () => {
    const { app, calls, release } = await writerWithSlowStore();
    app.addRecord(record(1));
    const writing = app.writeRecords();
    app.addRecord(record(2));
    let closed = false;
    const closing = app.close().then(() => {
      closed = true;
    });
    // The write under way ends; closing writes what waited meanwhile...
    for (let i = 0; i < 10 && calls.length < 2; i++) await release();
    assert.deepEqual(calls, [['req_1'], ['req_2']]);
    // ...and a request answered during that write leaves a record that is written before close ends.
    app.addRecord(record(3));
    for (let i = 0; i < 10 && !closed; i++) await release();
    await Promise.all([writing, closing]);
    assert.deepEqual(calls.flat(), ['req_1', 'req_2', 'req_3']);
  });
});
