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

export type Value = Html | string | number | boolean | null | undefined | readonly Value[];

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
  /** A warning shown above the title (the team's balance is low). */
  banner?: Html | null;
  body: Html;
}

const NAV = [
  ['Overview', '/dashboard'],
  ['Keys', '/dashboard/keys'],
  ['Usage', '/dashboard/usage'],
  ['Ledger', '/dashboard/ledger'],
  ['Webhooks', '/dashboard/webhooks'],
  ['Monitors', '/dashboard/monitors'],
  ['Jobs', '/dashboard/jobs'],
  ['Try it', '/dashboard/try'],
] as const;

export function page({ title, nav, banner, body }: Layout): string {
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
        ${banner}
        <h1>${title}</h1>
        ${body}
      </main>
    </body>
  </html>`}`;
}

export interface Column {
  label: string;
  /** A number: aligned right. */
  num?: boolean;
  /** Identifiers and names (keys, addresses, paths, ids), which may break anywhere to fit. */
  long?: boolean;
}

/**
 * A table in a box it fits: its cells wrap (names and identifiers anywhere), so that any number
 * of columns fits the page's width; on a narrow screen each row is a card of "column: value"
 * lines (dashboard.css). `rows` holds one cell per column.
 */
export function table(columns: readonly Column[], rows: readonly (readonly Value[])[], empty: string): Html {
  const classes = (column: Column) => {
    const names = [column.num ? 'num' : '', column.long ? 'long' : ''].filter(Boolean).join(' ');
    return names ? html` class="${names}"` : '';
  };
  return html`<div class="table-wrap">
    <table>
      <thead><tr>${columns.map((column) => html`<th scope="col"${classes(column)}>${column.label}</th>`)}</tr></thead>
      <tbody>
        ${rows.length === 0 ? html`<tr><td colspan="${columns.length}">${empty}</td></tr>` : ''}
        ${rows.map((cells) => html`<tr>${columns.map((column, i) => html`<td data-label="${column.label}"${classes(column)}>${cells[i] ?? ''}</td>`)}</tr>`)}
      </tbody>
    </table>
  </div>`;
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

