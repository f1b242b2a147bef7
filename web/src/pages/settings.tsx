// Project settings: repository, branch, code host, model, draft PRs, webhook, analytics origins, script tag.
import { useState, type FormEvent } from 'react';
import { api, errorMessage, type ChecksMode, type Project, type ProjectInput, type Session } from '../api.ts';
import { Alert, CopyButton, Loading, useAsync, useTitle, ModelSelect } from '../ui.tsx';
import { TriggersSection } from './triggers.tsx';
import { CodeHostOptions } from './projects.tsx';

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

function SettingsForm({ project, session, onSaved }: { project: Project; session: Session; onSaved: (p: Project) => void }) {
  const [name, setName] = useState(project.name);
  const [repositoryUrl, setRepositoryUrl] = useState(project.repositoryUrl);
  const [baseBranch, setBaseBranch] = useState(project.baseBranch);
  const [codeHost, setCodeHost] = useState(project.codeHost);
  const [defaultModel, setDefaultModel] = useState(project.defaultModel ?? '');
  const [draftPrs, setDraftPrs] = useState(project.draftPrs);
  const [checks, setChecks] = useState<ChecksMode>(project.checks);
  const [webhookUrl, setWebhookUrl] = useState(project.webhookUrl ?? '');
  const [webhookSecret, setWebhookSecret] = useState('');
  const [removeSecret, setRemoveSecret] = useState(false);
  const [origins, setOrigins] = useState(project.siteOrigins.join('\n'));
  const [repoToken, setRepoToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(false);
    const input: ProjectInput = {
      name,
      repositoryUrl: repositoryUrl.trim(),
      baseBranch: baseBranch.trim(),
      codeHost,
      defaultModel: defaultModel || null,
      draftPrs,
      checks,
      webhookUrl: webhookUrl.trim() || null,
      siteOrigins: origins
        .split(/[\s,]+/)
        .map((o) => o.trim())
        .filter(Boolean),
    };
    if (webhookSecret) input.webhookSecret = webhookSecret;
    else if (removeSecret) input.webhookSecret = null;
    if (repoToken) input.repoToken = repoToken;
    try {
      const p = await api.updateProject(project.id, input);
      setWebhookSecret('');
      setRepoToken('');
      setRemoveSecret(false);
      onSaved(p);
      setSaved(true);
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="stack">
      <h1>Settings</h1>
      <form className="stack" onSubmit={submit} onChange={() => setSaved(false)}>
        {error && <Alert title="Not saved.">{error}</Alert>}
        {saved && <Alert kind="success">Settings saved.</Alert>}
        <fieldset className="card stack">
          <legend>Repository</legend>
          <div className="grid-2">
            <div className="field">
              <label htmlFor="s-name">Project name</label>
              <input id="s-name" required value={name} onChange={(e) => setName(e.target.value)} />
            </div>
            <div className="field">
              <label htmlFor="s-repo">Repository URL</label>
              <input id="s-repo" required value={repositoryUrl} onChange={(e) => setRepositoryUrl(e.target.value)} />
            </div>
            <div className="field">
              <label htmlFor="s-branch">Base branch</label>
              <input id="s-branch" required value={baseBranch} onChange={(e) => setBaseBranch(e.target.value)} />
            </div>
            <div className="field">
              <label htmlFor="s-host">Code host</label>
              <select id="s-host" value={codeHost} onChange={(e) => setCodeHost(e.target.value as Project['codeHost'])}>
                <CodeHostOptions />
              </select>
            </div>
            <div className="field">
              <label htmlFor="s-token">Repository token</label>
              <input
                id="s-token"
                type="password"
                autoComplete="off"
                value={repoToken}
                onChange={(e) => setRepoToken(e.target.value)}
                placeholder={project.hasRepoToken ? 'Set — type to replace' : 'Uses the server’s GITHUB_TOKEN / GITLAB_TOKEN'}
                aria-describedby="s-token-hint"
              />
              <p id="s-token-hint" className="hint">Stored on the server and never shown again.</p>
            </div>
          </div>
        </fieldset>

        <fieldset className="card stack">
          <legend>Agent</legend>
          <div className="grid-2">
            <div className="field">
              <label htmlFor="s-model">Default model</label>
              <ModelSelect id="s-model" value={defaultModel} onChange={setDefaultModel} models={session.models} />
            </div>
            <div className="field checkbox">
              <input id="s-draft" type="checkbox" checked={draftPrs} onChange={(e) => setDraftPrs(e.target.checked)} />
              <label htmlFor="s-draft">Open pull requests as drafts</label>
            </div>
            <div className="field">
              <label htmlFor="s-checks">Docs checks</label>
              <select id="s-checks" value={checks} onChange={(e) => setChecks(e.target.value as ChecksMode)} aria-describedby="s-checks-hint">
                <option value="warn">Warn: list problems in the pull request</option>
                <option value="strict">Strict: fail jobs that leave broken links</option>
                <option value="off">Off</option>
              </select>
              <p id="s-checks-hint" className="hint">
                Before each push the agent checks links, anchors, images, navigation and redirects, and fixes what it broke. Problems already on the base branch never count.
              </p>
            </div>
          </div>
        </fieldset>

        <fieldset className="card stack">
          <legend>Webhook</legend>
          <p className="hint">Folio POSTs the job to this URL on every status change, signed with HMAC-SHA256 of the secret.</p>
          <div className="grid-2">
            <div className="field">
              <label htmlFor="s-hook">Webhook URL</label>
              <input id="s-hook" type="url" value={webhookUrl} onChange={(e) => setWebhookUrl(e.target.value)} placeholder="https://hooks.example.com/folio" />
            </div>
            <div className="field">
              <label htmlFor="s-secret">Webhook secret</label>
              <input
                id="s-secret"
                type="password"
                autoComplete="off"
                value={webhookSecret}
                onChange={(e) => setWebhookSecret(e.target.value)}
                placeholder={project.hasWebhookSecret ? 'Set — type to replace' : 'Not set'}
              />
              {project.hasWebhookSecret && (
                <label className="inline small">
                  <input type="checkbox" checked={removeSecret} onChange={(e) => setRemoveSecret(e.target.checked)} /> Remove the secret
                </label>
              )}
            </div>
          </div>
        </fieldset>

        <fieldset className="card stack">
          <legend>Analytics</legend>
          <div className="field">
            <label htmlFor="s-origins">Site origins</label>
            <textarea id="s-origins" rows={3} value={origins} onChange={(e) => setOrigins(e.target.value)} placeholder="https://docs.example.com" aria-describedby="s-origins-hint" />
            <p id="s-origins-hint" className="hint">One per line. Only pages on these origins may send browser analytics.</p>
          </div>
          <div className="field">
            <span className="label" id="script-label">Script tag to paste into every page</span>
            <div className="copy-row">
              <code className="codeblock" aria-labelledby="script-label">{project.scriptTag}</code>
              <CopyButton value={project.scriptTag} what="script tag" />
            </div>
          </div>
        </fieldset>

        <div className="actions">
          <button type="submit" className="button" disabled={busy}>
            {busy ? 'Saving…' : 'Save settings'}
          </button>
        </div>
      </form>
    </div>
  );
}
