// The monitor store's behaviour on both store sets: SQLite (a file, so that several
// connections race like processes) and PostgreSQL.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { openPostgresStores } from '../../src/store/postgres/index.ts';
import { openSqliteStores } from '../../src/store/sqlite/index.ts';
import { testBackends, type TestBackends } from '../support/backends.ts';
import { monitorBehaviour } from './monitor-behaviour.ts';

const dir = mkdtempSync(join(tmpdir(), 'monitors-store-'));
let backends: TestBackends;
before(async () => {
  backends = await testBackends();
});
after(async () => {
  await backends.drop();
  rmSync(dir, { recursive: true, force: true });
});

let files = 0;
monitorBehaviour('sqlite', async () => {
  const path = join(dir, `monitors-${++files}.db`);
  return { stores: openSqliteStores({ path }), another: async () => openSqliteStores({ path }) };
});

monitorBehaviour('postgres', async () => {
  const url = await backends.freshDatabaseUrl();
  const stores = await openPostgresStores({ url, schema: 'migrate' });
  return { stores, another: () => openPostgresStores({ url }) };
});
