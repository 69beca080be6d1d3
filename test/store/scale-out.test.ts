// The store behaviour suite on the scale-out set: PostgreSQL for accounts, credits and the
// cache, Redis for the rate limiter and the cache's first tier (bounded like the database
// here). The same checks as the embedded store (sqlite.test.ts).
import { after, before } from 'node:test';
import { openPostgresStores } from '../../src/store/postgres/index.ts';
import { withRedis } from '../../src/store/redis/index.ts';
import { testBackends, type TestBackends } from '../support/backends.ts';
import { storeBehaviour } from './behaviour.ts';

let backends: TestBackends;
before(async () => {
  backends = await testBackends();
});
after(() => backends.drop());

storeBehaviour('postgres + redis', async (config) => {
  const stores = await openPostgresStores({ url: await backends.freshDatabaseUrl(), schema: 'migrate', ...config });
  return withRedis(stores, { url: backends.redisUrl, prefix: backends.freshPrefix(), cacheMaxBytes: config?.cacheMaxBytes });
});
