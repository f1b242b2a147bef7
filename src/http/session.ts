// Operator sessions for the dashboard: an httpOnly cookie (@fastify/cookie) holding a random token (stored hashed),
// SameSite=Lax, Secure when the request came over HTTPS (behind a proxy: set FOLIO_TRUST_PROXY), a synchronizer CSRF
// token required in X-CSRF-Token on every state-changing request, and a sign-in rate limit.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OperatorView, SessionRecords, SessionView, UserView } from '../admin/users.ts';
import { ApiError, forbidden, tooManyRequests } from '../errors.ts';
import { sameSecret } from '../util/same-secret.ts';

export const SESSION_COOKIE = 'folio_session';
export const CSRF_HEADER = 'x-csrf-token';

export interface SessionOptions {
  /** Sliding lifetime of a session. */
  ttlMs: number;
  /** Failed sign-ins allowed per email, and per client IP, within the window. */
  maxFailuresPerEmail: number;
  maxFailuresPerIp: number;
  failureWindowMs: number;
}

export const DEFAULT_SESSION_OPTIONS: SessionOptions = {
  ttlMs: 7 * 24 * 3_600_000,
  maxFailuresPerEmail: 5,
  maxFailuresPerIp: 20,
  failureWindowMs: 15 * 60_000,
};

export type Operator = OperatorView;

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the request is authenticated by an operator's session cookie. */
    operator?: Operator;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export class SessionManager {
  readonly users: SessionRecords;
  readonly options: SessionOptions;
  constructor(users: SessionRecords, options: Partial<SessionOptions> = {}) {
    this.users = users;
    this.options = { ...DEFAULT_SESSION_OPTIONS, ...options };
  }

  /** The operator of the request's session cookie, or undefined (no cookie, unknown, expired). Cached per request. */
  async fromRequest(request: FastifyRequest): Promise<Operator | undefined> {
    if (request.operator) return request.operator;
    const token = request.cookies[SESSION_COOKIE];
    if (!token) return undefined;
    const found = await this.users.findSession(token, this.options.ttlMs);
    if (!found) return undefined;
    request.operator = found;
    return found;
  }

  /** Throws 403 unless a state-changing request carries the session's CSRF token. */
  checkCsrf(request: FastifyRequest, session: SessionView): void {
    if (SAFE_METHODS.has(request.method)) return;
    const sent = request.headers[CSRF_HEADER];
    if (typeof sent !== 'string' || sent === '') {
      throw forbidden('csrf_token_missing', 'Send the X-CSRF-Token header of your session with every change (reload the dashboard to get one).');
    }
    if (!sameSecret(sent, session.csrfToken)) {
      throw forbidden('csrf_token_invalid', 'The X-CSRF-Token header does not match your session; reload the dashboard and try again.');
    }
  }

  /** Refuses sign-in and setup requests posted from another site (login CSRF). */
  checkSameOrigin(request: FastifyRequest): void {
    const origin = request.headers.origin;
    if (origin === undefined || origin === '') return;
    let host: string | null = null;
    try {
      host = new URL(origin).host;
    } catch {}
    if (host === null || host !== request.host) {
      throw forbidden('cross_origin_request', 'This request must come from the dashboard itself, not from another site.');
    }
  }

  /** Signs the user in: a new session, its cookie on the reply. */
  async start(request: FastifyRequest, reply: FastifyReply, user: UserView): Promise<SessionView> {
    // A sign-in always gets a fresh session; one the browser already had is ended (no fixation).
    const previous = await this.fromRequest(request);
    if (previous) await this.users.deleteSession(previous.session.id);
    const { token, session } = await this.users.createSession(user.id, this.options.ttlMs);
    this.setCookie(request, reply, token, Math.floor(this.options.ttlMs / 1000));
    request.operator = { user, session };
    void this.users.pruneSessions().catch(() => {});
    return session;
  }

  async end(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const op = await this.fromRequest(request);
    if (op) await this.users.deleteSession(op.session.id);
    this.setCookie(request, reply, '', 0);
    request.operator = undefined;
  }

  private setCookie(request: FastifyRequest, reply: FastifyReply, value: string, maxAgeSeconds: number): void {
    reply.setCookie(SESSION_COOKIE, value, { path: '/', httpOnly: true, sameSite: 'lax', maxAge: maxAgeSeconds, secure: request.protocol === 'https' });
  }

  private buckets(request: FastifyRequest, email: string): string[] {
    return [`email:${email.trim().toLowerCase()}`, `ip:${request.ip}`];
  }

  /** Throws 429 when this email or this client has failed to sign in too often recently. */
  async checkRateLimit(request: FastifyRequest, email: string): Promise<void> {
    const now = Date.now();
    const [emailBucket, ipBucket] = this.buckets(request, email);
    const limits: [string, number][] = [
      [emailBucket, this.options.maxFailuresPerEmail],
      [ipBucket, this.options.maxFailuresPerIp],
    ];
    for (const [bucket, limit] of limits) {
      const { count, oldestAt } = await this.users.failures(bucket, this.options.failureWindowMs, now);
      if (count >= limit) {
        const resetSeconds = Math.ceil(((oldestAt ?? now) + this.options.failureWindowMs - now) / 1000);
        throw tooManyRequests('Too many failed sign-ins; wait a few minutes and try again.', { limit, remaining: 0, resetSeconds });
      }
    }
  }

  async recordFailure(request: FastifyRequest, email: string): Promise<void> {
    await this.users.recordFailure(this.buckets(request, email));
    void this.users.pruneFailures(this.options.failureWindowMs).catch(() => {});
  }

  async clearFailures(email: string): Promise<void> {
    await this.users.clearFailures(`email:${email.trim().toLowerCase()}`);
  }

  /** For /api routes: the signed-in operator (401 otherwise), with the CSRF check on changes. */
  async require(request: FastifyRequest): Promise<Operator> {
    const op = await this.fromRequest(request);
    if (!op) throw new ApiError(401, 'not_signed_in', 'Sign in to the dashboard first.');
    this.checkCsrf(request, op.session);
    return op;
  }
}
