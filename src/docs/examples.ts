// The example answer of every endpoint, as the reference page shows it: real answers of the
// service to each endpoint's `exampleQuery` against the sandbox upstream, kept in examples.json
// by `npm run -s docs:examples` (scripts/docs-examples.ts).
import { join } from 'node:path';
import examples from './examples.json' with { type: 'json' };

export const EXAMPLES_FILE = join(import.meta.dirname, 'examples.json');

/** Lists in the examples are cut to this many items. */
export const EXAMPLE_LIST_LENGTH = 3;

/** The example answer (`data` and `meta`) of the endpoint `id`, if there is one. */
export const exampleOf = (id: string): unknown => (examples as Record<string, unknown>)[id];
