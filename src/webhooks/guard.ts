// The address guard of webhook URLs: the one place the service sends a request to a host a user
// chose. At registration the URL is checked and its name resolved, every answer checked; at each
// delivery the name is resolved again and the connection made to the address that was checked
// (the lookup of the connection is this guard's), so that a DNS answer changed since registration
// (rebinding) cannot reach a refused range either.
//
// Refused: anything but `https:` (`http:` with WEBHOOK_ALLOW_HTTP=on), credentials in the URL,
// and every address that is not public unicast: loopback, private (RFC 1918, fc00::/7),
// link-local (169.254.0.0/16, fe80::/10), shared (100.64.0.0/10), multicast, broadcast,
// unspecified, reserved and documentation ranges, NAT64/6to4/Teredo (which embed IPv4), and the
// IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d) forms. The WHATWG URL parser turns
// decimal, hex and octal IPv4 spellings (2130706433, 0x7f.1, 0177.0.0.1) into dotted ones first.
// WEBHOOK_ALLOW_PRIVATE=on lifts the address rules, for development and tests on one machine.
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';

export interface GuardSettings {
  /** WEBHOOK_ALLOW_PRIVATE=on: any address, loopback and private ones included. */
  allowPrivate: boolean;
  /** WEBHOOK_ALLOW_HTTP=on: `http://` URLs too. */
  allowHttp: boolean;
}

/** Resolves a host name to every address it has (the injectable part of the guard). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** The longest URL accepted. */
export const MAX_URL_LENGTH = 2_048;

/** Thrown (or handed to a connection's lookup) for an address the guard refuses. */
export class RefusedAddressError extends Error {
  readonly code = 'WEBHOOK_ADDRESS_REFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'RefusedAddressError';
  }
}

const RANGE_NAMES: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address (RFC 1918)',
  uniqueLocal: 'a private address (fc00::/7)',
  linkLocal: 'a link-local address',
  carrierGradeNat: 'a shared address (100.64.0.0/10)',
  multicast: 'a multicast address',
  broadcast: 'a broadcast address',
  unspecified: 'the unspecified address',
};

/** Why `address` (an IP literal) is refused, or null when it is public unicast. */
export function refusal(address: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return `${address} is not an IP address`;
  }
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) {
      const inner = v6.toIPv4Address();
      const why = refusal(inner.toString());
      return why === null ? null : `${address} is an IPv4-mapped form of ${inner.toString()}: ${why}`;
    }
    const parts = v6.parts;
    // ::/96 (IPv4-compatible, and :: and ::1 themselves): never a public host.
    if (parts.slice(0, 6).every((part) => part === 0)) {
      const range = v6.range();
      if (range === 'unspecified' || range === 'loopback') return `${address} is ${RANGE_NAMES[range]}`;
      return `${address} is an IPv4-compatible address (::/96)`;
    }
  }
  const range = parsed.range();
  if (range === 'unicast') return null;
  return `${address} is ${RANGE_NAMES[range] ?? `in a range that is not public (${range})`}`;
}

/** A host name that means this machine, whatever DNS says. */
const isLocalName = (hostname: string): boolean => /(^|\.)localhost\.?$/i.test(hostname);

/** The literal address of a URL's host (`[::1]` → `::1`), or null for a name. */
export function literalOf(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return ipaddr.isValid(bare) && (bare.includes(':') || ipaddr.IPv4.isValidFourPartDecimal(bare)) ? bare : null;
}

export type UrlCheck = { ok: true; url: URL } | { ok: false; message: string };

/** The URL's own rules (scheme, credentials, a literal address); no resolution. */
export function checkUrl(raw: string, settings: GuardSettings): UrlCheck {
  if (raw.length > MAX_URL_LENGTH) return { ok: false, message: `Must be at most ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, message: 'Is not a URL' };
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && settings.allowHttp)) {
    return { ok: false, message: settings.allowHttp ? 'Must be an https:// or http:// URL' : 'Must be an https:// URL (http:// only with WEBHOOK_ALLOW_HTTP=on, for development)' };
  }
  if (url.username !== '' || url.password !== '') return { ok: false, message: 'Must not carry a user name or password; the deliveries are signed instead' };
  if (url.hostname === '') return { ok: false, message: 'Has no host' };
  if (settings.allowPrivate) return { ok: true, url };
  if (isLocalName(url.hostname)) return { ok: false, message: `${url.hostname} is this machine: webhooks are sent to public addresses only` };
  const literal = literalOf(url.hostname);
  if (literal !== null) {
    const why = refusal(literal);
    if (why !== null) return { ok: false, message: `${why}: webhooks are sent to public addresses only` };
  }
  return { ok: true, url };
}

/** Every address `hostname` resolves to, each checked; throws RefusedAddressError when one is refused or none is found. */
export async function resolveChecked(hostname: string, settings: GuardSettings, resolver: Resolver): Promise<LookupAddress[]> {
  const literal = literalOf(hostname);
  if (literal !== null) {
    if (!settings.allowPrivate) {
      const why = refusal(literal);
      if (why !== null) throw new RefusedAddressError(`${why}: webhooks are sent to public addresses only`);
    }
    return [{ address: literal, family: literal.includes(':') ? 6 : 4 }];
  }
  if (!settings.allowPrivate && isLocalName(hostname)) throw new RefusedAddressError(`${hostname} is this machine: webhooks are sent to public addresses only`);
  let answers: LookupAddress[];
  try {
    answers = await resolver(hostname);
  } catch (error) {
    throw new RefusedAddressError(`${hostname} does not resolve (${(error as { code?: string }).code ?? (error as Error).message})`);
  }
  if (answers.length === 0) throw new RefusedAddressError(`${hostname} does not resolve`);
  if (!settings.allowPrivate) {
    for (const answer of answers) {
      const why = refusal(answer.address);
      if (why !== null) throw new RefusedAddressError(`${hostname} resolves to ${answer.address}; ${why}: webhooks are sent to public addresses only`);
    }
  }
  return answers;
}

/** A URL as registration checks it: its own rules, then every address of its name. Null when accepted; else why not. */
export async function registrationProblem(raw: string, settings: GuardSettings, resolver: Resolver): Promise<string | null> {
  const checked = checkUrl(raw, settings);
  if (!checked.ok) return checked.message;
  if (settings.allowPrivate) return null;
  try {
    await resolveChecked(checked.url.hostname, settings, resolver);
    return null;
  } catch (error) {
    if (error instanceof RefusedAddressError) return error.message;
    throw error;
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for a socket's connection (undici's `connect.lookup`, net/tls `lookup`): it
 * resolves with `resolver`, refuses unless every answer passes the guard, and hands over only
 * checked addresses, so that the socket connects to one of them and nowhere else.
 */
export function guardedLookup(settings: GuardSettings, resolver: Resolver) {
  return (hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback): void => {
    resolveChecked(hostname, settings, resolver).then(
      (answers) => {
        const family = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
        const usable = family === 0 ? answers : answers.filter((answer) => answer.family === family);
        if (usable.length === 0) {
          callback(Object.assign(new Error(`${hostname} has no IPv${family} address`), { code: 'ENOTFOUND' }), '');
          return;
        }
        if (options.all) callback(null, usable);
        else callback(null, (usable[0] as LookupAddress).address, (usable[0] as LookupAddress).family);
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, ''),
    );
  };
}
