// Pools of proxies per platform. A block is a property of the address a request comes from,
// not of the request: so a proxy that is blocked, or that cannot be reached, is benched for a
// while (5 s, doubling with each failure in a row, at most 5 minutes) and the request moves on to
// another proxy. Proxies are taken in turn among those not benched.
//
// A proxy is named everywhere (logs, metrics, errors) by its label, `scheme://host:port`: its
// credentials never leave the dispatcher that uses them.
import { readFileSync } from 'node:fs';
import type { Dispatcher } from 'undici';
import { undici } from './undici.ts';

export const SCHEMES = ['http:', 'https:', 'socks5:'] as const;
const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };
const BENCH_MS = 5_000;
const MAX_BENCH_MS = 5 * 60_000;

/** A proxy as configured: where it is, and how it is named without its credentials. */
export interface ProxySpec {
  url: string;
  label: string;
}

/**
 * A proxy list: URLs separated by commas (or whitespace), or `@file` naming a file with one per
 * line (`#` starts a comment). Throws, naming `variable` but never a credential, on a bad entry.
 */
export function parseProxies(variable: string, raw: string, read: (path: string) => string = (path) => readFileSync(path, 'utf8')): ProxySpec[] {
  let text = raw.trim();
  if (text.startsWith('@')) {
    const path = text.slice(1);
    try {
      text = read(path);
    } catch (error) {
      throw new Error(`${variable}: cannot read the proxy list ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    text = text
      .split('\n')
      .map((line) => line.replace(/#.*$/, '').trim())
      .join(',');
  }
  return text
    .split(/[\s,]+/)
    .filter((entry) => entry !== '')
    .map((entry, index) => {
      let url: URL;
      try {
        url = new URL(entry);
      } catch {
        throw new Error(`${variable}: entry ${index + 1} is not a URL (give scheme://[user:password@]host:port)`);
      }
      const port = url.port || DEFAULT_PORTS[url.protocol] || '';
      if (!(SCHEMES as readonly string[]).includes(url.protocol) || !url.hostname || !port) {
        throw new Error(`${variable}: entry ${index + 1} must be http://, https:// or socks5:// with a host (and a port for socks5), got ${url.protocol}//${url.hostname}${url.port ? `:${url.port}` : ''}`);
      }
      return { url: url.href, label: `${url.protocol}//${url.hostname}:${port}` };
    });
}

export class Proxy {
  readonly label: string;
  readonly dispatcher: Dispatcher;
  #failures = 0;
  benchedUntil = 0;

  constructor(spec: ProxySpec, connections: number) {
    this.label = spec.label;
    const url = new URL(spec.url);
    const { ProxyAgent, Socks5ProxyAgent } = undici();
    this.dispatcher = url.protocol === 'socks5:' ? new Socks5ProxyAgent(spec.url, { connections }) : new ProxyAgent({ uri: spec.url, connections });
  }

  /** Benched for 5 s, doubling with each failure in a row, at most 5 minutes. */
  bench(now: number): number {
    const ms = Math.min(BENCH_MS * 2 ** this.#failures, MAX_BENCH_MS);
    this.#failures += 1;
    this.benchedUntil = now + ms;
    return ms;
  }

  succeeded(): void {
    this.#failures = 0;
    this.benchedUntil = 0;
  }
}

export class ProxyPool {
  readonly proxies: readonly Proxy[];
  #next = 0;

  constructor(specs: readonly ProxySpec[], connections: number) {
    this.proxies = specs.map((spec) => new Proxy(spec, connections));
  }

  /** The next proxy in turn that is neither benched nor in `tried`; null when none is left. */
  pick(tried: ReadonlySet<Proxy>, now: number): Proxy | null {
    for (let i = 0; i < this.proxies.length; i++) {
      const proxy = this.proxies[(this.#next + i) % this.proxies.length] as Proxy;
      if (tried.has(proxy) || proxy.benchedUntil > now) continue;
      this.#next = (this.#next + i + 1) % this.proxies.length;
      return proxy;
    }
    return null;
  }

  /** The proxies neither benched nor in `tried`, from the next in turn. */
  usable(tried: ReadonlySet<Proxy>, now: number): Proxy[] {
    const usable: Proxy[] = [];
    for (let i = 0; i < this.proxies.length; i++) {
      const proxy = this.proxies[(this.#next + i) % this.proxies.length] as Proxy;
      if (!tried.has(proxy) && proxy.benchedUntil <= now) usable.push(proxy);
    }
    this.#next = (this.#next + 1) % Math.max(1, this.proxies.length);
    return usable;
  }

  byLabel(label: string): Proxy | undefined {
    return this.proxies.find((proxy) => proxy.label === label);
  }

  async close(): Promise<void> {
    await Promise.all(this.proxies.map((proxy) => proxy.dispatcher.close()));
  }
}
