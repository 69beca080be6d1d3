// Cache hits of two checkouts in one run: each checkout's bench/servers.ts (its service and a
// bare route serving the same bytes), measured alternately under the same load generator, with
// the main thread's CPU time per request read from /proc (Linux): on a busy machine requests
// per second swing with the neighbours' load, CPU time per request far less.
// Usage: node bench/compare.ts [--processes N] [rounds] [seconds] <base checkout> <changed checkout>
// (each checkout with its own node_modules). With --processes, each checkout runs N server
// processes, all measured in each round: the same code measured ±10–15% from one process to the
// next on a virtualised machine, more than many of the changes this compares.
import autocannon from 'autocannon';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({ options: { processes: { type: 'string', default: '1' } }, allowPositionals: true });
const [roundsArg = '3', secondsArg = '4', ...trees] = positionals;
const processes = Number(values.processes);
if (!Number.isInteger(processes) || processes < 1) throw new Error('--processes is a whole number, 1 or more');
const rounds = Number(roundsArg);
const seconds = Number(secondsArg);
if (trees.length === 0) throw new Error('name the checkouts to compare');

/**
 * CPU time so far, in µs (from clock ticks of 10 ms), of a process's main thread, or of all its
 * threads; `user`: in user space alone (the service's own code, without the kernel's network
 * stack, whose share grows on a machine whose cores are all busy).
 */
const cpuMicros = (pid: number, thread: 'main' | 'all', user = false): number => {
  const fields = (readFileSync(thread === 'main' ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
  return (Number(fields[11]) + (user ? 0 : Number(fields[12]))) * 10_000;
};
const median = (numbers: number[]): number => {
  const sorted = [...numbers].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

interface Server {
  child: ChildProcessByStdio<null, Readable, null>;
  pid: number;
  target: { service: string; bare: string; key: string };
}

interface Checkout {
  tree: string;
  servers: Server[];
  bare: number[];
  service: number[];
  bareCpu: number[];
  serviceCpu: number[];
  /** CPU per cache hit of every thread of the process (the embedded store's writer thread, the garbage collector's). */
  serviceProcessCpu: number[];
  bareUserCpu: number[];
  serviceUserCpu: number[];
}

const checkouts: Checkout[] = [];
for (const tree of trees) {
  const servers: Server[] = [];
  for (let n = 0; n < processes; n += 1) {
    const child = spawn(`${tree}/node_modules/.bin/node`, ['--disable-warning=ExperimentalWarning', `${tree}/bench/servers.ts`], { cwd: tree, stdio: ['ignore', 'pipe', 'inherit'] });
    process.once('exit', () => child.kill('SIGTERM'));
    const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
    servers.push({ child, pid: child.pid ?? 0, target: JSON.parse(line) as Server['target'] });
  }
  checkouts.push({ tree, servers, bare: [], service: [], bareCpu: [], serviceCpu: [], serviceProcessCpu: [], bareUserCpu: [], serviceUserCpu: [] });
}

/** Requests per second and CPU µs per request (main thread, whole process) of one measurement. */
async function measure(pid: number, url: string, headers: Record<string, string>): Promise<{ rps: number; cpu: number; userCpu: number; processCpu: number }> {
  const before = cpuMicros(pid, 'main');
  const userBefore = cpuMicros(pid, 'main', true);
  const processBefore = cpuMicros(pid, 'all');
  const result = await autocannon({ url, headers, connections: 50, duration: seconds, pipelining: 1 });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  const perRequest = (micros: number) => micros / result.requests.total;
  return {
    rps: result.requests.average,
    cpu: perRequest(cpuMicros(pid, 'main') - before),
    userCpu: perRequest(cpuMicros(pid, 'main', true) - userBefore),
    processCpu: perRequest(cpuMicros(pid, 'all') - processBefore),
  };
}

for (const c of checkouts) {
  for (const { pid, target } of c.servers) {
    await measure(pid, target.bare, {});
    await measure(pid, target.service, { 'x-api-key': target.key });
  }
}
for (let round = 0; round < rounds; round += 1) {
  // Alternated, in turns of the order too.
  for (const c of round % 2 ? [...checkouts].reverse() : checkouts) {
    for (const [n, { pid, target }] of c.servers.entries()) {
      const bare = await measure(pid, target.bare, {});
      const service = await measure(pid, target.service, { 'x-api-key': target.key });
      c.bare.push(bare.rps);
      c.service.push(service.rps);
      c.bareCpu.push(bare.cpu);
      c.serviceCpu.push(service.cpu);
      c.serviceProcessCpu.push(service.processCpu);
      c.bareUserCpu.push(bare.userCpu);
      c.serviceUserCpu.push(service.userCpu);
      console.log(
        `${c.tree}${processes > 1 ? ` process ${n + 1}` : ''} round ${round + 1}: bare ${bare.rps.toFixed(0)} req/s (${bare.cpu.toFixed(1)} µs CPU each, ${bare.userCpu.toFixed(1)} user), ` +
          `service ${service.rps.toFixed(0)} req/s (${service.cpu.toFixed(1)} µs CPU each, ${service.userCpu.toFixed(1)} user, ${service.processCpu.toFixed(1)} µs all threads)`,
      );
    }
  }
}
for (const c of checkouts) {
  // The median of each process's measurements: how far apart the processes of one checkout are.
  const byProcess = c.servers.map((_, n) => median(c.serviceCpu.filter((_, i) => i % processes === n)).toFixed(1));
  console.log(
    `median ${c.tree}: bare ${median(c.bare).toFixed(0)} req/s, service ${median(c.service).toFixed(0)} req/s, ratio ${(median(c.service) / median(c.bare)).toFixed(2)}x; ` +
      `main-thread CPU per request: service ${median(c.serviceCpu).toFixed(1)} µs${processes > 1 ? ` (by process ${byProcess.join(' / ')})` : ''}, bare ${median(c.bareCpu).toFixed(1)} µs, ratio ${(median(c.bareCpu) / median(c.serviceCpu)).toFixed(2)}x; ` +
      `user space alone: service ${median(c.serviceUserCpu).toFixed(1)} µs, bare ${median(c.bareUserCpu).toFixed(1)} µs, ratio ${(median(c.bareUserCpu) / median(c.serviceUserCpu)).toFixed(2)}x; ` +
      `service, all threads: ${median(c.serviceProcessCpu).toFixed(1)} µs`,
  );
  for (const { child } of c.servers) child.kill('SIGTERM');
}
