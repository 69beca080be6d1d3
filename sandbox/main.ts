// `npm run sandbox`: the sandbox upstream on its own, configured by environment.
import { pathToFileURL } from 'node:url';
import { startSandbox, type SandboxOptions } from './server.ts';
import { platforms } from './platforms/index.ts';
import { stopOnSignals } from '../src/lifecycle.ts';

const number = (name: string, fallback: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got "${raw}"`);
  return value;
};

/** SANDBOX_OUTAGES: `platform:upMs:downMs`, comma-separated, e.g. `shopfront:20000:10000`. */
function outages(raw: string | undefined): SandboxOptions['outages'] {
  const result: NonNullable<SandboxOptions['outages']> = {};
  const names = platforms.map((platform) => platform.name) as string[];
  for (const entry of (raw ?? '').split(',').map((part) => part.trim()).filter(Boolean)) {
    const [name, up, down] = entry.split(':');
    if (!name || !names.includes(name) || !/^\d+$/.test(up ?? '') || !/^\d+$/.test(down ?? '') || Number(up) + Number(down) === 0) {
      throw new Error(`SANDBOX_OUTAGES must list platform:upMs:downMs (platforms: ${names.join(', ')}), got "${entry}"`);
    }
    result[name as keyof typeof result] = { upMs: Number(up), downMs: Number(down) };
  }
  return result;
}

export function sandboxOptionsFromEnv(): SandboxOptions {
  return {
    blockedAddresses: (process.env.SANDBOX_BLOCKED_ADDRESSES ?? '').split(',').map((address) => address.trim()).filter(Boolean),
    outages: outages(process.env.SANDBOX_OUTAGES),
    seed: process.env.SANDBOX_SEED || 'sandbox',
    host: process.env.SANDBOX_HOST || '127.0.0.1',
    portBase: number('SANDBOX_PORT_BASE', 4101),
    latencyMs: number('SANDBOX_LATENCY_MS', 0),
    flakyRate: number('SANDBOX_FLAKY_RATE', 0),
    slowMs: number('SANDBOX_SLOW_MS', 3_000),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  Promise.resolve()
    .then(() => startSandbox(sandboxOptionsFromEnv()))
    .then((sandbox) => {
      console.log('Sandbox upstream listening. Point the service at it with:');
      for (const [name, origin] of Object.entries(sandbox.env)) console.log(`  export ${name}=${origin}`);
      stopOnSignals(() => void sandbox.close().then(() => process.exit(0)));
    })
    .catch((error: unknown) => {
      // A port in use, a bad setting: one line, not a stack trace.
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    });
}
