// The dashboard: operator sign-in (first-run setup, login, logout, session), the admin API it uses
// for projects and API keys under /api, and the built web app (web/dist) served at / with SPA routes.
// Jobs and analytics are not duplicated here: the dashboard calls the public API with its session.
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import helmet from '@fastify/helmet';
import { Type, type Static } from 'typebox';
import type { Services } from '../../services.ts';
import { nulPath } from '../nul.ts';
import { ApiError, badRequest, conflict, notFound } from '../../errors.ts';
import { ProjectInputError, projectView, type ProjectInput, type ProjectRow } from '../../store/projects.ts';
import { apiKeyView } from '../../store/api-keys.ts';
import { UserInputError, UserStore, userView } from '../../store/users.ts';

export const DEFAULT_WEB_ROOT = fileURLToPath(new URL('../../../web/dist/', import.meta.url));

export interface DashboardOptions {
  services: Services;
  /** Directory of the built web app; defaults to web/dist. */
  webRoot?: string;
}

// ---------------------------------------------------------------- schemas

const Credentials = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);
type Credentials = Static<typeof Credentials>;

const NullableString = (max: number) => Type.Union([Type.String({ maxLength: max }), Type.Null()]);
const CodeHost = Type.Union([Type.Literal('github'), Type.Literal('gitlab'), Type.Literal('none')]);

const projectFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  repositoryUrl: Type.String({ minLength: 1, maxLength: 2000 }),
  baseBranch: Type.String({ minLength: 1, maxLength: 200 }),
  codeHost: CodeHost,
  defaultModel: NullableString(200),
  draftPrs: Type.Boolean(),
  repoToken: NullableString(1000),
  webhookUrl: NullableString(2000),
  webhookSecret: NullableString(1000),
  siteOrigins: Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: 50 }),
  // Checked by the project store, which answers an unknown mode with one clear sentence.
  checks: Type.String({ minLength: 1, maxLength: 20, description: 'Docs checks before each push: strict, warn or off.' }),
};

/** A change names at least one field; a new project needs a name and a repository. */
const UpdateProjectBody = Type.Partial(Type.Object(projectFields), { additionalProperties: false, minProperties: 1 });
const CreateProjectBody = Type.Object(
  { ...UpdateProjectBody.properties, name: projectFields.name, repositoryUrl: projectFields.repositoryUrl },
  { additionalProperties: false },
);

const CreateKeyBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    scope: Type.Optional(Type.Union([Type.Literal('read'), Type.Literal('write')])),
    expiresInDays: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 3650 }), Type.Null()])),
  },
  { additionalProperties: false },
);
type CreateKeyBody = Static<typeof CreateKeyBody>;

/** A key that covers every project (allProjects) or the listed ones (projectIds). */
const CreateAdminKeyBody = Type.Object(
  {
    ...CreateKeyBody.properties,
    allProjects: Type.Optional(Type.Boolean()),
    projectIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 1000 })),
  },
  { additionalProperties: false },
);
type CreateAdminKeyBody = Static<typeof CreateAdminKeyBody>;

const ProjectIdParams = Type.Object({ projectId: Type.String({ minLength: 1, maxLength: 64 }) });
const KeyParams = Type.Object({ projectId: Type.String({ minLength: 1, maxLength: 64 }), keyId: Type.String({ minLength: 1, maxLength: 64 }) });

// ---------------------------------------------------------------- helpers

/** The tag to paste into every page of the docs site for browser analytics. */
export function scriptTag(baseUrl: string, projectId: string): string {
  return `<script defer src="${baseUrl}/v1/analytics/script.js" data-project="${projectId}"></script>`;
}

const baseUrlOf = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

function projectBody(request: FastifyRequest, row: ProjectRow) {
  return { ...projectView(row), scriptTag: scriptTag(baseUrlOf(request), row.id) };
}

function normalizeProjectInput<T extends Partial<ProjectInput>>(input: T): T {
  const out = { ...input };
  // Empty strings from form fields mean "none".
  for (const k of ['defaultModel', 'repoToken', 'webhookUrl', 'webhookSecret'] as const) {
    if (out[k] === '') out[k] = null;
  }
  if (out.siteOrigins) out.siteOrigins = out.siteOrigins.map((o) => o.trim().replace(/\/+$/, ''));
  return out;
}

// ---------------------------------------------------------------- static files

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * Security headers of every dashboard response (helmet): a strict Content-Security-Policy (scripts
 * only from this origin, no framing, no plugins), X-Frame-Options DENY, nosniff, no referrer.
 * `upgrade-insecure-requests` is left out: the dashboard may be served over plain HTTP on a LAN.
 */
const HELMET = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      // React and Chart.js set style attributes.
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      fontSrc: ["'self'"],
      frameAncestors: ["'none'"],
      baseUri: ["'self'"],
      formAction: ["'self'"],
      objectSrc: ["'none'"],
    },
  },
  frameguard: { action: 'deny' as const },
  referrerPolicy: { policy: 'no-referrer' as const },
  // Plain HTTP on a LAN is a supported deployment; HSTS belongs to the TLS proxy in front.
  strictTransportSecurity: false,
};

async function sendFile(request: FastifyRequest, reply: FastifyReply, root: string, relative: string, cache: string) {
  const file = path.resolve(root, relative);
  if (relative.includes('\0') || !file.startsWith(root)) throw notFound('There is no such file.', 'route_not_found');
  let info;
  try {
    info = await stat(file);
  } catch {
    info = null;
  }
  if (!info?.isFile()) {
    if (relative === 'index.html') {
      throw new ApiError(503, 'dashboard_not_built', 'The dashboard is not built; run "npm run build:web" (npm ci does it).');
    }
    throw notFound(`There is no file /${relative}.`, 'route_not_found');
  }
  const etag = `"${createHash('sha1').update(`${file}:${info.size}:${info.mtimeMs}`).digest('base64url').slice(0, 16)}"`;
  const type = CONTENT_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
  reply.header('content-type', type).header('cache-control', cache).header('etag', etag).header('x-content-type-options', 'nosniff');
  if (request.headers['if-none-match'] === etag) return reply.code(304).send();
  return reply.send(await readFile(file));
}

// ---------------------------------------------------------------- routes

/** Runs a project write, answering a ProjectInputError as 400 invalid_project. */
async function asInvalidProject<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (err instanceof ProjectInputError) throw badRequest('invalid_project', err.message, err.field ? [{ message: err.message, path: err.field }] : undefined);
    throw err;
  }
}

export const dashboardRoutes: FastifyPluginAsync<DashboardOptions> = async (app, opts) => {
  const { services } = opts;
  const { projects, keys, config } = services;
  const users = new UserStore(services.store.db);
  const { sessions, requireOperator } = app;
  // In this plugin's scope only: the API's JSON routes do not pay for headers meant for pages.
  await app.register(helmet, HELMET);
  const webRoot = path.resolve(opts.webRoot ?? DEFAULT_WEB_ROOT) + path.sep;
  const hide = { hide: true } as const;

  // No store keeps NUL in text (PostgreSQL refuses it): such bodies are refused up front.
  app.addHook('preValidation', async (request) => {
    const where = nulPath(request.body, '/body');
    if (where) throw badRequest('invalid_request', 'Text must not contain NUL characters (\\u0000).', [{ message: 'contains NUL', path: where }]);
  });


  const sessionBody = (op: { user: Parameters<typeof userView>[0]; session: { csrf_token: string } }) => ({
    user: userView(op.user),
    csrfToken: op.session.csrf_token,
    models: { default: config.models.defaultModel, allowed: [...config.models.allowed] },
  });

  const checkModel = (model: string | null | undefined) => {
    if (model && !config.models.allowed.includes(model)) {
      throw badRequest('invalid_model', `Model "${model}" is not allowed on this server; use one of: ${config.models.allowed.join(', ')}.`, [
        { message: 'model not allowed', path: '/body/defaultModel' },
      ]);
    }
  };

  const projectOr404 = async (id: string) => {
    const row = await projects.get(id);
    if (!row) throw notFound(`Project "${id}" does not exist.`, 'project_not_found');
    return row;
  };

  // ---- sign-in

  app.get('/api/setup', { schema: hide }, async () => ({ setupRequired: (await users.count()) === 0 }));

  app.post<{ Body: Credentials }>('/api/setup', { schema: { ...hide, body: Credentials } }, async (request, reply) => {
    sessions.checkSameOrigin(request);
    let user;
    try {
      user = await users.createFirstOwner(request.body);
    } catch (err) {
      if (err instanceof UserInputError) throw badRequest('invalid_user', err.message);
      throw err;
    }
    if (!user) throw conflict('already_set_up', 'Folio already has an owner; sign in instead.');
    const session = await sessions.start(request, reply, user);
    return reply.code(201).send(sessionBody({ user, session }));
  });

  app.post<{ Body: Credentials }>('/api/login', { schema: { ...hide, body: Credentials } }, async (request, reply) => {
    sessions.checkSameOrigin(request);
    const { email, password } = request.body;
    await sessions.checkRateLimit(request, email);
    const user = await users.authenticate(email, password);
    if (!user) {
      await sessions.recordFailure(request, email);
      throw new ApiError(401, 'invalid_credentials', 'The email or password is not right.');
    }
    await sessions.clearFailures(email);
    const session = await sessions.start(request, reply, user);
    return reply.send(sessionBody({ user, session }));
  });

  app.post('/api/logout', { schema: hide }, async (request, reply) => {
    await sessions.require(request);
    await sessions.end(request, reply);
    return reply.code(204).send();
  });

  app.get('/api/session', { schema: hide }, async (request) => {
    const op = await sessions.fromRequest(request);
    if (!op) throw new ApiError(401, 'not_signed_in', 'Sign in to the dashboard first.');
    return sessionBody(op);
  });

  // ---- projects

  app.get('/api/projects', { schema: hide, onRequest: requireOperator }, async (request) => ({
    projects: (await projects.list()).map((row) => projectBody(request, row)),
  }));

  app.post<{ Body: ProjectInput }>(
    '/api/projects',
    { schema: { ...hide, body: CreateProjectBody }, onRequest: requireOperator },
    async (request, reply) => {
      const input = normalizeProjectInput(request.body);
      checkModel(input.defaultModel);
      const row = await asInvalidProject(() => projects.create(input));
      return reply.code(201).send(projectBody(request, row));
    },
  );

  app.get<{ Params: { projectId: string } }>(
    '/api/projects/:projectId',
    { schema: { ...hide, params: ProjectIdParams }, onRequest: requireOperator },
    async (request) => projectBody(request, await projectOr404(request.params.projectId)),
  );

  app.patch<{ Params: { projectId: string }; Body: Partial<ProjectInput> }>(
    '/api/projects/:projectId',
    { schema: { ...hide, params: ProjectIdParams, body: UpdateProjectBody }, onRequest: requireOperator },
    async (request) => {
      await projectOr404(request.params.projectId);
      const input = normalizeProjectInput(request.body);
      checkModel(input.defaultModel);
      const row = await asInvalidProject(() => projects.update(request.params.projectId, input));
      return projectBody(request, row!);
    },
  );

  // ---- API keys

  app.get<{ Params: { projectId: string } }>(
    '/api/projects/:projectId/keys',
    { schema: { ...hide, params: ProjectIdParams }, onRequest: requireOperator },
    async (request) => {
      await projectOr404(request.params.projectId);
      // The project's own keys, then the keys that cover many projects including this one.
      return { keys: (await keys.listCovering(request.params.projectId)).map(apiKeyView) };
    },
  );

  app.post<{ Params: { projectId: string }; Body: CreateKeyBody }>(
    '/api/projects/:projectId/keys',
    { schema: { ...hide, params: ProjectIdParams, body: CreateKeyBody }, onRequest: requireOperator },
    async (request, reply) => {
      await projectOr404(request.params.projectId);
      const { name, scope, expiresInDays } = request.body;
      if (name !== undefined && name.trim() === '') throw badRequest('invalid_key', 'The key name must not be blank.');
      const created = await keys.create({
        projectId: request.params.projectId,
        name,
        scope: scope ?? 'write',
        expiresAt: expiresInDays ? Date.now() + expiresInDays * 86_400_000 : null,
      });
      reply.header('cache-control', 'no-store');
      return reply.code(201).send({ ...apiKeyView(created.row), key: created.key });
    },
  );

  app.post<{ Params: { projectId: string; keyId: string } }>(
    '/api/projects/:projectId/keys/:keyId/revoke',
    { schema: { ...hide, params: KeyParams }, onRequest: requireOperator },
    async (request) => {
      await projectOr404(request.params.projectId);
      const row = await keys.get(request.params.keyId);
      if (!row || row.project_id !== request.params.projectId) {
        throw notFound(`API key "${request.params.keyId}" does not exist in this project.`, 'key_not_found');
      }
      return apiKeyView((await keys.revoke(row.id))!);
    },
  );

  // ---- keys that cover many projects

  app.get('/api/keys', { schema: hide, onRequest: requireOperator }, async () => ({ keys: (await keys.listAll()).map(apiKeyView) }));

  app.post<{ Body: CreateAdminKeyBody }>('/api/keys', { schema: { ...hide, body: CreateAdminKeyBody }, onRequest: requireOperator }, async (request, reply) => {
    const { name, scope, expiresInDays, allProjects, projectIds } = request.body;
    if (name !== undefined && name.trim() === '') throw badRequest('invalid_key', 'The key name must not be blank.');
    if ((allProjects === true) === (projectIds !== undefined)) {
      throw badRequest('invalid_key', 'Say what the key covers: either "allProjects": true or a list of "projectIds".');
    }
    if (allProjects === false) throw badRequest('invalid_key', 'Send "allProjects": true, or leave it out and list "projectIds".');
    for (const id of projectIds ?? []) {
      if (!(await projects.get(id))) throw notFound(`Project "${id}" does not exist.`, 'project_not_found');
    }
    const created = await keys.createAdmin({
      projectIds: allProjects ? null : projectIds!,
      name,
      scope: scope ?? 'write',
      expiresAt: expiresInDays ? Date.now() + expiresInDays * 86_400_000 : null,
    });
    reply.header('cache-control', 'no-store');
    return reply.code(201).send({ ...apiKeyView(created.row), key: created.key });
  });

  app.post<{ Params: { keyId: string } }>(
    '/api/keys/:keyId/revoke',
    { schema: { ...hide, params: Type.Object({ keyId: Type.String({ minLength: 1, maxLength: 64 }) }) }, onRequest: requireOperator },
    async (request) => {
      const row = await keys.revoke(request.params.keyId);
      if (!row) throw notFound(`API key "${request.params.keyId}" does not exist.`, 'key_not_found');
      return apiKeyView(row);
    },
  );

  // ---- the web app

  const index = (request: FastifyRequest, reply: FastifyReply) => sendFile(request, reply, webRoot, 'index.html', 'no-cache');
  for (const route of ['/', '/setup', '/login', '/projects', '/projects/*']) {
    app.get(route, { schema: hide }, index);
  }
  app.get<{ Params: { '*': string } }>('/assets/*', { schema: hide }, (request, reply) =>
    sendFile(request, reply, webRoot, path.join('assets', request.params['*']), 'public, max-age=31536000, immutable'),
  );
  app.get('/favicon.svg', { schema: hide }, (request, reply) => sendFile(request, reply, webRoot, 'favicon.svg', 'public, max-age=86400'));
};
