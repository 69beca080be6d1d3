// Who is signed in to the dashboard, and the CSRF tokens of its forms.
//
// A session is a random token in an HttpOnly, SameSite=Lax cookie scoped to /dashboard (Secure
// when served over HTTPS); the store keeps only its hash. Signing in always starts a new session
// (a token planted before sign-in is never adopted). Every change is a POST that must carry a CSRF
// token: the session's own once signed in; before that (sign-in, set-password) a token signed
// with the service's secret and also set in a cookie, so that a page of another site can neither
// read nor forge it.
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { newToken, SESSION_LIFETIME_MS, tokenHash } from '../account/users.ts';
import type { Session, User, UserStore } from '../store/types.ts';

export const SESSION_COOKIE = 'ps_session';
export const FORM_COOKIE = 'ps_form';
const COOKIE_PATH = '/dashboard';

export interface SignedIn {
  user: User;
  session: Session;
  /** The hash the store keeps the session under. */
  hash: string;
}

export const sameText = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

export class Sessions {
  readonly #users: UserStore;
  readonly #formKey: Buffer;
  readonly #secure: (request: FastifyRequest) => boolean;

  /** `secret`: shared by every node (the cursor secret), so that a form made by one is accepted by another. */
  constructor(users: UserStore, secret: string, secure: (request: FastifyRequest) => boolean) {
    this.#users = users;
    this.#formKey = Buffer.from(hkdfSync('sha256', secret, 'dashboard-forms', 'form-token-v1', 32));
    this.#secure = secure;
  }

  #cookie(request: FastifyRequest, maxAgeSeconds?: number) {
    return { path: COOKIE_PATH, httpOnly: true, sameSite: 'lax' as const, secure: this.#secure(request), ...(maxAgeSeconds === undefined ? {} : { maxAge: maxAgeSeconds }) };
  }

  async current(request: FastifyRequest, now: number): Promise<SignedIn | null> {
    const token = request.cookies[SESSION_COOKIE];
    if (!token || token.length > 100) return null;
    const hash = tokenHash(token);
    const found = await this.#users.findSession(hash, now);
    return found && { ...found, hash };
  }

  /** Starts a new session for `user` and sets its cookie. */
  async start(request: FastifyRequest, reply: FastifyReply, user: User, now: number): Promise<void> {
    const token = newToken();
    await this.#users.createSession(tokenHash(token), { userId: user.id, csrf: newToken(), createdAt: new Date(now).toISOString(), expiresAt: now + SESSION_LIFETIME_MS });
    reply.setCookie(SESSION_COOKIE, token, this.#cookie(request, SESSION_LIFETIME_MS / 1000));
    reply.clearCookie(FORM_COOKIE, this.#cookie(request));
  }

  async end(request: FastifyRequest, reply: FastifyReply, signedIn: SignedIn | null): Promise<void> {
    if (signedIn) await this.#users.deleteSession(signedIn.hash);
    reply.clearCookie(SESSION_COOKIE, this.#cookie(request));
  }

  /** The CSRF token for a form shown before sign-in; sets its cookie when the browser has none. */
  formToken(request: FastifyRequest, reply: FastifyReply): string {
    const held = request.cookies[FORM_COOKIE];
    if (held && this.#validForm(held)) return held;
    const nonce = newToken();
    const token = `${nonce}.${this.#sign(nonce)}`;
    reply.setCookie(FORM_COOKIE, token, this.#cookie(request));
    return token;
  }

  /** Whether a form posted before sign-in carries the token of its cookie. */
  formTokenValid(request: FastifyRequest, posted: unknown): boolean {
    const held = request.cookies[FORM_COOKIE];
    return typeof posted === 'string' && typeof held === 'string' && this.#validForm(held) && sameText(held, posted);
  }

  #sign(nonce: string): string {
    return createHmac('sha256', this.#formKey).update(nonce).digest('base64url');
  }

  #validForm(token: string): boolean {
    const [nonce, signature] = token.split('.');
    return Boolean(nonce && signature) && sameText(this.#sign(nonce as string), signature as string);
  }
}
