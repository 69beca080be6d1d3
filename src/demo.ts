// `npm run demo`: the sandbox upstream and the service on its embedded default, pointed at the
// sandbox, with a demo team, a fresh demo key at every start (the previous one revoked; the key
// printed and written to DATA_DIR/demo-key), copy-paste curl lines for the sandbox's catalogue,
// a link that sets the demo dashboard user's password, and a webhook receiver on loopback
// (webhooks.ts below) registered for the demo team, which prints each signed delivery it gets.
import './gc-tuning.ts';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, PLATFORM_ORIGINS, UNPACED_ENV } from './config.ts';
import { start } from './main.ts';
import { DEMO_KEY_FILE, openStores } from './store/open.ts';
import { DEMO_EMAIL, demoTeam, demoUserLink, rotateDemoKey } from './demo-team.ts';
import { platforms as sandboxPlatforms } from '../sandbox/platforms/index.ts';
import { startSandbox } from '../sandbox/server.ts';
import { sandboxOptionsFromEnv } from '../sandbox/main.ts';
import { startDemoReceiver } from './webhooks/demo-receiver.ts';

async function demo(): Promise<void> {
  // The sandbox serves every platform whose origin the environment does not set.
  const sandbox = await startSandbox(sandboxOptionsFromEnv());
  process.once('exit', () => void sandbox.close());
  const env: Record<string, string | undefined> = { ...process.env };
  for (const [name, origin] of Object.entries(sandbox.env)) env[name] ||= origin;
  // The sandbox runs on this machine: no pace unless the environment sets one.
  for (const [name, value] of Object.entries(UNPACED_ENV)) env[name] ||= value;
  // Test-mode keys work in the demo.
  env.TEST_MODE ||= 'on';
  // The metrics on a loopback listener of their own, on a free port unless one is set.
  if (!env.METRICS_TOKEN) env.METRICS_PORT ||= '0';
  // For the demo only: its webhook receiver is on this machine, over plain HTTP, which the
  // address guard refuses everywhere else.
  env.WEBHOOK_ALLOW_PRIVATE ||= 'on';
  env.WEBHOOK_ALLOW_HTTP ||= 'on';

  const config = loadConfig(env);
  const stores = await openStores(config);
  const team = await demoTeam(stores);
  const running = await start(config, stores);
  // Only once the service listens: a start that fails leaves the previous key working.
  const demoKey = await rotateDemoKey(stores, team);
  const receiver = await startDemoReceiver(stores, team.id);
  process.once('exit', () => void receiver.close());
  const keyFile = join(config.dataDir, DEMO_KEY_FILE);
  writeFileSync(keyFile, `${demoKey}\n`, { mode: 0o600 });

  const base = running.address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '127.0.0.1');
  const key = `$(cat ${keyFile})`;
  const passwordLink = await demoUserLink(stores, team, config.publicBaseUrl ?? base);
  const examples = sandboxPlatforms.flatMap((platform) =>
    platform.catalogue.slice(0, 3).map((entry) => `  # ${platform.name}: ${entry.description}\n  curl -s -H "x-api-key: ${key}" "${base}${entry.endpoint}?${entry.query}"`),
  );
  const origins = Object.keys(PLATFORM_ORIGINS)
    .map((platform) => `  ${platform}: ${config.origins[platform as keyof typeof PLATFORM_ORIGINS]}`)
    .join('\n');
  console.log(`
Service listening on ${base}, scraping the sandbox upstream:
${origins}
Demo team ${team.id} ("${team.name}"), balance ${(await stores.ledger.balance(team.id)) ?? 0} credits.
Demo key: ${demoKey}
  (new at every start, the previous demo key is revoked; also written to ${keyFile})

Try:
  curl -s ${base}/healthz
${examples.join('\n')}
  curl -s "${base}/openapi.json" | head -c 300; echo${running.metricsAddress ? `\n  curl -s ${running.metricsAddress}/metrics | grep ^api_requests_total` : ''}
  npm run -s admin -- usage --team ${team.id}
  # webhooks: a receiver on ${receiver.url} is registered for the demo team and prints each signed delivery here
  # (WEBHOOK_ALLOW_PRIVATE and WEBHOOK_ALLOW_HTTP are on for the demo only, so that it may be on this machine):
  curl -s -X POST -H "x-api-key: ${key}" ${base}/v1/webhooks/${receiver.webhookId}/test
  curl -s -H "x-api-key: ${key}" ${base}/v1/webhooks/${receiver.webhookId}/deliveries
  # the SDK's command line: a whole listing as NDJSON
  PAGESCRAPE_BASE_URL=${base} PAGESCRAPE_API_KEY=${key} npm run -s client -- get /v1/shopfront/shop --url https://www.shopfront.example/shop/bighaul --all | wc -l
Docs: open ${base}/docs in a browser.
Dashboard: open ${passwordLink}
  to set a password for ${DEMO_EMAIL} (a new link at every start, usable once), then sign in at ${base}/dashboard.
The README lists the whole sandbox catalogue. Ctrl-C stops the service and the sandbox.
`);
}

demo().catch((error: unknown) => {
  // A port in use, a bad setting: one line, not a stack trace.
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
