// The serving processes' garbage-collector settings (src/gc-tuning.ts) hold from the start only
// when each entry point evaluates that module before any other of its imports.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

const firstImport = (path: string): string | undefined => /^import\s+[^;]*?['"]([^'"]+)['"];?$/m.exec(readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8'))?.[1];

for (const [entry, expected] of [
  ['src/main.ts', './gc-tuning.ts'],
  ['src/demo.ts', './gc-tuning.ts'],
  ['bench/servers.ts', '../src/gc-tuning.ts'],
] as const) {
  test(`${entry} imports gc-tuning.ts before anything else`, () => {
    assert.equal(firstImport(entry), expected);
  });
}
