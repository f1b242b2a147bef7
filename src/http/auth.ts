// Authentication as a Fastify plugin. It decorates the app with
//   requireKey(scope): an onRequest hook admitting a Bearer API key of the path's project with at
//     least `scope`, or, without an Authorization header, a dashboard operator's session cookie
//     (every project, every scope; changes need the CSRF token);
//   requireOperator: an onRequest hook for the dashboard's /api routes;
//   sessions: the SessionManager (sign-in, cookies, CSRF, sign-in rate limit).
// Both hooks run in onRequest, before the body is read: a stranger gets 401 without learning
// anything about what the body would have needed (no 400, 413 or 415 details).
// 401: missing, unknown, revoked or expired key; 403: a key that does not cover the path's project
// (a project key of another project, an admin key outside its list) or without the scope.
import fp from 'fastify-plugin';
import cookie from '@fastify/cookie';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { keyCovers, type ApiKeyStore, type KeyCheck, type StoredKey } from '../store/api-keys.ts';
import type { UserStore } from '../store/users.ts';
import { forbidden, unauthorized } from '../errors.ts';
import { SessionManager, type SessionOptions } from './session.ts';

export type Scope = 'read' | 'write';

declare module 'fastify' {
  interface FastifyInstance {
    sessions: SessionManager;
    /** onRequest hook: an API key of the path's project with at least `scope`, or an operator's session. */
    requireKey(scope: Scope): onRequestHookHandler;
    /** onRequest hook: a signed-in dashboard operator, with the CSRF check on changes. */
    requireOperator: onRequestHookHandler;
  }
  interface FastifyRequest {
    apiKey?: StoredKey;
    /** performance.now() when the request arrived: reads of the store made later may be shared. */
    receivedAt?: number;
  }
}

const REASONS: Record<string, [string, string]> = {
  missing: ['missing_api_key', 'Send an API key in the Authorization header: "Authorization: Bearer folio_…".'],
  malformed: ['invalid_api_key', 'The API key is not a Folio key; keys start with "folio_".'],
  unknown: ['invalid_api_key', 'The API key is not known to this server.'],
  revoked: ['revoked_api_key', 'The API key has been revoked.'],
  expired: ['expired_api_key', 'The API key has expired.'],
};

const BEARER = /^Bearer\s+(\S+)\s*$/i;

export interface AuthOptions {
  keys: ApiKeyStore;
  users: UserStore;
  session?: Partial<SessionOptions>;
}

export const authPlugin = fp<AuthOptions>(
  async (app, { keys, users, session }) => {
    await app.register(cookie);
    const sessions = new SessionManager(users, session);
    app.decorate('sessions', sessions);

    /** Throws the 401/403 for a key that may not make this request; notes the key on the request. */
    const admit = (request: FastifyRequest, check: KeyCheck, scope: Scope): void => {
      if (!check.ok) throw unauthorized(...REASONS[check.reason]);
      const projectId = (request.params as { projectId?: string }).projectId;
      if (projectId !== undefined && !keyCovers(check.key, projectId)) {
        throw forbidden('wrong_project', 'This API key does not cover this project.');
      }
      if (scope === 'write' && check.key.scope !== 'write') {
        throw forbidden('insufficient_scope', 'This API key is read-only; this request needs a key with the write scope.');
      }
      request.apiKey = check.key;
    };

    const slowPath = async (request: FastifyRequest, header: string | undefined, token: string | undefined, scope: Scope): Promise<void> => {
      if (header === undefined) {
        const operator = await sessions.fromRequest(request);
        if (operator) {
          sessions.checkCsrf(request, operator.session);
          return;
        }
      }
      if (token === undefined) throw unauthorized(...REASONS.missing);
      admit(request, await keys.verify(token, request.receivedAt), scope);
    };

    // Callback style: a key the cache already knows is checked without a promise (GET job is hot;
    // docs/benchmarks.md, "Performance shortcuts kept").
    const hooks: Record<Scope, onRequestHookHandler> = { read: keyHook('read'), write: keyHook('write') };
    function keyHook(scope: Scope): onRequestHookHandler {
      return function authenticate(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
        const header = request.headers.authorization;
        const token = header === undefined ? undefined : BEARER.exec(header)?.[1];
        const cached = token === undefined ? undefined : keys.verifyCached(token, request.receivedAt);
        if (!cached) {
          slowPath(request, header, token, scope).then(() => done(), done);
          return;
        }
        try {
          admit(request, cached, scope);
        } catch (err) {
          return done(err as Error);
        }
        done();
      };
    }
    app.decorate('requireKey', (scope: Scope) => hooks[scope]);
    app.decorate('requireOperator', async function requireOperator(request: FastifyRequest) {
      await sessions.require(request);
    });
  },
  { name: 'folio-auth', fastify: '5.x' },
);
