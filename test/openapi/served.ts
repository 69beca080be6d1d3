// The OpenAPI document exactly as a running service serves it: the service is started the way
// `npm run serve` starts it (src/main.ts), on an ephemeral port with a temporary data
// directory, and /openapi.json is fetched over HTTP.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { start } from '../../src/main.ts';

export async function servedDocument(env: Record<string, string> = {}): Promise<{ text: string; address: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'openapi-'));
  try {
    const running = await start(loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...env }));
    try {
      const response = await fetch(`${running.address}/openapi.json`);
      if (response.status !== 200) throw new Error(`GET /openapi.json answered ${response.status}`);
      return { text: await response.text(), address: running.address };
    } finally {
      await running.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
