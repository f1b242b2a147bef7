// Authentication as a Fastify plugin, declared where each route is registered: every route states
// its access in `config.access` (ACCESS below) and one onRequest hook of this plugin enforces it,
// before any body is read or any part validated — a stranger gets 401 without learning anything
// about what the request would have needed (no 400, 413 or 415 details). A route that declares no
// access stops the server at start (`onReady`), so a new route cannot forget it.
//   { key: scope }: a Bearer API key of the path's project with at least `scope`, or, without an
//     Authorization header, a dashboard operator's session cookie (every project, every scope;
//     changes need the CSRF token);
//   'operator': a signed-in dashboard operator (the dashboard's /api);
//   'public': anyone (health, the reference, the browser script and collect, signed webhooks).
// It also decorates the app with `sessions` (sign-in, cookies, CSRF, sign-in rate limit) and
// `recheckAccess`, which open event streams call to end when what admitted them is gone.
// 401: missing, unknown, revoked or expired key; 403: a key that does not cover the path's project
// (a project key of another project, an admin key outside its list) or without the scope.
import fp from 'fastify-plugin';
import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyPluginAsync, FastifyPluginCallback, FastifyPluginOptions, FastifyReply, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify';
import { keyCovers, type ApiKeyStore, type KeyCheck, type StoredKey } from '../store/api-keys.ts';
import type { UserStore } from '../store/users.ts';
import { forbidden, unauthorized } from '../errors.ts';
import { SessionManager, type SessionOptions } from './session.ts';

export type Scope = 'read' | 'write';

/** Who may call a route; every route declares one in `config.access`. */
export type Access = 'public' | 'operator' | { readonly key: Scope };

/** The declarations routes use: `config: ACCESS.read`. */
export const ACCESS = {
  public: { access: 'public' },
  operator: { access: 'operator' },
  read: { access: { key: 'read' } },
  write: { access: { key: 'write' } },
} as const satisfies Record<string, { access: Access }>;

/** Why an open stream's access ended (recheckAccess), as an error code and a sentence. */
export interface AccessEnded {
  code: string;
  error: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
  interface FastifyInstance {
    sessions: SessionManager;
    /**
     * For long-lived responses (event streams): null while the key or session that admitted
     * `request` still would, read from the store (no cache); otherwise why not.
     */
    recheckAccess(request: FastifyRequest): Promise<AccessEnded | null>;
    /** Every route with its declared access (after start), for the route-table test and audits. */
    routeAccess(): { method: string; url: string; access: Access | undefined }[];
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
    const requireOperator = (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void => {
      sessions.require(request).then(() => done(), done);
    };

    // Declared at registration, checked at start: routes of plugins Folio does not write (the
    // reference UI, static files) are declared by the scope that registers them (publicScope).
    const undeclared: string[] = [];
    const declared: { route: RouteOptions; where: string }[] = [];
    app.addHook('onRoute', (route) => {
      declared.push({ route, where: `${String(route.method)} ${route.url}` });
    });
    app.decorate('routeAccess', () =>
      declared.flatMap(({ route }) => (Array.isArray(route.method) ? route.method : [route.method]).map((method) => ({ method, url: route.url, access: accessOf(route.config) }))),
    );
    app.addHook('onReady', async () => {
      for (const { route, where } of declared) if (!accessOf(route.config)) undeclared.push(where);
      if (undeclared.length > 0) throw new Error(`Routes without an access declaration (config.access): ${undeclared.join(', ')}.`);
    });

    // The one enforcement, callback style (GET job is hot: docs/benchmarks.md, "Performance shortcuts kept").
    app.addHook('onRequest', function enforceAccess(request, reply, done) {
      const access = accessOf(request.routeOptions.config);
      if (access === undefined || access === 'public') return done(); // undefined: no route matched (404)
      if (access === 'operator') return requireOperator(request, reply, done);
      hooks[access.key].call(this, request, reply, done);
    });

    app.decorate('recheckAccess', async (request: FastifyRequest): Promise<AccessEnded | null> => {
      const projectId = (request.params as { projectId?: string }).projectId;
      if (request.apiKey) {
        const check = keyNow(await keys.get(request.apiKey.id));
        if (!check.ok) return { code: REASONS[check.reason][0], error: REASONS[check.reason][1] };
        if (projectId !== undefined && !keyCovers(check.key, projectId)) return { code: 'wrong_project', error: 'This API key no longer covers this project.' };
        return null;
      }
      if (request.operator) {
        const alive = await users.sessionAlive(request.operator.session.id);
        return alive ? null : { code: 'session_ended', error: 'The dashboard session has ended; sign in again.' };
      }
      return null;
    });
  },
  { name: 'folio-auth', fastify: '5.x' },
);

function accessOf(config: unknown): Access | undefined {
  return (config as { access?: Access } | undefined)?.access;
}

/** A key as it stands in the store now: gone, revoked, expired, or still good. */
function keyNow(row: StoredKey | undefined, now = Date.now()): KeyCheck {
  if (!row) return { ok: false, reason: 'unknown' };
  if (row.revoked_at !== null) return { ok: false, reason: 'revoked' };
  if (row.expires_at !== null && row.expires_at <= now) return { ok: false, reason: 'expired' };
  return { ok: true, key: row };
}

/**
 * Declares every route registered inside `plugin` public: for plugins Folio does not write (the
 * reference UI, static files), whose routes cannot carry `config.access` themselves.
 */
export function publicScope<O extends FastifyPluginOptions>(plugin: FastifyPluginCallback<O> | FastifyPluginAsync<O>): FastifyPluginAsync<O> {
  return async (scope, opts) => {
    publicByDefault(scope);
    await scope.register(plugin as FastifyPluginAsync<O>, opts);
  };
}

/** Routes registered in `scope` from now on that declare no access are public (e.g. CORS preflights). */
export function publicByDefault(scope: FastifyInstance): void {
  scope.addHook('onRoute', (route) => {
    route.config = { ...route.config, access: route.config?.access ?? 'public' };
  });
}
