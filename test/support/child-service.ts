// The service as a child process (`node src/main.ts`, the way it is deployed), for tests that kill
// it (SIGKILL) and start it again: an IPC channel on which it sends its address once it listens.
// The parent's database, Redis, cursor secret and metrics token are not inherited: each test says
// its own in `env` (on top of loopback, port 0 and LOG_LEVEL=warn).
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

export interface ChildService {
  child: ChildProcess;
  /** Its address (`http://127.0.0.1:<port>`) once it listens; rejects if it exits first. */
  listening: Promise<string>;
  /** Settles when the process has exited. */
  exited: Promise<void>;
  /** What it has written to stderr so far. */
  stderr: () => string;
}

export function spawnService(env: Record<string, string>): ChildService {
  const { CURSOR_SECRET: _secret, METRICS_TOKEN: _token, DATABASE_URL: _db, REDIS_URL: _redis, ...inherited } = process.env;
  const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...inherited, LOG_LEVEL: 'warn', HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const listening = new Promise<string>((resolve, reject) => {
    child.on('message', (message: { listening?: string }) => (message.listening ? resolve(message.listening) : undefined));
    child.once('exit', () => reject(new Error(`the service exited before it listened: ${stderr}`)));
  });
  // A test that fails before awaiting it must not end in an unhandled rejection.
  listening.catch(() => undefined);
  return { child, listening, exited, stderr: () => stderr };
}
