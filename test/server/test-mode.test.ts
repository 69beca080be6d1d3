// TEST_MODE=on in a real start(): test-mode keys are served by the sandbox the service runs in
// its own process, while live keys go to the configured origins (here, one that answers nothing).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { start } from '../../src/main.ts';
import { generateKey } from '../../src/server/keys.ts';
import { openStores } from '../../src/store/open.ts';
import { refusedPort } from '../support/ports.ts';

test('TEST_MODE=on: a test key is answered from the in-process sandbox; a live key goes to the configured origin', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'test-mode-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // A configured origin that refuses connections: only a live key may try it.
  const closed = await refusedPort();
  t.after(() => closed.release());
  const config = loadConfig({ DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', TEST_MODE: 'on', SNAPMSG_ORIGIN: closed.origin, REQUEST_BUDGET_MS: '1500' });
  const stores = await openStores(config);
  const running = await start(config, stores);
  t.after(() => running.stop());
  const team = await stores.accounts.createTeam({ name: 'tm', credits: 5, rateLimit: 100 });
  const keys = { test: generateKey('test'), live: generateKey() };
  for (const key of Object.values(keys)) await stores.accounts.createKey({ teamId: team.id, name: 'k', hash: key.hash, prefix: key.prefix, last4: key.last4 });
  const get = (key: string) => fetch(`${running.address}/v1/snapmsg/profile?username=lunavoss`, { headers: { 'x-api-key': key } });
  const tested = await get(keys.test.key);
  assert.equal(tested.status, 200);
  const body = (await tested.json()) as { meta: { test: boolean; creditsCharged: number } };
  assert.deepEqual([body.meta.test, body.meta.creditsCharged], [true, 0]);
  const live = await get(keys.live.key);
  assert.ok(live.status === 502 || live.status === 503, `the live key tried the configured origin: ${live.status}`);
  assert.equal(await stores.ledger.balance(team.id), 5);
});
