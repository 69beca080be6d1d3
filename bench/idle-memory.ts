// Memory at rest: the service started as `npm run serve` starts it (a child process, an empty
// database in a new DATA_DIR, no request yet), read from /proc once it listens and has been idle
// a few seconds, beside a bare Fastify process read the same way. The service is started twice
// on one new compile cache (NODE_COMPILE_CACHE): the first start compiles every module and
// fills the cache, as the first start after an install or a change does; the second reads it,
// as every later start does. Linux only (/proc).
// Usage: part of `npm run bench`, or alone: npm run bench:idle-memory [-- --idle-seconds 5]
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

export interface Resident {
  /** VmRSS, RssAnon and RssFile of /proc/<pid>/status, in MiB. */
  rss: number;
  anon: number;
  file: number;
}

function resident(pid: number): Resident {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) / 1024;
  return { rss: field('VmRSS'), anon: field('RssAnon'), file: field('RssFile') };
}

/** Waits for the line that says the process listens; fails if it exits first. */
async function listening(child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`exited (${String(code)}) before listening`);
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const found = (async () => {
    for await (const line of lines) if (line.includes('Server listening at')) return;
    throw new Error('output ended before listening');
  })();
  await Promise.race([found, exited]);
  // The rest of the output is not read: it must not fill the pipe.
  child.stdout?.resume();
}

/** Starts `command`, waits until it listens and `idleMs` more, reads the memory of process `pid(child)`, stops it. */
async function measure(command: string, args: string[], env: NodeJS.ProcessEnv, idleMs: number, pid: (child: ChildProcess) => number): Promise<Resident> {
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  try {
    await listening(child);
    await sleep(idleMs);
    return resident(pid(child));
  } finally {
    // npm forwards SIGTERM to the service it started.
    child.kill('SIGTERM');
    await exited;
  }
}

/** The service `npm run serve` runs: npm's child (the script `exec`s node). */
const serviceOf = (npmProcess: ChildProcess): number => {
  const pid = npmProcess.pid as number;
  const [child] = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/);
  if (!child) throw new Error('npm run serve has no child process');
  return Number(child);
};

/** A Fastify app with one route and its logger on, nothing else. */
const BARE = `import Fastify from 'fastify';
const app = Fastify({ logger: true });
app.get('/', async () => ({ ok: true }));
await app.listen({ port: 0, host: '127.0.0.1' });`;

const mib = (value: number) => `${value.toFixed(0)} MB`;
const line = (what: string, { rss, anon, file }: Resident) => `${what}: ${mib(rss)} resident (${mib(anon)} anonymous, ${mib(file)} file-backed)`;

/** Prints the idle service's resident memory, first start and later starts, beside a bare Fastify process's. */
export async function idleMemory(idleMs = 5_000): Promise<void> {
  if (!existsSync('/proc/self/status')) {
    console.log('idle memory: not measured (needs /proc, Linux)');
    return;
  }
  const cache = mkdtempSync(join(tmpdir(), 'bench-compile-cache-'));
  const dirs: string[] = [];
  const serve = () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-idle-'));
    dirs.push(dir);
    return measure(npm, ['run', '-s', 'serve'], { PORT: '0', DATA_DIR: dir, NODE_COMPILE_CACHE: cache }, idleMs, serviceOf);
  };
  try {
    const first = await serve();
    const later = await serve();
    const bare = await measure(process.execPath, ['--input-type=module', '-e', BARE], {}, idleMs, (child) => child.pid as number);
    console.log(`idle memory, ${idleMs / 1000} s after listening, no request, empty database (target <= 150 MB resident):`);
    console.log(`  ${line('npm run serve, later starts (compile cache read)', later)}`);
    console.log(`  ${line('npm run serve, first start (compile cache filled)', first)}`);
    console.log(`  ${line('bare Fastify process', bare)}`);
  } finally {
    for (const dir of [cache, ...dirs]) rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({ options: { 'idle-seconds': { type: 'string', default: '5' } } });
  await idleMemory(Number(values['idle-seconds']) * 1000);
}
