// Building blocks of the sandbox upstream: deterministic generated data, escaping as the
// upstream contract (each platform's src/platforms/*/README.md) requires, and the response
// shapes a platform handler returns.
import { createHash } from 'node:crypto';

// ---------------------------------------------------------------------------------------
// Requests and responses

export interface SandboxRequest {
  method: string;
  /** Path without the query string, percent-decoding left to the handler. */
  path: string;
  query: URLSearchParams;
  /** Header names lower-cased. */
  headers: Record<string, string>;
  body: string;
}

export type SandboxResponse =
  | { status: number; headers?: Record<string, string>; body: string | Buffer; delayMs?: number }
  /** Destroys the connection without an answer (a reset). */
  | { reset: true };

export interface SandboxContext {
  /** The seed all data is generated from. */
  seed: string;
  /** How many times this exact method+path+query has been requested (1 for the first). */
  attempt: number;
  /** Latency in ms configured for `slow-` accounts. */
  slowMs: number;
}

export type SandboxHandler = (request: SandboxRequest, context: SandboxContext) => SandboxResponse | Promise<SandboxResponse>;

export interface CatalogueEntry {
  /** What the account shows, e.g. "ordinary profile", "not found", "captcha page". */
  description: string;
  /** API query string to reach it, e.g. `username=lunavoss` or `url=https://…`. */
  query: string;
  /** API endpoint path. */
  endpoint: string;
}

export interface SandboxPlatform {
  name: 'socialnet' | 'snapmsg' | 'linkpage-a' | 'linkpage-b' | 'shopfront';
  handle: SandboxHandler;
  catalogue: CatalogueEntry[];
}

export const html = (body: string, status = 200, headers: Record<string, string> = {}): SandboxResponse => ({
  status,
  headers: { 'content-type': 'text/html; charset=utf-8', ...headers },
  body,
});

export const json = (value: unknown, status = 200, headers: Record<string, string> = {}): SandboxResponse => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  body: typeof value === 'string' ? value : JSON.stringify(value),
});

export const redirect = (location: string, status = 302): SandboxResponse => ({ status, headers: { location }, body: '' });

export const text = (body: string, status: number, headers: Record<string, string> = {}): SandboxResponse => ({
  status,
  headers: { 'content-type': 'text/plain; charset=utf-8', ...headers },
  body,
});

/** True when the request carries the browser-like navigation headers every platform expects. */
export function isBrowserNavigation(request: SandboxRequest): boolean {
  const h = request.headers;
  return (
    /Mozilla\/5\.0/.test(h['user-agent'] ?? '') &&
    (h['accept'] ?? '').includes('text/html') &&
    h['sec-fetch-mode'] === 'navigate' &&
    h['sec-fetch-dest'] === 'document'
  );
}

/**
 * Faults shared by every platform, chosen by the account name's prefix:
 * `slow-…` answers after the configured latency; `flaky-…` answers 503, then resets the
 * connection, then succeeds (per distinct request, counting attempts); `hiccup-…` answers the
 * first attempt of each request with an empty `200` body, which every contract calls a
 * transient failure, and the retry normally (odd attempts empty, even ones answered);
 * `down-…` always answers 503. Returns null when the name asks for no fault; otherwise the
 * fault, or `{ delayMs }` to add to the normal answer.
 */
export function accountFault(name: string, context: SandboxContext): SandboxResponse | { delayMs: number } | null {
  const lower = name.toLowerCase();
  if (lower.startsWith('slow-')) return { delayMs: context.slowMs };
  if (lower.startsWith('down-')) return text('Service Unavailable', 503);
  if (lower.startsWith('hiccup-')) return context.attempt % 2 === 1 ? html('', 200) : null;
  if (lower.startsWith('flaky-')) {
    const phase = (context.attempt - 1) % 3;
    if (phase === 0) return text('Service Unavailable', 503);
    if (phase === 1) return { reset: true };
  }
  return null;
}

// ---------------------------------------------------------------------------------------
// Escaping

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text or an attribute value for HTML. */
export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);

/**
 * JSON for inside a `<script>` element: `<` as `\u003c` always; `/` as `\/` when `slashes`
 * (the contract allows both), and optionally every non-ASCII character as `\uXXXX`.
 */
export function scriptJson(value: unknown, options: { slashes?: boolean; asciiOnly?: boolean } = {}): string {
  let out = JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
  if (options.slashes) out = out.replace(/\//g, '\\/');
  if (options.asciiOnly) out = out.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return out;
}

// ---------------------------------------------------------------------------------------
// Deterministic data

/** A seeded pseudo-random generator (mulberry32): the same seed and key give the same data. */
export class Rng {
  #state: number;

  constructor(seed: string, key: string) {
    this.#state = createHash('sha256').update(`${seed}\u0000${key}`).digest().readUInt32LE(0);
  }

  /** Float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) | 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  bool(probability = 0.5): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** `length` characters from `alphabet`. */
  chars(length: number, alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789'): string {
    let out = '';
    for (let i = 0; i < length; i += 1) out += alphabet[Math.floor(this.next() * alphabet.length)];
    return out;
  }

  /** A decimal id of `length` digits, not starting with 0. */
  digits(length: number): string {
    return String(this.int(1, 9)) + this.chars(length - 1, '0123456789');
  }

  /** A few words of generated text; `flavour` adds emoji, right-to-left or other scripts. */
  sentence(words: number, flavour: TextFlavour = 'plain'): string {
    const pool = flavour === 'plain' ? WORDS : [...WORDS, ...(FLAVOURED[flavour] ?? [])];
    const out: string[] = [];
    for (let i = 0; i < words; i += 1) out.push(this.pick(pool));
    const first = out[0] ?? '';
    out[0] = first.charAt(0).toUpperCase() + first.slice(1);
    return out.join(' ');
  }

  /** A display name; `flavour` picks Unicode-heavy names. */
  name(flavour: TextFlavour = 'plain'): string {
    const pool = flavour === 'plain' ? NAMES : (FLAVOURED_NAMES[flavour] ?? NAMES);
    return `${this.pick(pool)} ${this.pick(SURNAMES)}`;
  }

  /** Epoch ms between two dates. */
  time(fromIso: string, toIso: string): number {
    const from = Date.parse(fromIso);
    const to = Date.parse(toIso);
    return from + Math.floor(this.next() * (to - from));
  }
}

export type TextFlavour = 'plain' | 'emoji' | 'rtl' | 'cjk' | 'mixed';

const WORDS = [
  'sunset', 'coffee', 'studio', 'weekend', 'market', 'recipe', 'travel', 'morning', 'river', 'garden',
  'notes', 'city', 'light', 'music', 'photo', 'summer', 'winter', 'design', 'craft', 'street',
  'ocean', 'book', 'kitchen', 'trail', 'bike', 'print', 'launch', 'live', 'new', 'today',
];
const FLAVOURED: Record<string, string[]> = {
  emoji: ['🔥', '😍', '🎉', '👇', '🌊', '☕️', '👩🏽‍🍳', '🏳️‍🌈', '✨', '🇵🇹'],
  rtl: ['مرحبا', 'بالعالم', 'שלום', 'עולם', 'قهوة', 'صباح'],
  cjk: ['東京', '写真', '咖啡', '서울', '音楽', '料理'],
  mixed: ['🔥', 'مرحبا', '東京', 'café', 'naïve', 'Ωmega', '"quoted"', '<b>not html</b>', 'a & b', "it's"],
};
const NAMES = ['Luna', 'Theo', 'Mika', 'Rui', 'Ana', 'Sam', 'Noor', 'Iris', 'Leo', 'Maya', 'Jonas', 'Zoe'];
const SURNAMES = ['Voss', 'Marsh', 'Orbit', 'Silva', 'Park', 'Haddad', 'Novak', 'Reyes', 'Kato', 'Berg'];
const FLAVOURED_NAMES: Record<string, string[]> = {
  emoji: ['Luna 🌙', 'Chef ✨', 'Mika 🎧'],
  rtl: ['نور', 'ليلى', 'דנה'],
  cjk: ['さくら', '李明', '지민'],
  mixed: ['Zoë 🌊', 'نور ✨', 'José "Pepe"', 'Ana & Co'],
};

/** ISO 8601 UTC with milliseconds. */
export const iso = (ms: number): string => new Date(ms).toISOString();
