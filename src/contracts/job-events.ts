// A job's events, each type declared once with its data: the code that stores events takes these (a
// wrong type or data shape does not compile), the OpenAPI document shows them, the client and the
// dashboard read them, and job-event-text.ts says each as a sentence.
import { Type, type Static, type TSchema } from 'typebox';
import { ChecksModeSchema, CheckNameSchema, MAX_SEQUENCE } from './common.ts';
import { BuildReport, DocsProblem, JobTrigger, MessageOrigin } from './jobs.ts';
import { BudgetExceededEventData, InstructionsEventData } from './budget.ts';

const Int = (description?: string) => Type.Integer({ minimum: 0, ...(description ? { description } : {}) });
const Sha = Type.String({ description: 'A commit id.' });
const Tokens = { inputTokens: Int(), outputTokens: Int(), totalTokens: Int() };

/** Every event type with the shape of its `data`, in the order a turn usually records them. */
export const JOB_EVENT_DATA = {
  'job.created': Type.Object(
    { model: Type.String(), ref: Type.String(), baseRef: Type.String(), trigger: Type.Optional(JobTrigger) },
    { description: 'The job was created (by the API, a code change or a suggestion: `trigger`).' },
  ),
  'message.queued': Type.Object(
    { seq: Int('1 for the first instruction, 2… for follow-ups.'), origin: Type.Optional(MessageOrigin) },
    { description: 'An instruction is waiting for a worker (`origin`: a follow-up from a review comment).' },
  ),
  'run.started': Type.Object({ worker: Type.String(), resumed: Type.Boolean() }, { description: 'A worker took the job (again, when `resumed`).' }),
  workspace: Type.Object(
    { branch: Type.String(), baseRef: Type.String(), startSha: Sha, resumed: Type.Boolean(), recycled: Type.Boolean(), ms: Int() },
    { description: "The job's worktree is on its branch." },
  ),
  docs_profile: Type.Object(
    { framework: Type.String(), configFile: Type.Union([Type.String(), Type.Null()]), docsRoot: Type.String() },
    { description: 'The docs site the agent found.' },
  ),
  instructions: { ...InstructionsEventData, description: "The team's instruction files the agent was given (or skipped, with why)." },
  usage: Type.Object({ step: Int(), ...Tokens }, { description: 'Tokens of one model call.' }),
  budget_exceeded: { ...BudgetExceededEventData, description: 'The job reached its spending limit before a model call; the turn ends with its work pushed.' },
  model_retry: Type.Object({ attempt: Int(), delayMs: Int(), error: Type.String() }, { description: 'A model call failed and is tried again.' }),
  model_message: Type.Object({ step: Int(), text: Type.String() }, { description: "The model's text (clipped)." }),
  tool_call: Type.Object(
    { step: Int(), toolCallId: Type.String(), tool: Type.String(), args: Type.Record(Type.String(), Type.Unknown()) },
    { description: 'The agent called a tool (list_files, read_file, search, write_file, edit_file, delete_file, move_file, finish).' },
  ),
  tool_result: Type.Object(
    { step: Int(), toolCallId: Type.String(), tool: Type.String(), result: Type.String() },
    { description: "A tool's answer (clipped)." },
  ),
  validation: Type.Object(
    { round: Int(), ok: Type.Boolean(), issues: Type.Array(Type.Object({ path: Type.String(), message: Type.String() })) },
    { description: 'Whether the changed files parse (at most 50 issues).' },
  ),
  checks: Type.Object(
    {
      round: Int(),
      mode: ChecksModeSchema,
      framework: Type.String(),
      ran: Type.Array(CheckNameSchema),
      pagesChecked: Int(),
      ok: Type.Boolean(),
      problemCount: Int(),
      preExistingCount: Int(),
      problems: Type.Array(DocsProblem, { description: 'At most 50.' }),
      preExisting: Type.Array(DocsProblem, { description: 'At most 50.' }),
      truncated: Type.Boolean(),
      build: Type.Optional(BuildReport),
    },
    { description: 'The docs checks of one round.' },
  ),
  agent_finished: Type.Object(
    { title: Type.String(), summary: Type.String(), steps: Int(), usage: Type.Object(Tokens) },
    { description: 'The agent ended its turn.' },
  ),
  commit: Type.Object(
    { sha: Sha, files: Type.Array(Type.String(), { description: 'At most 200.' }), fileCount: Int() },
    { description: "The turn's changes were committed." },
  ),
  push: Type.Object({ branch: Type.String(), sha: Sha }, { description: 'The job branch was pushed.' }),
  no_changes: Type.Object({ message: Type.String() }, { description: 'The turn changed no files.' }),
  changes: Type.Object(
    { baseSha: Sha, headSha: Sha, files: Int('Files changed.'), additions: Int(), deletions: Int() },
    { description: 'What the whole job changed against where it forked from the base.' },
  ),
  pull_request: Type.Object(
    {
      url: Type.Union([Type.String(), Type.Null()], { description: "Null when the host's link was refused (`linkRefused`)." }),
      number: Type.Integer(),
      created: Type.Boolean(),
      updated: Type.Boolean(),
      linkRefused: Type.Optional(Type.String()),
    },
    { description: 'The pull request (merge request) was opened or updated.' },
  ),
  'turn.completed': Type.Object(
    { seq: Int(), title: Type.String(), summary: Type.String(), prLink: Type.Union([Type.String(), Type.Null()]) },
    { description: 'The turn is done.' },
  ),
  error: Type.Object(
    { seq: Type.Optional(Int()), code: Type.String(), message: Type.Union([Type.String(), Type.Null()]) },
    { description: 'The turn (or the job, `worker_lost`) failed.' },
  ),
  'run.stopped': Type.Object(
    { reason: Type.Union([Type.Literal('archived'), Type.Literal('lease_lost')]) },
    { description: 'The run stopped before the turn ended.' },
  ),
  'job.archived': Type.Object({}, { description: 'The job was archived.' }),
} satisfies Record<string, TSchema>;

export type JobEventType = keyof typeof JOB_EVENT_DATA;
export const JOB_EVENT_TYPES = Object.keys(JOB_EVENT_DATA) as JobEventType[];
export type JobEventData<T extends JobEventType> = Static<(typeof JOB_EVENT_DATA)[T]>;

/** What stands in for data over 16 KB when it is stored (jobs/events.ts). */
export const ClippedEventData = Type.Object(
  { clipped: Type.Literal(true), preview: Type.String({ description: 'The start of the data as JSON.' }) },
  { description: 'The data was too large to store whole.' },
);
export type ClippedEventData = Static<typeof ClippedEventData>;

/** One event as the API sends it: its `data` has its type's shape, or is clipped. */
export type JobEvent = {
  [T in JobEventType]: { id: number; at: string; type: T; data: JobEventData<T> | ClippedEventData };
}[JobEventType];

/** Records an event: the type picks the data's shape. */
export type EmitJobEvent<R = Promise<void>> = <T extends JobEventType>(type: T, data: JobEventData<T>) => R;

function eventSchema(type: JobEventType, data: TSchema) {
  return Type.Object(
    {
      id: Type.Integer({ maximum: MAX_SEQUENCE, description: 'Sequence number within the job; pass as `after` or Last-Event-ID to resume.' }),
      at: Type.String({ format: 'date-time' }),
      type: Type.Literal(type),
      data: Type.Union([data, ClippedEventData]),
    },
    { title: type },
  );
}

/** The OpenAPI document's `JobEvent`: one shape per type. */
export const JobEventSchema = Type.Union(
  JOB_EVENT_TYPES.map((type) => eventSchema(type, JOB_EVENT_DATA[type])),
  { $id: 'JobEvent', title: 'JobEvent' },
);

export const isClipped = (data: object): data is ClippedEventData => (data as { clipped?: unknown }).clipped === true;
