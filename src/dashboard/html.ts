// HTML for the dashboard's server-rendered pages: a tagged template that escapes every value it
// is given unless it is HTML already (made by `html` itself), the page layout, and errors shown
// as pages.
import type { FastifyReply } from 'fastify';
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** A piece of HTML that is safe to insert as it is. */
export class Html {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

const render = (value: Value): string => {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
};

/** `html\`<p>${text}</p>\``: every interpolated value escaped, arrays joined, null and false left out. */
export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

export interface Layout {
  title: string;
  /** Signed in: the navigation, with this page marked current. */
  nav?: { current: string; csrf: string; email: string; teamQuery: string };
  body: Html;
}

const NAV = [
  ['Overview', '/dashboard'],
  ['Keys', '/dashboard/keys'],
  ['Usage', '/dashboard/usage'],
  ['Ledger', '/dashboard/ledger'],
  ['Try it', '/dashboard/try'],
] as const;

export function page({ title, nav, body }: Layout): string {
  const header = nav
    ? html`<header class="top">
        <nav aria-label="Dashboard">
          <ul>
            ${NAV.map(([name, href]) => html`<li><a href="${href}${nav.teamQuery}" ${nav.current === name ? html`aria-current="page"` : ''}>${name}</a></li>`)}
          </ul>
        </nav>
        <div class="who">
          <span>${nav.email}</span>
          <form method="post" action="/dashboard/sign-out">
            <input type="hidden" name="csrf" value="${nav.csrf}" />
            <button type="submit">Sign out</button>
          </form>
        </div>
      </header>`
    : '';
  return `<!doctype html>${html`<html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>${title} · Page Scrape dashboard</title>
      <link rel="icon" href="/dashboard/assets/favicon.svg" type="image/svg+xml" />
      <link rel="stylesheet" href="/dashboard/assets/dashboard.css" />
      <script src="/dashboard/assets/dashboard.js" defer></script>
    </head>
    <body>
      ${header}
      <main id="main">
        <h1>${title}</h1>
        ${body}
      </main>
    </body>
  </html>`}`;
}

/** A message box: `role="alert"` for errors, `role="status"` for news. */
export const notice = (kind: 'error' | 'success', text: string | Html): Html =>
  html`<p class="notice ${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${text}</p>`;

/** An error shown as a page, with its status. */
export class PageError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export const sendPage = (reply: FastifyReply, status: number, content: string): FastifyReply =>
  reply.code(status).header('content-type', 'text/html; charset=utf-8').send(content);

