// The dashboard's admin API under /api: operator sign-in (first-run setup, login, logout, session),
// projects and API keys. Jobs and analytics are not duplicated here: the dashboard calls the public
// API with its session. Schemas in src/contracts/dashboard.ts; the web app's files are web-app.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.ts';
import { nulPath } from '../nul.ts';
import { ApiError, badRequest, conflict, notFound } from '../../errors.ts';
import { errorResponses } from '../../contracts/common.ts';
import {
  ApiKey,
  ApiKeyList,
  CreateAdminKeyBody,
  CreatedKey,
  CreateKeyBody,
  CreateProjectBody,
  Credentials,
  DashboardProject,
  KeyParams,
  ProjectIdParams,
  ProjectKeyParams,
  ProjectList,
  Session,
  SetupState,
  UpdateProjectBody,
  type ChecksMode,
} from '../../contracts/dashboard.ts';
import { ProjectInputError, projectView, type ProjectRow } from '../../store/projects.ts';
import { apiKeyView, type ApiKeyRow, type StoredKey } from '../../store/api-keys.ts';
import { UserInputError, UserStore, userView } from '../../store/users.ts';
import { ACCESS } from '../auth.ts';

/** The tag to paste into every page of the docs site for browser analytics. */
export function scriptTag(baseUrl: string, projectId: string): string {
  return `<script defer src="${baseUrl}/v1/analytics/script.js" data-project="${projectId}"></script>`;
}

const baseUrlOf = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

function projectBody(request: FastifyRequest, row: ProjectRow): DashboardProject {
  return { ...projectView(row), scriptTag: scriptTag(baseUrlOf(request), row.id) };
}

/**
 * A project body as the store's input: an empty string of an optional field (a cleared form field)
 * means "none", origins lose a trailing slash. `checks` is checked by the store, with its sentence.
 */
function projectInput<T extends UpdateProjectBody>(body: T): T & { checks?: ChecksMode } {
  const out = { ...body };
  for (const k of ['defaultModel', 'repoToken', 'webhookUrl', 'webhookSecret'] as const) {
    if (out[k] === '') out[k] = null;
  }
  if (out.siteOrigins) out.siteOrigins = out.siteOrigins.map((o) => o.trim().replace(/\/+$/, ''));
  return out as T & { checks?: ChecksMode };
}

/** Runs a project write, answering a ProjectInputError as 400 invalid_project naming the field. */
async function asInvalidProject<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (err instanceof ProjectInputError) throw badRequest('invalid_project', err.message, err.field ? [{ message: err.message, path: err.field }] : undefined);
    throw err;
  }
}

/** Name, scope and expiry of a new key of either kind. */
function keySettings(body: { name?: string; scope?: 'read' | 'write'; expiresInDays?: number | null }) {
  if (body.name !== undefined && body.name.trim() === '') throw badRequest('invalid_key', 'The key name must not be blank.');
  return { name: body.name, scope: body.scope ?? 'write', expiresAt: body.expiresInDays ? Date.now() + body.expiresInDays * 86_400_000 : null };
}

/** A new key: the one answer that holds the key itself, never cached. */
function sendNewKey(reply: FastifyReply, created: { key: string; row: StoredKey | ApiKeyRow }) {
  reply.header('cache-control', 'no-store');
  return reply.code(201).send({ ...apiKeyView(created.row), key: created.key });
}

export const dashboardRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { projects, keys, config } = services;
  const users = new UserStore(services.store.db);
  const { sessions } = app;
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

  app.get('/api/setup', { schema: { ...hide, response: { 200: SetupState } }, config: ACCESS.public }, async () => ({ setupRequired: (await users.count()) === 0 }));

  app.post('/api/setup', { schema: { ...hide, body: Credentials, response: { 201: Session, ...errorResponses(400, 403, 409) } }, config: ACCESS.public }, async (request, reply) => {
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

  app.post('/api/login', { schema: { ...hide, body: Credentials, response: { 200: Session, ...errorResponses(400, 401, 403, 429) } }, config: ACCESS.public }, async (request, reply) => {
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

  // The session is checked in onRequest like every operator route: a stranger's body is never parsed.
  app.post('/api/logout', { schema: hide, config: ACCESS.operator }, async (request, reply) => {
    await sessions.end(request, reply);
    return reply.code(204).send();
  });

  app.get('/api/session', { schema: { ...hide, response: { 200: Session, ...errorResponses(401) } }, config: ACCESS.public }, async (request) => {
    const op = await sessions.fromRequest(request);
    if (!op) throw new ApiError(401, 'not_signed_in', 'Sign in to the dashboard first.');
    return sessionBody(op);
  });

  // ---- projects

  app.get('/api/projects', { schema: { ...hide, response: { 200: ProjectList } }, config: ACCESS.operator }, async (request) => ({
    projects: (await projects.list()).map((row) => projectBody(request, row)),
  }));

  app.post(
    '/api/projects',
    { schema: { ...hide, body: CreateProjectBody, response: { 201: DashboardProject, ...errorResponses(400, 401, 403) } }, config: ACCESS.operator },
    async (request, reply) => {
      const input = projectInput(request.body);
      checkModel(input.defaultModel);
      const row = await asInvalidProject(() => projects.create(input));
      return reply.code(201).send(projectBody(request, row));
    },
  );

  app.get(
    '/api/projects/:projectId',
    { schema: { ...hide, params: ProjectIdParams, response: { 200: DashboardProject, ...errorResponses(401, 404) } }, config: ACCESS.operator },
    async (request) => projectBody(request, await projectOr404(request.params.projectId)),
  );

  app.patch(
    '/api/projects/:projectId',
    { schema: { ...hide, params: ProjectIdParams, body: UpdateProjectBody, response: { 200: DashboardProject, ...errorResponses(400, 401, 403, 404) } }, config: ACCESS.operator },
    async (request) => {
      await projectOr404(request.params.projectId);
      const input = projectInput(request.body);
      checkModel(input.defaultModel);
      const row = await asInvalidProject(() => projects.update(request.params.projectId, input));
      return projectBody(request, row!);
    },
  );

  // ---- API keys

  app.get(
    '/api/projects/:projectId/keys',
    { schema: { ...hide, params: ProjectIdParams, response: { 200: ApiKeyList, ...errorResponses(401, 404) } }, config: ACCESS.operator },
    async (request) => {
      await projectOr404(request.params.projectId);
      // The project's own keys, then the keys that cover many projects including this one.
      return { keys: (await keys.listCovering(request.params.projectId)).map(apiKeyView) };
    },
  );

  app.post(
    '/api/projects/:projectId/keys',
    { schema: { ...hide, params: ProjectIdParams, body: CreateKeyBody, response: { 201: CreatedKey, ...errorResponses(400, 401, 403, 404) } }, config: ACCESS.operator },
    async (request, reply) => {
      await projectOr404(request.params.projectId);
      const created = await keys.create({ projectId: request.params.projectId, ...keySettings(request.body) });
      return sendNewKey(reply, created);
    },
  );

  app.post(
    '/api/projects/:projectId/keys/:keyId/revoke',
    { schema: { ...hide, params: ProjectKeyParams, response: { 200: ApiKey, ...errorResponses(401, 403, 404) } }, config: ACCESS.operator },
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

  app.get('/api/keys', { schema: { ...hide, response: { 200: ApiKeyList } }, config: ACCESS.operator }, async () => ({ keys: (await keys.listAll()).map(apiKeyView) }));

  app.post('/api/keys', { schema: { ...hide, body: CreateAdminKeyBody, response: { 201: CreatedKey, ...errorResponses(400, 401, 403, 404) } }, config: ACCESS.operator }, async (request, reply) => {
    const { allProjects, projectIds } = request.body;
    if ((allProjects === true) === (projectIds !== undefined)) {
      throw badRequest('invalid_key', 'Say what the key covers: either "allProjects": true or a list of "projectIds".');
    }
    if (allProjects === false) throw badRequest('invalid_key', 'Send "allProjects": true, or leave it out and list "projectIds".');
    for (const id of projectIds ?? []) {
      if (!(await projects.get(id))) throw notFound(`Project "${id}" does not exist.`, 'project_not_found');
    }
    const created = await keys.createAdmin({ projectIds: allProjects ? null : projectIds!, ...keySettings(request.body) });
    return sendNewKey(reply, created);
  });

  app.post(
    '/api/keys/:keyId/revoke',
    { schema: { ...hide, params: KeyParams, response: { 200: ApiKey, ...errorResponses(401, 403, 404) } }, config: ACCESS.operator },
    async (request) => {
      const row = await keys.revoke(request.params.keyId);
      if (!row) throw notFound(`API key "${request.params.keyId}" does not exist.`, 'key_not_found');
      return apiKeyView(row);
    },
  );
};
