// Agent-job schemas: one source for validation, TypeScript types, OpenAPI and the typed client.
import { Type, type Static } from 'typebox';
import { MAX_SEQUENCE, ProjectId } from './common.ts';

export const JobStatus = Type.Union(
  [Type.Literal('active'), Type.Literal('completed'), Type.Literal('archived'), Type.Literal('failed')],
  { description: 'active → completed | failed; completed/failed → active on a follow-up; any → archived (terminal).' },
);

export const JobTrigger = Type.Object(
  {
    kind: Type.Union([Type.Literal('pull_request_merged'), Type.Literal('pull_request_opened'), Type.Literal('push')], {
      description: 'What started the job: a merged or an opened pull request (merge request), or a push to the default branch.',
    }),
    host: Type.Union([Type.Literal('github'), Type.Literal('gitlab')]),
    repository: Type.String({ description: 'The code repository the change was made in (web URL).' }),
    url: Type.String({ description: 'The change: pull request, merge request or compare page.' }),
  },
  { description: 'The code change that started the job; null for jobs created through the API.' },
);
export type JobTrigger = Static<typeof JobTrigger>;

export const Job = Type.Object(
  {
    id: Type.String({ description: 'Opaque, URL-safe, sortable by creation time (job_…).' }),
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
    error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()], {
      description: 'Why the job failed; null otherwise.',
    }),
    trigger: Type.Union([JobTrigger, Type.Null()]),
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
});

export const CreateJobBody = Type.Object(
  {
    prompt: Prompt,
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'One of the server\'s allowed models; the project default otherwise.' })),
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

export const JobEvent = Type.Object(
  {
    id: Type.Integer({ description: 'Sequence number within the job; pass as `after` or Last-Event-ID to resume.' }),
    at: Type.String({ format: 'date-time' }),
    type: Type.String(),
    data: Type.Record(Type.String(), Type.Unknown()),
  },
  { $id: 'JobEvent', title: 'JobEvent' },
);
export type JobEvent = Static<typeof JobEvent>;

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
