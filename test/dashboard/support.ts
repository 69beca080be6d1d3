// A browser-like client of the dashboard over app.inject: it keeps cookies, reads the CSRF token
// of the last page, and posts forms.
import assert from 'node:assert/strict';
import type { OutgoingHttpHeaders } from 'node:http';
import { issuePasswordLink } from '../../src/account/users.ts';
import type { Role } from '../../src/store/types.ts';
import type { Harness } from '../api/harness.ts';

export const PASSWORD = 'correct horse battery staple';

export interface Page {
  status: number;
  body: string;
  headers: OutgoingHttpHeaders;
  location: string | undefined;
}

export class Browser {
  readonly cookies = new Map<string, string>();
  readonly h: Harness;
  readonly headers: Record<string, string>;
  /** The client's address: each browser its own unless given (sign-in attempts are limited per address). */
  readonly address: string;
  last: Page | null = null;

  constructor(h: Harness, headers: Record<string, string> = {}, address = `10.${rnd()}.${rnd()}.${rnd()}`) {
    this.h = h;
    this.headers = headers;
    this.address = address;
  }

  #remember(setCookie: string | string[] | undefined): void {
    for (const line of [setCookie ?? []].flat()) {
      const [pair] = line.split(';');
      const eq = (pair ?? '').indexOf('=');
      const name = (pair ?? '').slice(0, eq);
      const value = (pair ?? '').slice(eq + 1);
      if (/Max-Age=0/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async request(method: 'GET' | 'POST', url: string, form?: Record<string, string>): Promise<Page> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await this.h.app.inject({
      method,
      url,
      remoteAddress: this.address,
      headers: { ...this.headers, ...(cookie ? { cookie } : {}), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(form ? { payload: new URLSearchParams(form).toString() } : {}),
    });
    this.#remember(response.headers['set-cookie']);
    const page = { status: response.statusCode, body: response.body, headers: response.headers, location: response.headers.location as string | undefined };
    this.last = page;
    return page;
  }

  get(url: string): Promise<Page> {
    return this.request('GET', url);
  }

  /** Posts a form with the CSRF token of `from` (by default the last page). */
  post(url: string, fields: Record<string, string>, from: Page | null = this.last): Promise<Page> {
    return this.request('POST', url, { csrf: csrfOf(from), ...fields });
  }

  /** Opens the sign-in page (for its form token) and signs in. */
  async signIn(email: string, password = PASSWORD): Promise<Page> {
    await this.get('/dashboard/sign-in');
    const page = await this.post('/dashboard/sign-in', { email, password });
    return page;
  }
}

const rnd = () => Math.floor(Math.random() * 250) + 1;

export const csrfOf = (page: Page | null): string => /name="csrf" value="([^"]+)"/.exec(page?.body ?? '')?.[1] ?? '';

/** A user of `teamId` with a password set; returns its email. */
export async function userWithPassword(h: Harness, teamId: string, role: Role, email = `${role}-${Math.random().toString(36).slice(2, 8)}@example.com`): Promise<{ email: string; id: string }> {
  const user = await h.stores.users.createUser({ teamId, email, role });
  const link = await issuePasswordLink(h.stores.users, user.id, 'http://127.0.0.1', Date.now());
  const browser = new Browser(h);
  const form = await browser.get(link.replace('http://127.0.0.1', ''));
  assert.equal(form.status, 200, form.body);
  const done = await browser.post('/dashboard/set-password', { token: new URL(link).searchParams.get('token') ?? '', password: PASSWORD, confirm: PASSWORD });
  assert.equal(done.status, 303, done.body);
  return { email: user.email, id: user.id };
}

/** A signed-in browser of a new user of `teamId`. */
export async function signedIn(h: Harness, teamId: string, role: Role): Promise<{ browser: Browser; email: string; id: string }> {
  const user = await userWithPassword(h, teamId, role);
  const browser = new Browser(h);
  const page = await browser.signIn(user.email);
  assert.equal(page.status, 303, page.body);
  assert.equal(page.location, '/dashboard');
  return { browser, ...user };
}
