// Every platform's README states the absent-data rule in the same words, and its mapping tables
// use that rule's terms in the column "absent ⇒".
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const PLATFORMS = join(import.meta.dirname, '..', '..', 'src', 'platforms');
const readmes = readdirSync(PLATFORMS, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && entry.name !== 'shared')
  .map((entry) => ({ platform: entry.name, text: readFileSync(join(PLATFORMS, entry.name, 'README.md'), 'utf8') }));

/** The paragraph that opens "## Mapping". */
const rule = (text: string): string | undefined => text.split('\n## Mapping\n\n')[1]?.split('\n\n')[0];

test('the absent-data rule is the same paragraph in every platform README', () => {
  assert.equal(readmes.length, 5);
  const [first, ...others] = readmes;
  assert.match(rule(first!.text) ?? '', /\*\*Absent data\.\*\*/, first!.platform);
  for (const { platform, text } of others) assert.equal(rule(text), rule(first!.text), platform);
});

test('a mapping table says required, null, empty (with the value) or the value it falls back to', () => {
  for (const { platform, text } of readmes) {
    let inTable = false;
    for (const line of text.split('\n')) {
      if (line.startsWith('| API field |')) inTable = line.trimEnd().endsWith('| absent ⇒ |');
      else if (!line.startsWith('|')) inTable = false;
      else if (inTable && !line.startsWith('|---')) {
        const absent = line.slice(line.lastIndexOf('|', line.length - 2) + 1, -1).trim();
        // A bare empty value would hide which rule it is; "empty" alone would hide the value.
        assert.doesNotMatch(absent, /^(`\[\]`|`""`|`?false`?|`0`|empty)$/, `${platform}: ${line}`);
      }
    }
  }
});
