// PROXIES (default 4) local CONNECT proxies on loopback, for `npm run bench:live` phase 4:
// prints {"proxies": ["http://127.0.0.1:port", …]} and serves until stdin closes or SIGTERM.
import { createServer, type IncomingMessage } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

const count = Number(process.env.PROXIES ?? '4');
const urls: string[] = [];
for (let i = 0; i < count; i++) {
  const server = createServer((_request, response) => response.writeHead(405).end());
  server.on('connect', (request: IncomingMessage, client: Socket, head: Buffer) => {
    const [host, port] = String(request.url).split(':');
    const upstream = connect({ host, port: Number(port) }, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client).pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  urls.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
}
console.log(JSON.stringify({ proxies: urls }));
process.stdin.on('data', (line) => {
  if (String(line).trim() === 'cpu') console.log(JSON.stringify({ cpuMicros: process.cpuUsage().user + process.cpuUsage().system, elu: { active: 0, idle: 1, utilization: 0 } }));
});
process.stdin.on('end', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
