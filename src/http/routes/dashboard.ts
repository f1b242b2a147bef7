// The dashboard's admin API under /api: operator sign-in (first-run setup, login, logout, session),
// projects and API keys. Jobs and analytics are not duplicated here: the dashboard calls the public
// API with its session. Schemas in src/contracts/dashboard.ts; the web app's files are web-app.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { refuseNulInBody } from '../nul.ts';
import { ApiError, badRequest } from '../../errors.ts';
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
  SetupBody,
  SetupState,
  UpdateProjectBody,
  type BuildSwitch,
  type ReviewCommentMode,
  type ChecksMode,
} from '../../contracts/dashboard.ts';
import type { Project } from '../../admin/projects.ts';
import type { CreatedKey as NewKey } from '../../admin/keys.ts';
import type { OperatorView } from '../../admin/users.ts';
import type { Config } from '../../config.ts';
import { ACCESS } from '../auth.ts';

/** The tag to paste into every page of the docs site for browser analytics. */
export function scriptTag(baseUrl: string, projectId: string): string {
  return `<script defer src="${baseUrl}/v1/analytics/script.js" data-project="${projectId}"></script>`;
}

const baseUrlOf = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

function projectBody(request: FastifyRequest, project: Project & { warnings?: string[] }): DashboardProject {
  const { warnings, ...view } = project;
  return { ...view, scriptTag: scriptTag(baseUrlOf(request), project.id), ...(warnings?.length ? { warnings } : {}) };
}

/**
 * A project body as the store's input: an empty string of an optional field (a cleared form field)
 * means "none" (admin/projects.ts tidies the origins). `checks` is checked by the store, with its sentence.
 */
/** The enumerated settings as the projects service checks them (it answers an unknown value with a sentence). */
type Checked = { checks?: ChecksMode; build?: BuildSwitch; reviewComments?: ReviewCommentMode };

function projectInput<T extends UpdateProjectBody>(body: T): T & Checked {
  const out = { ...body };
  for (const k of ['defaultModel', 'repoToken', 'webhookUrl', 'webhookSecret', 'buildSetup', 'buildCommand'] as const) {
    if (out[k] === '') out[k] = null;
  }
  return out as T & Checked;
}

/** A new key: the one answer that holds the key itself, never cached. */
function sendNewKey(reply: FastifyReply, created: NewKey) {
  reply.header('cache-control', 'no-store');
  return reply.code(201).send(created);
}

/** What the dashboard learns on sign-in: the user, the session's CSRF token, the models it may pick and the repository URLs the server takes. */
function sessionBody(config: Config, op: OperatorView) {
  return {
    user: op.user,
    csrfToken: op.session.csrfToken,
    models: { default: config.models.defaultModel, allowed: [...config.models.allowed] },
    repositories: { protocols: [...config.repositories.protocols], allowLocal: config.repositories.allowLocal },
  };
}

/** A project's default model must be one the server allows. */
function checkModel(config: Config, model: string | null | undefined): void {
  if (model && !config.models.allowed.includes(model)) {
    throw badRequest('invalid_model', `Model "${model}" is not allowed on this server; use one of: ${config.models.allowed.join(', ')}.`, [
      { message: 'model not allowed', path: '/body/defaultModel' },
    ]);
  }
}

const hide = { hide: true } as const;

/** First-run setup, sign-in and out, and the session the dashboard starts from. */
const signIn: FastifyPluginAsyncTypebox = async (app) => {
  const { users, config, sessions } = app;

  // The setup token is needed for as long as there is an owner to create.
  app.get('/api/setup', { schema: { ...hide, response: { 200: SetupState } }, config: ACCESS.public }, async () => {
    const setupRequired = await users.setupRequired();
    return { setupRequired, tokenRequired: setupRequired };
  });

  app.post('/api/setup', { schema: { ...hide, body: SetupBody, response: { 201: Session, ...errorResponses(400, 403, 409) } }, config: ACCESS.public }, async (request, reply) => {
    sessions.checkSameOrigin(request);
    const { setupToken, ...credentials } = request.body;
    const user = await users.createFirstOwner(credentials, setupToken);
    const session = await sessions.start(request, reply, user);
    return reply.code(201).send(sessionBody(config, { user, session }));
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
    return reply.send(sessionBody(config, { user, session }));
  });

  // The session is checked in onRequest like every operator route: a stranger's body is never parsed.
  app.post('/api/logout', { schema: hide, config: ACCESS.operator }, async (request, reply) => {
    await sessions.end(request, reply);
    return reply.code(204).send();
  });

  app.get('/api/session', { schema: { ...hide, response: { 200: Session, ...errorResponses(401) } }, config: ACCESS.public }, async (request) => {
    const op = await sessions.fromRequest(request);
    if (!op) throw new ApiError(401, 'not_signed_in', 'Sign in to the dashboard first.');
    return sessionBody(config, op);
  });

};

const projectRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { projects, config } = app;

  app.get('/api/projects', { schema: { ...hide, response: { 200: ProjectList } }, config: ACCESS.operator }, async (request) => ({
    projects: (await projects.list()).map((project) => projectBody(request, project)),
  }));

  app.post(
    '/api/projects',
    { schema: { ...hide, body: CreateProjectBody, response: { 201: DashboardProject, ...errorResponses(400, 401, 403, 422) } }, config: ACCESS.operator },
    async (request, reply) => {
      const input = projectInput(request.body);
      checkModel(config, input.defaultModel);
      return reply.code(201).send(projectBody(request, await projects.create(input)));
    },
  );

  app.get(
    '/api/projects/:projectId',
    { schema: { ...hide, params: ProjectIdParams, response: { 200: DashboardProject, ...errorResponses(401, 404) } }, config: ACCESS.operator },
    async (request) => projectBody(request, await projects.require(request.params.projectId)),
  );

  app.patch(
    '/api/projects/:projectId',
    { schema: { ...hide, params: ProjectIdParams, body: UpdateProjectBody, response: { 200: DashboardProject, ...errorResponses(400, 401, 403, 404, 422) } }, config: ACCESS.operator },
    async (request) => {
      await projects.require(request.params.projectId);
      const input = projectInput(request.body);
      checkModel(config, input.defaultModel);
      return projectBody(request, (await projects.update(request.params.projectId, input))!);
    },
  );

};

/** A project's keys, and keys that cover many projects. */
const keyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { keys } = app;

  app.get(
    '/api/projects/:projectId/keys',
    { schema: { ...hide, params: ProjectIdParams, response: { 200: ApiKeyList, ...errorResponses(401, 404) } }, config: ACCESS.operator },
    // The project's own keys, then the keys that cover many projects including this one.
    async (request) => ({ keys: await keys.listForProject(request.params.projectId) }),
  );

  app.post(
    '/api/projects/:projectId/keys',
    { schema: { ...hide, params: ProjectIdParams, body: CreateKeyBody, response: { 201: CreatedKey, ...errorResponses(400, 401, 403, 404) } }, config: ACCESS.operator },
    async (request, reply) => sendNewKey(reply, await keys.createForProject(request.params.projectId, request.body)),
  );

  app.post(
    '/api/projects/:projectId/keys/:keyId/revoke',
    { schema: { ...hide, params: ProjectKeyParams, response: { 200: ApiKey, ...errorResponses(401, 403, 404) } }, config: ACCESS.operator },
    async (request) => keys.revokeInProject(request.params.projectId, request.params.keyId),
  );

  // ---- keys that cover many projects

  app.get('/api/keys', { schema: { ...hide, response: { 200: ApiKeyList } }, config: ACCESS.operator }, async () => ({ keys: await keys.listAll() }));

  app.post('/api/keys', { schema: { ...hide, body: CreateAdminKeyBody, response: { 201: CreatedKey, ...errorResponses(400, 401, 403, 404) } }, config: ACCESS.operator }, async (request, reply) => {
    const { allProjects, projectIds } = request.body;
    const created = await keys.createCovering({ allProjects, projectIds }, request.body);
    return sendNewKey(reply, created);
  });

  app.post(
    '/api/keys/:keyId/revoke',
    { schema: { ...hide, params: KeyParams, response: { 200: ApiKey, ...errorResponses(401, 403, 404) } }, config: ACCESS.operator },
    async (request) => keys.revoke(request.params.keyId),
  );
};

export const dashboardRoutes = fp(
  async (app) => {
    app.addHook('preValidation', refuseNulInBody);
    await app.register(signIn);
    await app.register(projectRoutes);
    await app.register(keyRoutes);
  },
  { name: 'dashboard-routes', dependencies: ['projects', 'keys', 'users', 'config', 'folio-auth'], encapsulate: true },
);
