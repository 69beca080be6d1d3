// `npm run demo`: the service on its embedded default with a demo team, a fresh demo key at
// every start (also written to DATA_DIR/demo-key) and copy-paste curl lines.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from './config.ts';
import { openStores, start } from './main.ts';
import { generateKey } from './server/keys.ts';

const DEMO_TEAM = 'demo';
const DEMO_CREDITS = 1000;

const config = loadConfig();
const stores = openStores(config);
const teams = await stores.accounts.listTeams();
const team = teams.find((candidate) => candidate.name === DEMO_TEAM) ?? (await stores.accounts.createTeam({ name: DEMO_TEAM, credits: DEMO_CREDITS, rateLimit: 100 }));
const generated = generateKey();
await stores.accounts.createKey({ teamId: team.id, name: `demo ${new Date().toISOString()}`, hash: generated.hash, prefix: generated.prefix, last4: generated.last4 });
const keyFile = join(config.dataDir, 'demo-key');
writeFileSync(keyFile, `${generated.key}\n`, { mode: 0o600 });

const { address } = await start(config, stores);
const base = address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '127.0.0.1');
const key = `$(cat ${keyFile})`;
console.log(`
Service listening on ${base}
Demo team ${team.id} ("${team.name}"), balance ${(await stores.ledger.balance(team.id)) ?? 0} credits.
Demo key written to ${keyFile}

Try:
  curl -s ${base}/healthz
  curl -s -H "x-api-key: ${key}" "${base}/v1/snapmsg/profile?username=example"
  curl -s -H "Authorization: Bearer ${key}" "${base}/v1/linkpage-a/profile?url=https://linkpage-a.example/example&cache_max_age=1d"
  curl -s "${base}/openapi.json" | head -c 300; echo
  open ${base}/docs
  npm run -s admin -- usage --team ${team.id}
`);
