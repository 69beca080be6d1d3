// Micro-benchmark of the embedded SQLite store on a file database (WAL, synchronous=NORMAL).
// Run: node --disable-warning=ExperimentalWarning bench/sqlite-store.ts [iterations]

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '../src/store/sqlite/index.ts';

const iterations = Number(process.argv[2] ?? 10_000);
const dir = mkdtempSync(join(tmpdir(), 'bench-sqlite-'));
const stores = openSqliteStores({ path: join(dir, 'bench.sqlite') });

async function bench(name: string, fn: (i: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < Math.min(1_000, iterations); i++) await fn(i); // warm-up
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) await fn(i);
  const ns = Number(process.hrtime.bigint() - start);
  const opsPerSec = Math.round(iterations / (ns / 1e9));
  console.log(`${name.padEnd(18)} ${String(opsPerSec).padStart(9)} ops/s  ${(ns / iterations / 1000).toFixed(1)} µs/op`);
}

try {
  const team = await stores.accounts.createTeam({ name: 'bench', credits: iterations * 2 + 2_000, rateLimit: 100 });
  const hashes: string[] = [];
  for (let i = 0; i < 1_000; i++) {
    const hash = `hash-${i}-${'x'.repeat(40)}`;
    hashes.push(hash);
    await stores.accounts.createKey({ teamId: team.id, name: `k${i}`, hash, prefix: 'ps_', last4: String(i).padStart(4, '0') });
  }
  const value = JSON.stringify({ data: 'y'.repeat(2_000) });
  for (let i = 0; i < 1_000; i++) await stores.cache.set(`cache-${i}`, `target-${i % 100}`, { value, storedAt: Date.now() });

  console.log(`node ${process.version}, ${iterations} iterations each, file database`);
  await bench('findActiveKey', (i) => stores.accounts.findActiveKey(hashes[i % hashes.length] as string));
  await bench('cache get (2 KB)', (i) => stores.cache.get(`cache-${i % 1_000}`));
  await bench('reserve+commit', async (i) => {
    const r = await stores.ledger.reserve(team.id, 1, `req_${i}`, Date.now() + 60_000);
    if (!r.ok) throw new Error('out of credits');
    await stores.ledger.commit(r.reservationId);
  });
} finally {
  await stores.close();
  rmSync(dir, { recursive: true, force: true });
}
