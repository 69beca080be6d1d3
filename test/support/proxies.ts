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


/**
 * A local SOCKS5 proxy (RFC 1928, CONNECT only; with `auth`, RFC 1929 username and password),
 * leaving from `leaveFrom` like connectProxy.
 */
export async function socksProxy(t: TestContext, leaveFrom: string, auth?: { user: string; password: string }): Promise<{ port: number; tunnels: () => number }> {
  const { createServer: createTcpServer } = await import('node:net');
  let tunnels = 0;
  const sockets = new Set<Socket>();
  const server = createTcpServer((client) => {
    sockets.add(client);
    client.on('error', () => {});
    let stage: 'greeting' | 'auth' | 'request' = 'greeting';
    let buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (stage === 'greeting') {
        if (buffer.length < 2 || buffer.length < 2 + (buffer[1] as number)) return;
        const methods = buffer.subarray(2, 2 + (buffer[1] as number));
        buffer = buffer.subarray(2 + (buffer[1] as number));
        const wanted = auth ? 0x02 : 0x00;
        if (!methods.includes(wanted)) return void client.end(Buffer.from([0x05, 0xff]));
        client.write(Buffer.from([0x05, wanted]));
        stage = auth ? 'auth' : 'request';
      }
      if (stage === 'auth') {
        if (buffer.length < 2) return;
        const userLength = buffer[1] as number;
        if (buffer.length < 3 + userLength) return;
        const passwordLength = buffer[2 + userLength] as number;
        if (buffer.length < 3 + userLength + passwordLength) return;
        const user = buffer.subarray(2, 2 + userLength).toString();
        const password = buffer.subarray(3 + userLength, 3 + userLength + passwordLength).toString();
        buffer = buffer.subarray(3 + userLength + passwordLength);
        if (user !== auth?.user || password !== auth?.password) return void client.end(Buffer.from([0x01, 0x01]));
        client.write(Buffer.from([0x01, 0x00]));
        stage = 'request';
      }
      if (stage === 'request') {
        if (buffer.length < 5) return;
        const type = buffer[3];
        const addressLength = type === 0x01 ? 4 : type === 0x03 ? 1 + (buffer[4] as number) : 16;
        if (buffer.length < 4 + addressLength + 2) return;
        const host = type === 0x01 ? [...buffer.subarray(4, 8)].join('.') : type === 0x03 ? buffer.subarray(5, 5 + (buffer[4] as number)).toString() : '::1';
        const port = buffer.readUInt16BE(4 + addressLength);
        const rest = buffer.subarray(4 + addressLength + 2);
        client.off('data', onData);
        const upstream = connect({ host, port, localAddress: leaveFrom }, () => {
          tunnels += 1;
          client.write(Buffer.from([0x05, 0x00, 0x00, 0x01, 127, 0, 0, 1, 0, 0]));
          if (rest.length) upstream.write(rest);
          upstream.pipe(client).pipe(upstream);
        });
        sockets.add(upstream);
        upstream.on('error', () => client.destroy());
      }
    };
    client.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { port: (server.address() as AddressInfo).port, tunnels: () => tunnels };
}
