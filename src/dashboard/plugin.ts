// The account holder's dashboard at /dashboard: server-rendered pages that work without
// script, on either store set. This file holds what every page shares: security headers, the
// stylesheet and script, sessions, CSRF, the sign-in and set-password pages, and errors as pages.
// The signed-in pages are in pages.ts; what the dashboard is given, in options.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { passwordProblem, hashPassword, tokenHash, verifyPassword, PASSWORD_MIN } from '../account/users.ts';
import type { ValidationDetail } from '../endpoints/types.ts';
import { addressKey } from '../server/connections.ts';
import { unknownName } from '../server/query.ts';
import { emailOrNull } from '../store/rules.ts';
import { StoreUnavailableError, type User } from '../store/types.ts';
import { html, notice, page, PageError, sendPage, type Html } from './html.ts';
import type { DashboardOptions } from './options.ts';
import { signedInPages } from './pages.ts';
import { sameText, Sessions, type SignedIn } from './session.ts';
import { SIGNED_IN_FORM } from './signed-in.ts';

/**
 * Sign-in attempts per client address (failed or not), and failed ones per account, in
 * SIGN_IN_WINDOW_MS. An account past its failures refuses the addresses that failed at it;
 * an address that has not still gets its attempt (and one failure of its own).
 */
export const SIGN_IN_LIMITS = { address: 20, account: 10 } as const;
export const SIGN_IN_WINDOW_MS = 15 * 60 * 1000;
/** Form bodies are small: a password, a key name, a try-it query. */
const BODY_LIMIT = 16 * 1024;

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

const ASSETS: Record<string, { type: string; body: Buffer }> = Object.fromEntries(
  [
    ['dashboard.css', 'text/css; charset=utf-8'],
    ['dashboard.js', 'text/javascript; charset=utf-8'],
    ['favicon.svg', 'image/svg+xml'],
  ].map(([name, type]) => [name, { type: type as string, body: readFileSync(join(import.meta.dirname, 'assets', name as string)) }]),
);

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in user of a dashboard page, when there is one. */
    signedIn: SignedIn | null;
  }
  interface FastifyContextConfig {
    /** The fields a dashboard form posts, every POST route's; `q.*` stands for every name that begins `q.`. */
    form?: readonly string[];
  }
}

/** The fields of `body` that its route's form does not have, each a problem naming the closest one. */
function unknownFields(body: Record<string, unknown>, form: readonly string[]): ValidationDetail[] {
  const names = form.filter((field) => !field.endsWith('*'));
  const prefixes = form.filter((field) => field.endsWith('*')).map((field) => field.slice(0, -1));
  return Object.keys(body)
    .filter((name) => !names.includes(name) && !prefixes.some((prefix) => name.startsWith(prefix)))
    .map((name) => unknownName(name, names, 'field'));
}

const TITLES: Record<number, string> = { 400: 'Bad request', 403: 'Not allowed', 404: 'Not found', 422: 'Not this form', 429: 'Too many attempts', 503: 'Unavailable' };

export const dashboardPlugin: FastifyPluginAsync<DashboardOptions> = async (app, options) => {
  const { stores, now } = options;
  const https = options.publicBaseUrl?.startsWith('https:') ?? false;
  const sessions = new Sessions(stores.users, options.secret, (request) => https || request.protocol === 'https');

  // Pages, not API: none of them is in the OpenAPI document; and whatever a body's type, it is
  // small. Every form says which fields it posts.
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
    route.bodyLimit = BODY_LIMIT;
    if ([route.method].flat().includes('POST') && route.config?.form === undefined) throw new Error(`POST ${route.url} declares no form fields (config.form)`);
  });
  await app.register(cookie);
  await app.register(formbody, { bodyLimit: BODY_LIMIT });
  app.decorateRequest('signedIn', null);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('content-security-policy', CSP);
    reply.header('referrer-policy', 'no-referrer');
    reply.header('x-frame-options', 'DENY');
    reply.header('cache-control', 'no-store');
    // The assets need no session: no store read for them.
    if (!request.url.startsWith('/dashboard/assets/')) request.signedIn = await sessions.current(request, now());
  });

  // Every change is a POST with a CSRF token: the session's, or (before sign-in) the form cookie's.
  app.addHook('preHandler', async (request) => {
    if (request.method !== 'POST') return;
    const posted = (request.body as Record<string, unknown> | undefined)?.csrf;
    const valid = request.signedIn
      ? typeof posted === 'string' && sameText(posted, request.signedIn.session.csrf)
      : sessions.formTokenValid(request, posted);
    if (!valid) throw new PageError(403, 'This form has expired or did not come from this dashboard. Reload the page and try again.');
    // A field the form does not have is refused, as the API refuses an unknown parameter.
    const unknown = unknownFields((request.body as Record<string, unknown> | undefined) ?? {}, request.routeOptions.config.form ?? []);
    if (unknown.length > 0) throw new PageError(422, `This form was sent with fields it does not have. ${unknown.map((detail) => `${detail.path}: ${detail.message}`).join(' ')}`);
  });

  app.setErrorHandler((error, request, reply) => {
    let status = 500;
    let message = 'Something went wrong on our side; it has been logged. Try again.';
    if (error instanceof PageError) ({ status, message } = error);
    else if (error instanceof StoreUnavailableError) {
      status = 503;
      message = 'The service is temporarily unavailable; try again in a few seconds.';
      reply.header('retry-after', '5');
    } else if (typeof (error as { statusCode?: number }).statusCode === 'number' && ((error as { statusCode: number }).statusCode ?? 500) < 500) {
      status = 400;
      message = 'The request could not be read.';
    } else request.log.error({ err: error }, 'dashboard error');
    return sendPage(reply, status, page({ title: TITLES[status] ?? 'Error', body: html`${notice('error', message)}<p><a href="/dashboard">Back to the dashboard</a></p>` }));
  });
  app.setNotFoundHandler((request, reply) => {
    // A page asked with a method it does not take is 405 naming the ones it does, as on the API.
    const allowed = app.allowedMethods(request.url);
    if (allowed && !allowed.includes(request.method)) {
      reply.header('allow', allowed.join(', '));
      return sendPage(reply, 405, page({ title: 'Not allowed', body: html`${notice('error', `This page takes ${allowed.join(' or ')} only.`)}<p><a href="/dashboard">Back to the dashboard</a></p>` }));
    }
    return sendPage(reply, 404, page({ title: 'Not found', body: html`${notice('error', 'There is no such page.')}<p><a href="/dashboard">Back to the dashboard</a></p>` }));
  });

  for (const [name, asset] of Object.entries(ASSETS)) {
    app.get(`/assets/${name}`, (_request, reply) => reply.header('content-type', asset.type).header('cache-control', 'public, max-age=300').send(asset.body));
  }

  // ---- sign-in
  const signInPage = (request: FastifyRequest, reply: FastifyReply, status: number, message: Html | null, email = '') =>
    sendPage(
      reply,
      status,
      page({
        title: 'Sign in',
        body: html`${message}
          <form method="post" action="/dashboard/sign-in">
            <input type="hidden" name="csrf" value="${sessions.formToken(request, reply)}" />
            <label for="email">Email</label>
            <input id="email" name="email" type="email" autocomplete="username" required value="${email}" />
            <label for="password">Password</label>
            <input id="password" name="password" type="password" autocomplete="current-password" required />
            <button type="submit">Sign in</button>
          </form>
          <p class="hint">No password yet, or forgotten it? Your operator sends you a link to set one.</p>`,
      }),
    );

  app.get('/sign-in', async (request, reply) => {
    if (request.signedIn) return reply.redirect('/dashboard', 303);
    const query = request.query as Record<string, string | undefined>;
    const message = query.done === 'password' ? notice('success', 'Your password is set. Sign in with it.') : query.done === 'out' ? notice('success', 'You are signed out.') : null;
    return signInPage(request, reply, 200, message);
  });

  /**
   * The enabled user with this email whose password this is. An email may have an account in
   * several teams, each with its own password: all are checked at once (an email with none is
   * checked against a made-up hash, so that it takes as long), and the oldest that matches wins.
   */
  async function signInAs(account: string, password: string): Promise<User | null> {
    const candidates = (await stores.users.findUsersByEmail(account)).filter(({ user, passwordHash }) => !user.disabledAt && passwordHash !== null);
    const verdicts = await Promise.all(candidates.length === 0 ? [verifyPassword(password, null)] : candidates.map(({ passwordHash }) => verifyPassword(password, passwordHash)));
    return candidates.find((_candidate, i) => verdicts[i])?.user ?? null;
  }

  app.post('/sign-in', { config: { form: ['csrf', 'email', 'password'] } }, async (request, reply) => {
    const body = request.body as Record<string, unknown>;
    const email = typeof body.email === 'string' ? body.email.slice(0, 254) : '';
    const password = typeof body.password === 'string' ? body.password : '';
    const account = emailOrNull(email) ?? email.trim().toLowerCase();
    const address = addressKey(request.ip);
    const at = now();
    const tooMany = (wait: number) => {
      reply.header('retry-after', String(wait));
      return signInPage(request, reply, 429, notice('error', `Too many sign-in attempts. Try again in ${Math.ceil(wait / 60)} minute${wait > 60 ? 's' : ''}.`), email);
    };
    const byAddress = await stores.limiter.hit(`signin:addr:${address}`, SIGN_IN_LIMITS.address, SIGN_IN_WINDOW_MS, at);
    if (!byAddress.allowed) return tooMany(Math.max(byAddress.resetSeconds, 1));
    // Failures are counted per account and per account and address, under digests: a key's
    // size does not follow what the client typed.
    const failures = `signin:fail:${tokenHash(account)}`;
    const failuresHere = `${failures}:${address}`;
    const [byAccount, fromHere] = await Promise.all([
      stores.limiter.peek(failures, SIGN_IN_LIMITS.account, SIGN_IN_WINDOW_MS, at),
      stores.limiter.peek(failuresHere, 1, SIGN_IN_WINDOW_MS, at),
    ]);
    // Past the account's failures, only an address that has not failed at it is heard: its
    // owner gets in, and an attacker gets one guess per address and window.
    if (!byAccount.allowed && !fromHere.allowed) return tooMany(Math.max(Math.min(byAccount.resetSeconds, fromHere.resetSeconds), 1));
    const found = await signInAs(account, password);
    if (!found) {
      await Promise.all([
        stores.limiter.hit(failures, SIGN_IN_LIMITS.account, SIGN_IN_WINDOW_MS, at),
        stores.limiter.hit(failuresHere, SIGN_IN_LIMITS.address, SIGN_IN_WINDOW_MS, at),
      ]);
      return signInPage(request, reply, 401, notice('error', 'The email or password is wrong.'), email);
    }
    await sessions.start(request, reply, found, at);
    return reply.redirect('/dashboard', 303);
  });

  // ---- set-password (from the one-time link the operator gave)
  const setPasswordPage = (request: FastifyRequest, reply: FastifyReply, status: number, token: string, message: Html | null) =>
    sendPage(
      reply,
      status,
      page({
        title: 'Set your password',
        body: html`${message}
          <form method="post" action="/dashboard/set-password">
            <input type="hidden" name="csrf" value="${sessions.formToken(request, reply)}" />
            <input type="hidden" name="token" value="${token}" />
            <label for="new-password">New password</label>
            <input id="new-password" name="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN}" aria-describedby="password-rule" />
            <p class="hint" id="password-rule">At least ${PASSWORD_MIN} characters.</p>
            <label for="confirm-password">Confirm password</label>
            <input id="confirm-password" name="confirm" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN}" />
            <button type="submit">Set password</button>
          </form>`,
      }),
    );
  const deadLink = () =>
    new PageError(400, 'This link has expired or has already been used. Ask your operator for a new one (links work once, for 24 hours).');

  app.get('/set-password', async (request, reply) => {
    const token = (request.query as Record<string, unknown>).token;
    if (typeof token !== 'string' || token.length > 100 || !(await stores.users.passwordLinkValid(tokenHash(token), now()))) throw deadLink();
    return setPasswordPage(request, reply, 200, token, null);
  });

  app.post('/set-password', { config: { form: ['csrf', 'token', 'password', 'confirm'] } }, async (request, reply) => {
    const body = request.body as Record<string, unknown>;
    const token = typeof body.token === 'string' && body.token.length <= 100 ? body.token : '';
    const password = typeof body.password === 'string' ? body.password : '';
    if (!token || !(await stores.users.passwordLinkValid(tokenHash(token), now()))) throw deadLink();
    const problem = passwordProblem(password) ?? (password === body.confirm ? null : 'The two passwords differ.');
    if (problem) return setPasswordPage(request, reply, 422, token, notice('error', problem));
    if (!(await stores.users.usePasswordLink(tokenHash(token), await hashPassword(password), now()))) throw deadLink();
    // Whoever was signed in on this browser is signed out: the link is for its own user.
    await sessions.end(request, reply, request.signedIn);
    return reply.redirect('/dashboard/sign-in?done=password', 303);
  });

  app.post('/sign-out', { config: { form: ['csrf'] } }, async (request, reply) => {
    await sessions.end(request, reply, request.signedIn);
    return reply.redirect('/dashboard/sign-in?done=out', 303);
  });

  app.post('/sign-out-everywhere', { config: { form: SIGNED_IN_FORM } }, async (request, reply) => {
    if (request.signedIn) await stores.users.deleteUserSessions(request.signedIn.user.id);
    await sessions.end(request, reply, request.signedIn);
    return reply.redirect('/dashboard/sign-in?done=out', 303);
  });

  // Under this plugin's prefix already (`options` holds it too).
  await app.register(signedInPages, { ...options, prefix: '' });
};
