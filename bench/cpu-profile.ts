// The top entries of a V8 CPU profile (`node --cpu-prof`) by self time, for bench output.
import { readFileSync } from 'node:fs';

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
