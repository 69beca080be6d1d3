// A local CONNECT proxy for tests: its outgoing connections leave from a loopback address of
// its own (127.0.0.x), so an upstream can tell proxies apart as a platform tells IPs apart.
import { createServer, type IncomingMessage } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { TestContext } from 'node:test';

/** A CONNECT proxy whose outgoing connections leave from `leaveFrom`; with `auth`, it wants Basic credentials. */
export async function connectProxy(t: TestContext, leaveFrom: string, auth?: string): Promise<{ port: number; tunnels: () => number }> {
  let tunnels = 0;
  const server = createServer((_request, response) => response.writeHead(405).end());
  const sockets = new Set<Socket>();
  server.on('connect', (request: IncomingMessage, client: Socket, head: Buffer) => {
    if (auth && request.headers['proxy-authorization'] !== `Basic ${Buffer.from(auth).toString('base64')}`) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n');
      return;
    }
    const [host, port] = String(request.url).split(':');
    const upstream = connect({ host, port: Number(port), localAddress: leaveFrom }, () => {
      tunnels += 1;
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client).pipe(upstream);
    });
    sockets.add(client).add(upstream);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  t.after(() => {
    for (const socket of sockets) socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { port: (server.address() as AddressInfo).port, tunnels: () => tunnels };
}

