// Cache entries written together on PostgreSQL (CacheStore.set's `together`, a batch job's pages):
// each call resolves once its entry is stored, and a key written twice in one batch keeps the last;
// an entry handed over as bytes alone is kept as its text.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openPostgresStores, type PostgresStores } from '../../src/store/postgres/index.ts';
import { testBackends, type TestBackends } from '../support/backends.ts';

let backends: TestBackends;
let s: PostgresStores;
before(async () => {
  backends = await testBackends();
  s = await openPostgresStores({ url: await backends.freshDatabaseUrl(), schema: 'migrate' });
});
after(async () => {
  await s.close();
  await backends.drop();
});

test('entries written together are each stored when their call resolves', async () => {
  const entry = (value: string, storedAt: number) => ({ value, storedAt });
  const writes = Array.from({ length: 60 }, (_, n) => s.cache.set(`k${n % 40}`, `t${n % 40}`, entry(`{"n":${n}}`, 1_000 + n), { together: true }));
  // The first is written at once (the others wait for it, then go together): stored when it resolves.
  await writes[0];
  assert.notEqual(await s.cache.get('k0'), null);
  await Promise.all(writes);
  for (let n = 0; n < 40; n++) {
    // k0..k19 were written twice (n and n + 40): the later write holds.
    const last = n < 20 ? n + 40 : n;
    assert.deepEqual(await s.cache.get(`k${n}`), { bytes: Buffer.from(`{"n":${last}}`), storedAt: 1_000 + last }, `k${n}`);
  }
  await s.cache.deleteTarget('t5');
  assert.equal(await s.cache.get('k5'), null);
});

test("an entry given as its UTF-8 bytes alone (a live scrape's) is stored as its text, alone or together", async () => {
  const value = JSON.stringify({ name: 'Zoë ✓ 東京 🎉', quote: 'a "b" \\ c' });
  await s.cache.set('bytes-alone', 't-bytes', { bytes: Buffer.from(value), storedAt: 2_000 });
  await s.cache.set('bytes-together', 't-bytes', { bytes: Buffer.from(value), storedAt: 2_001 }, { together: true });
  assert.deepEqual(await s.cache.get('bytes-alone'), { bytes: Buffer.from(value), storedAt: 2_000 });
  assert.deepEqual(await s.cache.get('bytes-together'), { bytes: Buffer.from(value), storedAt: 2_001 });
});
