// test/api/limits.test.ts on PostgreSQL and Redis (see test/api/harness.ts).
process.env.TEST_STORES = 'scale-out';
await import('../api/limits.test.ts');
