// socialnet GraphQL (README.md): the form-encoded request of a
// persisted query, the response framing (one JSON document, or NDJSON for the timeline, with or
// without the `for (;;);` prefix), error classification, and one retry with a new session after
// a stale-session error.
import { root, type Node } from '../shared/read.ts';
import { checkRedirect, unrecognised } from './pages.ts';
import { PLATFORM } from './urls.ts';
import { scanPage } from './html.ts';
import type { QueryName, SessionContext, Sessions, SocialnetSession } from './session.ts';
import { UpstreamOutcome } from '../../upstream/outcomes.ts';
import { fetchAndRead } from '../../upstream/read.ts';
import type { UpstreamRequest, UpstreamResponse } from '../../upstream/types.ts';

export const GRAPHQL_PATH = '/api/graphql/';

/** The Relay provider flags every query's variables carry. */
export const RELAY_PROVIDER_FLAGS = {
  __relay_internal__pv__CometUFIIsRTAEnabledrelayprovider: false,
  __relay_internal__pv__IsWorkUserrelayprovider: false,
  __relay_internal__pv__CometUFIReactionsEnableShortNamerelayprovider: false,
} as const;

/** GraphQL error codes (README.md, "GraphQL"). */
export const ERROR_CODES = {
  rateLimit: 1675004,
  invalidLsd: 1357004,
  unknownDocId: 1675030,
  missingVariable: 1675011,
  invalidVariable: 1675012,
} as const;

let requestCounter = 0;

/** `__req`: a short base-36 counter. */
const nextReq = (): string => {
  requestCounter = (requestCounter + 1) % 1_296; // two base-36 digits at most
  return requestCounter.toString(36);
};

/** the POST of one persisted query, with the session's lsd and doc id. */
export function graphqlRequest(session: SocialnetSession, name: QueryName, variables: Record<string, unknown>, origin: string): UpstreamRequest {
  return {
    path: GRAPHQL_PATH,
    method: 'POST',
    kind: 'api',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-sn-lsd': session.lsd,
      'x-sn-friendly-name': name,
      accept: '*/*',
      origin,
      referer: `${origin}/`,
    },
    // The form fields, in this order.
    body: new URLSearchParams([
      ['av', '0'],
      ['__user', '0'],
      ['__a', '1'],
      ['__req', nextReq()],
      ['__comet_req', '15'],
      ['lsd', session.lsd],
      ['sn_api_caller_class', 'RelayModern'],
      ['sn_api_req_friendly_name', name],
      ['variables', JSON.stringify({ ...variables, ...RELAY_PROVIDER_FLAGS })],
      ['server_timestamps', 'true'],
      ['doc_id', session.docIds[name]],
    ]).toString(),
    // A session is the proxy's it was obtained through (README.md of the core: proxy pools).
    ...(session.via ? { via: session.via } : {}),
  };
}

/** strips leading whitespace and one `for (;;);`. */
export function stripPrefix(body: string): string {
  const trimmed = body.trimStart();
  return trimmed.startsWith('for (;;);') ? trimmed.slice('for (;;);'.length).trimStart() : trimmed;
}

export type Framing = 'json' | 'ndjson';

/** A GraphQL answer: the documents (one, or the NDJSON lines), or a stale-session signal. */
export type GraphqlAnswer = { stale: false; documents: [Node, ...Node[]] } | { stale: true; code: number; message: string };

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};

/** A timeline line that carries the page_info of the page: its label ends in `$page_info`. */
export function isPageInfoLine(line: Node): boolean {
  const label = line.at('label').value;
  return typeof label === 'string' && label.endsWith('$page_info');
}

/**
 * classifies one GraphQL response; throws the outcomes, returns documents or staleness.
 * Its transient outcomes (an empty body after `for (;;);`, a timeline cut off or without its
 * page_info line) are retried by the client when it runs as the request's `classify`.
 */
export function readGraphqlResponse(response: UpstreamResponse, framing: Framing): GraphqlAnswer {
  checkRedirect(response);
  if (response.path !== GRAPHQL_PATH) throw new UpstreamOutcome('blocked', PLATFORM, `GraphQL request redirected to ${response.path}`);
  if (response.status !== 200) throw new UpstreamOutcome('blocked', PLATFORM, `GraphQL answered HTTP ${response.status}`);
  const text = stripPrefix(response.body);
  if (text.trim() === '') throw new UpstreamOutcome('transient', PLATFORM, 'empty GraphQL response');

  const documents: Node[] = [];
  if (framing === 'json') {
    const document = parseJson(text);
    if (document === undefined) throw notJson(text);
    documents.push(root(document, 'GraphQL response'));
  } else {
    const lines = text.split('\n').map((line) => line.trim()).filter((line) => line !== '');
    for (const [index, line] of lines.entries()) {
      const document = parseJson(line);
      if (document === undefined) {
        if (index === 0) throw notJson(text);
        // A cut-off last line means the response is incomplete (no page_info line): transient.
        if (index === lines.length - 1) throw new UpstreamOutcome('transient', PLATFORM, 'timeline response cut off');
        throw unrecognised(`timeline response line ${index + 1} is not JSON`);
      }
      documents.push(root(document, `timeline line ${index + 1}`));
    }
  }

  const [first, ...rest] = documents;
  if (first === undefined || first.value === null || typeof first.value !== 'object' || Array.isArray(first.value)) {
    throw unrecognised('GraphQL response is not a JSON object');
  }
  const critical = first.listOrEmpty('errors').find((error) => error.at('severity').value === 'CRITICAL');
  if (critical !== undefined) {
    const code = critical.at('code').value;
    const message = typeof critical.at('message').value === 'string' ? (critical.at('message').value as string) : '';
    switch (code) {
      case ERROR_CODES.rateLimit:
        throw new UpstreamOutcome('blocked', PLATFORM, `GraphQL rate limit (${code} ${message})`);
      case ERROR_CODES.invalidLsd:
      case ERROR_CODES.unknownDocId:
        return { stale: true, code, message };
      case ERROR_CODES.invalidVariable:
        throw new UpstreamOutcome('rejected_cursor', PLATFORM, `GraphQL rejected the cursor or token (${code} ${message})`);
      default:
        throw unrecognised(`GraphQL error ${String(code)} ${message}`.trim());
    }
  }
  const data = (first.value as Record<string, unknown>).data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw unrecognised('GraphQL response without data');
  const node = (data as Record<string, unknown>).node;
  if (node === null) throw new UpstreamOutcome('not_found', PLATFORM, 'GraphQL answered data.node: null');
  if (typeof node !== 'object' || node === undefined || Array.isArray(node)) throw unrecognised('missing data.node in the GraphQL response');
  // Step 7: a timeline is complete only with its page_info line; without it, transient.
  if (framing === 'ndjson' && !rest.some(isPageInfoLine)) {
    throw new UpstreamOutcome('transient', PLATFORM, 'timeline response without its page_info line');
  }
  return { stale: false, documents: [first, ...rest] };
}

/** A body that is not JSON: the login wall is a block, anything else unrecognised. */
function notJson(text: string): UpstreamOutcome {
  const page = scanPage(text);
  if (page.title === 'socialnet - log in or sign up' || page.markers.has('login_form')) {
    return new UpstreamOutcome('blocked', PLATFORM, 'login wall instead of a GraphQL response');
  }
  return unrecognised('GraphQL response is not JSON');
}

export interface QueryOptions {
  name: QueryName;
  variables: Record<string, unknown>;
  framing: Framing;
  origin: string;
}

/**
 * Sends one query with the shared session, its answer judged inside the client's retry loop
 * (a transient answer is asked again). A stale-session error (1357004, 1675030) discards that
 * session, gets a new one and retries once; the same error again is a block. A session bound to
 * a proxy that is blocked or benched is replaced likewise, once.
 */
export async function runQuery(sessions: Sessions, context: SessionContext, query: QueryOptions): Promise<[Node, ...Node[]]> {
  let session = await sessions.get(context);
  for (let attempt = 0; ; attempt += 1) {
    const request = graphqlRequest(session, query.name, query.variables, query.origin);
    let answer: GraphqlAnswer;
    try {
      answer = await fetchAndRead(context.upstream, request, (response) => readGraphqlResponse(response, query.framing));
    } catch (error) {
      // The session's proxy is blocked or benched: a new session, through another proxy, once.
      if (!(error instanceof UpstreamOutcome && error.kind === 'blocked' && session.via !== undefined && attempt === 0)) throw error;
      session = await sessions.refresh(session, context);
      continue;
    }
    if (!answer.stale) return answer.documents;
    if (attempt > 0) {
      throw new UpstreamOutcome('blocked', PLATFORM, `GraphQL refused a fresh session (${answer.code} ${answer.message})`);
    }
    session = await sessions.refresh(session, context);
  }
}
