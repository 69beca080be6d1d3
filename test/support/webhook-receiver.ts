// A webhook receiver for tests, on loopback: it records every request it gets (path, the three
// Standard Webhooks headers, the body, when) and answers as `answer` says (200 by default).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  /** Epoch ms of its arrival. */
  at: number;
}

export interface Receiver {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  received: Received[];
  /** Answers a request; replace it to script the receiver. */
  answer: (request: Received, response: ServerResponse, incoming: IncomingMessage) => void;
  /** Connections it has been opened so far. */
  connections: () => number;
  /** The requests with this `webhook-id`. */
  of: (id: string) => Received[];
  close: () => Promise<void>;
}

const WEBHOOK_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'content-type', 'user-agent'];

export async function startReceiver(): Promise<Receiver> {
  let connections = 0;
  const receiver = {
    received: [] as Received[],
    answer: (_request: Received, response: ServerResponse) => {
      response.end('ok');
    },
  } as unknown as Receiver;
  const server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const headers = Object.fromEntries(WEBHOOK_HEADERS.filter((name) => incoming.headers[name] !== undefined).map((name) => [name, String(incoming.headers[name])]));
      const request = { path: incoming.url ?? '', headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      receiver.received.push(request);
      receiver.answer(request, response, incoming);
    });
  });
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.connections = () => connections;
  receiver.of = (id) => receiver.received.filter((request) => request.headers['webhook-id'] === id);
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}
