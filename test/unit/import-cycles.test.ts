// The import-cycle check of `npm run -s lint` (scripts/import-cycles.ts): every kind of import
// is an edge, and each circle is reported once, as a path back to where it starts.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { cycles, importGraph } from '../../scripts/import-cycles.ts';

test('a type-only import, a re-export and an import() close circles; a chain does not', () => {
  const dir = mkdtempSync(join(tmpdir(), 'import-cycles-'));
  try {
    const files: Record<string, string> = {
      'a.ts': "import type { B } from './b.ts';\nexport const a = 1 as unknown as B;\n",
      'b.ts': "import { a } from './a.ts';\nexport type B = typeof a;\n",
      'c.ts': "export * from './d.ts';\n",
      'd.ts': "export const d = async () => (await import('./c.ts')).d;\n",
      'e.ts': "import { a } from './a.ts';\nimport 'node:fs';\nexport const e = a;\n",
      'f.ts': "import { f as self } from './f.ts';\nexport const f = () => self;\n",
    };
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const graph = importGraph(Object.keys(files).map((name) => join(dir, name)));
    assert.deepEqual(graph.get(join(dir, 'e.ts')), [join(dir, 'a.ts')]);
    const found = cycles(graph).map((circle) => circle.map((file) => file.slice(dir.length + 1)));
    assert.deepEqual(
      found.sort((x, y) => x[0]!.localeCompare(y[0]!)),
      [
        ['a.ts', 'b.ts', 'a.ts'],
        ['c.ts', 'd.ts', 'c.ts'],
        ['f.ts', 'f.ts'],
      ],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
