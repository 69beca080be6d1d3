// Which stores are PostgreSQL's, told apart without importing them: the PostgreSQL and Redis
// modules (and pg, ioredis) load only when DATABASE_URL or REDIS_URL names them (store/open.ts).
import type { Stores } from '../types.ts';
import type { PostgresStores } from './index.ts';

export const isPostgresStores = (stores: Stores): stores is PostgresStores => 'watchTeams' in stores;
