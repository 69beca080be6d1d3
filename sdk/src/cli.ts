#!/usr/bin/env node
// `pagescrape`: the command line of the SDK. `get <path> --<param> <value> …` prints an answer
// as JSON; with `--all` it follows the listing to its end and prints its items as NDJSON, with a
// progress line on standard error when that is a terminal. The exit code tells the error class.
import { readFileSync } from 'node:fs';
import { PageScrape, type PagedPath } from './client.ts';
import { PageScrapeError } from './errors.ts';
import { ENDPOINTS, type ErrorCode } from './generated.ts';

/** Exit codes, by error class. */
export const EXIT = {
  ok: 0,
  /** An unexpected fault, on the service (500, 501) or in an answer the command cannot read. */
  fault: 1,
  /** The command line or the parameters are wrong (also 400, 405, 422). */
  usage: 2,
  /** The key is missing, invalid or revoked, or a test key meets a service without test mode (401, 403). */
  auth: 3,
  /** Not enough credits (402). */
  credits: 4,
  /** The content does not exist, is private or was deleted (404). */
  notFound: 5,
  /** Rate limited, or the same request still being answered, still after the retries (429, 409). */
  rateLimited: 6,
  /** The source platform failed or answered a page the service cannot read (502). */
  upstream: 7,
  /** The service is unreachable, busy or too slow (503, 408, connection errors, timeouts). */
  unavailable: 8,
  /** Interrupted (Ctrl-C). */
  interrupted: 130,
} as const;

const EXIT_OF: Record<ErrorCode, number> = {
  BAD_REQUEST: EXIT.usage,
  VALIDATION_ERROR: EXIT.usage,
  IDEMPOTENCY_KEY_REUSED: EXIT.usage,
  METHOD_NOT_ALLOWED: EXIT.usage,
  UNAUTHORIZED: EXIT.auth,
  FORBIDDEN: EXIT.auth,
  INSUFFICIENT_CREDITS: EXIT.credits,
  NOT_FOUND: EXIT.notFound,
  RATE_LIMITED: EXIT.rateLimited,
  IDEMPOTENCY_IN_PROGRESS: EXIT.rateLimited,
  UPSTREAM_BLOCKED: EXIT.upstream,
  UPSTREAM_UNRECOGNISED: EXIT.upstream,
  REQUEST_TIMEOUT: EXIT.unavailable,
  SERVICE_UNAVAILABLE: EXIT.unavailable,
  INTERNAL_ERROR: EXIT.fault,
  NOT_IMPLEMENTED: EXIT.fault,
};

const exitOf = (error: PageScrapeError): number =>
  error.code === 'CONNECTION_ERROR' || error.code === 'TIMEOUT' ? EXIT.unavailable : (EXIT_OF[error.code as ErrorCode] ?? EXIT.fault);

const HELP = `Usage:
  pagescrape get <path>[?<query>] [--<param> <value> …] [--all] [--max-pages <n>]
  pagescrape account
  pagescrape endpoints

  get        calls the endpoint at <path> with its parameters under their API names (as flags,
             or as the path's query string) and prints the answer ({ data, meta }) as JSON.
             With --all (paged endpoints), follows the listing to its end (or --max-pages) and
             prints one item per line (NDJSON).
  account    prints the key's team, balance and rate limit.
  endpoints  lists every path, its parameters and whether it pages.

Options:
  --base-url <url>   the service (default: $PAGESCRAPE_BASE_URL, else http://127.0.0.1:3000)
  --api-key <key>    the key (default: $PAGESCRAPE_API_KEY)
  --timeout <s>      bound on each attempt, in whole seconds, at least 1 (default 60)
  --retries <n>      retries of 429, 502, 503 and refused connections (default 3)
  -h, --help         this help
  -v, --version      the version

Examples:
  pagescrape get /v1/snapmsg/profile --username lunavoss
  pagescrape get /v1/socialnet/profile/posts --pageId 100064123456789 --cache_max_age 1d --all > posts.ndjson

Exit codes: 0 ok, 1 fault, 2 usage or invalid parameters, 3 key refused, 4 not enough credits,
5 not found, 6 rate limited, 7 source failed, 8 service unavailable or unreachable, 130 interrupted.
`;

class UsageError extends Error {}

interface Command {
  command: string | undefined;
  path: string | undefined;
  params: Record<string, string>;
  all: boolean;
  maxPages: number | undefined;
  baseUrl: string | undefined;
  apiKey: string | undefined;
  timeoutMs: number | undefined;
  maxRetries: number | undefined;
  help: boolean;
  version: boolean;
}

const count = (flag: string, value: string): number => {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) throw new UsageError(`${flag} takes a whole number, not ${JSON.stringify(value)}.`);
  return number;
};

/** Reads the arguments: the command's own options are kebab-case, the endpoint's parameters keep their API names. */
function parse(argv: readonly string[]): Command {
  const parsed: Command = { command: undefined, path: undefined, params: {}, all: false, maxPages: undefined, baseUrl: undefined, apiKey: undefined, timeoutMs: undefined, maxRetries: undefined, help: false, version: false };
  const positional: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index] as string;
    if (argument === '-h' || argument === '--help') parsed.help = true;
    else if (argument === '-v' || argument === '--version') parsed.version = true;
    else if (argument === '--all') parsed.all = true;
    else if (argument.startsWith('--')) {
      const equals = argument.indexOf('=');
      const name = equals === -1 ? argument.slice(2) : argument.slice(2, equals);
      let value: string | undefined = equals === -1 ? undefined : argument.slice(equals + 1);
      if (value === undefined) {
        value = argv[++index];
        if (value === undefined) throw new UsageError(`--${name} needs a value.`);
      }
      if (name === 'max-pages') parsed.maxPages = count('--max-pages', value);
      else if (name === 'base-url') parsed.baseUrl = value;
      else if (name === 'api-key') parsed.apiKey = value;
      else if (name === 'timeout') parsed.timeoutMs = Math.max(1, count('--timeout', value)) * 1000;
      else if (name === 'retries') parsed.maxRetries = count('--retries', value);
      else if (name === '') throw new UsageError('A parameter needs a name: --<param> <value>.');
      else parsed.params[name] = value;
    } else positional.push(argument);
  }
  [parsed.command, parsed.path] = positional;
  // A path with its query string, as curl takes it: its parameters, unless a flag names them too.
  const question = parsed.path?.indexOf('?') ?? -1;
  if (parsed.path !== undefined && question !== -1) {
    parsed.params = { ...Object.fromEntries(new URLSearchParams(parsed.path.slice(question + 1))), ...parsed.params };
    parsed.path = parsed.path.slice(0, question);
  }
  if (positional.length > (parsed.command === 'get' ? 2 : 1)) throw new UsageError(`Unexpected argument ${JSON.stringify(positional.at(-1))}.`);
  return parsed;
}

/** The endpoint at `path`, its parameters checked against its declaration. */
function endpointAt(path: string | undefined, params: Record<string, string>, all: boolean): keyof typeof ENDPOINTS {
  if (!path) throw new UsageError('get needs the endpoint path, e.g. get /v1/snapmsg/profile --username lunavoss.');
  if (!(path in ENDPOINTS)) throw new UsageError(`Unknown path ${JSON.stringify(path)}; the paths are:\n  ${Object.keys(ENDPOINTS).join('\n  ')}`);
  const endpoint = ENDPOINTS[path as keyof typeof ENDPOINTS];
  const known: readonly string[] = endpoint.params;
  for (const name of Object.keys(params)) {
    if (!known.includes(name)) throw new UsageError(`${path} has no parameter --${name}; its parameters are ${known.map((param) => `--${param}`).join(', ')}.`);
  }
  if (all && !endpoint.paging) throw new UsageError(`${path} does not page; --all works with ${Object.keys(ENDPOINTS).filter((other) => ENDPOINTS[other as keyof typeof ENDPOINTS].paging).join(', ')}.`);
  return path as keyof typeof ENDPOINTS;
}

/** Writes `text`, waiting when the reader is slower than the listing. */
function write(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(text, (error) => (error ? reject(error) : resolve()));
  });
}

async function main(argv: readonly string[]): Promise<number> {
  let command: Command;
  try {
    command = parse(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`pagescrape: ${error.message}\n\n${HELP}`);
    return EXIT.usage;
  }
  if (command.version) {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    await write(`${manifest.version}\n`);
    return EXIT.ok;
  }
  if (command.help || command.command === undefined) {
    (command.help ? process.stdout : process.stderr).write(HELP);
    return command.help ? EXIT.ok : EXIT.usage;
  }
  if (command.command === 'endpoints') {
    for (const [path, endpoint] of Object.entries(ENDPOINTS)) {
      await write(`${path}  ${endpoint.params.map((param) => `--${param}`).join(' ')}${endpoint.paging ? '  [--all]' : ''}\n    ${endpoint.summary}\n`);
    }
    return EXIT.ok;
  }

  const apiKey = command.apiKey ?? process.env.PAGESCRAPE_API_KEY;
  if (!apiKey) {
    process.stderr.write('pagescrape: no API key: pass --api-key or set PAGESCRAPE_API_KEY.\n');
    return EXIT.auth;
  }
  let client: PageScrape;
  try {
    client = new PageScrape({ apiKey, baseUrl: command.baseUrl, timeoutMs: command.timeoutMs, maxRetries: command.maxRetries });
  } catch (error) {
    process.stderr.write(`pagescrape: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT.usage;
  }

  const controller = new AbortController();
  const interrupt = () => controller.abort(new Error('interrupted'));
  process.once('SIGINT', interrupt);
  const options = { signal: controller.signal };
  try {
    if (command.command === 'account') {
      await write(`${JSON.stringify(await client.account({}, options), null, 2)}\n`);
      return EXIT.ok;
    }
    if (command.command !== 'get') throw new UsageError(`Unknown command ${JSON.stringify(command.command)}; the commands are get, account and endpoints.`);
    const path = endpointAt(command.path, command.params, command.all);
    if (!command.all) {
      await write(`${JSON.stringify(await client.get(path, command.params, options), null, 2)}\n`);
      return EXIT.ok;
    }
    const progress = process.stderr.isTTY === true;
    const listing = client.paginate(path as PagedPath, command.params, {
      ...options,
      maxPages: command.maxPages,
      onPage: () => {
        if (progress) process.stderr.write(`\r\u001b[Kpages ${listing.pages} · items ${listing.items} · credits ${listing.creditsSpent}`);
      },
    });
    try {
      for await (const item of listing) await write(`${JSON.stringify(item)}\n`);
    } finally {
      if (progress) process.stderr.write(`\r\u001b[Kpages ${listing.pages} · items ${listing.items} · credits ${listing.creditsSpent}${listing.done ? '' : ' (stopped)'}\n`);
    }
    return EXIT.ok;
  } catch (error) {
    if (controller.signal.aborted) return EXIT.interrupted;
    if (error instanceof UsageError) {
      process.stderr.write(`pagescrape: ${error.message}\n`);
      return EXIT.usage;
    }
    if (error instanceof PageScrapeError) {
      process.stderr.write(`pagescrape: ${error.code}${error.status ? ` (HTTP ${error.status})` : ''}: ${error.message}${error.requestId ? ` [${error.requestId}]` : ''}\n`);
      for (const detail of error.details) process.stderr.write(`  ${detail.path}: ${detail.message}\n`);
      return exitOf(error);
    }
    throw error;
  } finally {
    process.off('SIGINT', interrupt);
  }
}

// A reader that stops early (`| head`) is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(EXIT.ok);
  throw error;
});
process.exitCode = await main(process.argv.slice(2));
