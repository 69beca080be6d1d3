// Ports for tests on a machine where other things run, another copy of this suite included.
// A test never assumes a port is free: it listens on port 0 and reads the port it got, or, when
// something else must listen on a port chosen beforehand, it retries when that port was taken
// meanwhile. A port found free and closed again is anyone's until it is listened on again.
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export interface RefusedPort {
  port: number;
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** Lets the port go. */
  release(): Promise<void>;
}

/**
 * A port of this machine that refuses connections and that no other process can listen on until
 * `release()`: the local port of a connection this process keeps open to a listener of its own.
 * Nothing listens on it, and the kernel lets no one bind it while the connection holds it.
 */
export async function refusedPort(): Promise<RefusedPort> {
  let accepted: Socket | undefined;
  const listener: Server = createServer((socket) => {
    accepted = socket;
    socket.on('error', () => {});
  });
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  const holder = connect((listener.address() as AddressInfo).port, '127.0.0.1');
  holder.on('error', () => {});
  await once(holder, 'connect');
  while (!accepted) await new Promise((resolve) => setImmediate(resolve));
  const port = holder.localPort as number;
  const closed = once(holder, 'close');
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    async release() {
      // The listener's side closes first (the holder closes when it reads that end), so that
      // TIME_WAIT is spent on the listener's port.
      accepted?.end();
      await closed;
      await new Promise((resolve) => listener.close(resolve));
    },
  };
}

/** A port nothing listened on a moment ago; whoever listens on it next must retry on EADDRINUSE. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

const isInUse = (error: unknown) => (error as { code?: string } | null)?.code === 'EADDRINUSE';

/**
 * Listens on `port` again (a server whose clients know that port), retrying while another
 * process holds it, for up to `ms`.
 */
export async function listenAgain(server: Server, port: number, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      server.listen(port, '127.0.0.1');
      await once(server, 'listening');
      return;
    } catch (error) {
      if (!isInUse(error) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
