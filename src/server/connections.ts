// The HTTP server under Fastify, built so that slow, idle or numerous connections cannot lock
// other clients out: a whole request must arrive within a time limit (else 408), idle
// keep-alive connections are closed, the process holds a bounded number of connections and one
// client address a bounded share of them (beyond it: 429, then closed). Answers written outside
// Fastify's request cycle (CONNECT, refused connections, timeouts) carry the error envelope.
import { Server, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import { BlockList, isIP, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ApiError, errorBody, JSON_TYPE } from './errors.ts';
import { newRequestId } from './ids.ts';

export interface ConnectionLimits {
  /** A whole request, headers and body, must arrive within this time; else 408. */
  requestTimeoutMs: number;
  /** The request line and headers must arrive within this time (at most `requestTimeoutMs`). */
  headersTimeoutMs: number;
  /** A keep-alive connection idle for this long is closed (Node adds a one-second grace). */
  keepAliveTimeoutMs: number;
  /** Connections one process holds at most; further ones are closed at once. */
  maxConnections: number;
  /**
   * Connections one client address (an IPv6 /64) holds at most; further ones are answered
   * 429 and closed. Trusted proxies are exempt: they carry many clients.
   */
  maxConnectionsPerAddress: number;
}

export const DEFAULT_CONNECTION_LIMITS: Readonly<ConnectionLimits> = {
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 4_096,
  maxConnectionsPerAddress: 64,
};

/**
 * How often Node checks the request and header timeouts. They are only checked at this
 * interval (Node's default is 30 s, which would let a 30 s limit hold a connection for 60 s), so
 * it is a tenth of the shorter limit, at most a second.
 */
export const checkingIntervalMs = (limits: ConnectionLimits): number =>
  Math.max(10, Math.min(1_000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 10)));

/** How long a connection that has been answered and ended may linger before it is destroyed. */
const LINGER_MS = 1_000;

const REASONS: Record<number, string> = { 400: 'Bad Request', 405: 'Method Not Allowed', 408: 'Request Timeout', 429: 'Too Many Requests' };

/**
 * Writes an error envelope straight to a socket that Fastify does not answer, and closes it:
 * the client's further bytes are read and dropped (closing with unread data would reset the
 * connection and could lose the answer), and a client that never closes its side is cut off
 * after a short linger.
 */
export function answerAndClose(socket: Duplex, error: ApiError, requestId: string): void {
  const body = errorBody(error, requestId);
  const headers = Object.entries(error.headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${error.status} ${REASONS[error.status] ?? 'Error'}\r\nContent-Type: ${JSON_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `x-request-id: ${requestId}\r\nx-content-type-options: nosniff\r\n${headers}Connection: close\r\n\r\n${body}`,
  );
  socket.resume();
  const linger = setTimeout(() => socket.destroy(), LINGER_MS);
  linger.unref();
  socket.once('close', () => clearTimeout(linger));
}

/**
 * The key under which a client's connections are counted: the IPv4 address (also when it
 * arrives IPv4-mapped), or the /64 of an IPv6 address, since one client commonly holds a
 * whole /64.
 */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped?.[1]) return mapped[1];
  const bare = address.split('%')[0] ?? address;
  if (isIP(bare) !== 6) return bare;
  const [left = '', right] = bare.split('::');
  const head = left === '' ? [] : left.split(':');
  const tail = right === undefined || right === '' ? [] : right.split(':');
  const groups = right === undefined ? head : [...head, ...Array<string>(Math.max(0, 8 - head.length - tail.length)).fill('0'), ...tail];
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(':')}::/64`;
}

/** The trusted proxies as a matcher; the entries are addresses or CIDR networks (config.ts checks them). */
export function proxyMatcher(entries: readonly string[]): (address: string) => boolean {
  if (entries.length === 0) return () => false;
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(prefix), family);
  }
  return (address) => {
    const key = addressKey(address);
    if (isIP(key) === 4) return list.check(key, 'ipv4');
    const bare = address.split('%')[0] ?? address;
    return isIP(bare) === 6 && list.check(bare, 'ipv6');
  };
}

export interface EdgeOptions {
  limits: ConnectionLimits;
  trustedProxies: readonly string[];
  /** Told of every answer written outside Fastify's request cycle, for the log. */
  onAnswer: (entry: { requestId: string; status: number; address: string | undefined; what: string }) => void;
  /** Sees each request first: answers it, or passes it on to `next` (Fastify's handler). */
  first?: (request: IncomingMessage, response: ServerResponse, next: RequestListener) => void;
}

/**
 * Builds the servers Fastify listens with (its `serverFactory`; with `localhost` Fastify makes
 * one per address, and the per-address counts are shared between them).
 */
export function edgeServerFactory(options: EdgeOptions): (handler: RequestListener) => Server {
  const { limits, onAnswer } = options;
  const trusted = proxyMatcher(options.trustedProxies);
  const open = new Map<string, number>();

  /** Admits a new connection, or answers 429 and closes it when its address holds too many. */
  const admit = (socket: Socket): boolean => {
    const address = socket.remoteAddress;
    if (address === undefined || trusted(address)) return true;
    const key = addressKey(address);
    const count = open.get(key) ?? 0;
    if (count >= limits.maxConnectionsPerAddress) {
      const requestId = newRequestId();
      const error = new ApiError('RATE_LIMITED', `Too many open connections from this address (at most ${limits.maxConnectionsPerAddress}); close idle ones and retry.`, {
        headers: { 'retry-after': '1' },
      });
      answerAndClose(socket, error, requestId);
      onAnswer({ requestId, status: error.status, address, what: 'connection refused: too many from this address' });
      return false;
    }
    open.set(key, count + 1);
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left <= 0) open.delete(key);
      else open.set(key, left);
    });
    return true;
  };

  return (fastify) => {
    const { first } = options;
    const handler: RequestListener = first ? (request, response) => first(request, response, fastify) : fastify;
    // Node's HTTP server takes each connection through its 'connection' event; a refused one
    // never reaches the HTTP parser.
    const server = new (class extends Server {
      override emit(event: string, ...args: unknown[]): boolean {
        if (event === 'connection' && !admit(args[0] as Socket)) return false;
        return super.emit(event, ...args);
      }
    })(
      {
        requestTimeout: limits.requestTimeoutMs,
        headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
        connectionsCheckingInterval: checkingIntervalMs(limits),
      },
      handler,
    );
    server.keepAliveTimeout = limits.keepAliveTimeoutMs;
    server.maxConnections = limits.maxConnections;
    // With no listener Node closes a CONNECT's socket without a word; it gets the envelope.
    server.on('connect', (request: IncomingMessage, socket: Duplex) => {
      const requestId = newRequestId();
      answerAndClose(socket, new ApiError('METHOD_NOT_ALLOWED', 'Method CONNECT is not allowed here; use GET.', { headers: { allow: 'GET' } }), requestId);
      onAnswer({ requestId, status: 405, address: request.socket.remoteAddress, what: 'CONNECT refused' });
    });
    // With no listener Node answers an Expect other than 100-continue with a bare 417; RFC 9110
    // lets a server ignore an expectation it does not know, so the request is answered as usual.
    server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => server.emit('request', request, response));
    return server;
  };
}
