// Backends a test can take away: a Redis server of its own on a free port (never the machine's
// shared one), and a TCP proxy in front of PostgreSQL that can refuse connections or swallow
// every byte (a network partition), then pass again.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { freePort, listenAgain } from './ports.ts';

/** redis-server found its port taken by something else. */
class PortTaken extends Error {}

export class OwnRedis {
  readonly port: number;
  #process: ChildProcess | null = null;

  constructor(port: number) {
    this.port = port;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** On a port nothing used a moment ago; another one when something else took it meanwhile. */
  static async start(): Promise<OwnRedis> {
    for (let attempt = 1; ; attempt++) {
      const redis = new OwnRedis(await freePort());
      try {
        await redis.#start();
        return redis;
      } catch (error) {
        if (!(error instanceof PortTaken) || attempt === 5) throw error;
      }
    }
  }

  /**
   * Starts the server again on its port (empty: it keeps nothing on disk) and waits until it
   * accepts connections; while something else holds the port, tries again for up to 10 s.
   */
  async restart(): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        return await this.#start();
      } catch (error) {
        if (!(error instanceof PortTaken) || Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  async #start(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.#process = child;
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const failed = once(child, 'exit').then(() => {
      throw /Address already in use/.test(output) ? new PortTaken(output) : new Error(`redis-server exited before it was ready:\n${output}`);
    });
    const ready = (async () => {
      while (!/Ready to accept connections/.test(output)) {
        if (child.exitCode !== null) return failed;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    await Promise.race([ready, failed]);
  }

  async stop(): Promise<void> {
    const child = this.#process;
    if (!child || child.exitCode !== null) return;
    child.kill('SIGKILL');
    await once(child, 'exit');
    this.#process = null;
  }
}

export type ProxyMode = 'pass' | 'refuse' | 'blackhole';

/** A TCP proxy to `target` whose behaviour a test switches. */
export class CuttableProxy {
  readonly #target: { host: string; port: number };
  readonly #sockets = new Set<Socket>();
  #server: Server | null = null;
  #mode: ProxyMode = 'pass';
  port = 0;

  constructor(target: { host: string; port: number }) {
    this.#target = target;
  }

  async start(): Promise<this> {
    await this.#listen();
    return this;
  }

  async #listen(): Promise<void> {
    const server = createServer((client) => {
      this.#sockets.add(client);
      client.on('close', () => this.#sockets.delete(client));
      client.on('error', () => {});
      // A partition: the connection opens, nothing ever comes back.
      if (this.#mode === 'blackhole') return;
      const upstream = connect(this.#target.port, this.#target.host);
      this.#sockets.add(upstream);
      upstream.on('close', () => {
        this.#sockets.delete(upstream);
        client.destroy();
      });
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
    });
    // On a port of the system's first, then on the same one again (after `refuse`).
    if (this.port === 0) {
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      this.port = (server.address() as AddressInfo).port;
    } else {
      await listenAgain(server, this.port);
    }
    this.#server = server;
  }

  async set(mode: ProxyMode): Promise<void> {
    const before = this.#mode;
    this.#mode = mode;
    if (mode === 'pass' && before === 'blackhole') {
      for (const socket of this.#sockets) socket.destroy();
      return;
    }
    if (mode === 'blackhole') {
      // Connections already open go silent too.
      for (const socket of this.#sockets) {
        socket.unpipe();
        socket.pause();
      }
      return;
    }
    if (mode === 'refuse') {
      for (const socket of this.#sockets) socket.destroy();
      await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
      this.#server = null;
      return;
    }
    if (mode === 'pass' && this.#server === null) await this.#listen();
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }
}
