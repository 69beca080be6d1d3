// The service as a user of the SDK meets it: a real start() over HTTP, scraping the sandbox
// upstream (on local ports), with test mode on; a team with credits and its live and test keys,
// and a team without credits; and the sandbox catalogue's queries.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, UNPACED_ENV } from '../../src/config.ts';
import { start } from '../../src/main.ts';
import { generateKey } from '../../src/server/keys.ts';
import { openStores } from '../../src/store/open.ts';
import type { Stores, Team } from '../../src/store/types.ts';
import { platforms } from '../../sandbox/platforms/index.ts';
import { startSandbox } from '../../sandbox/server.ts';

export interface Service {
  base: string;
  stores: Stores;
  team: Team;
  keys: { live: string; test: string; broke: string };
  stop(): Promise<void>;
}

export async function startService(): Promise<Service> {
  const sandbox = await startSandbox({ seed: 'sdk', portBase: 0, host: '127.0.0.1' });
  const dir = mkdtempSync(join(tmpdir(), 'sdk-'));
  const config = loadConfig({ ...sandbox.env, ...UNPACED_ENV, DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', TEST_MODE: 'on' });
  const stores = await openStores(config);
  const running = await start(config, stores);
  const team = await stores.accounts.createTeam({ name: 'sdk', credits: 100_000, rateLimit: 1_000_000 });
  const broke = await stores.accounts.createTeam({ name: 'broke', credits: 0, rateLimit: 1_000 });
  const key = async (teamId: string, mode?: 'test') => {
    const generated = generateKey(mode);
    await stores.accounts.createKey({ teamId, name: mode ?? 'live', hash: generated.hash, prefix: generated.prefix, last4: generated.last4 });
    return generated.key;
  };
  return {
    base: running.address,
    stores,
    team,
    keys: { live: await key(team.id), test: await key(team.id, 'test'), broke: await key(broke.id) },
    async stop() {
      await running.stop();
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The query of the sandbox catalogue's entry for `path` whose description matches `pattern`. */
export function catalogued(path: string, pattern: RegExp): Record<string, string> {
  const entry = platforms.flatMap((platform) => platform.catalogue).find((candidate) => candidate.endpoint === path && pattern.test(candidate.description));
  assert.ok(entry, `a catalogue entry of ${path} matching ${pattern}`);
  return Object.fromEntries(new URLSearchParams(entry.query));
}
