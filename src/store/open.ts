// The stores the configuration names: the embedded default (SQLite in DATA_DIR).
import { join } from 'node:path';
import type { Config } from '../config.ts';
import { openSqliteStores } from './sqlite.ts';
import type { Stores } from './types.ts';

export function openStores(config: Config): Stores {
  return openSqliteStores({ path: join(config.dataDir, 'service.db'), cacheMaxBytes: config.cacheMaxBytes });
}
