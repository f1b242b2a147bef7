// Project settings: repository, branch, code host, model, draft PRs, webhook, analytics origins, script tag.
import { useState } from 'react';
import { api, type ChecksMode, type Project, type ProjectInput, type Session } from '../api.ts';
import { ActionForm, Alert, CopyButton, Fieldset, Loading, modelOptions, SelectField, StoredSecretField, SubmitButton, TextField, useAsync, useTitle, type Option } from '../ui.tsx';
import { TriggersSection } from './triggers.tsx';
import { CODE_HOST_OPTIONS } from './projects.tsx';

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
  webhookUrl: string;
  webhookSecret: string;
  removeSecret: boolean;
  origins: string;
}

type Edit = (change: Partial<Draft>) => void;

const draftOf = (p: Project): Draft => ({
  name: p.name,
  repositoryUrl: p.repositoryUrl,
  baseBranch: p.baseBranch,
  codeHost: p.codeHost,
  repoToken: '',
  defaultModel: p.defaultModel ?? '',
  draftPrs: p.draftPrs,
  checks: p.checks,
  webhookUrl: p.webhookUrl ?? '',
  webhookSecret: '',
  removeSecret: false,
  origins: p.siteOrigins.join('\n'),
});

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
    webhookUrl: d.webhookUrl.trim() || null,
    siteOrigins: d.origins
      .split(/[\s,]+/)
      .map((o) => o.trim())
      .filter(Boolean),
  };
  if (d.webhookSecret) input.webhookSecret = d.webhookSecret;
  else if (d.removeSecret) input.webhookSecret = null;
  if (d.repoToken) input.repoToken = d.repoToken;
  return input;
}

function SettingsForm({ project, session, onSaved }: { project: Project; session: Session; onSaved: (p: Project) => void }) {
  const [draft, setDraft] = useState(() => draftOf(project));
  const [saved, setSaved] = useState(false);
  const edit: Edit = (change) => setDraft((d) => ({ ...d, ...change }));

  const save = async () => {
    setSaved(false);
    const p = await api.updateProject(project.id, inputOf(draft));
    edit({ webhookSecret: '', repoToken: '', removeSecret: false });
    onSaved(p);
    setSaved(true);
  };

  return (
    <div className="stack">
      <h1>Settings</h1>
      <ActionForm action={save} errorTitle="Not saved." className="stack" onChange={() => setSaved(false)}>
        {saved && <Alert kind="success">Settings saved.</Alert>}
        <RepositoryFields draft={draft} edit={edit} project={project} />
        <AgentFields draft={draft} edit={edit} models={session.models} />
        <WebhookFields draft={draft} edit={edit} project={project} />
        <AnalyticsFields draft={draft} edit={edit} project={project} />
        <div className="actions">
          <SubmitButton label="Save settings" busyLabel="Saving…" />
        </div>
      </ActionForm>
    </div>
  );
}

function RepositoryFields({ draft, edit, project }: { draft: Draft; edit: Edit; project: Project }) {
  return (
    <Fieldset legend="Repository">
      <div className="grid-2">
        <TextField id="s-name" label="Project name" required value={draft.name} onChange={(name) => edit({ name })} />
        <TextField id="s-repo" label="Repository URL" required value={draft.repositoryUrl} onChange={(repositoryUrl) => edit({ repositoryUrl })} />
        <TextField id="s-branch" label="Base branch" required value={draft.baseBranch} onChange={(baseBranch) => edit({ baseBranch })} />
        <SelectField id="s-host" label="Code host" value={draft.codeHost} onChange={(codeHost) => edit({ codeHost })} options={CODE_HOST_OPTIONS} />
        <StoredSecretField
          id="s-token"
          label="Repository token"
          value={draft.repoToken}
          onChange={(repoToken) => edit({ repoToken })}
          isSet={project.hasRepoToken}
          unsetText="Uses the server’s GITHUB_TOKEN / GITLAB_TOKEN"
          hint="Stored on the server and never shown again."
        />
      </div>
    </Fieldset>
  );
}

function AgentFields({ draft, edit, models }: { draft: Draft; edit: Edit; models: Session['models'] }) {
  return (
    <Fieldset legend="Agent">
      <div className="grid-2">
        <SelectField id="s-model" label="Default model" value={draft.defaultModel} onChange={(defaultModel) => edit({ defaultModel })} options={modelOptions(models)} />
        <div className="field checkbox">
          <input id="s-draft" type="checkbox" checked={draft.draftPrs} onChange={(e) => edit({ draftPrs: e.target.checked })} />
          <label htmlFor="s-draft">Open pull requests as drafts</label>
        </div>
        <SelectField
          id="s-checks"
          label="Docs checks"
          value={draft.checks}
          onChange={(checks) => edit({ checks })}
          options={CHECKS_OPTIONS}
          hint="Before each push the agent checks links, anchors, images, navigation and redirects, and fixes what it broke. Problems already on the base branch never count."
        />
      </div>
    </Fieldset>
  );
}

function WebhookFields({ draft, edit, project }: { draft: Draft; edit: Edit; project: Project }) {
  const remove = { label: 'Remove the secret', checked: draft.removeSecret, onChange: (removeSecret: boolean) => edit({ removeSecret }) };
  return (
    <Fieldset legend="Webhook">
      <p className="hint">Folio POSTs the job to this URL on every status change, signed with HMAC-SHA256 of the secret.</p>
      <div className="grid-2">
        <TextField id="s-hook" label="Webhook URL" type="url" value={draft.webhookUrl} onChange={(webhookUrl) => edit({ webhookUrl })} placeholder="https://hooks.example.com/folio" />
        <StoredSecretField
          id="s-secret"
          label="Webhook secret"
          value={draft.webhookSecret}
          onChange={(webhookSecret) => edit({ webhookSecret })}
          isSet={project.hasWebhookSecret}
          unsetText="Not set"
          remove={remove}
        />
      </div>
    </Fieldset>
  );
}

function AnalyticsFields({ draft, edit, project }: { draft: Draft; edit: Edit; project: Project }) {
  return (
    <Fieldset legend="Analytics">
      <TextField
        id="s-origins"
        label="Site origins"
        rows={3}
        value={draft.origins}
        onChange={(origins) => edit({ origins })}
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
