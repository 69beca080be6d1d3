// Prints the sandbox catalogue as the README's Markdown section, with copy-paste curl lines
// for the demo (`npm run -s sandbox:catalogue`).
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { platforms } from './platforms/index.ts';

const shellQuote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

export function catalogueMarkdown(base = 'http://127.0.0.1:3000'): string {
  const out: string[] = [];
  for (const platform of platforms) {
    out.push(`### ${platform.name}`, '', '```sh');
    for (const entry of platform.catalogue) {
      const url = `${base}${entry.endpoint}?${entry.query}`;
      out.push(`# ${entry.description.replace(/\n/g, ' ')}`, `curl -s -H "x-api-key: $(cat data/demo-key)" ${shellQuote(url)}`);
    }
    out.push('```', '');
  }
  return out.join('\n');
}

export const CATALOGUE_START = '<!-- catalogue:start (npm run -s sandbox:catalogue -- --write) -->';
export const CATALOGUE_END = '<!-- catalogue:end -->';

/** The README with its catalogue section replaced by the current catalogue. */
export function withCatalogue(readme: string): string {
  const start = readme.indexOf(CATALOGUE_START);
  const end = readme.indexOf(CATALOGUE_END);
  if (start < 0 || end < start) throw new Error('README.md has no catalogue markers');
  return `${readme.slice(0, start + CATALOGUE_START.length)}\n\n${catalogueMarkdown()}\n${readme.slice(end)}`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (process.argv.includes('--write')) {
    const readme = new URL('../README.md', import.meta.url);
    writeFileSync(readme, withCatalogue(readFileSync(readme, 'utf8')));
  } else {
    console.log(catalogueMarkdown());
  }
}
