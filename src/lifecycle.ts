// How the long-running commands (`npm run serve`, `npm run demo`, `npm run sandbox`) stop, and
// how they say that they cannot listen. npm 11 forwards only SIGINT and SIGTERM to the script it
// runs (and only to its direct child, hence `exec` in those scripts); SIGHUP kills npm and
// leaves the script running, holding its ports. So: SIGTERM, SIGINT and SIGHUP all stop the
// process, and a process started by npm also stops when that npm process is gone.

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/** How often a process started by npm checks that npm is still its parent. */
const PARENT_CHECK_MS = 1_000;

/**
 * Calls `stop` once, on the first of SIGTERM, SIGINT or SIGHUP, or when the npm process that
 * started this one has gone. Later signals are ignored rather than left to their default action:
 * a Ctrl-C reaches the process twice, from the terminal and forwarded by npm, and the second must
 * not cut the drain short. Returns a function that removes the handlers.
 */
export function stopOnSignals(stop: (reason: string) => void): () => void {
  let stopped = false;
  const once = (reason: string) => {
    if (stopped) return;
    stopped = true;
    stop(reason);
  };
  const handler = (signal: NodeJS.Signals) => once(signal);
  for (const signal of SIGNALS) process.on(signal, handler);
  // npm sets npm_lifecycle_event for the script it runs; its child's parent is npm itself (the
  // scripts `exec`). Reparenting means npm has gone. Only under npm: a service started from a
  // shell with nohup must outlive that shell.
  const parent = process.ppid;
  const watch = process.env.npm_lifecycle_event
    ? setInterval(() => {
        if (process.ppid !== parent) once('npm exited');
      }, PARENT_CHECK_MS)
    : null;
  watch?.unref();
  return () => {
    for (const signal of SIGNALS) process.off(signal, handler);
    if (watch) clearInterval(watch);
  };
}

/** The error codes of a failed listen that the operator can fix through configuration. */
const LISTEN_PROBLEMS: Record<string, string> = {
  EADDRINUSE: 'is already in use',
  EACCES: 'needs privileges this process does not have',
  EADDRNOTAVAIL: 'is not an address of this machine',
  ENOTFOUND: 'does not resolve',
};

/**
 * A failed listen as one line that names the setting to change, e.g. "PORT 3000: 127.0.0.1:3000
 * is already in use (EADDRINUSE); set PORT to a free port (0 picks one)"; other errors unchanged.
 */
export function listenFailure(
  error: unknown,
  on: { host: string; port: number; hostVariable: string; portVariable: string; /** The variable's value when it is not the port itself. */ portSetting?: number; /** What listens, e.g. "snapmsg". */ name?: string },
): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  const problem = typeof code === 'string' ? LISTEN_PROBLEMS[code] : undefined;
  if (!problem) return error;
  const address = `${on.host.includes(':') ? `[${on.host}]` : on.host}:${on.port}${on.name ? ` (${on.name})` : ''}`;
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    return new Error(`${on.hostVariable} ${on.host}: cannot listen on ${address}, the host ${problem} (${code}); set ${on.hostVariable} to an address of this machine`);
  }
  return new Error(`${on.portVariable} ${on.portSetting ?? on.port}: ${address} ${problem} (${String(code)}); set ${on.portVariable} to a free port (0 picks one)`);
}

/**
 * Run by `--expose-gc` (`npm run serve`, `npm run demo`): one full collection that also hands
 * the freed memory back to the system, once the app is ready and before it listens, so that no
 * request waits on it. The start leaves behind garbage of its own (modules evaluated, schemas
 * compiled) that V8 would collect only once the service allocates again: an idle service kept
 * it (30 MB resident at rest, 157 -> 127 MB, npm run bench:idle-memory). Without the flag,
 * nothing is done.
 */
export function collectStartGarbage(): void {
  // 'last-resort' is the collection that also shrinks the young generation and returns the freed
  // pages; a plain major one leaves them to the heap (no change in resident memory).
  (globalThis as { gc?: (options: { type: 'major'; flavor: 'last-resort' }) => void }).gc?.({ type: 'major', flavor: 'last-resort' });
}
