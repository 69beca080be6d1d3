#!/usr/bin/env node
// `pagescrape`: the command line of the SDK. `get <path> --<param> <value> …` prints an answer
// as JSON; with `--all` it follows the listing to its end and prints its items as NDJSON. What a
// call does goes to standard error (each wait before a retry; for a listing, its progress and a
// summary of what it read and spent), and the exit code tells the error class.
import { createWriteStream, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { PageScrape, type Listing, type PagedPath } from './client.ts';
import { PageScrapeError } from './errors.ts';
import { ENDPOINTS, type ErrorCode } from './generated.ts';
import { unknownNameMessage } from './names.ts';
import type { RetryEvent } from './types.ts';
import type { CreateJobOptions, Job, JobRequest } from './jobs.ts';

/** Exit codes, by error class. */
export const EXIT = {
  ok: 0,
  /** An unexpected fault, on the service (500, 501) or in an answer the command cannot read. */
  fault: 1,
  /** The command line or the parameters are wrong (also 400, 405, 422). */
  usage: 2,
  /** The key is missing, invalid or revoked, or a test key meets a service without test mode (401, 403). */
  auth: 3,
  /** Not enough credits, or the key's daily credit limit is spent (402). */
  credits: 4,
  /** The content does not exist, is private or was deleted (404). */
  notFound: 5,
  /** Rate limited, or the same request still being answered, still after the retries (429, 409). */
  rateLimited: 6,
  /** The source platform failed or answered a page the service cannot read (502). */
  upstream: 7,
  /** The service is unreachable, busy or too slow (503, 408, connection errors, timeouts). */
  unavailable: 8,
  /** `--max-credits` stopped the listing before its end (the items read are printed). */
  maxCredits: 9,
  /** Interrupted (Ctrl-C). */
  interrupted: 130,
} as const;

const EXIT_OF: Record<ErrorCode, number> = {
  BAD_REQUEST: EXIT.usage,
  VALIDATION_ERROR: EXIT.usage,
  IDEMPOTENCY_KEY_REUSED: EXIT.usage,
  CONFLICT: EXIT.usage,
  METHOD_NOT_ALLOWED: EXIT.usage,
  UNAUTHORIZED: EXIT.auth,
  FORBIDDEN: EXIT.auth,
  INSUFFICIENT_CREDITS: EXIT.credits,
  KEY_CREDIT_LIMIT: EXIT.credits,
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

/** On a stream that is not a terminal, the least time between two progress lines. */
const PROGRESS_EVERY_MS = 5_000;

const HELP = `Usage:
  pagescrape get <path>[?<query>] [--<param> <value> …] [--idempotency-key <key>] [--all [--max-pages <n>] [--max-credits <n>]]
  pagescrape account
  pagescrape endpoints
  pagescrape monitor create <path> (--every <duration> | --cron <expression> [--timezone <zone>])
                     [--watch <pointer> …] [--label <text>] [--<param> <value> …]
  pagescrape monitor list | show <id> | runs <id> | run <id> | pause <id> | resume <id> | delete <id>
  pagescrape job create --file <targets.ndjson> [--max-pages <n>] [--label <text>] [--cache_max_age <age>] [--wait] [--out <results.ndjson>]
  pagescrape job status <id> | job results <id> [--out <file>] | job cancel <id>

  get        calls the endpoint at <path> with its parameters under their API names (as flags,
             or as the path's query string) and prints the answer ({ data, meta }) as JSON.
             With --all (paged endpoints), follows the listing to its end and prints one item
             per line (NDJSON).
  account    prints the key's team, balance and rate limit.
  endpoints  lists every path, its parameters and whether it pages.
  monitor    watches a page on a schedule: create prints the monitor; runs prints its runs
             (newest first), each change as a JSON Patch; run runs it now and prints the run.
             --every takes 30s, 15m, 6h, 1d; --watch (repeatable) keeps only the changes at or
             under a JSON Pointer of the data, e.g. /profile/followers.
  job        batch jobs: create one from a file of requests, one JSON object per line
             ({"endpoint": "/v1/snapmsg/profile", "params": {"username": "lunavoss"}}), and
             print it; with --wait, follow its progress on standard error (a bar on a terminal)
             until it ends, then write its results (one item per line) to --out, or standard
             output. status prints a job, results its results, cancel cancels it.

Options:
  --all              follow the listing to its end. Standard error tells its progress (a line
                     in place on a terminal; elsewhere a line after the first page, then one
                     every ${PROGRESS_EVERY_MS / 1000} s at most) and ends with a summary however it ends: pages,
                     items, credits spent and left, the waits before retries, the time taken
  --max-pages <n>    with --all: stop after n pages
  --max-credits <n>  with --all: spend at most n credits. A page costs at most 1 (0 from the
                     cache), so no page is requested once one more credit would pass n;
                     stopping there, before the listing's end, exits with 9
  --idempotency-key <key>
                     without --all: the request's Idempotency-Key (default: a fresh random one
                     per command, as every scraping call has). Run the same command again with
                     the same key within 24 h and the service answers it from the first
                     success, charged once
  --quiet            nothing on standard error but errors
  --base-url <url>   the service (default: $PAGESCRAPE_BASE_URL, else http://127.0.0.1:3000)
  --api-key <key>    the key (default: $PAGESCRAPE_API_KEY)
  --timeout <s>      bound on each attempt, in whole seconds, at least 1 (default 60)
  --retries <n>      retries of a refused or broken connection, a timeout, 408, 409 (the same
                     key still running), 429, 502 and 503 (default 3); each wait before one is
                     told on standard error, with its reason. A scraping call sends the same
                     Idempotency-Key on each attempt, so a retry is never charged twice
  -h, --help         this help
  -v, --version      the version

Examples:
  pagescrape get /v1/snapmsg/profile --username lunavoss
  pagescrape get /v1/socialnet/profile/posts --pageId 1000003242969379 --cache_max_age 1d --all --max-credits 200 > posts.ndjson
  pagescrape monitor create /v1/snapmsg/profile --username lunavoss --every 1h --watch /profile/subscriberCount
  pagescrape monitor runs mon_3q2VbX9kT0mW7yZ1aC4dE6fG

Exit codes: 0 ok, 1 fault, 2 usage or invalid parameters, 3 key refused, 4 not enough credits,
5 not found, 6 rate limited, 7 source failed, 8 service unavailable or unreachable,
9 stopped by --max-credits before the listing's end, 130 interrupted.
`;

class UsageError extends Error {}

interface Command {
  command: string | undefined;
  path: string | undefined;
  params: Record<string, string>;
  all: boolean;
  wait: boolean;
  /** `job <action> [<id>]`. */
  rest: string[];
  maxPages: number | undefined;
  maxCredits: number | undefined;
  quiet: boolean;
  baseUrl: string | undefined;
  apiKey: string | undefined;
  timeoutMs: number | undefined;
  maxRetries: number | undefined;
  idempotencyKey: string | undefined;
  help: boolean;
  version: boolean;
  /** `monitor`'s action: create, list, show, runs, run, pause, resume, delete. */
  action?: string | undefined;
  /** `monitor create`'s own options. */
  monitor: { every?: string; cron?: string; timezone?: string; watch: string[]; label?: string };
}

const count = (flag: string, value: string): number => {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) throw new UsageError(`${flag} takes a whole number, not ${JSON.stringify(value)}.`);
  return number;
};

/** Reads the arguments: the command's own options are kebab-case, the endpoint's parameters keep their API names. */
function parse(argv: readonly string[]): Command {
  const parsed: Command = { command: undefined, path: undefined, params: {}, all: false, wait: false, rest: [], maxPages: undefined, maxCredits: undefined, quiet: false, baseUrl: undefined, apiKey: undefined, timeoutMs: undefined, maxRetries: undefined, idempotencyKey: undefined, help: false, version: false, monitor: { watch: [] } };
  const positional: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index] as string;
    if (argument === '-h' || argument === '--help') parsed.help = true;
    else if (argument === '-v' || argument === '--version') parsed.version = true;
    else if (argument === '--all') parsed.all = true;
    else if (argument === '--wait') parsed.wait = true;
    else if (argument === '--quiet') parsed.quiet = true;
    else if (argument.startsWith('--')) {
      const equals = argument.indexOf('=');
      const name = equals === -1 ? argument.slice(2) : argument.slice(2, equals);
      let value: string | undefined = equals === -1 ? undefined : argument.slice(equals + 1);
      if (value === undefined) {
        value = argv[++index];
        if (value === undefined) throw new UsageError(`--${name} needs a value.`);
      }
      if (name === 'max-pages') parsed.maxPages = count('--max-pages', value);
      else if (name === 'max-credits') parsed.maxCredits = count('--max-credits', value);
      else if (name === 'base-url') parsed.baseUrl = value;
      else if (name === 'api-key') parsed.apiKey = value;
      else if (name === 'timeout') parsed.timeoutMs = Math.max(1, count('--timeout', value)) * 1000;
      else if (name === 'retries') parsed.maxRetries = count('--retries', value);
      else if (name === 'idempotency-key') parsed.idempotencyKey = value;
      else if (name === 'every') parsed.monitor.every = value;
      else if (name === 'cron') parsed.monitor.cron = value;
      else if (name === 'timezone') parsed.monitor.timezone = value;
      else if (name === 'watch') parsed.monitor.watch.push(value);
      else if (name === 'label') parsed.monitor.label = value;
      else if (name === '') throw new UsageError('A parameter needs a name: --<param> <value>.');
      else parsed.params[name] = value;
    } else positional.push(argument);
  }
  if (positional[0] === 'monitor') {
    // monitor <action> [<path or id>]
    parsed.command = 'monitor';
    parsed.action = positional[1];
    parsed.path = positional[2];
    if (positional.length > 3) throw new UsageError(`Unexpected argument ${JSON.stringify(positional.at(-1))}.`);
    return parsed;
  }
  [parsed.command, parsed.path] = positional;
  if (parsed.command === 'job') {
    parsed.rest = positional.slice(1);
    parsed.path = undefined;
    if (positional.length > 3) throw new UsageError(`Unexpected argument ${JSON.stringify(positional.at(-1))}.`);
    return parsed;
  }
  // A path with its query string, as curl takes it: its parameters, unless a flag names them too.
  const question = parsed.path?.indexOf('?') ?? -1;
  if (parsed.path !== undefined && question !== -1) {
    parsed.params = { ...Object.fromEntries(new URLSearchParams(parsed.path.slice(question + 1))), ...parsed.params };
    parsed.path = parsed.path.slice(0, question);
  }
  if (positional.length > (parsed.command === 'get' ? 2 : 1)) throw new UsageError(`Unexpected argument ${JSON.stringify(positional.at(-1))}.`);
  for (const [flag, value] of [['--max-pages', parsed.maxPages], ['--max-credits', parsed.maxCredits]] as const) {
    if (value !== undefined && !parsed.all) throw new UsageError(`${flag} bounds a listing: it works with --all.`);
  }
  if (parsed.idempotencyKey !== undefined && parsed.all) throw new UsageError('--idempotency-key is the key of one request; with --all each page has a fresh key of its own.');
  return parsed;
}

/** The endpoint at `path`, its parameters checked against its declaration. */
function endpointAt(path: string | undefined, params: Record<string, string>, all: boolean): keyof typeof ENDPOINTS {
  if (!path) throw new UsageError('get needs the endpoint path, e.g. get /v1/snapmsg/profile --username lunavoss.');
  if (!(path in ENDPOINTS)) throw new UsageError(`Unknown path ${JSON.stringify(path)}; the paths are:\n  ${Object.keys(ENDPOINTS).join('\n  ')}`);
  const endpoint = ENDPOINTS[path as keyof typeof ENDPOINTS];
  const known: readonly string[] = endpoint.params;
  // Every unknown one at once, worded as the API words its 422 details.
  const unknown = Object.keys(params).filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    const problems = unknown.map((name) => `  --${name}: ${unknownNameMessage(name, known, 'parameter', (param) => `--${param}`)}`);
    throw new UsageError(`${path} does not take these parameters:\n${problems.join('\n')}`);
  }
  if (all && !endpoint.paging) throw new UsageError(`${path} does not page; --all works with ${Object.keys(ENDPOINTS).filter((other) => ENDPOINTS[other as keyof typeof ENDPOINTS].paging).join(', ')}.`);
  return path as keyof typeof ENDPOINTS;
}

const MONITOR_ACTIONS = ['create', 'list', 'show', 'runs', 'run', 'pause', 'resume', 'delete'];

/** `monitor <action>`: one call of client.monitors; what it answers, to print. */
async function monitorCommand(client: PageScrape, command: Command, options: { signal: AbortSignal; onRetry: (event: RetryEvent) => void }): Promise<unknown> {
  const { action, path: target, monitor } = command;
  if (!action || !MONITOR_ACTIONS.includes(action)) throw new UsageError(`monitor needs an action: ${MONITOR_ACTIONS.join(', ')}.`);
  if (action === 'create') {
    const path = endpointAt(target, command.params, false);
    if ((monitor.every === undefined) === (monitor.cron === undefined)) throw new UsageError('monitor create needs --every <duration> (30s, 15m, 6h, 1d) or --cron <expression>, one of them.');
    return client.monitors.create(
      {
        endpoint: path,
        params: command.params,
        ...(monitor.every === undefined ? {} : { interval: monitor.every }),
        ...(monitor.cron === undefined ? {} : { cron: monitor.cron }),
        ...(monitor.timezone === undefined ? {} : { timezone: monitor.timezone }),
        ...(monitor.watch.length > 0 ? { watch: monitor.watch } : {}),
        ...(monitor.label === undefined ? {} : { label: monitor.label }),
      },
      options,
    );
  }
  if (action === 'list') return client.monitors.list({}, options);
  if (!target) throw new UsageError(`monitor ${action} needs the monitor's id (mon_…).`);
  switch (action) {
    case 'show':
      return client.monitors.get(target, options);
    case 'runs':
      return client.monitors.runs(target, {}, options);
    case 'run':
      return client.monitors.run(target, options);
    case 'pause':
      return client.monitors.pause(target, options);
    case 'resume':
      return client.monitors.resume(target, options);
    default:
      return client.monitors.delete(target, options);
  }
}

/** The reader of standard output went away (`| head`): not an error, the command just stops. */
class OutputClosed extends Error {}

/** Writes `text`, waiting when the reader is slower than the listing. */
function write(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(text, (error) => (error ? reject((error as NodeJS.ErrnoException).code === 'EPIPE' ? new OutputClosed() : error) : resolve()));
  });
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const plural = (count: number, one: string, many = `${one}s`): string => `${count} ${count === 1 ? one : many}`;

/** An error answer, as the command tells it. */
function describeError(error: PageScrapeError): string {
  const details = error.details.map((detail) => `\n  ${detail.path}: ${detail.message}`).join('');
  return `${error.code}${error.status ? ` (HTTP ${error.status})` : ''}: ${error.message}${error.requestId ? ` [${error.requestId}]` : ''}${details}`;
}

/**
 * What a command tells on standard error while it works: each wait before a retry and why, and
 * for a listing its progress and, however it ends, a summary of what it read and spent. On a
 * terminal the progress is one line rewritten in place; elsewhere (a file, a pipe, a CI log)
 * plain lines: one after the first page, then at most one every PROGRESS_EVERY_MS.
 */
class Report {
  readonly #terminal = process.stderr.isTTY === true;
  readonly #quiet: boolean;
  readonly #started = Date.now();
  /** When the last progress line was written (ms), null before the first. */
  #lastProgress: number | null = null;
  /** Whether a progress line is on the terminal, to be cleared before another line. */
  #inPlace = false;
  #retries = 0;
  #waitedMs = 0;

  constructor(quiet: boolean) {
    this.#quiet = quiet;
  }

  /** A line of its own, after clearing the progress line in place. */
  line(text: string): void {
    if (this.#inPlace) process.stderr.write('\r\u001b[K');
    this.#inPlace = false;
    process.stderr.write(`pagescrape: ${text}\n`);
  }

  readonly retry = (event: RetryEvent): void => {
    this.#retries++;
    this.#waitedMs += event.delayMs;
    if (!this.#quiet) this.line(`waiting ${seconds(event.delayMs)}, then retry ${event.retry} of ${event.maxRetries}: ${describeError(event.error)}`);
  };

  /** A page has come, with `items` more items than the listing has yielded so far. */
  page(listing: Listing<unknown>, items: number): void {
    if (this.#quiet) return;
    const text = `pages ${listing.pages} · items ${listing.items + items} · credits ${listing.creditsSpent} · ${seconds(Date.now() - this.#started)}`;
    if (this.#terminal) {
      process.stderr.write(`\r\u001b[Kpagescrape: ${text}`);
      this.#inPlace = true;
    } else if (this.#lastProgress === null || Date.now() - this.#lastProgress >= PROGRESS_EVERY_MS) {
      this.line(text);
      this.#lastProgress = Date.now();
    }
  }

  /** A job's progress: a bar in place on a terminal, else a line at most every PROGRESS_EVERY_MS. */
  job(job: Job): void {
    if (this.#quiet) return;
    const ended = job.total - job.pending;
    const width = 24;
    const filled = job.total === 0 ? width : Math.round((ended / job.total) * width);
    const text = `${job.id} ${job.status} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${ended}/${job.total} · ${job.failed} failed · ${job.pages} pages · ${plural(job.creditsCharged, 'credit')} · ${seconds(Date.now() - this.#started)}`;
    if (this.#terminal) {
      process.stderr.write(`\r\u001b[Kpagescrape: ${text}`);
      this.#inPlace = true;
    } else if (this.#lastProgress === null || Date.now() - this.#lastProgress >= PROGRESS_EVERY_MS || job.pending === 0) {
      this.line(text);
      this.#lastProgress = Date.now();
    }
  }

  /** The last line of a listing: how it ended (`done`, `interrupted`, …), what it read and spent. */
  summary(how: string, listing: Listing<unknown>): void {
    if (this.#quiet) return;
    const parts = [plural(listing.pages, 'page'), plural(listing.items, 'item'), `${plural(listing.creditsSpent, 'credit')} spent`];
    if (listing.creditsRemaining !== null) parts.push(`${listing.creditsRemaining} left`);
    parts.push(this.#retries === 0 ? 'no retries' : `waited ${seconds(this.#waitedMs)} before ${plural(this.#retries, 'retry', 'retries')}`);
    parts.push(`${seconds(Date.now() - this.#started)} in all`);
    this.line(`${how}: ${parts.join(', ')}`);
  }
}

/** Reads a file of requests, one JSON object per line; every bad line at once. */
function readRequests(file: string): JobRequest[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`Cannot read ${file}: ${(error as Error).message}`);
  }
  const requests: JobRequest[] = [];
  const problems: string[] = [];
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    try {
      const value = JSON.parse(line) as JobRequest;
      if (typeof value?.endpoint !== 'string' || typeof value.params !== 'object' || value.params === null) throw new Error('needs "endpoint" and "params"');
      requests.push({ endpoint: value.endpoint, params: value.params });
    } catch (error) {
      problems.push(`  line ${index + 1}: ${(error as Error).message}`);
    }
  });
  if (problems.length > 0) throw new UsageError(`${file} has lines that are not requests ({"endpoint": …, "params": {…}}):\n${problems.slice(0, 20).join('\n')}`);
  if (requests.length === 0) throw new UsageError(`${file} holds no request.`);
  return requests;
}

/** Writes a job's results, one item per line, to `out` (a file) or standard output. */
async function writeResults(client: PageScrape, id: string, out: string | undefined, signal: AbortSignal): Promise<number> {
  let n = 0;
  if (out) {
    const file = createWriteStream(out);
    try {
      for await (const item of client.jobs.results(id, { signal })) {
        n++;
        if (!file.write(`${JSON.stringify(item)}\n`)) await once(file, 'drain');
      }
    } finally {
      await new Promise<void>((resolve, reject) => file.end((error?: Error | null) => (error ? reject(error) : resolve())));
    }
    return n;
  }
  for await (const item of client.jobs.results(id, { signal })) {
    n++;
    await write(`${JSON.stringify(item)}\n`);
  }
  return n;
}

async function jobCommand(client: PageScrape, command: Command, report: Report, options: { signal: AbortSignal; onRetry: (event: RetryEvent) => void }): Promise<number> {
  const [action, id] = command.rest;
  const { file, out, cache_max_age: cacheMaxAge, ...others } = command.params;
  // --label is read as a command option, for jobs and monitors alike.
  const { label } = command.monitor;
  const unknown = Object.keys(others);
  if (unknown.length > 0) throw new UsageError(`job does not take ${unknown.map((name) => `--${name}`).join(', ')}.`);
  const needId = (): string => {
    if (!id) throw new UsageError(`job ${action} needs the job id (job_…).`);
    return id;
  };
  switch (action) {
    case 'create': {
      if (!file) throw new UsageError('job create needs --file <targets.ndjson>.');
      const job = await client.jobs.create(readRequests(file), { ...options, maxPages: command.maxPages, label, cacheMaxAge: cacheMaxAge as CreateJobOptions['cacheMaxAge'] });
      if (!command.wait) {
        await write(`${JSON.stringify(job, null, 2)}\n`);
        return EXIT.ok;
      }
      const ended = await client.jobs.wait(job.id, { onProgress: (now) => report.job(now), signal: options.signal });
      const items = await writeResults(client, job.id, out, options.signal);
      report.line(`${ended.id} ${ended.status}: ${ended.succeeded} succeeded, ${ended.failed} failed, ${ended.cancelled} cancelled, ${plural(ended.creditsCharged, 'credit')} charged; ${plural(items, 'item')} written${out ? ` to ${out}` : ''}`);
      return EXIT.ok;
    }
    case 'status':
      await write(`${JSON.stringify(await client.jobs.get(needId(), options), null, 2)}\n`);
      return EXIT.ok;
    case 'results':
      await writeResults(client, needId(), out, options.signal);
      return EXIT.ok;
    case 'cancel':
      await write(`${JSON.stringify(await client.jobs.cancel(needId(), options), null, 2)}\n`);
      return EXIT.ok;
    default:
      throw new UsageError(`job takes create, status, results or cancel, not ${JSON.stringify(action ?? '')}.`);
  }
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
  const report = new Report(command.quiet);
  const options = { signal: controller.signal, onRetry: report.retry };
  let listing: Listing<unknown> | undefined;
  try {
    if (command.command === 'account') {
      await write(`${JSON.stringify(await client.account({}, options), null, 2)}\n`);
      return EXIT.ok;
    }
    if (command.command === 'monitor') {
      await write(`${JSON.stringify(await monitorCommand(client, command, options), null, 2)}\n`);
      return EXIT.ok;
    }
    if (command.command === 'job') return await jobCommand(client, command, report, options);
    if (command.command !== 'get') throw new UsageError(`Unknown command ${JSON.stringify(command.command)}; the commands are get, account, endpoints, job and monitor.`);
    const path = endpointAt(command.path, command.params, command.all);
    if (!command.all) {
      await write(`${JSON.stringify(await client.get(path, command.params, { ...options, idempotencyKey: command.idempotencyKey }), null, 2)}\n`);
      return EXIT.ok;
    }
    const items = ENDPOINTS[path].paging?.items ?? '';
    const paged: Listing<unknown> = client.paginate(path as PagedPath, command.params, {
      ...options,
      maxPages: command.maxPages,
      maxCredits: command.maxCredits,
      onPage: (page) => {
        const list = (page.data as unknown as Record<string, unknown>)[items];
        report.page(paged, Array.isArray(list) ? list.length : 0);
      },
    });
    listing = paged;
    for await (const item of paged) await write(`${JSON.stringify(item)}\n`);
    if (paged.stoppedBy === 'maxCredits') {
      report.summary(`stopped by --max-credits ${command.maxCredits}, before a page that could cost one credit more`, paged);
      return EXIT.maxCredits;
    }
    report.summary(paged.stoppedBy === 'maxPages' ? `stopped by --max-pages ${command.maxPages}` : 'done', paged);
    return EXIT.ok;
  } catch (error) {
    let code: number;
    let how: string;
    if (controller.signal.aborted) [code, how] = [EXIT.interrupted, 'interrupted'];
    else if (error instanceof OutputClosed) [code, how] = [EXIT.ok, 'stopped, the output was closed'];
    else if (error instanceof UsageError) {
      report.line(error.message);
      return EXIT.usage;
    } else if (error instanceof PageScrapeError) {
      report.line(describeError(error));
      [code, how] = [exitOf(error), 'stopped by the error above'];
    } else throw error;
    if (listing) report.summary(how, listing);
    return code;
  } finally {
    process.off('SIGINT', interrupt);
  }
}

// A reader that stops early (`| head`) is not an error: `write` tells the command, which stops
// and sums up. With standard error closed too, there is no one left to tell.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}
process.exitCode = await main(process.argv.slice(2));
