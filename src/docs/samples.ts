// The code samples of the reference page, one set per endpoint, generated from its declaration:
// its path, its example query and, for a listing, how it pages. curl, TypeScript with the SDK
// (@pagescrape/sdk) and Python with `requests`; each is a complete program that runs as shown,
// with the key in PAGESCRAPE_API_KEY.
import type { ApiEndpoint } from '../endpoints/types.ts';

export interface CodeSample {
  lang: string;
  label: string;
  source: string;
}

/** `socialnet.profile.posts` → `socialnetProfilePosts`: the SDK's method, and the OpenAPI operationId. */
export const methodName = (id: string): string => id.replace(/[.-](\w)/g, (_, letter: string) => letter.toUpperCase());

const shellQuote = (value: string): string => `'${value.replaceAll("'", `'\\''`)}'`;
/** A JavaScript or Python string literal (JSON's escapes are valid in both). */
const literal = (value: string): string => JSON.stringify(value);
/** A property name as TypeScript writes it: bare when it can be. */
const property = (name: string): string => (/^[A-Za-z_$][\w$]*$/.test(name) ? name : literal(name));

/**
 * The call of `endpoint` with its example query in curl, a line for the address and one for each
 * parameter (curl encodes them and appends them to the address), so that no line runs long.
 */
export function curlCommand(endpoint: ApiEndpoint, baseUrl: string): string {
  const parameters = Object.entries(endpoint.exampleQuery).map(([name, value]) => `  --data-urlencode ${shellQuote(`${name}=${value}`)}`);
  const address = `curl -sS${parameters.length > 0 ? ' -G' : ''} ${shellQuote(`${baseUrl.replace(/\/+$/, '')}${endpoint.path}`)}`;
  return [address, ...parameters, '  -H "x-api-key: $PAGESCRAPE_API_KEY"'].join(' \\\n');
}

function curl(endpoint: ApiEndpoint, baseUrl: string): string {
  const lines = [curlCommand(endpoint, baseUrl)];
  if (endpoint.paging) {
    const { param, field } = endpoint.paging;
    lines.push('', `# The next page: add --data-urlencode '${param}=<data.paging.${field}>'`);
  }
  return lines.join('\n');
}

function typescript(endpoint: ApiEndpoint, baseUrl: string): string {
  const entries = Object.entries(endpoint.exampleQuery);
  const query = entries.length === 0 ? '' : `{ ${entries.map(([name, value]) => `${property(name)}: ${literal(value)}`).join(', ')} }`;
  const lines = [
    "import { PageScrape } from '@pagescrape/sdk';",
    '',
    `// The key from PAGESCRAPE_API_KEY (or pass { apiKey }).`,
    `const client = new PageScrape({ baseUrl: ${literal(baseUrl)} });`,
  ];
  if (endpoint.paging) {
    const { items } = endpoint.paging;
    lines.push(
      '',
      `// One page:`,
      `const { data, meta } = await client.${methodName(endpoint.id)}(${query});`,
      `console.log(data.${items}.length, 'on this page;', meta.creditsRemaining, 'credits left');`,
      '',
      `// Every item, following data.paging.${endpoint.paging.field} to the end:`,
      `const listing = client.paginate(${literal(endpoint.path)}, ${query || '{}'});`,
      `for await (const item of listing) console.log(item);`,
      `console.log(listing.items, 'items in', listing.pages, 'pages for', listing.creditsSpent, 'credits');`,
    );
  } else {
    lines.push('', `const { data, meta } = await client.${methodName(endpoint.id)}(${query});`, 'console.log(data, meta.creditsRemaining);');
  }
  return lines.join('\n');
}

function python(endpoint: ApiEndpoint, baseUrl: string): string {
  const entries = Object.entries(endpoint.exampleQuery);
  const params = `{${entries.map(([name, value]) => `${literal(name)}: ${literal(value)}`).join(', ')}}`;
  const lines = ['import os', '', 'import requests', '', `URL = ${literal(`${baseUrl}${endpoint.path}`)}`, 'HEADERS = {"x-api-key": os.environ["PAGESCRAPE_API_KEY"]}', ''];
  if (endpoint.paging) {
    const { param, field, flag, items } = endpoint.paging;
    lines.push(
      `params = ${params}`,
      'while True:',
      '    response = requests.get(URL, params=params, headers=HEADERS, timeout=60)',
      '    response.raise_for_status()',
      '    data = response.json()["data"]',
      `    for item in data[${literal(items)}]:`,
      '        print(item)',
      `    if not data["paging"][${literal(flag)}]:`,
      '        break',
      `    params[${literal(param)}] = data["paging"][${literal(field)}]`,
    );
  } else {
    lines.push(`response = requests.get(URL, params=${params}, headers=HEADERS, timeout=60)`, 'response.raise_for_status()', 'body = response.json()', 'print(body["data"], body["meta"]["creditsRemaining"])');
  }
  return lines.join('\n');
}

/** The samples of `endpoint`, calling the service at `baseUrl`, as `x-codeSamples` lists them. */
export function codeSamples(endpoint: ApiEndpoint, baseUrl: string): CodeSample[] {
  const base = baseUrl.replace(/\/+$/, '');
  return [
    { lang: 'shell', label: 'curl', source: curl(endpoint, base) },
    { lang: 'typescript', label: 'TypeScript (SDK)', source: typescript(endpoint, base) },
    { lang: 'python', label: 'Python (requests)', source: python(endpoint, base) },
  ];
}
