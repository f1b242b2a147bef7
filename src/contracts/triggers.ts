// Schemas of code-change triggers: the answer to a webhook delivery and the dashboard's settings.
import { Type, type Static } from 'typebox';
import { docLink, ProjectId, TriggerHost } from './common.ts';

export const TriggerParams = Type.Object({ projectId: ProjectId });

const Outcome = Type.Union(
  ['started', 'followed_up', 'ignored', 'duplicate', 'rejected', 'failed'].map((o) => Type.Literal(o)),
  { description: 'started: a job was created; followed_up: sent to the job that tracks the pull request; ignored: nothing to do (see reason); duplicate: a redelivery; rejected / failed: refused or could not be handled.' },
);

export const DeliveryAnswer = Type.Object(
  {
    outcome: Outcome,
    reason: Type.String({ description: 'One sentence saying what was done or why nothing was.' }),
    deliveryId: Type.Union([Type.String(), Type.Null()]),
    jobId: Type.Optional(Type.String()),
    error: Type.Optional(Type.String({ description: 'On refusals: the same sentence, as in every error body.' })),
    code: Type.Optional(Type.String({ description: `On refusals: a stable code (${docLink('errors')}).` })),
  },
  { title: 'TriggerDeliveryAnswer' },
);

/** A refused delivery: the API's error body, with the delivery's outcome when it got that far. */
export const DeliveryRefusal = Type.Object(
  {
    error: Type.String(),
    code: Type.String(),
    outcome: Type.Optional(Outcome),
    reason: Type.Optional(Type.String()),
    deliveryId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  { title: 'TriggerDeliveryRefusal' },
);

const Text = (max: number) => Type.String({ maxLength: max });

export const RepositorySettings = Type.Object(
  {
    id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Keeps the stored token of this repository.' })),
    host: TriggerHost,
    repositoryUrl: Type.String({ minLength: 1, maxLength: 500 }),
    events: Type.Array(Type.Union([Type.Literal('merged'), Type.Literal('opened'), Type.Literal('push')]), { minItems: 1, maxItems: 3 }),
    paths: Type.Optional(Type.Array(Text(200), { maxItems: 50 })),
    labels: Type.Optional(Type.Array(Text(100), { maxItems: 20 })),
    token: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 1000 }), Type.Null()])),
  },
  { additionalProperties: false },
);

export const TriggerSettingsBody = Type.Object(
  {
    template: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 20_000 }), Type.Null()])),
    repositories: Type.Optional(Type.Array(RepositorySettings, { maxItems: 20 })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type TriggerSettingsBody = Static<typeof TriggerSettingsBody>;

export const DeliveriesQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })) },
  { additionalProperties: false },
);

// ---------------------------------------------------------------- dashboard answers

const TriggerEvent = Type.Union([Type.Literal('merged'), Type.Literal('opened'), Type.Literal('push')]);

export const WatchedRepository = Type.Object({
  id: Type.String(),
  host: TriggerHost,
  repositoryUrl: Type.String(),
  /** The repository's path on its host, e.g. acme/api. */
  fullPath: Type.String(),
  events: Type.Array(TriggerEvent),
  paths: Type.Array(Type.String()),
  labels: Type.Array(Type.String()),
  /** Set or not; the token itself is never returned. */
  hasToken: Type.Boolean(),
  createdAt: Type.String({ format: 'date-time' }),
});
export type WatchedRepository = Static<typeof WatchedRepository>;
export type RepositorySettings = Static<typeof RepositorySettings>;

export const TriggerSettings = Type.Object({
  /** Where each code host sends this project's webhooks. */
  endpoints: Type.Record(TriggerHost, Type.String()),
  hasSecret: Type.Boolean(),
  secretCreatedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  /** The template in use (the default when none is set). */
  template: Type.String(),
  customTemplate: Type.Boolean(),
  defaultTemplate: Type.String(),
  placeholders: Type.Array(Type.String()),
  repositories: Type.Array(WatchedRepository),
  /**
   * Deliveries refused before their signature checked out (a wrong or missing signature or token,
   * too large to verify…): counted, never recorded, since anyone can send them.
   */
  refusedDeliveries: Type.Integer({ minimum: 0 }),
  lastRefusedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
export type TriggerSettings = Static<typeof TriggerSettings>;

/** A new secret: the only answer that holds it. */
export const TriggerSettingsWithSecret = Type.Object({ ...TriggerSettings.properties, secret: Type.String() });
export type TriggerSettingsWithSecret = Static<typeof TriggerSettingsWithSecret>;

export const TriggerDelivery = Type.Object({
  id: Type.Integer(),
  host: TriggerHost,
  deliveryId: Type.Union([Type.String(), Type.Null()]),
  event: Type.Union([Type.String(), Type.Null()]),
  outcome: Type.String(),
  statusCode: Type.Integer(),
  reason: Type.String(),
  repository: Type.Union([Type.String(), Type.Null()]),
  changeUrl: Type.Union([Type.String(), Type.Null()]),
  jobId: Type.Union([Type.String(), Type.Null()]),
  receivedAt: Type.String({ format: 'date-time' }),
});
export type TriggerDelivery = Static<typeof TriggerDelivery>;

export const TriggerDeliveryList = Type.Object({ deliveries: Type.Array(TriggerDelivery) });
export type TriggerDeliveryList = Static<typeof TriggerDeliveryList>;
