// Cache hits through the full stack (auth, rate limit, cache, envelope) against a bare Fastify
// route returning the same JSON body, alternated under the same load generator in one run.
// Usage: npm run bench [-- --rounds 4 --seconds 5 --connections 50 --profile]
// With --profile the service runs under `node --cpu-prof` and the top entries of its profile by
// self time are printed (the bare route shares its process).
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { childProfile } from './cpu-profile.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '4' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    profile: { type: 'boolean', default: false },
  },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const connections = Number(values.connections);

const profile = childProfile(values.profile);
const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', ...profile.flags, new URL('./servers.ts', import.meta.url).pathname], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
const target = JSON.parse(line) as { service: string; bare: string; key: string; bytes: number };

async function measure(url: string, headers: Record<string, string>) {
  const result = await autocannon({ url, headers, connections, duration: seconds, pipelining: 1 });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}

const median = (numbers: number[]) => {
  const sorted = [...numbers].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

console.log(`body ${target.bytes} bytes; ${rounds} rounds of ${seconds} s each, ${connections} connections, alternated`);
await measure(target.bare, {}); // warm-up of both
await measure(target.service, { 'x-api-key': target.key });
const service: number[] = [];
const bare: number[] = [];
for (let round = 0; round < rounds; round += 1) {
  const b = await measure(target.bare, {});
  const s = await measure(target.service, { 'x-api-key': target.key });
  bare.push(b.rps);
  service.push(s.rps);
  console.log(`round ${round + 1}: bare ${b.rps.toFixed(0)} req/s (p50 ${b.p50} ms, p99 ${b.p99} ms) | service ${s.rps.toFixed(0)} req/s (p50 ${s.p50} ms, p99 ${s.p99} ms)`);
}
const ratio = median(service) / median(bare);
console.log(`median: bare ${median(bare).toFixed(0)} req/s, service cache hit ${median(service).toFixed(0)} req/s`);
console.log(`ratio service/bare: ${ratio.toFixed(2)}x (target >= 0.5x)`);
const exited = once(child, 'exit');
child.kill('SIGTERM');
await exited;
profile.print('');
