// Agent-job schemas: one source for validation, TypeScript types, OpenAPI and the typed client.
import { Type, type Static } from 'typebox';
import { CheckNameSchema, ChecksModeSchema, docLink, MAX_SEQUENCE, ProjectId, TriggerHost } from './common.ts';
import { JOB_TITLE_MAX } from './job-title.ts';
import { JobLimit, MaxCostUsd, MaxTokens, MonthBudget } from './budget.ts';

/** A job's statuses, stated once: the stored column's type, the client and metrics derive from this schema. */
export const JobStatus = Type.Union(
  [Type.Literal('active'), Type.Literal('completed'), Type.Literal('archived'), Type.Literal('failed')],
  { description: 'active → completed | failed; completed/failed → active on a follow-up; any → archived (terminal).' },
);
export type JobStatusName = Static<typeof JobStatus>;
export const JOB_STATUSES: readonly JobStatusName[] = JobStatus.anyOf.map((s) => s.const);

export const CodeChangeTrigger = Type.Object(
  {
    kind: Type.Union([Type.Literal('pull_request_merged'), Type.Literal('pull_request_opened'), Type.Literal('push')], {
      description: 'What started the job: a merged or an opened pull request (merge request), or a push to the default branch.',
    }),
    host: TriggerHost,
    repository: Type.String({ description: 'The code repository the change was made in (web URL).' }),
    url: Type.String({ description: 'The change: pull request, merge request or compare page.' }),
  },
  { description: 'The code change that started the job.' },
);
export type CodeChangeTrigger = Static<typeof CodeChangeTrigger>;
export const SuggestionKind = Type.Union([Type.Literal('broken_paths'), Type.Literal('agent_markdown')], {
  description: 'broken_paths: not-found paths to redirect; agent_markdown: `.md` and `llms.txt` addresses AI agents asked for.',
});
export const SuggestionTrigger = Type.Object(
  {
    kind: Type.Literal('suggestion'),
    suggestionId: Type.String({ description: 'The suggestion the job was started from (GET /v2/agent/{projectId}/suggestions).' }),
    suggestionKind: SuggestionKind,
    automatic: Type.Boolean({ description: 'True when the weekly automatic run started it.' }),
  },
  { description: 'A suggestion drawn from the project\'s traffic that started the job.' },
);
export const JobTrigger = Type.Union([CodeChangeTrigger, SuggestionTrigger], {
  description: 'What started the job: a code change or a traffic suggestion; null for jobs created through the API.',
});
export type JobTrigger = Static<typeof JobTrigger>;
export const JobFile = Type.Object(
  {
    path: Type.String(),
    status: Type.Union([Type.Literal('added'), Type.Literal('modified'), Type.Literal('deleted'), Type.Literal('renamed')]),
    previousPath: Type.Optional(Type.String({ description: 'The old path of a renamed file.' })),
    additions: Type.Integer({ minimum: 0 }),
    deletions: Type.Integer({ minimum: 0 }),
    binary: Type.Optional(Type.Boolean({ description: 'Binary files have no line counts.' })),
  },
  { description: 'One file the job changed, against the commit its branch forked from.' },
);
export type JobFile = Static<typeof JobFile>;

export const JobUsage = Type.Object(
  {
    inputTokens: Type.Integer({ minimum: 0 }),
    outputTokens: Type.Integer({ minimum: 0 }),
    totalTokens: Type.Integer({ minimum: 0 }),
    estimatedCostUsd: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], {
      description: "From the server's per-model price table (FOLIO_MODEL_PRICES); null when the job's model has no price.",
    }),
  },
  { description: "Tokens the model reported for every turn of the job (failed turns too), and what they cost." },
);
export type JobUsage = Static<typeof JobUsage>;

export const Job = Type.Object(
  {
    id: Type.String({ description: 'Opaque, URL-safe, sortable by creation time (job_…).' }),
    title: Type.String({
      maxLength: JOB_TITLE_MAX,
      description: `A short title: the agent's pull request title once there is one, until then the first line of the prompt (at most ${JOB_TITLE_MAX} characters, cut with an ellipsis).`,
    }),
    status: JobStatus,
    source: Type.Object({
      repository: Type.String({ description: 'The repository URL configured on the project.' }),
      ref: Type.String({ description: 'The branch the agent works on (its own branch).' }),
      baseRef: Type.String({ description: 'The branch the job started from.' }),
    }),
    model: Type.String({ description: 'provider/model-id, e.g. anthropic/claude-sonnet-4-5.' }),
    prLink: Type.Union([Type.String({ format: 'uri' }), Type.Null()], {
      description: 'Pull request opened by the agent; null while active (unless an earlier turn opened one) or if nothing changed.',
    }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    archivedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    mergedAt: Type.Optional(
      Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
        description: "When the job's pull request was merged, as the code host says (asked at most every 5 minutes); null while it is not known to be merged (Folio). Its effect: GET …/job/{id}/impact.",
      }),
    ),
    error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()], {
      description: 'Why the job failed; null otherwise.',
    }),
    trigger: Type.Union([JobTrigger, Type.Null()]),
    files: Type.Array(JobFile, { description: "Files changed by the whole job (its pushed branch against where it forked from the base); [] until it pushes." }),
    usage: JobUsage,
    limit: JobLimit,
  },
  { $id: 'AgentJob', title: 'AgentJob' },
);
export type Job = Static<typeof Job>;

export const Prompt = Type.String({
  minLength: 1,
  maxLength: 100_000,
  // NUL cannot be stored as text (PostgreSQL refuses it).
  pattern: '^[^\\u0000]*$',
  description: 'The instruction for the agent (no NUL characters).',
  examples: ['Document the new `--dry-run` flag of `acme deploy` in docs/cli/deploy.md, with an example of its output, and link it from the CLI overview.'],
});

export const CreateJobBody = Type.Object(
  {
    prompt: Prompt,
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'One of the server\'s allowed models; the project default otherwise.' })),
    maxCostUsd: Type.Optional(MaxCostUsd("The job's spending limit in US dollars (its model must have a price); the project's default otherwise.")),
    maxTokens: Type.Optional(MaxTokens("The job's limit in tokens (input + output); the project's default otherwise.")),
  },
  { additionalProperties: false },
);
export type CreateJobBody = Static<typeof CreateJobBody>;

export const MessageBody = Type.Object({ prompt: Prompt }, { additionalProperties: false });
export type MessageBody = Static<typeof MessageBody>;

export const JobParams = Type.Object({
  projectId: ProjectId,
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The job id.' }),
});

export const ListJobsQuery = Type.Object(
  {
    status: Type.Optional(JobStatus),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 200, description: 'nextCursor of the previous page.' })),
  },
  { additionalProperties: false },
);
export type ListJobsQuery = Static<typeof ListJobsQuery>;

export const JobList = Type.Object({
  jobs: Type.Array(Type.Ref('AgentJob')),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
  hasMore: Type.Boolean(),
});

/** A job's events are declared in job-events.ts (`JobEventSchema` is the `JobEvent` referred to below). */
export type { JobEvent } from './job-events.ts';

export const JobEventsQuery = Type.Object(
  {
    after: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SEQUENCE, description: 'Return events with id greater than this.' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
  },
  { additionalProperties: false },
);

export const JobEventPage = Type.Object({
  events: Type.Array(Type.Ref('JobEvent')),
  hasMore: Type.Boolean(),
  nextAfter: Type.Integer(),
});

export const WebhookDelivery = Type.Object(
  {
    id: Type.String({ description: 'whd_…: the X-Folio-Delivery header, the same on every attempt.' }),
    event: Type.String({ description: 'job.<status>, e.g. job.completed.' }),
    status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
    attempts: Type.Integer({ description: 'Attempts made so far (since the last redelivery).' }),
    lastStatusCode: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status of the last attempt; null when no answer came.' }),
    lastError: Type.Union([Type.String(), Type.Null()]),
    createdAt: Type.String({ format: 'date-time' }),
    nextAttemptAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the next attempt is due; null unless pending.' }),
    deliveredAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'WebhookDelivery', title: 'WebhookDelivery' },
);
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const WebhookDeliveryList = Type.Object({ deliveries: Type.Array(Type.Ref('WebhookDelivery')) });

export const DeliveryParams = Type.Object({
  projectId: ProjectId,
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The job id.' }),
  deliveryId: Type.String({ minLength: 1, maxLength: 64, description: 'The delivery id (whd_…).' }),
});
export const DocsProblem = Type.Object({
  check: CheckNameSchema,
  path: Type.String({ description: 'The page, or the navigation/configuration file, the problem is in.' }),
  line: Type.Union([Type.Integer(), Type.Null()]),
  target: Type.Union([Type.String(), Type.Null()], { description: 'The link, image, navigation entry or page concerned.' }),
  message: Type.String(),
  enforced: Type.Optional(
    Type.Literal(true, { description: 'Fails the job whatever the checks mode: a suggestion job changed what it may not, or redirected off the site.' }),
  ),
});

/** The site's own build, run as a check in a sandbox (docs/agent.md). */
export const BuildReport = Type.Object(
  {
    tool: Type.String({ description: 'mkdocs, mint, docusaurus, or custom (the project\'s own command).' }),
    command: Type.String({ description: 'The command line that ran, or would have.' }),
    status: Type.Union([Type.Literal('passed'), Type.Literal('failed'), Type.Literal('skipped')]),
    reason: Type.Union([Type.String(), Type.Null()], { description: 'Why it was skipped, stopped or failed, in one sentence; null when it passed.' }),
    setup: Type.Union([Type.Literal('none'), Type.Literal('ran'), Type.Literal('cached')], { description: 'The setup step: none, ran now, or reused for the same lockfiles.' }),
    ms: Type.Integer(),
  },
  { description: "The site's own build; its problems are among the report's, as check `build`." },
);

export const ChecksReport = Type.Object(
  {
    mode: ChecksModeSchema,
    framework: Type.String(),
    ran: Type.Array(CheckNameSchema, {
      description: 'links, anchors, assets, navigation (explicit navigation only), redirects (where the site declares them), llms-txt, scope (suggestion jobs).',
    }),
    pagesChecked: Type.Integer(),
    problems: Type.Array(DocsProblem, { description: 'Problems the job introduced and left (after its fix rounds).' }),
    preExisting: Type.Array(DocsProblem, { description: 'Problems already on the base branch in the checked files; never blocking.' }),
    truncated: Type.Boolean(),
    build: Type.Optional(BuildReport),
  },
  { description: "The docs checks of the job's last turn." },
);

export const JobChanges = Type.Object(
  {
    baseSha: Type.Union([Type.String(), Type.Null()], { description: "The commit the job's branch forked from." }),
    headSha: Type.Union([Type.String(), Type.Null()], { description: 'The pushed tip of the job branch.' }),
    files: Type.Array(JobFile),
    diff: Type.String({ description: 'Unified diff of the branch against baseSha, whole files only, bounded in size.' }),
    diffTruncated: Type.Boolean({ description: 'True when files were left out of `diff` to keep it bounded (all are in `files`).' }),
    checks: Type.Union([ChecksReport, Type.Null()]),
    updatedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'AgentJobChanges', title: 'AgentJobChanges' },
);
export type JobChanges = Static<typeof JobChanges>;

/**
 * GET /v2/agent/{projectId}/job/{id}/messages: the prompt and every follow-up. The same wire shape as
 * the route's inline response schema (src/http/routes/jobs.ts), which should use this one.
 */
/** Where a follow-up came from when not from the API: a review comment on the job's pull request. */
export const MessageOrigin = Type.Object(
  {
    kind: Type.Literal('review'),
    reviewer: Type.String({ description: "The reviewer's user name on the code host." }),
    url: Type.String({ description: 'The review or comment on the pull request.' }),
  },
  { $id: 'MessageOrigin', title: 'MessageOrigin', description: `A follow-up from a review by @reviewer (${docLink('triggers')}, review comments).` },
);
export type MessageOrigin = Static<typeof MessageOrigin>;

export const JobMessage = Type.Object({
  seq: Type.Integer(),
  prompt: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  handledAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  outcome: Type.Union([Type.String(), Type.Null()]),
  title: Type.Union([Type.String(), Type.Null()]),
  summary: Type.Union([Type.String(), Type.Null()]),
  origin: Type.Optional(Type.Union([MessageOrigin, Type.Null()], { description: 'A follow-up from a review comment: who and where; null for messages sent through the API.' })),
});
export type JobMessage = Static<typeof JobMessage>;

export const JobMessageList = Type.Object({ messages: Type.Array(JobMessage) });
export type JobMessageList = Static<typeof JobMessageList>;

export const UsageQuery = Type.Object(
  {
    days: Type.Optional(Type.Integer({ minimum: 1, maximum: 366, default: 30, description: 'Days back from today (UTC), today included.' })),
  },
  { additionalProperties: false },
);

const UsageFigures = {
  inputTokens: Type.Integer({ minimum: 0 }),
  outputTokens: Type.Integer({ minimum: 0 }),
  totalTokens: Type.Integer({ minimum: 0 }),
  estimatedCostUsd: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], { description: 'Cost of the tokens whose model has a price; null when none has.' }),
  unpricedTokens: Type.Integer({ minimum: 0, description: 'Tokens of models without a price (not in the estimate).' }),
};

export const UsageReport = Type.Object({
  days: Type.Array(Type.Object({ date: Type.String({ description: 'YYYY-MM-DD (UTC).' }), jobs: Type.Integer(), ...UsageFigures })),
  jobs: Type.Array(
    Type.Object({ id: Type.String(), title: Type.String({ description: "The job's title (see the job object)." }), status: JobStatus, model: Type.String(), createdAt: Type.String({ format: 'date-time' }), ...UsageFigures }),
    { description: 'Jobs with usage in the period, most tokens first (at most 100).' },
  ),
  totals: Type.Object(UsageFigures),
  month: MonthBudget,
});
export type UsageReport = Static<typeof UsageReport>;
