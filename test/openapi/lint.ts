// `npm run -s lint:openapi` (part of `npm test`): lints the OpenAPI document the service serves
// with Redocly's recommended ruleset (redocly.yaml). Any error fails; warnings are printed.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { servedDocument } from './served.ts';

const root = join(import.meta.dirname, '..', '..');
const redocly = join(root, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');

const { text } = await servedDocument();
const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
try {
  const file = join(dir, 'openapi.json');
  writeFileSync(file, text);
  const result = spawnSync(process.execPath, [redocly, 'lint', file, '--config', join(root, 'redocly.yaml'), '--format', 'stylish'], {
    stdio: 'inherit',
    // No telemetry and no update check: the test command talks to nothing outside the machine.
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  if (result.error) throw result.error;
  process.exitCode = result.status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
