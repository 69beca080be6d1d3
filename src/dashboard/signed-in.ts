// What every signed-in page of the dashboard shares: the team a page shows (its scope), the
// tools each section of pages borrows from pages.ts (the page frame, the forms' hidden fields),
// who may do what, and the small pieces of markup the sections have in common.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKeyRecord, Stores, Team, User } from '../store/types.ts';
import { html, type Html } from './html.ts';
import type { SignedIn } from './session.ts';

export const DAY_MS = 24 * 60 * 60 * 1000;

export interface Scope {
  signedIn: SignedIn;
  user: User;
  team: Team;
  /** `?team=…` when an operator looks at another team than its own, else ''. */
  teamQuery: string;
  /** The same as a hidden form field. */
  teamField: Html;
}

/** What a section of the signed-in pages borrows of pages.ts. */
export interface PageTools {
  stores: Stores;
  now: () => number;
  /** The user's scope of the request: its team, or for an operator the team it asks for. */
  scopeOf: (request: FastifyRequest) => Promise<Scope>;
  /** Sends `body` as a page of the dashboard, `current` marked in the navigation. */
  show: (reply: FastifyReply, scope: Scope, current: string, title: string, body: Html, status?: number) => unknown;
  /** The hidden fields every form posts: the CSRF token and, for an operator, the team. */
  csrfField: (scope: Scope) => Html;
  /** The line naming the team a page shows. */
  teamLine: (scope: Scope) => Html;
}

/** The fields every form of a signed-in page posts: the session's CSRF token and, for an operator, the team. */
export const SIGNED_IN_FORM = ['csrf', 'team'] as const;

export const dayStart = (day: string): number => Date.parse(`${day}T00:00:00.000Z`);
/** A moment as `2026-11-26 22:20:21`, which wraps between the date and the time, never inside either. */
export const time = (iso: string | null): Html => (iso === null ? html`—` : html`<span class="unbroken">${iso.slice(0, 10)}</span> <span class="unbroken">${iso.slice(11, 19)}</span>`);
/** An API path that may wrap after each slash. */
export const apiPath = (path: string): Html[] => path.split('/').map((part, i) => (i === 0 ? html`${part}` : html`/<wbr />${part}`));
export const mayRevoke = (user: User, key: ApiKeyRecord): boolean => key.revokedAt === null && (user.role !== 'member' || key.createdBy === user.id);
export const mayUse = mayRevoke;
/** A secret shown once: a read-only field and a Copy button (dashboard.js). */
export const copyField = (id: string, label: string, value: string): Html =>
  html`<div class="key-output">
    <div>
      <label for="${id}">${label}</label>
      <input id="${id}" type="text" readonly value="${value}" />
    </div>
    <button type="button" data-copy="${id}">Copy</button>
  </div>`;
/** A declaration's description, its `backticked` parts as code. */
export const withCode = (text: string): Html[] => text.split('`').map((part, i) => (i % 2 === 1 ? html`<code>${part}</code>` : html`${part}`));

/** Who may set the team's spending guards (a key's daily credit limit, the low-balance alert): an owner, or an operator. */
export const mayGuard = (user: User): boolean => user.role !== 'member';

/**
 * A number of credits from a form field: a whole number from 0 to `max`, or null for none (the
 * field left empty, or `none`); undefined when it is neither, or missing.
 */
export function creditsField(raw: unknown, max: number): number | null | undefined {
  if (typeof raw !== 'string') return undefined;
  const text = raw.trim().replaceAll(',', '').replaceAll('_', '');
  if (text === '' || text.toLowerCase() === 'none') return null;
  if (!/^\d{1,13}$/.test(text)) return undefined;
  const value = Number(text);
  return value <= max ? value : undefined;
}
