// The memo of valid queries in front of each endpoint's validation (src/server/query.ts) is
// bounded in entries and in bytes, whatever the clients send, and keyed by the declared
// parameters alone: a query with an undeclared one is refused, never remembered.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { byId } from '../api/harness.ts';
import { MEMO_LIMITS, QueryValidator, queryAjv } from '../../src/server/query.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapAfterGc = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const endpoint = byId('snapmsg.spotlight.comments');
const url = endpoint.exampleQuery.url ?? '';
/** A valid query with a cursor of 4,000 characters of its own (its signature is checked later, by the scrape). */
const uniqueQuery = (n: number) => ({ url, cursor: `${String(n).padStart(8, '0')}${'c'.repeat(3_992)}`, cache_max_age: '30d' });
const MiB = 1024 * 1024;

describe('the query memo', () => {
  test('many unique long valid queries do not grow it beyond its byte bound', () => {
    const validator = new QueryValidator(endpoint, queryAjv());
    const before = heapAfterGc();
    for (let n = 0; n < 4_000; n++) assert.ok('value' in validator.check(uniqueQuery(n)), `query ${n}`);
    const grown = heapAfterGc() - before;
    const { entries, bytes } = validator.memo;
    assert.ok(bytes <= MEMO_LIMITS.bytes, `${bytes} bytes remembered, at most ${MEMO_LIMITS.bytes}`);
    assert.ok(entries > 0 && entries < 4_000, `${entries} entries`);
    // Its count covers at least the characters it holds (the key and the cursor, each once).
    assert.ok(bytes >= entries * 8_000, `${bytes} bytes for ${entries} entries of over 8,000 characters`);
    // Without the bound, 4,000 such entries hold over 30 MiB.
    assert.ok(grown < MEMO_LIMITS.bytes + 4 * MiB, `the heap grew by ${(grown / MiB).toFixed(1)} MiB`);
    // Still served from it: the newest query is remembered.
    assert.equal(validator.check(uniqueQuery(3_999)), validator.check(uniqueQuery(3_999)));
  });

  test('keyed by the declared parameters alone: their order does not matter, an undeclared one is refused and not remembered', () => {
    const validator = new QueryValidator(endpoint, queryAjv());
    const first = validator.check({ url, cache_max_age: '1d' });
    assert.ok('value' in first);
    assert.equal(validator.check({ cache_max_age: '1d', url }), first, 'the same entry, in another order');
    assert.equal(validator.memo.entries, 1);
    for (let n = 0; n < 100; n++) {
      const refused = validator.check({ url, cache_max_age: '1d', [`junk${n}`]: 'x'.repeat(10_000) });
      assert.ok('error' in refused);
      assert.deepEqual(refused.error.details, [{ path: `junk${n}`, message: 'Unknown parameter; the parameters are url, cursor, cache_max_age, stale_if_error' }]);
    }
    // Names an object has of its own anyway are no way past it either.
    for (const name of ['__proto__', 'constructor', 'toString']) {
      const query = JSON.parse(`{"url": ${JSON.stringify(url)}, ${JSON.stringify(name)}: "x"}`) as Record<string, unknown>;
      const refused = validator.check(query);
      assert.ok('error' in refused, name);
      assert.deepEqual(refused.error.details?.map((detail) => detail.path), [name]);
    }
    assert.equal(validator.memo.entries, 1, 'nothing refused is remembered');
  });
});
