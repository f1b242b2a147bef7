// What a worker runs for each queued message of a job. The agent (src/agent) supplies the real one;
// tests supply their own. A handler never touches the store: it gets what it needs here.
import type { JobTrigger } from '../contracts/jobs.ts';
import type { EmitJobEvent } from '../contracts/job-events.ts';
import type { CodeHostKind } from '../store/schema.ts';
import type { ChecksMode } from '../store/projects.ts';
import type { BuildSettings } from '../site-build/index.ts';
import type { BranchDiff, StoredChecks } from './changes.ts';
import type { JobSpend } from './budget.ts';
import { CodedError } from '../errors.ts';

export interface TurnMessage {
  /** 1 is the job's prompt; follow-ups count up from 2. */
  seq: number;
  prompt: string;
  /** The agent's title and summary, once the message is handled. */
  title: string | null;
  summary: string | null;
  handled: boolean;
}

export interface JobContext extends RunRecords {
  job: {
    id: string;
    projectId: string;
    model: string;
    repository: string;
    /** The job's own branch, e.g. folio/job_…; pushed to the code host. */
    ref: string;
    /** The project's base branch the job started from. */
    baseRef: string;
    /** Set when an earlier turn (or a run that died) already opened a pull request. */
    prLink: string | null;
    /** What started the job, as stored when it was created (never read from a prompt): a suggestion job may change only what it is for. */
    trigger: JobTrigger | null;
  };
  project: {
    id: string;
    name: string;
    repositoryUrl: string;
    baseBranch: string;
    codeHost: CodeHostKind;
    draftPrs: boolean;
    /** Per-project repository token; null means use the configured GITHUB_TOKEN / GITLAB_TOKEN. Never shown to the model. */
    repoToken: string | null;
    /** Docs checks before each push: strict, warn or off. */
    checks: ChecksMode;
    /** Hosts besides the site a redirect may lead to (normalised host names). */
    redirectHosts: string[];
    /** The site's own build as a check (src/site-build). */
    build: BuildSettings;
    /** The project's own instructions for the agent (agent/instructions.ts); null: none. */
    instructions: string | null;
  };
  /** Every message of the job in order, including `message`. */
  history: TurnMessage[];
  /** The message this turn handles. */
  message: TurnMessage;
  /** Aborted when the job is archived, the lease is lost or the process shuts down; `signal.reason` is an AbortReason. */
  signal: AbortSignal;
}

/** What a run records as it goes, on its job only (the worker's queue binds them to the job and its lease). */
export interface RunRecords {
  /** Records a job event (secrets must already be redacted). */
  emit: EmitJobEvent;
  /** Persists the pull request link as soon as it exists, so a resumed run reuses it; its title becomes the job's. */
  setPrLink(url: string, title?: string): Promise<void>;
  /** The job's spending limits and what it has spent over all its turns (jobs/budget.ts). */
  spend(): Promise<JobSpend>;
  /** Adds one model call's tokens to the job's usage (durable at once: counted even if the run dies later). */
  recordUsage(usage: { inputTokens: number; outputTokens: number }): Promise<void>;
  /** Stores what the job's pushed branch changed against its base (files, bounded diff). */
  saveBranchDiff(diff: BranchDiff): Promise<void>;
  /** Stores the docs checks report of this turn. */
  saveChecks(checks: StoredChecks): Promise<void>;
}

export type AbortReason = 'archived' | 'lease_lost' | 'shutdown';

export interface TurnResult {
  title: string;
  summary: string;
  /** The pull request of the job, if one exists after this turn. */
  prLink: string | null;
}

/** A failure that ends the job `failed` with this code and message (e.g. model_error, step_limit). */
export class JobFailure extends CodedError {}

export interface JobHandler {
  runTurn(ctx: JobContext): Promise<TurnResult>;
}
