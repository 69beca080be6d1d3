// CPU figures for the benchmarks: a process's CPU time as a child process reports it, and the
// top entries of a V8 CPU profile (`node --cpu-prof`) by self time.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time per function (name, file and line), largest first, as shares of all samples. */
export function topSelfTime(file: string, count: number): { share: number; ms: number; where: string }[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, index) => {
    const frame = frames.get(id);
    const micros = profile.timeDeltas[index] ?? 0;
    if (!frame || frame.functionName === '(idle)') return;
    const file = frame.url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, '').replace(process.cwd() + '/', '');
    const where = `${frame.functionName || '(anonymous)'} ${file ? `${file}:${frame.lineNumber + 1}` : ''}`.trim();
    self.set(where, (self.get(where) ?? 0) + micros);
    total += micros;
  });
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([where, micros]) => ({ share: micros / total, ms: micros / 1000, where }));
}

/** This process's CPU time (all threads) and its main thread's event-loop use, as one JSON line. */
export const cpuReport = (): string => {
  const { user, system } = process.cpuUsage();
  return `${JSON.stringify({ cpuMicros: user + system, elu: performance.eventLoopUtilization() })}\n`;
};

/** A profile to be written by a child process: the Node flags that start it, and the printing of its top entries. */
export function childProfile(enabled: boolean): { flags: string[]; print: (indent: string) => void } {
  if (!enabled) return { flags: [], print: () => undefined };
  const dir = mkdtempSync(join(tmpdir(), 'bench-profile-'));
  return {
    flags: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
    // Once the child has exited: it writes the profile as it exits.
    print: (indent) => {
      const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
      if (!file) throw new Error(`no profile written to ${dir}`);
      console.log(`${indent}service profile ${join(dir, file)}, top entries by self time:`);
      for (const entry of topSelfTime(join(dir, file), 25)) {
        console.log(`${indent}${(entry.share * 100).toFixed(1).padStart(5)}% ${entry.ms.toFixed(0).padStart(6)} ms  ${entry.where}`);
      }
    },
  };
}
