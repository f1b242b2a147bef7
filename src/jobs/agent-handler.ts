// The real job handler: prepares the job's worktree, runs the agent's tool loop, validates, commits,
// pushes and opens (or updates) the pull request. Every step becomes a job event, secrets redacted.
import path from 'node:path';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { EmitJobEvent } from '../contracts/job-events.ts';
import { createDocsChecks, type ChecksReport, type JobPolicy } from '../agent/checks/index.ts';
import { AgentFailure, runAgent, type AgentChecks, type AgentRunResult } from '../agent/loop.ts';
import { createModel, ModelConfigError } from '../agent/models.ts';
import { conversation, detectDocs, systemPrompt, type DocsProfile } from '../agent/prompts.ts';
import { openWorkspace, type Workspace } from '../agent/workspace.ts';
import { instructionsSection, nestedInstructions, readInstructions } from '../agent/instructions.ts';
import { jobTitle } from '../contracts/job-title.ts';
import { jobBudgetCheck } from './budget.ts';
import { MAX_PAGE_BYTES } from '../agent/checks/tree.ts';
import { CodeHostError, type CodeHost, type CodeHostAccess } from '../codehost/index.ts';
import type { WorktreePool } from '../git/worktree-pool.ts';
import { GitError, type Repo, type PreparedWorktree, type WorktreeLease } from '../git/git.ts';
import { accessFor, openRepository } from './repository.ts';
import { JobFailure, type JobContext, type JobHandler, type TurnMessage, type TurnResult } from './handler.ts';
import { MAX_STORED_DIFF_BYTES } from './changes.ts';
import { touchedPages } from './impact-pages.ts';
import { pullRequestBody } from './pr-description.ts';
import { SiteBuilds, withBuild } from '../site-build/index.ts';

export interface AgentHandlerOptions {
  /** The process's mirror locks, shared fetches and idle worktrees (the services own it). */
  pool: WorktreePool;
  /** First retry delay after a provider 429/5xx (doubles per retry). */
  retryBaseMs?: number;
}

function secretsOf(config: Config, project: JobContext['project']): string[] {
  return [
    project.repoToken,
    ...Object.values(config.codeHosts).map((host) => host.token),
    config.models.anthropic.apiKey,
    config.models.openai.apiKey,
    config.models.openaiCompatible.apiKey,
  ].filter((s): s is string => typeof s === 'string' && s.length >= 4);
}

export function redactDeep<T>(value: T, secrets: string[]): T {
  if (secrets.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      let out = v;
      for (const s of secrets) if (out.includes(s)) out = out.split(s).join('[redacted]');
      return out;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value) as T;
}

/** The job's page in the dashboard, when FOLIO_PUBLIC_URL says where the dashboard is. */
export function jobPageUrl(config: Config, projectId: string, jobId: string): string | null {
  return config.publicUrl ? `${config.publicUrl}/projects/${encodeURIComponent(projectId)}/jobs/${encodeURIComponent(jobId)}` : null;
}

/** Docs profiles by mirror and commit. */
type ProfileCache = LRUCache<string, Promise<DocsProfile>>;

export function createAgentHandler(config: Config, log: Logger, opts: AgentHandlerOptions): JobHandler {
  // Docs profiles by mirror and commit: a tree never changes, so jobs on the same base reuse it.
  const profileCache: ProfileCache = new LRUCache<string, Promise<DocsProfile>>({ max: 500 });
  const builds = new SiteBuilds(config.build);
  return {
    runTurn: (ctx: JobContext): Promise<TurnResult> => runTurn(ctx, { config, log, opts, profileCache, builds }),
  };
}

/** What the handler shares between the turns it runs. */
interface HandlerDeps {
  config: Config;
  log: Logger;
  opts: AgentHandlerOptions;
  profileCache: ProfileCache;
  /** The site's own build as a check, in the sandbox. */
  builds: SiteBuilds;
}

/** What every step of one turn works with: the job, its repository and code host, its redacted events. */
interface Turn {
  ctx: JobContext;
  config: Config;
  repo: Repo;
  host: CodeHost;
  /** The job's worktree. */
  dir: string;
  emit: EmitJobEvent;
  log: Logger;
  builds: SiteBuilds;
  /** The team's instruction files given to the model in this turn, in order (for the pull request). */
  followed: string[];
}

/** The job's worktree while the agent works: open for reading now, on the job branch once `prep` settles. */
interface StartedWorkspace {
  ws: Workspace;
  profile: DocsProfile;
  prep: Promise<PreparedWorktree>;
  /** Aborted with the preparation's error, so the agent stops when the worktree never becomes ready. */
  prepFailed: AbortController;
}

async function runTurn(ctx: JobContext, deps: HandlerDeps): Promise<TurnResult> {
  const { config, log } = deps;
  const { job, project, message, signal } = ctx;
  const secrets = secretsOf(config, project);
  const emit: EmitJobEvent = (type, data) => ctx.emit(type, redactDeep(data, secrets));
  const jobLog = log.child({ jobId: job.id, seq: message.seq });
  const model = modelFor(config, job.model);

  const access = accessFor(config, project);
  const failure = (err: unknown) => tokenRequired(access, err) ?? asJobFailure(err, secrets, jobLog);
  const { repo, host } = openRepositoryOrFail(deps, access, project.repositoryUrl, failure);
  const dir = path.join(config.dataDir, 'worktrees', job.id);
  const turn: Turn = { ctx, config, repo, host, dir, emit, log: jobLog, builds: deps.builds, followed: [] };
  let lease: WorktreeLease | undefined;

  try {
    const started = Date.now();
    // With a mirror already on disk, the first model call does not wait for fetch and checkout: the
    // docs profile comes from the mirror's tree, and tools wait until the worktree is ready.
    const warmStart = await repo.currentStart(job.ref, job.baseRef);
    // The job's own worktree at `dir`: a recycled one of this repository when the pool has one.
    lease = await repo.acquireWorktree(dir);
    const workspace = await startWorkspace(turn, lease, warmStart, deps.profileCache);
    const { profile, prep } = workspace;
    emitWorkspaceWhenReady(turn, prep, started);
    await emit('docs_profile', { framework: profile.framework, configFile: profile.configFile, docsRoot: profile.docsRoot });
    const prior = ctx.history.filter((m) => m.seq < message.seq);
    const { result, stopped } = await runOrStopAtLimit(turn, workspace, model, prior, deps.opts);
    const wt = await prep;
    if (!stopped) await emit('agent_finished', { title: result.title, summary: result.summary, steps: result.steps, usage: result.usage });

    const { commit, pushedSomething } = await commitAndPush(turn, result, wt);
    // What the whole job changed: its pushed branch against where it forked from the base.
    const head = commit?.sha ?? (wt.resumed ? wt.startSha : null);
    const files = head ? await saveBranchChanges(turn, head, wt.startSha) : [];
    // Stopped at its spending limit: the work is on the branch, the turn fails with the spend stated.
    if (stopped) throw new JobFailure(stopped.code, stopped.message);
    if (result.checks) await ctx.saveChecks(withChecksMode(project.checks, result.checks));

    let prLink = job.prLink;
    // The description is rewritten on every turn while the branch carries the job's work (also
    // when an earlier run pushed but died before the pull request existed).
    if (pushedSomething && host.kind !== 'none') prLink = await upsertPullRequest(turn, prior, result, files);
    jobLog.info({ prLink, committed: commit !== null, steps: result.steps }, 'agent turn finished');
    return { title: result.title, summary: result.summary, prLink };
  } catch (err) {
    if (signal.aborted) throw abortError(signal);
    if (err instanceof JobFailure) throw err;
    throw failure(err) ?? err;
  } finally {
    // Back to the pool (reset by the next job) or removed; the job branch leaves the mirror either way.
    await (lease ? lease.release() : repo.removeWorktree(dir, job.ref)).catch((e) => jobLog.warn({ err: e }, 'releasing the worktree failed'));
  }
}

/** The job's model; a model the operator did not configure fails the job with its own code. */
function modelFor(config: Config, jobModel: JobContext['job']['model']): ReturnType<typeof createModel> {
  try {
    return createModel(config.models, jobModel);
  } catch (err) {
    if (err instanceof ModelConfigError) throw new JobFailure('model_not_configured', err.message);
    throw err;
  }
}

/** The project's repository (git) and code host (pull requests), refusals turned into job failures. */
function openRepositoryOrFail(
  { config, opts }: HandlerDeps,
  access: CodeHostAccess,
  repositoryUrl: string,
  failure: (err: unknown) => JobFailure | null,
): { repo: Repo; host: CodeHost } {
  try {
    return openRepository(config, access, repositoryUrl, opts.pool);
  } catch (err) {
    throw failure(err) ?? err;
  }
}

/**
 * Opens the workspace and reads the docs profile. On a warm start the preparation (fetch, checkout)
 * runs in the background and the profile comes from the mirror's tree; otherwise the worktree is
 * prepared first and the profile read from it.
 */
async function startWorkspace(turn: Turn, lease: WorktreeLease, warmStart: string | null, profileCache: ProfileCache): Promise<StartedWorkspace> {
  const { job, signal } = turn.ctx;
  const prepFailed = new AbortController();
  const startPrep = () => {
    const p = lease.prepare(job.ref, job.baseRef, signal);
    p.catch((err) => prepFailed.abort(err));
    return p;
  };
  if (warmStart) {
    const ws = await openWorkspace(turn.dir);
    const prep = startPrep();
    const profile = await cachedProfile(turn.repo, warmStart, profileCache);
    return { ws, profile, prep, prepFailed };
  }
  const prep = startPrep();
  await prep;
  const ws = await openWorkspace(turn.dir);
  return { ws, profile: await detectDocs(ws), prep, prepFailed };
}

/** The docs profile of a commit in the mirror, computed once for concurrent and later jobs on it. */
function cachedProfile(repo: Repo, commit: string, profileCache: ProfileCache): Promise<DocsProfile> {
  const cacheKey = `${repo.mirror}@${commit}`;
  let cached = profileCache.get(cacheKey);
  if (!cached) {
    // Concurrent jobs on the same commit share one computation.
    cached = repo.treeSource(commit, MAX_PAGE_BYTES).then(detectDocs);
    profileCache.set(cacheKey, cached);
    cached.catch(() => profileCache.delete(cacheKey));
  }
  return cached;
}

/** The `workspace` event, once the worktree is on the job branch (a failed preparation is reported elsewhere). */
function emitWorkspaceWhenReady(turn: Turn, prep: Promise<PreparedWorktree>, started: number): void {
  const { job } = turn.ctx;
  void prep.then(
    (wt) =>
      turn.emit('workspace', {
        branch: job.ref,
        baseRef: job.baseRef,
        startSha: wt.startSha,
        resumed: wt.resumed,
        recycled: wt.recycled,
        ms: Date.now() - started,
      }),
    () => undefined,
  );
}

function withChecksMode(mode: JobContext['project']['checks'], report: ChecksReport) {
  return { mode, ...report };
}

/** The suggestion kind of a job started from one, by its stored trigger (never by its prompt); null for any other job. */
function suggestionOf(job: JobContext['job']): JobPolicy['suggestion'] {
  return job.trigger?.kind === 'suggestion' ? job.trigger.suggestionKind : null;
}

/**
 * The project's docs checks, comparing the workspace with the commit the job's branch forked from.
 * A suggestion job is checked even when the project turned its checks off: what it may change and
 * where its redirects lead are enforced whatever the mode.
 */
function docsChecksFor(turn: Turn, profile: DocsProfile, prep: Promise<PreparedWorktree>): AgentChecks | undefined {
  const { project, job } = turn.ctx;
  const suggestion = suggestionOf(job);
  if (project.checks === 'off' && suggestion === null) return undefined;
  const { repo } = turn;
  let fork: Promise<string> | undefined;
  const forkPoint = () => (fork ??= prep.then(async (w) => (await repo.forkPoint(w.startSha, job.baseRef)) ?? w.startSha));
  const base = async () => repo.treeSource(await forkPoint(), MAX_PAGE_BYTES);
  const priorChanges = async () => repo.changedPaths(await forkPoint(), (await prep).startSha);
  const enforcedOnly = project.checks === 'off';
  const docs = createDocsChecks({ profile, policy: { redirectHosts: project.redirectHosts, suggestion }, enforcedOnly, base, priorChanges });
  // The site's build belongs to the project's checks: not run when they are off (a suggestion job's enforced checks only).
  const build = enforcedOnly ? undefined : turn.builds.forTurn({ profile, settings: project.build, base, priorChanges, signal: turn.ctx.signal });
  if (!build) return { mode: project.checks, ...docs };
  return { mode: project.checks, run: async (ws) => withBuild(...(await Promise.all([docs.run(ws), build.run(ws)]))) };
}

/**
 * The agent's run, or — when it reaches the job's spending limit — what it did until then, as a result
 * to commit and push like any other, with the failure to end the turn with afterwards.
 */
async function runOrStopAtLimit(
  turn: Turn,
  workspace: StartedWorkspace,
  model: ReturnType<typeof createModel>,
  prior: TurnMessage[],
  opts: AgentHandlerOptions,
): Promise<{ result: AgentRunResult; stopped: AgentFailure | null }> {
  try {
    return { result: await runAgentOnWorkspace(turn, workspace, model, prior, opts), stopped: null };
  } catch (err) {
    if (!(err instanceof AgentFailure && err.code === 'budget_exceeded')) throw err;
    const title = jobTitle(`Stopped at the spending limit: ${turn.ctx.message.prompt}`);
    const usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
    return { result: { title, summary: err.message, steps: 0, usage, touched: [...workspace.ws.touched].sort(), checks: null }, stopped: err };
  }
}

/**
 * The team's instructions for this turn, read from the job's worktree once it is on the job branch:
 * the root files and the project's setting for the system prompt, and the nested AGENTS.md files as
 * notes on tool results. Each file given is a job event and a line of the pull request.
 */
async function teamInstructions(turn: Turn, { ws, prep }: StartedWorkspace): Promise<{ section: string; pathNotes: (p: string) => Promise<string | null> }> {
  await prep;
  const found = await readInstructions(ws, turn.ctx.project.instructions);
  turn.followed.push(...found.files.map((f) => f.path));
  if (found.files.length > 0 || found.skipped.length > 0) {
    await turn.emit('instructions', { files: found.files.map(({ path, scope, cut }) => ({ path, scope, cut })), skipped: found.skipped });
  }
  const pathNotes = nestedInstructions(ws, async ({ path, scope, cut }) => {
    turn.followed.push(path);
    await turn.emit('instructions', { files: [{ path, scope, cut }], skipped: [] });
  });
  return { section: instructionsSection(found), pathNotes };
}

/** The agent's tool loop on the job's workspace; stops when the worktree's preparation fails. */
async function runAgentOnWorkspace(
  turn: Turn,
  { ws, profile, prep, prepFailed }: StartedWorkspace,
  model: ReturnType<typeof createModel>,
  prior: TurnMessage[],
  opts: AgentHandlerOptions,
): Promise<AgentRunResult> {
  const { ctx, config } = turn;
  const { message, project, signal } = ctx;
  const checks = docsChecksFor(turn, profile, prep);
  try {
    const instructions = await teamInstructions(turn, { ws, profile, prep, prepFailed });
    return await runAgent({
      model,
      workspace: ws,
      workspaceReady: prep,
      system: systemPrompt(profile, { maxSteps: config.agent.maxSteps, instructions: instructions.section }),
      pathNotes: instructions.pathNotes,
      beforeCall: jobBudgetCheck(() => ctx.spend(), config.models.prices, turn.emit),
      messages: conversation(prior, message.prompt),
      limits: {
        maxSteps: config.agent.maxSteps,
        maxWallClockMs: config.agent.maxWallClockMs,
        maxTokens: config.agent.maxTokens,
        maxRepeatedCalls: config.agent.maxRepeatedCalls,
        maxValidationRounds: config.agent.maxValidationRounds,
        maxRetries: config.models.maxRetries,
        retryBaseMs: opts.retryBaseMs,
      },
      signal: AbortSignal.any([signal, prepFailed.signal]),
      emit: turn.emit,
      mdFormat: profile.mdFormat,
      headingIds: profile.headingIds,
      checks,
      onUsage: (u) => ctx.recordUsage(u),
    });
  } catch (err) {
    if (prepFailed.signal.aborted && !signal.aborted) throw prepFailed.signal.reason;
    // The report a failed run ended on stays visible in the dashboard.
    if (err instanceof AgentFailure && err.checks) await ctx.saveChecks(withChecksMode(project.checks, err.checks)).catch((e) => turn.log.warn({ err: e }, 'saving the checks failed'));
    throw err;
  }
}

/** Commits what the agent changed and pushes it; whether the branch now carries the job's work. */
async function commitAndPush(turn: Turn, result: AgentRunResult, wt: PreparedWorktree) {
  const { repo, dir, emit } = turn;
  const { job, signal } = turn.ctx;
  const commit = await repo.commitAll(dir, `${result.title}\n\n${result.summary}\n\nFolio-Job: ${job.id}\n`);
  let pushedSomething = wt.resumed;
  if (commit) {
    await emit('commit', { sha: commit.sha, files: commit.files.slice(0, 200), fileCount: commit.files.length });
    if (signal.aborted) throw abortError(signal);
    const sha = await repo.push(dir, job.ref, signal, commit.sha);
    await emit('push', { branch: job.ref, sha });
    pushedSomething = true;
  } else {
    await emit('no_changes', { message: 'The agent changed no files in this turn.' });
  }
  return { commit, pushedSomething };
}

type ChangedFiles = Awaited<ReturnType<Repo['diffFiles']>>;

/** Saves and reports the branch's diff from where it forked off the base up to `head`. */
async function saveBranchChanges(turn: Turn, head: string, startSha: string): Promise<ChangedFiles> {
  const { repo, emit, ctx } = turn;
  const base = (await repo.forkPoint(head, ctx.job.baseRef)) ?? startSha;
  const files = await repo.diffFiles(base, head);
  const diff = await repo.diffText(base, head, MAX_STORED_DIFF_BYTES);
  // The pages it touched, read while the repository is at hand; a failure leaves them to the first impact request.
  const pages = await touchedPages(repo, base, head, files).catch((err: unknown) => {
    turn.log.warn({ err }, 'the touched pages could not be read');
    return null;
  });
  await ctx.saveBranchDiff({ baseSha: base, headSha: head, files, diff: diff.text, diffTruncated: diff.truncated, pages });
  await emit('changes', {
    baseSha: base,
    headSha: head,
    files: files.length,
    additions: files.reduce((n, f) => n + f.additions, 0),
    deletions: files.reduce((n, f) => n + f.deletions, 0),
  });
  return files;
}

/** Opens or updates the job's pull request with a description of all its turns; the job's PR link after it. */
async function upsertPullRequest(turn: Turn, prior: TurnMessage[], result: AgentRunResult, files: ChangedFiles): Promise<string | null> {
  const { ctx, config, host, emit } = turn;
  const { job, project, message, signal } = ctx;
  let prLink = job.prLink;
  const turns: Pick<TurnMessage, 'prompt' | 'title' | 'summary'>[] = [
    ...prior,
    { prompt: message.prompt, title: result.title, summary: result.summary },
  ];
  const firstTitle = turns.find((t) => t.title)?.title ?? result.title;
  const body = pullRequestBody({
    jobId: job.id,
    jobUrl: jobPageUrl(config, job.projectId, job.id),
    turns,
    files,
    checks: result.checks ? withChecksMode(project.checks, result.checks) : null,
    checksMode: project.checks,
    baseBranch: job.baseRef,
    followed: turn.followed,
  });
  // A job no person started (the weekly automatic run) opens a draft where the host has drafts.
  const automatic = job.trigger?.kind === 'suggestion' && job.trigger.automatic;
  const pr = await host.upsert({ branch: job.ref, baseBranch: job.baseRef, title: firstTitle, body, draft: project.draftPrs || automatic }, signal);
  if (pr) {
    // The pull request's title is the job's title from now on (stored with the link).
    if (pr.url !== null) await ctx.setPrLink(pr.url, firstTitle);
    prLink = pr.url ?? prLink;
    await emit('pull_request', { url: pr.url, number: pr.number, created: pr.created, updated: !pr.created, ...(pr.linkRefused ? { linkRefused: pr.linkRefused } : {}) });
  }
  return prLink;
}

/**
 * The job failure for an error of the agent, git or the code host: its stable code and sentence,
 * secrets blanked. git's output (stderr) goes to the server log only. Null for anything else (a bug).
 */
function asJobFailure(err: unknown, secrets: string[], log: Logger): JobFailure | null {
  if (!(err instanceof AgentFailure || err instanceof GitError || err instanceof CodeHostError)) return null;
  if (err instanceof GitError && err.detail) log.warn({ code: err.code, detail: redactDeep(err.detail, secrets) }, 'git failed');
  return new JobFailure(err.code, redactDeep(err.message, secrets));
}

/**
 * The failure for a repository or API refusal when the operator's token was withheld (the repository
 * is on another host than the token's): the project needs its own token, said plainly.
 */
function tokenRequired(access: CodeHostAccess, err: unknown): JobFailure | null {
  if (!access.withheld) return null;
  const refused =
    (err instanceof GitError && (err.code === 'repository_auth_failed' || err.code === 'repository_not_found')) ||
    (err instanceof CodeHostError && (err.status === 401 || err.status === 403 || err.status === 404));
  return refused ? new JobFailure('repository_token_required', access.withheld) : null;
}

function abortError(signal: AbortSignal): Error {
  const err = new Error(`Run aborted: ${String(signal.reason)}`);
  err.name = 'AbortError';
  return err;
}
