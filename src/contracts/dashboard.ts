// Schemas of the dashboard's admin API under /api: requests and responses. The server validates and
// serializes with them; the web app (web/src/api.ts) takes its types from them.
import { Type, type Static } from 'typebox';
import { CHECKS_MODES, CodeHost, type ChecksMode } from './common.ts';
import { INSTRUCTIONS_MAX_CHARS, MaxCostUsd, MaxTokens, MonthlyBudget } from './budget.ts';

// ---------------------------------------------------------------- sign-in

export const Credentials = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);

/** First-run setup: the owner's credentials and the setup token `folio serve` printed in its setup link. */
export const SetupBody = Type.Object(
  {
    email: Credentials.properties.email,
    password: Credentials.properties.password,
    setupToken: Type.Optional(Type.String({ maxLength: 512, description: 'The token of the setup link `folio serve` prints while no owner exists (or FOLIO_SETUP_TOKEN).' })),
  },
  { additionalProperties: false },
);
export type SetupBody = Static<typeof SetupBody>;

export const SetupState = Type.Object({
  setupRequired: Type.Boolean({ description: 'True until the first owner exists.' }),
  tokenRequired: Type.Boolean({ description: 'Whether creating the owner needs the setup token (setupToken): while setup is required.' }),
});
export type SetupState = Static<typeof SetupState>;

export const User = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: Type.Union([Type.Literal('owner'), Type.Literal('operator')]),
  createdAt: Type.String({ format: 'date-time' }),
  lastLoginAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
export type User = Static<typeof User>;

export const Session = Type.Object({
  user: User,
  /** Send it as X-CSRF-Token with every change. */
  csrfToken: Type.String(),
  models: Type.Object({ default: Type.String(), allowed: Type.Array(Type.String()) }),
  repositories: Type.Object(
    {
      protocols: Type.Array(Type.Union([Type.Literal('https'), Type.Literal('http'), Type.Literal('ssh')]), { description: 'Git transports repository URLs may use (FOLIO_GIT_PROTOCOLS).' }),
      allowLocal: Type.Boolean({ description: 'Whether local paths and file:// URLs are accepted (FOLIO_ALLOW_LOCAL_REPOSITORIES).' }),
    },
    { description: 'Which repository URLs this server accepts, for the forms\' hints.' },
  ),
});
export type Session = Static<typeof Session>;

// ---------------------------------------------------------------- projects

export { CodeHost };

export { CHECKS_MODES, type ChecksMode };


export const BUILD_SWITCH = ['on', 'off'] as const;
/** The site's own build as a check: `on` (where the site has one) or `off`. */
export type BuildSwitch = (typeof BUILD_SWITCH)[number];

export const REVIEW_COMMENT_MODES = ['mention', 'every'] as const;
/** Which review comments on Folio's pull requests act: `mention` (a review requesting changes, or a comment naming the agent) or `every` comment of a maintainer. */
export type ReviewCommentMode = (typeof REVIEW_COMMENT_MODES)[number];
/** The name that calls the agent in a comment: `@` and a user name. */
export const REVIEW_MENTION_PATTERN = '^@[A-Za-z0-9][A-Za-z0-9_.-]{0,38}$';

const NullableString = (max: number) => Type.Union([Type.String({ maxLength: max }), Type.Null()]);

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
  checks: Type.String({ minLength: 1, maxLength: 20, description: `Docs checks before each push: ${CHECKS_MODES.join(', ')}.` }),
  autoFixMinVisitors: Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000 }), Type.Null()], {
    description: 'Start the broken-paths suggestion\'s job automatically once a week when a not-found path has this many visitors, counted by the identities the server derives from address and user agent (not client-chosen visitorIds); null: off (the default).',
  }),
  // Checked and normalised by the projects service, which answers a value that is not a host name with one clear sentence.
  redirectHosts: Type.Array(Type.String({ maxLength: 300 }), {
    maxItems: 50,
    description: 'Host names (e.g. status.example.com) a redirect written by a job may lead to besides the docs site; any other host fails the redirects check. Suggestion jobs never redirect off the site.',
  }),
  build: Type.String({ minLength: 1, maxLength: 20, description: "The site's own build as a check, in a sandbox: on (the default) or off." }),
  buildSetup: Type.Union([Type.String({ maxLength: 2000 }), Type.Null()], { description: "The project's own setup step (installs the site's dependencies), a shell command line; empty or null: the framework's." }),
  buildCommand: Type.Union([Type.String({ maxLength: 2000 }), Type.Null()], { description: "The project's own build, a shell command line; empty or null: the framework's (mkdocs build --strict, mint broken-links, docusaurus build)." }),
  buildTimeoutSeconds: Type.Union([Type.Integer({ minimum: 10, maximum: 3600 }), Type.Null()], { description: "The build's time limit in seconds; null: the server's (FOLIO_BUILD_TIMEOUT)." }),
  // The team's instructions and the spending limits (docs/agent.md), grouped.
  instructions: Type.Union([Type.String({ maxLength: INSTRUCTIONS_MAX_CHARS, pattern: '^[^\\u0000]*$' }), Type.Null()], {
    description: "The project's own instructions for the agent, with the repository's AGENTS.md and the like: the team's conventions, never above Folio's rules; empty or null: none.",
  }),
  defaultMaxCostUsd: Type.Union([MaxCostUsd("A job's spending limit in US dollars when it names none (models with a price only)."), Type.Null()]),
  defaultMaxTokens: Type.Union([MaxTokens("A job's limit in tokens (input + output) when it names none."), Type.Null()]),
  monthlyBudgetUsd: Type.Union([MonthlyBudget("What the project's jobs may spend per calendar month (UTC) in US dollars, priced models only."), Type.Null()]),
  monthlyTokenBudget: Type.Union([MaxTokens("Tokens the project's jobs may use per calendar month (UTC), every model."), Type.Null()]),
  reviewComments: Type.String({ minLength: 1, maxLength: 20, description: "Which comments of maintainers on Folio's pull requests start a follow-up turn: mention (the default: a review requesting changes, or a comment naming reviewMention) or every." }),
  reviewMention: Type.String({ pattern: REVIEW_MENTION_PATTERN, description: 'The name that calls the agent in a review comment (default @folio).' }),
};

/** A change names at least one field; an empty string clears an optional one. */
export const UpdateProjectBody = Type.Partial(Type.Object(projectFields), { additionalProperties: false, minProperties: 1 });
export type UpdateProjectBody = Static<typeof UpdateProjectBody>;

/** A new project needs a name and a repository. */
export const CreateProjectBody = Type.Object(
  { ...UpdateProjectBody.properties, name: projectFields.name, repositoryUrl: projectFields.repositoryUrl },
  { additionalProperties: false },
);

export const Project = Type.Object({
  id: Type.String(),
  name: Type.String(),
  repositoryUrl: Type.String(),
  baseBranch: Type.String(),
  codeHost: CodeHost,
  defaultModel: Type.Union([Type.String(), Type.Null()]),
  draftPrs: Type.Boolean(),
  /** Set or not; the token itself is never returned. */
  hasRepoToken: Type.Boolean(),
  webhookUrl: Type.Union([Type.String(), Type.Null()]),
  hasWebhookSecret: Type.Boolean(),
  siteOrigins: Type.Array(Type.String()),
  checks: Type.Enum(CHECKS_MODES),
  autoFixMinVisitors: Type.Union([Type.Integer(), Type.Null()], { description: 'The weekly automatic broken-paths job\'s threshold; null: off.' }),
  redirectHosts: Type.Array(Type.String(), { description: 'Host names a redirect may lead to besides the docs site (normalised: lower case, IDNA).' }),
  build: Type.Enum(BUILD_SWITCH),
  buildSetup: Type.Union([Type.String(), Type.Null()]),
  buildCommand: Type.Union([Type.String(), Type.Null()]),
  buildTimeoutSeconds: Type.Union([Type.Integer(), Type.Null()]),
  instructions: Type.Union([Type.String(), Type.Null()]),
  defaultMaxCostUsd: Type.Union([Type.Number(), Type.Null()]),
  defaultMaxTokens: Type.Union([Type.Integer(), Type.Null()]),
  monthlyBudgetUsd: Type.Union([Type.Number(), Type.Null()]),
  monthlyTokenBudget: Type.Union([Type.Integer(), Type.Null()]),
  reviewComments: Type.Enum(REVIEW_COMMENT_MODES),
  reviewMention: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
});
export type Project = Static<typeof Project>;

/** A project as the dashboard shows it: with the script tag to paste into the docs site. */
export const DashboardProject = Type.Object({ ...Project.properties, scriptTag: Type.String() });
export type DashboardProject = Static<typeof DashboardProject>;

export const ProjectList = Type.Object({ projects: Type.Array(DashboardProject) });
export type ProjectList = Static<typeof ProjectList>;

export const ProjectIdParams = Type.Object({ projectId: Type.String({ minLength: 1, maxLength: 64 }) });

// ---------------------------------------------------------------- API keys

const KeyScope = Type.Union([Type.Literal('read'), Type.Literal('write')]);

export const CreateKeyBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    scope: Type.Optional(KeyScope),
    expiresInDays: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 3650 }), Type.Null()])),
  },
  { additionalProperties: false },
);
export type CreateKeyBody = Static<typeof CreateKeyBody>;

/** A key that covers every project (allProjects) or the listed ones (projectIds). */
export const CreateAdminKeyBody = Type.Object(
  {
    ...CreateKeyBody.properties,
    allProjects: Type.Optional(Type.Boolean()),
    projectIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 1000 })),
  },
  { additionalProperties: false },
);
export type CreateAdminKeyBody = Static<typeof CreateAdminKeyBody>;

export const ApiKey = Type.Object({
  id: Type.String(),
  /** `project`: belongs to one project; `admin`: covers every project or a list of them. */
  kind: Type.Union([Type.Literal('project'), Type.Literal('admin')]),
  /** The owning project of a project key; null for an admin key. */
  projectId: Type.Union([Type.String(), Type.Null()]),
  allProjects: Type.Boolean(),
  projectIds: Type.Array(Type.String()),
  name: Type.String(),
  /** The key's first characters, for telling keys apart; the key itself is shown once. */
  prefix: Type.String(),
  scope: KeyScope,
  createdAt: Type.String({ format: 'date-time' }),
  expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
export type ApiKey = Static<typeof ApiKey>;

export const ApiKeyList = Type.Object({ keys: Type.Array(ApiKey) });
export type ApiKeyList = Static<typeof ApiKeyList>;

/** A new key: the only answer that holds the key itself. */
export const CreatedKey = Type.Object({ ...ApiKey.properties, key: Type.String() });
export type CreatedKey = Static<typeof CreatedKey>;

export const KeyParams = Type.Object({ keyId: Type.String({ minLength: 1, maxLength: 64 }) });
export const ProjectKeyParams = Type.Object({ ...ProjectIdParams.properties, ...KeyParams.properties });
