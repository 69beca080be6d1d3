// Cache hits through the full stack (auth, rate limit, cache, envelope) against a bare Fastify
// route returning the same JSON body, alternated under the same load generator in one run.
// Usage: npm run bench [-- --rounds 4 --seconds 5 --connections 50 --profile --idempotency fresh|replay]
// With --profile the service runs under `node --cpu-prof` and the top entries of its profile by
// self time are printed (the bare route shares its process). With --idempotency, the same cache
// hits with an Idempotency-Key are measured too, alternated with the others: `fresh` sends a new
// key with every request (each claims its key and keeps its answer), `replay` one key throughout
// (each is the replay of the first). Then the service's memory at rest (idle-memory.ts).
import autocannon from 'autocannon';
import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { childProfile } from './cpu-profile.ts';
import { idleMemory } from './idle-memory.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '4' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    profile: { type: 'boolean', default: false },
    idempotency: { type: 'string' },
  },
});
if (values.idempotency !== undefined && values.idempotency !== 'fresh' && values.idempotency !== 'replay') throw new Error('--idempotency is fresh or replay');
const idempotency = values.idempotency as 'fresh' | 'replay' | undefined;
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const connections = Number(values.connections);

const profile = childProfile(values.profile);
const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', ...profile.flags, new URL('./servers.ts', import.meta.url).pathname], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
// A run that fails part way leaves no service behind.
process.once('exit', () => child.kill('SIGTERM'));
const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
const target = JSON.parse(line) as { service: string; bare: string; key: string; bytes: number };

async function measure(url: string, headers: Record<string, string>, freshKeys = false) {
  // A fresh Idempotency-Key per request, set as each request is sent.
  const requests: autocannon.Request[] | undefined = freshKeys ? [{ setupRequest: (request) => ({ ...request, headers: { ...request.headers, 'idempotency-key': randomUUID() } }) }] : undefined;
  const result = await autocannon({ url, headers, connections, duration: seconds, pipelining: 1, ...(requests ? { requests } : {}) });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx (${JSON.stringify(result.statusCodeStats)}), ${result.errors} errors`);
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
const keyed: number[] = [];
const withKey = { 'x-api-key': target.key, 'idempotency-key': 'bench-replayed-key' };
// The replayed key's answer is kept first (50 connections sending it at once would get 409s).
if (idempotency === 'replay' && (await fetch(target.service, { headers: withKey })).status !== 200) throw new Error('the first request with the key failed');
if (idempotency) await measure(target.service, withKey, idempotency === 'fresh');
for (let round = 0; round < rounds; round += 1) {
  const b = await measure(target.bare, {});
  const s = await measure(target.service, { 'x-api-key': target.key });
  bare.push(b.rps);
  service.push(s.rps);
  let line = `round ${round + 1}: bare ${b.rps.toFixed(0)} req/s (p50 ${b.p50} ms, p99 ${b.p99} ms) | service ${s.rps.toFixed(0)} req/s (p50 ${s.p50} ms, p99 ${s.p99} ms)`;
  if (idempotency) {
    const k = await measure(target.service, withKey, idempotency === 'fresh');
    keyed.push(k.rps);
    line += ` | with Idempotency-Key (${idempotency}) ${k.rps.toFixed(0)} req/s (p50 ${k.p50} ms, p99 ${k.p99} ms)`;
  }
  console.log(line);
}
const ratio = median(service) / median(bare);
console.log(`median: bare ${median(bare).toFixed(0)} req/s, service cache hit ${median(service).toFixed(0)} req/s`);
console.log(`ratio service/bare: ${ratio.toFixed(2)}x (target >= 0.7x)`);
if (idempotency) {
  console.log(`with Idempotency-Key (${idempotency}): ${median(keyed).toFixed(0)} req/s, ${(median(keyed) / median(service)).toFixed(2)}x the service without it, ${(median(keyed) / median(bare)).toFixed(2)}x bare`);
}
const exited = once(child, 'exit');
child.kill('SIGTERM');
await exited;
profile.print('');
await idleMemory();
