// What the dashboard is given by the app that serves it (app.ts): the stores, the endpoints and
// the means to run a request as a key, shared by the sign-in pages (plugin.ts) and the signed-in
// ones (pages.ts).
import type { EndpointDeclaration } from '../endpoints/types.ts';
import type { Stores } from '../store/types.ts';
import type { WebhookSettings } from './webhooks.ts';

export interface DashboardOptions {
  stores: Stores;
  endpoints: readonly EndpointDeclaration[];
  /** Shared by every node: signs the forms shown before sign-in. */
  secret: string;
  now: () => number;
  /** Runs an API request in-process as the key `keyId` (the try-it panel). */
  callAs: (keyId: string, url: string) => Promise<{ status: number; body: string }>;
  /** Where set-password links point: PUBLIC_BASE_URL, else the address the service listens on. */
  baseUrl: () => string;
  /** PUBLIC_BASE_URL: cookies are Secure when it is https, or when the request came over HTTPS. */
  publicBaseUrl?: string | undefined;
  /** The webhooks' address guard and dispatcher, as the API's routes have them. */
  webhooks?: WebhookSettings;
}
