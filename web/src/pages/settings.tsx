// Project settings: repository, branch, code host, model, draft PRs, checks, redirect hosts, webhook, analytics origins, script tag.
import { useState } from 'react';
import { api, type BuildSwitch, type ChecksMode, type Project, type ProjectInput, type ReviewCommentMode, type Session } from '../api.ts';
import { ActionForm, Alert, CopyButton, Fieldset, Loading, modelOptions, SelectField, StoredSecretField, SubmitButton, TextField, useAsync, useTitle, type Option } from '../ui.tsx';
import { TriggersSection } from './triggers.tsx';
import { CODE_HOST_OPTIONS } from './projects.tsx';
import { repositoryHint } from './projects.tsx';

export function SettingsPage({ projectId, session, onSaved }: { projectId: string; session: Session; onSaved: (p: Project) => void }) {
  const project = useAsync(() => api.project(projectId), [projectId]);
  useTitle(project.data ? `Settings · ${project.data.name}` : 'Settings');
  if (project.error) return <Alert title="Settings could not be loaded.">{project.error}</Alert>;
  if (!project.data) return <Loading what="settings" />;
  return (
    <div className="stack">
      <SettingsForm
        project={project.data}
        session={session}
        onSaved={(p) => {
          project.set(p);
          onSaved(p);
        }}
      />
      <TriggersSection projectId={project.data.id} />
    </div>
  );
}

const CHECKS_OPTIONS: readonly Option<ChecksMode>[] = [
  ['warn', 'Warn: list problems in the pull request'],
  ['strict', 'Strict: fail jobs that leave broken links'],
  ['off', 'Off'],
];

const REVIEW_OPTIONS: readonly Option<ReviewCommentMode>[] = [
  ['mention', 'A review requesting changes, or a comment naming the agent'],
  ['every', 'Every comment of a maintainer'],
];

const BUILD_OPTIONS: readonly Option<BuildSwitch>[] = [
  ['on', 'On: run the site’s build as a check'],
  ['off', 'Off'],
];

/** The form's fields as typed; secrets start empty since the server never returns them. */
interface Draft {
  name: string;
  repositoryUrl: string;
  baseBranch: string;
  codeHost: Project['codeHost'];
  repoToken: string;
  defaultModel: string;
  draftPrs: boolean;
  checks: ChecksMode;
  /** The weekly automatic broken-paths job's threshold as typed; empty: off. */
  autoFix: string;
  /** Hosts redirects may lead to besides the site, one per line. */
  redirectHosts: string;
  build: BuildSwitch;
  buildSetup: string;
  buildCommand: string;
  /** The build's time limit in seconds as typed; empty: the server's. */
  buildTimeout: string;
  /** The team's instructions and the spending limits as typed; empty: none. */
  instructions: string;
  maxCost: string;
  maxTokens: string;
  monthlyBudget: string;
  monthlyTokens: string;
  reviewComments: ReviewCommentMode;
  reviewMention: string;
  webhookUrl: string;
  webhookSecret: string;
  removeSecret: boolean;
  origins: string;
}

/** The value of one draft field and the setter of it, spread into the field's props. */
type Bind = <K extends keyof Draft>(key: K) => { value: Draft[K]; onChange: (value: Draft[K]) => void };

const draftOf = (p: Project): Draft => ({
  name: p.name,
  repositoryUrl: p.repositoryUrl,
  baseBranch: p.baseBranch,
  codeHost: p.codeHost,
  repoToken: '',
  defaultModel: p.defaultModel ?? '',
  draftPrs: p.draftPrs,
  checks: p.checks,
  autoFix: p.autoFixMinVisitors === null ? '' : String(p.autoFixMinVisitors),
  redirectHosts: p.redirectHosts.join('\n'),
  build: p.build,
  buildSetup: p.buildSetup ?? '',
  buildCommand: p.buildCommand ?? '',
  buildTimeout: p.buildTimeoutSeconds === null ? '' : String(p.buildTimeoutSeconds),
  instructions: p.instructions ?? '',
  maxCost: p.defaultMaxCostUsd === null ? '' : String(p.defaultMaxCostUsd),
  maxTokens: p.defaultMaxTokens === null ? '' : String(p.defaultMaxTokens),
  monthlyBudget: p.monthlyBudgetUsd === null ? '' : String(p.monthlyBudgetUsd),
  monthlyTokens: p.monthlyTokenBudget === null ? '' : String(p.monthlyTokenBudget),
  reviewComments: p.reviewComments,
  reviewMention: p.reviewMention,
  webhookUrl: p.webhookUrl ?? '',
  webhookSecret: '',
  removeSecret: false,
  origins: p.siteOrigins.join('\n'),
});

function Checkbox({ id, value, onChange }: { id: string; value: boolean; onChange: (checked: boolean) => void }) {
  return <input id={id} type="checkbox" checked={value} onChange={(e) => onChange(e.target.checked)} />;
}

/** The weekly job's threshold: empty is off; a whole number the server checks further (1 to 1,000,000). */
function autoFixOf(text: string): number | null {
  const t = text.trim();
  if (t === '') return null;
  if (!/^\d+$/.test(t)) throw new Error('"Fix broken paths weekly at" takes a whole number of visitors, or nothing to turn it off.');
  return Number(t);
}

/** A list typed one per line (or separated by spaces or commas). */
const listOf = (text: string): string[] =>
  text
    .split(/[\s,]+/)
    .map((o) => o.trim())
    .filter(Boolean);
/** The build's time limit: empty is the server's; a whole number the server checks further (10 to 3600). */
function buildTimeoutOf(text: string): number | null {
  const t = text.trim();
  if (t === '') return null;
  if (!/^\d+$/.test(t)) throw new Error('"Build time limit" takes a whole number of seconds, or nothing for the server’s.');
  return Number(t);
}

/** A limit as typed: empty is none; a number the server checks further (above 0, whole for tokens). */
function limitOf(text: string, label: string, whole: boolean): number | null {
  const t = text.trim().replace(/^\$/, '');
  if (t === '') return null;
  if (!(whole ? /^\d+$/ : /^\d+(\.\d+)?$/).test(t)) throw new Error(`"${label}" takes ${whole ? 'a whole number' : 'a number such as 0.50'}, or nothing for no limit.`);
  return Number(t);
}

/** What the server is sent: a secret only when typed (or removed), so an empty field keeps it. */
function inputOf(d: Draft): ProjectInput {
  const input: ProjectInput = {
    name: d.name,
    repositoryUrl: d.repositoryUrl.trim(),
    baseBranch: d.baseBranch.trim(),
    codeHost: d.codeHost,
    defaultModel: d.defaultModel || null,
    draftPrs: d.draftPrs,
    checks: d.checks,
    autoFixMinVisitors: autoFixOf(d.autoFix),
    redirectHosts: listOf(d.redirectHosts),
    build: d.build,
    buildSetup: d.buildSetup.trim() || null,
    buildCommand: d.buildCommand.trim() || null,
    buildTimeoutSeconds: buildTimeoutOf(d.buildTimeout),
    instructions: d.instructions.trim() || null,
    defaultMaxCostUsd: limitOf(d.maxCost, 'Limit per job ($)', false),
    defaultMaxTokens: limitOf(d.maxTokens, 'Limit per job (tokens)', true),
    monthlyBudgetUsd: limitOf(d.monthlyBudget, 'Monthly budget ($)', false),
    monthlyTokenBudget: limitOf(d.monthlyTokens, 'Monthly budget (tokens)', true),
    reviewComments: d.reviewComments,
    reviewMention: d.reviewMention.trim(),
    webhookUrl: d.webhookUrl.trim() || null,
    siteOrigins: listOf(d.origins),
  };
  if (d.webhookSecret) input.webhookSecret = d.webhookSecret;
  else if (d.removeSecret) input.webhookSecret = null;
  if (d.repoToken) input.repoToken = d.repoToken;
  return input;
}

function SettingsForm({ project, session, onSaved }: { project: Project; session: Session; onSaved: (p: Project) => void }) {
  const [draft, setDraft] = useState(() => draftOf(project));
  const [saved, setSaved] = useState(false);
  const bind: Bind = (key) => ({ value: draft[key], onChange: (value) => setDraft((d) => ({ ...d, [key]: value })) });

  const save = async () => {
    setSaved(false);
    const p = await api.updateProject(project.id, inputOf(draft));
    setDraft((d) => ({ ...d, webhookSecret: '', repoToken: '', removeSecret: false }));
    onSaved(p);
    setSaved(true);
  };

  return (
    <div className="stack">
      <h1>Settings</h1>
      <ActionForm action={save} errorTitle="Not saved." className="stack" onChange={() => setSaved(false)}>
        {saved && <Alert kind="success">Settings saved.</Alert>}
        <RepositoryFields bind={bind} project={project} session={session} />
        <AgentFields bind={bind} models={session.models} />
        <BuildFields bind={bind} />
        <InstructionsAndSpendingFields bind={bind} />
        <ReviewFields bind={bind} />
        <WebhookFields bind={bind} project={project} />
        <AnalyticsFields bind={bind} project={project} />
        <div className="actions">
          <SubmitButton label="Save settings" busyLabel="Saving…" />
        </div>
      </ActionForm>
    </div>
  );
}

function RepositoryFields({ bind, project, session }: { bind: Bind; project: Project; session: Session }) {
  return (
    <Fieldset legend="Repository">
      <div className="grid-2">
        <TextField id="s-name" label="Project name" required {...bind('name')} />
        <TextField id="s-repo" label="Repository URL" required {...bind('repositoryUrl')} hint={repositoryHint(session.repositories)} />
        <TextField id="s-branch" label="Base branch" required {...bind('baseBranch')} />
        <SelectField id="s-host" label="Code host" {...bind('codeHost')} options={CODE_HOST_OPTIONS} />
        <StoredSecretField
          id="s-token"
          label="Repository token"
          {...bind('repoToken')}
          isSet={project.hasRepoToken}
          unsetText="Uses the server’s GITHUB_TOKEN / GITLAB_TOKEN"
          hint="Stored on the server and never shown again."
        />
      </div>
    </Fieldset>
  );
}

function AgentFields({ bind, models }: { bind: Bind; models: Session['models'] }) {
  return (
    <Fieldset legend="Agent">
      <div className="grid-2">
        <SelectField id="s-model" label="Default model" {...bind('defaultModel')} options={modelOptions(models)} />
        <div className="field checkbox">
          <Checkbox id="s-draft" {...bind('draftPrs')} />
          <label htmlFor="s-draft">Open pull requests as drafts</label>
        </div>
        <SelectField
          id="s-checks"
          label="Docs checks"
          {...bind('checks')}
          options={CHECKS_OPTIONS}
          hint="Before each push the agent checks links, anchors, images, navigation and redirects, and fixes what it broke. Problems already on the base branch never count."
        />
        <TextField
          id="s-autofix"
          label="Fix broken paths weekly at"
          {...bind('autoFix')}
          placeholder="off"
          hint="Visitors a not-found path needs for Folio to start the broken-paths job by itself, once a week, counted by address and browser (a visitor cannot count twice by naming new ids). Empty: off (the default); Insights has the same job on demand."
        />
        <TextField
          id="s-redirect-hosts"
          label="Redirect hosts"
          rows={3}
          {...bind('redirectHosts')}
          placeholder="status.example.com"
          hint="One host name per line. A redirect a job writes may lead to these hosts besides the docs site; any other host is a problem of the redirect check. Suggestion jobs never redirect off the site."
        />
      </div>
    </Fieldset>
  );
}

function BuildFields({ bind }: { bind: Bind }) {
  return (
    <Fieldset legend="Site build">
      <p className="hint">
        With the docs checks, the agent runs the site’s own build in a sandbox (mkdocs build --strict, mint broken-links, docusaurus build, or your command) and fixes what it
        reports. Empty fields use the framework’s commands.
      </p>
      <div className="grid-2">
        <SelectField id="s-build" label="Site build" {...bind('build')} options={BUILD_OPTIONS} />
        <TextField id="s-build-timeout" label="Build time limit (seconds)" {...bind('buildTimeout')} placeholder="server default" hint="10 to 3600." />
        <TextField id="s-build-setup" label="Setup command" {...bind('buildSetup')} placeholder="framework default" hint="Installs the site’s dependencies; runs once per lockfile." />
        <TextField id="s-build-command" label="Build command" {...bind('buildCommand')} placeholder="framework default" />
      </div>
    </Fieldset>
  );
}

/** The team's instructions and the spending limits, kept together (docs/agent.md). */
function InstructionsAndSpendingFields({ bind }: { bind: Bind }) {
  return (
    <Fieldset legend="Instructions and spending">
      <TextField
        id="s-instructions"
        label="Instructions for the agent"
        rows={5}
        {...bind('instructions')}
        placeholder="Write in British English. Never use the word “simply”."
        hint="Given with the repository’s AGENTS.md, CLAUDE.md and similar files as the team’s conventions; they never override Folio’s own rules."
      />
      <div className="grid-2">
        <TextField id="s-max-cost" label="Limit per job ($)" {...bind('maxCost')} placeholder="none" hint="When a job names none; models with a price only. A job at its limit stops and keeps its branch." />
        <TextField id="s-max-tokens" label="Limit per job (tokens)" {...bind('maxTokens')} placeholder="none" hint="Input + output tokens; applies to every model." />
        <TextField id="s-monthly-budget" label="Monthly budget ($)" {...bind('monthlyBudget')} placeholder="none" hint="Once spent, new jobs and follow-ups are refused until the 1st of next month (UTC)." />
        <TextField id="s-monthly-tokens" label="Monthly budget (tokens)" {...bind('monthlyTokens')} placeholder="none" />
      </div>
    </Fieldset>
  );
}

/** Which review comments on Folio's pull requests start a follow-up (docs/triggers.md). */
function ReviewFields({ bind }: { bind: Bind }) {
  return (
    <Fieldset legend="Review comments">
      <p className="hint">
        Comments on Folio’s pull requests by people allowed to change the repository become follow-up turns of the job; Folio answers in the thread with its commit. Others’ comments are
        listed under the trigger deliveries with the reason.
      </p>
      <div className="grid-2">
        <SelectField id="s-review" label="Comments that act" {...bind('reviewComments')} options={REVIEW_OPTIONS} />
        <TextField id="s-review-mention" label="Name that calls the agent" {...bind('reviewMention')} placeholder="@folio" hint="@ and a user name." />
      </div>
    </Fieldset>
  );
}

function WebhookFields({ bind, project }: { bind: Bind; project: Project }) {
  return (
    <Fieldset legend="Webhook">
      <p className="hint">Folio POSTs the job to this URL on every status change, signed with HMAC-SHA256 of the secret.</p>
      <div className="grid-2">
        <TextField id="s-hook" label="Webhook URL" type="url" {...bind('webhookUrl')} placeholder="https://hooks.example.com/folio" />
        <StoredSecretField
          id="s-secret"
          label="Webhook secret"
          {...bind('webhookSecret')}
          isSet={project.hasWebhookSecret}
          unsetText="Not set"
          remove={{ label: 'Remove the secret', ...bind('removeSecret') }}
        />
      </div>
    </Fieldset>
  );
}

function AnalyticsFields({ bind, project }: { bind: Bind; project: Project }) {
  return (
    <Fieldset legend="Analytics">
      <TextField
        id="s-origins"
        label="Site origins"
        rows={3}
        {...bind('origins')}
        placeholder="https://docs.example.com"
        hint="One per line. Only pages on these origins may send browser analytics."
      />
      <div className="field">
        <span className="label" id="script-label">Script tag to paste into every page</span>
        <div className="copy-row">
          <code className="codeblock" aria-labelledby="script-label">{project.scriptTag}</code>
          <CopyButton value={project.scriptTag} what="script tag" />
        </div>
      </div>
    </Fieldset>
  );
}
