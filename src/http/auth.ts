// Authentication as a Fastify plugin, declared where each route is registered: every route states
// its access in `config.access` (ACCESS below) and one onRequest hook of this plugin enforces it,
// before any body is read or any part validated — a stranger gets 401 without learning anything
// about what the request would have needed (no 400, 413 or 415 details). A route that declares no
// access stops the server at start (`onReady`), so a new route cannot forget it.
//   { key: scope }: a Bearer API key of the path's project with at least `scope`, or, without an
//     Authorization header, a dashboard operator's session cookie (every project, every scope;
//     changes need the CSRF token);
//   'operator': a signed-in dashboard operator (the dashboard's /api);
//   'metrics': `Authorization: Bearer <FOLIO_METRICS_TOKEN>` (Prometheus; without the setting the
//     route is not registered at all);
//   'public': anyone (health, the reference, the browser script and collect, signed webhooks).
// It also decorates the app with `sessions` (sign-in, cookies, CSRF, sign-in rate limit) and
// `watchAccess`, through which open event streams check again, against the store (no cache), that
// what admitted them still holds — every config.streams.recheckMs, one check per key or session
// and project however many streams share it, and before each batch they send.
// 401: missing, unknown, revoked or expired key; 403: a key that does not cover the path's project
// (a project key of another project, an admin key outside its list) or without the scope.
import fp from 'fastify-plugin';
import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyPluginAsync, FastifyPluginCallback, FastifyPluginOptions, FastifyRequest, RouteOptions } from 'fastify';
import { keyCovers, type KeyCheck, type KeyRefusal, type StoredKey } from '../admin/keys.ts';
import { ApiError, forbidden, notFound, unauthorized } from '../errors.ts';
import { SessionManager, type SessionOptions } from './session.ts';
import { sameSecret } from '../util/same-secret.ts';

export type Scope = 'read' | 'write';

/** Who may call a route; every route declares one in `config.access`. */
export type Access = 'public' | 'operator' | 'metrics' | { readonly key: Scope };

/** The declarations routes use: `config: ACCESS.read`. */
export const ACCESS = {
  public: { access: 'public' },
  operator: { access: 'operator' },
  metrics: { access: 'metrics' },
  read: { access: { key: 'read' } },
  write: { access: { key: 'write' } },
} as const satisfies Record<string, { access: Access }>;

/** What a live response (an event stream) asks of watchAccess(). */
export interface WatchOptions {
  /** Called once, from the periodic check, with the refusal the request would get now. */
  onLost(refusal: ApiError): void;
  /** What else the response relies on (e.g. its job): resolves false when that is gone. */
  stillThere?: () => Promise<boolean>;
  /** The refusal when stillThere() answers false. */
  gone?: () => ApiError;
}

export interface AccessWatch {
  /**
   * The refusal the request would get now, from a check that begins after this call — so whatever
   * the caller read before calling was read while access still held; undefined while it holds.
   */
  recheck(): Promise<ApiError | undefined>;
  /** The response ended: stop checking. */
  stop(): void;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
  interface FastifyInstance {
    sessions: SessionManager;
    /**
     * For live responses (event streams): keeps checking that the key or session that admitted
     * `request` still would, read from the store (no cache), with the project of its path.
     */
    watchAccess(request: FastifyRequest, opts: WatchOptions): AccessWatch;
    /** Every route with its declared access (after start), for the route-table test and audits. */
    routeAccess(): { method: string; url: string; access: Access | undefined }[];
  }
  interface FastifyRequest {
    apiKey?: StoredKey;
    /** performance.now() when the request arrived: reads of the store made later may be shared. */
    receivedAt?: number;
  }
}

const REASONS: Record<KeyRefusal | 'missing', [string, string]> = {
  missing: ['missing_api_key', 'Send an API key in the Authorization header: "Authorization: Bearer folio_…".'],
  foreign: ['invalid_api_key', 'The API key is not a Folio key; keys start with "folio_".'],
  // The prefix is right, so the key was most likely cut short or mangled when copied.
  malformed: ['malformed_api_key', 'The API key is malformed: a Folio key is "folio_" and then 40 letters and digits. Check that it was copied whole.'],
  unknown: ['invalid_api_key', 'The API key is not known to this server.'],
  revoked: ['revoked_api_key', 'The API key has been revoked.'],
  expired: ['expired_api_key', 'The API key has expired.'],
};

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The 401/403 for a key that may not act on this project with this scope; undefined when it may. */
function keyRefusal(check: KeyCheck, projectId: string | undefined, scope: Scope): ApiError | undefined {
  if (!check.ok) return unauthorized(...REASONS[check.reason]);
  if (projectId !== undefined && !keyCovers(check.key, projectId)) {
    return forbidden('wrong_project', 'This API key does not cover this project.');
  }
  if (scope === 'write' && check.key.scope !== 'write') {
    return forbidden('insufficient_scope', 'This API key is read-only; this request needs a key with the write scope.');
  }
  return undefined;
}

export interface AuthOptions {
  session?: Partial<SessionOptions>;
  /** How often live responses check their access again (config.streams.recheckMs). */
  recheckMs: number;
  /** The Bearer token of ACCESS.metrics routes (config.metricsToken); without one they admit no one. */
  metricsToken?: string | null;
}

/** Throws the 401 unless the request carries `Authorization: Bearer <token>`. */
function requireMetricsToken(request: FastifyRequest, token: string | null | undefined): void {
  const header = request.headers.authorization;
  const sent = header === undefined ? undefined : BEARER.exec(header)?.[1];
  if (sent === undefined) throw unauthorized('missing_metrics_token', 'Send the metrics token in the Authorization header: "Authorization: Bearer <FOLIO_METRICS_TOKEN>".');
  if (!token || !sameSecret(sent, token)) throw unauthorized('invalid_metrics_token', 'The metrics token is not right: send the value of FOLIO_METRICS_TOKEN.');
}

export const authPlugin = fp<AuthOptions>(
  async (app, { session, recheckMs, metricsToken }) => {
    const { keys, users, projects } = app;
    await app.register(cookie);
    const sessions = new SessionManager(users.sessions, session);
    app.decorate('sessions', sessions);

    /** Throws the 401/403 for a key that may not make this request; notes the key on the request. */
    const admit = (request: FastifyRequest, check: KeyCheck, scope: Scope): void => {
      const refusal = keyRefusal(check, (request.params as { projectId?: string }).projectId, scope);
      if (refusal) throw refusal;
      if (check.ok) request.apiKey = check.key;
    };

    /** A Bearer key, or without an Authorization header an operator's session (with its CSRF check). */
    const authenticate = async (request: FastifyRequest, scope: Scope): Promise<void> => {
      const header = request.headers.authorization;
      if (header === undefined) {
        const operator = await sessions.fromRequest(request);
        if (operator) return sessions.checkCsrf(request, operator.session);
        throw unauthorized(...REASONS.missing);
      }
      const token = BEARER.exec(header)?.[1];
      if (token === undefined) throw unauthorized(...REASONS.missing);
      // A key this process verified lately is answered from its cache (revocations clear it everywhere).
      admit(request, await keys.verify(token, request.receivedAt), scope);
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

    // The one enforcement, before anything is parsed.
    app.addHook('onRequest', async (request) => {
      const access = accessOf(request.routeOptions.config);
      if (access === 'public') return;
      if (access === 'operator') return void (await sessions.require(request));
      if (access === 'metrics') return requireMetricsToken(request, metricsToken);
      if (access !== undefined) return authenticate(request, access.key);
      // Only the not-found handler has no declaration (a route without one stops the start); should
      // anything else ever lack one, it is closed, not open.
      if (!request.is404) throw unauthorized(...REASONS.missing);
    });

    const watches = new AccessWatches(recheckMs, app.log, async (credential, projectId) => {
      if (credential.kind === 'key') {
        const refusal = keyRefusal(await keys.reverify(credential.keyId), projectId, credential.scope);
        if (refusal) return refusal;
      } else if (!(await users.sessions.sessionAlive(credential.sessionId))) {
        return new ApiError(401, 'session_ended', 'The dashboard session has ended (signed out, expired or its user removed); sign in again.');
      }
      if (projectId !== undefined && !(await projects.get(projectId))) return notFound(`Project "${projectId}" does not exist.`, 'project_not_found');
      return undefined;
    });
    app.decorate('watchAccess', (request: FastifyRequest, opts: WatchOptions) => watches.watch(request, opts));
    app.addHook('onClose', (_app, done) => {
      watches.stopAll();
      done();
    });
  },
  { name: 'folio-auth', fastify: '5.x', dependencies: ['keys', 'users', 'projects'] },
);

function accessOf(config: unknown): Access | undefined {
  return (config as { access?: Access } | undefined)?.access;
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

// ---------------------------------------------------------------------------- re-checking access

/** What a request was admitted with: a key (by id, with the scope its route needed) or an operator's session. */
type Credential = { kind: 'key'; keyId: string; scope: Scope } | { kind: 'session'; sessionId: string };

/** Reads a credential's state for a project from the store: the refusal the request would get now. */
type CheckCredential = (credential: Credential, projectId: string | undefined) => Promise<ApiError | undefined>;

function credentialOf(request: FastifyRequest): Credential {
  const access = accessOf(request.routeOptions.config);
  if (request.apiKey) return { kind: 'key', keyId: request.apiKey.id, scope: typeof access === 'object' ? access.key : 'read' };
  if (request.operator) return { kind: 'session', sessionId: request.operator.session.id };
  throw new Error('watchAccess() is for requests admitted by an API key or an operator session.');
}

/**
 * Runs a check so that each caller gets the answer of a check that began after it asked; callers
 * that ask while one runs share the next one (a burst of callers costs two checks, not one each).
 */
class FreshCheck<T> {
  private running: Promise<T> | undefined;
  private next: Promise<T> | undefined;
  private readonly run: () => Promise<T>;
  constructor(run: () => Promise<T>) {
    this.run = run;
  }

  get(): Promise<T> {
    if (this.next) return this.next;
    if (!this.running) return this.start();
    const after = () => this.start();
    this.next = this.running.then(after, after);
    return this.next;
  }

  private start(): Promise<T> {
    this.next = undefined;
    const p = this.run();
    this.running = p;
    const settled = () => {
      if (this.running === p) this.running = undefined;
    };
    p.then(settled, settled);
    return p;
  }
}

interface Watch {
  group: string;
  opts: WatchOptions;
  /** Lost or stopped: onLost is called at most once, and never after stop(). */
  over: boolean;
}

/** The watches that rely on one credential for one project: checked together. */
interface Group {
  check: FreshCheck<ApiError | undefined>;
  watches: Set<Watch>;
}

/** Every live response's access, checked again each round with one store read per group. */
class AccessWatches {
  private readonly groups = new Map<string, Group>();
  private timer: NodeJS.Timeout | undefined;
  private readonly recheckMs: number;
  private readonly log: { warn(obj: object, msg: string): void };
  private readonly checkCredential: CheckCredential;
  constructor(recheckMs: number, log: { warn(obj: object, msg: string): void }, checkCredential: CheckCredential) {
    this.recheckMs = recheckMs;
    this.log = log;
    this.checkCredential = checkCredential;
  }

  watch(request: FastifyRequest, opts: WatchOptions): AccessWatch {
    const credential = credentialOf(request);
    const projectId = (request.params as { projectId?: string }).projectId;
    const who = credential.kind === 'key' ? `key:${credential.keyId}:${credential.scope}` : `session:${credential.sessionId}`;
    const id = `${who}@${projectId ?? ''}`;
    let group = this.groups.get(id);
    if (!group) {
      group = { check: new FreshCheck(() => this.checkCredential(credential, projectId)), watches: new Set() };
      this.groups.set(id, group);
    }
    const watch: Watch = { group: id, opts, over: false };
    group.watches.add(watch);
    this.timer ??= setInterval(() => this.round(), this.recheckMs).unref();
    const { check } = group;
    return { recheck: () => check.get(), stop: () => this.remove(watch) };
  }

  stopAll(): void {
    for (const group of this.groups.values()) for (const watch of group.watches) watch.over = true;
    this.groups.clear();
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private remove(watch: Watch): void {
    watch.over = true;
    const group = this.groups.get(watch.group);
    if (!group?.watches.delete(watch)) return;
    if (group.watches.size > 0) return;
    this.groups.delete(watch.group);
    if (this.groups.size === 0) this.stopAll();
  }

  /** One round: each group's credential once, then what each of its watches relies on besides. */
  private round(): void {
    for (const group of this.groups.values()) {
      group.check.get().then(
        (refusal) => {
          for (const watch of [...group.watches]) {
            if (refusal) this.lose(watch, refusal);
            else this.checkRest(watch);
          }
        },
        // The store did not answer: the streams' own reads fail alike; try again next round.
        (err: unknown) => this.log.warn({ err }, 'could not check the access of live streams'),
      );
    }
  }

  private checkRest(watch: Watch): void {
    const { stillThere, gone } = watch.opts;
    if (!stillThere || !gone) return;
    stillThere().then(
      (there) => {
        if (!there) this.lose(watch, gone());
      },
      (err: unknown) => this.log.warn({ err }, 'could not check what a live stream relies on'),
    );
  }

  private lose(watch: Watch, refusal: ApiError): void {
    if (watch.over) return;
    this.remove(watch);
    watch.opts.onLost(refusal);
  }
}
