// The demo's webhook receiver: a tiny HTTP server on loopback, registered for the demo team (its
// earlier registrations, on ports of earlier starts, replaced), that verifies each delivery with
// the Standard Webhooks library and prints it, so that a newcomer sees a signed delivery arrive.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Stores } from '../store/types.ts';
import { newSecret, signingSecrets } from './sign.ts';

const PATH = '/demo-receiver';
/** The most a delivery's body is read here. */
const MAX_BODY = 256 * 1024;

export async function startDemoReceiver(stores: Stores, teamId: string): Promise<{ url: string; webhookId: string; close: () => Promise<void> }> {
  let webhookId = '';
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) request.destroy();
      else chunks.push(chunk);
    });
    request.on('end', async () => {
      // The secrets as they are now (a rotation keeps the old one signing for a while).
      const endpoint = await stores.webhooks.getEndpoint(teamId, webhookId).catch(() => null);
      const secrets = endpoint ? signingSecrets(endpoint, Date.now()) : [];
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [name, String(request.headers[name] ?? '')]));
      const verified = secrets.some((secret) => {
        try {
          new Webhook(secret).verify(body, headers);
          return true;
        } catch {
          return false;
        }
      });
      let type = '?';
      try {
        type = String((JSON.parse(body) as { type?: unknown }).type);
      } catch {
        // printed as it is below
      }
      console.log(`webhook received: ${type} ${headers['webhook-id']} at ${headers['webhook-timestamp']}, signature ${verified ? 'verified' : 'NOT verified'}\n  ${body.slice(0, 300)}`);
      response.statusCode = verified ? 204 : 401;
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${PATH}`;
  for (const earlier of await stores.webhooks.listEndpoints(teamId)) {
    if (earlier.url.startsWith('http://127.0.0.1:') && earlier.url.endsWith(PATH)) await stores.webhooks.deleteEndpoint(teamId, earlier.id);
  }
  const endpoint = await stores.webhooks.createEndpoint({ teamId, url, events: ['*'], description: 'The demo receiver (npm run demo)', secret: newSecret() }, 10);
  if (!endpoint) throw new Error('The demo team has 10 webhooks already: delete one to run the demo receiver');
  webhookId = endpoint.id;
  return {
    url,
    webhookId: endpoint.id,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
