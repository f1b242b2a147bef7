// Project settings, code-change triggers: where GitHub and GitLab send webhooks, the secret (shown
// once), the watched repositories with their events and filters, the prompt template, and the
// recent deliveries with what each did.
import { useState, type FormEvent } from 'react';
import { api, errorMessage, type RepositoryInput, type TriggerDelivery, type TriggerEvent, type TriggerSettings, type WatchedRepository } from '../api.ts';
import { Link } from '../router.tsx';
import { Alert, CopyButton, Empty, formatDate, Loading, timeAgo, useAsync } from '../ui.tsx';

const EVENTS: [TriggerEvent, string][] = [
  ['merged', 'Merged pull requests'],
  ['opened', 'Opened pull requests (new commits follow up)'],
  ['push', 'Pushes to the default branch'],
];

interface RepoForm {
  key: string;
  id?: string;
  host: WatchedRepository['host'];
  repositoryUrl: string;
  events: TriggerEvent[];
  paths: string;
  labels: string;
  token: string;
  hasToken: boolean;
  removeToken: boolean;
}

let nextKey = 0;
const formOf = (r?: WatchedRepository): RepoForm => ({
  key: `r${nextKey++}`,
  id: r?.id,
  host: r?.host ?? 'github',
  repositoryUrl: r?.repositoryUrl ?? '',
  events: r?.events ?? ['merged'],
  paths: (r?.paths ?? []).join('\n'),
  labels: (r?.labels ?? []).join(', '),
  token: '',
  hasToken: r?.hasToken ?? false,
  removeToken: false,
});

function inputOf(f: RepoForm): RepositoryInput {
  const input: RepositoryInput = {
    ...(f.id ? { id: f.id } : {}),
    host: f.host,
    repositoryUrl: f.repositoryUrl.trim(),
    events: f.events,
    paths: f.paths.split('\n').map((p) => p.trim()).filter(Boolean),
    labels: f.labels.split(',').map((l) => l.trim()).filter(Boolean),
  };
  if (f.token.trim()) input.token = f.token.trim();
  else if (f.removeToken) input.token = null;
  return input;
}

export function TriggersSection({ projectId }: { projectId: string }) {
  const settings = useAsync(() => api.triggers(projectId), [projectId]);
  if (settings.error) return <Alert title="Code-change triggers could not be loaded.">{settings.error}</Alert>;
  if (!settings.data) return <Loading what="code-change triggers" />;
  return <Triggers projectId={projectId} initial={settings.data} onChange={settings.set} />;
}

function Triggers({ projectId, initial, onChange }: { projectId: string; initial: TriggerSettings; onChange: (s: TriggerSettings) => void }) {
  const [repos, setRepos] = useState<RepoForm[]>(() => initial.repositories.map(formOf));
  const [template, setTemplate] = useState(initial.template);
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const deliveries = useAsync(() => api.triggerDeliveries(projectId), [projectId]);

  const update = (key: string, change: Partial<RepoForm>) => setRepos((rs) => rs.map((r) => (r.key === key ? { ...r, ...change } : r)));

  const save = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      const next = await api.saveTriggers(projectId, { repositories: repos.map(inputOf), template: template === initial.defaultTemplate ? null : template });
      setRepos(next.repositories.map(formOf));
      setTemplate(next.template);
      onChange(next);
      setSaved(true);
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  const makeSecret = async () => {
    setError(null);
    try {
      const made = await api.makeTriggerSecret(projectId);
      setSecret(made.secret);
      const { secret: _, ...rest } = made;
      onChange(rest);
    } catch (err) {
      setError(errorMessage(err));
    }
  };

  return (
    <section className="stack" aria-labelledby="triggers-title">
      <h2 id="triggers-title">Code-change triggers</h2>
      <p className="hint">
        Start an agent job when code changes: point a GitHub or GitLab webhook of your code repository at this project, and Folio opens a docs pull
        request for every merged pull request (or as configured below). See docs/triggers.md.
      </p>

      <div className="card stack">
        <span className="label" id="gh-endpoint">Endpoint for GitHub (Payload URL; content type application/json)</span>
        <div className="copy-row">
          <code className="codeblock" aria-labelledby="gh-endpoint" data-testid="github-endpoint">{initial.endpoints.github}</code>
          <CopyButton value={initial.endpoints.github} what="GitHub endpoint" />
        </div>
        <span className="label" id="gl-endpoint">Endpoint for GitLab (URL)</span>
        <div className="copy-row">
          <code className="codeblock" aria-labelledby="gl-endpoint">{initial.endpoints.gitlab}</code>
          <CopyButton value={initial.endpoints.gitlab} what="GitLab endpoint" />
        </div>
        {secret ? (
          <div className="stack new-key">
            <Alert kind="warning" title="Copy this secret now.">
              Paste it into the webhook’s Secret (GitHub) or Secret token (GitLab). It is shown only this once; Folio keeps it encrypted.
            </Alert>
            <div className="copy-row">
              <code className="codeblock key" data-testid="trigger-secret">{secret}</code>
              <CopyButton value={secret} what="trigger secret" />
            </div>
          </div>
        ) : (
          <p className="small">
            {initial.hasSecret ? `Webhook secret set ${formatDate(initial.secretCreatedAt)}.` : 'No webhook secret yet: deliveries are refused until you make one.'}
          </p>
        )}
        <div className="actions">
          <button type="button" className="button secondary" onClick={makeSecret}>
            {initial.hasSecret ? 'Make a new secret' : 'Make a secret'}
          </button>
        </div>
      </div>

      <form className="stack" onSubmit={save} onChange={() => setSaved(false)} aria-label="Code-change trigger settings">
        {error && <Alert title="Not saved.">{error}</Alert>}
        {saved && <Alert kind="success">Saved the trigger settings.</Alert>}
        <fieldset className="card stack">
          <legend>Watched repositories</legend>
          {repos.length === 0 && <p className="hint">No repository is watched: webhooks are answered but start nothing.</p>}
          {repos.map((r, i) => (
            <div className="stack watched-repo" key={r.key} role="group" aria-label={`Watched repository ${i + 1}`}>
              <div className="grid-2">
                <div className="field">
                  <label htmlFor={`t-url-${r.key}`}>Code repository</label>
                  <input id={`t-url-${r.key}`} required value={r.repositoryUrl} onChange={(e) => update(r.key, { repositoryUrl: e.target.value })} placeholder="https://github.com/acme/api" />
                </div>
                <div className="field">
                  <label htmlFor={`t-host-${r.key}`}>Host</label>
                  <select id={`t-host-${r.key}`} value={r.host} onChange={(e) => update(r.key, { host: e.target.value as RepoForm['host'] })}>
                    <option value="github">GitHub / GitHub Enterprise</option>
                    <option value="gitlab">GitLab</option>
                  </select>
                </div>
              </div>
              <fieldset className="stack plain">
                <legend className="small">Start a job on</legend>
                {EVENTS.map(([ev, label]) => (
                  <label className="inline small" key={ev}>
                    <input
                      type="checkbox"
                      checked={r.events.includes(ev)}
                      onChange={(e) => update(r.key, { events: e.target.checked ? [...r.events, ev] : r.events.filter((x) => x !== ev) })}
                    />{' '}
                    {label}
                  </label>
                ))}
              </fieldset>
              <div className="grid-3">
                <div className="field">
                  <label htmlFor={`t-paths-${r.key}`}>Only when these paths change</label>
                  <textarea id={`t-paths-${r.key}`} rows={3} value={r.paths} onChange={(e) => update(r.key, { paths: e.target.value })} placeholder={'src/**\napi/*.proto'} />
                  <p className="hint">Globs, one per line; empty means any file.</p>
                </div>
                <div className="field">
                  <label htmlFor={`t-labels-${r.key}`}>Only with one of these labels</label>
                  <input id={`t-labels-${r.key}`} value={r.labels} onChange={(e) => update(r.key, { labels: e.target.value })} placeholder="docs-needed" />
                  <p className="hint">Comma-separated; empty means any pull request.</p>
                </div>
                <div className="field">
                  <label htmlFor={`t-token-${r.key}`}>API token to read changes</label>
                  <input
                    id={`t-token-${r.key}`}
                    type="password"
                    autoComplete="off"
                    value={r.token}
                    onChange={(e) => update(r.key, { token: e.target.value })}
                    placeholder={r.hasToken ? 'Set — type to replace' : 'Uses GITHUB_TOKEN / GITLAB_TOKEN'}
                  />
                  {r.hasToken && (
                    <label className="inline small">
                      <input type="checkbox" checked={r.removeToken} onChange={(e) => update(r.key, { removeToken: e.target.checked })} /> Remove the token
                    </label>
                  )}
                </div>
              </div>
              <div className="actions">
                <button type="button" className="button small danger-outline" onClick={() => setRepos((rs) => rs.filter((x) => x.key !== r.key))} aria-label={`Stop watching repository ${i + 1}`}>
                  Stop watching
                </button>
              </div>
            </div>
          ))}
          <div>
            <button type="button" className="button small secondary" onClick={() => setRepos((rs) => [...rs, formOf()])}>
              Watch a repository
            </button>
          </div>
        </fieldset>

        <fieldset className="card stack">
          <legend>Prompt template</legend>
          <div className="field">
            <label htmlFor="t-template">The instruction each job gets</label>
            <textarea id="t-template" rows={12} value={template} onChange={(e) => setTemplate(e.target.value)} aria-describedby="t-template-hint" />
            <p id="t-template-hint" className="hint">
              Placeholders: {initial.placeholders.map((p) => `{{${p}}}`).join(' ')}. Description and changes are inserted as quoted blocks that the
              change’s text cannot break out of.
            </p>
          </div>
          <div>
            <button type="button" className="button small secondary" onClick={() => setTemplate(initial.defaultTemplate)}>
              Use the default template
            </button>
          </div>
        </fieldset>

        <div className="actions">
          <button type="submit" className="button" disabled={busy}>
            {busy ? 'Saving…' : 'Save trigger settings'}
          </button>
        </div>
      </form>

      <section className="stack" aria-labelledby="deliveries-title">
        <div className="copy-row">
          <h3 id="deliveries-title">Recent deliveries</h3>
          <button type="button" className="button small secondary" onClick={deliveries.reload}>
            Refresh
          </button>
        </div>
        {initial.refusedDeliveries > 0 && (
          <p className="muted small">
            {initial.refusedDeliveries === 1 ? '1 delivery was refused' : `${initial.refusedDeliveries} deliveries were refused`} before a signature checked out
            {initial.lastRefusedAt ? ` (the last ${timeAgo(initial.lastRefusedAt)})` : ''}: a wrong or missing secret, or too large to verify. They are counted, not
            listed, since anyone can send them.
          </p>
        )}
        {deliveries.error && <Alert title="Deliveries could not be loaded.">{deliveries.error}</Alert>}
        {deliveries.data?.length === 0 && <Empty title="No deliveries yet">Webhooks received for this project show up here with what they did.</Empty>}
        {deliveries.data && deliveries.data.length > 0 && <DeliveriesTable projectId={projectId} rows={deliveries.data} />}
      </section>
    </section>
  );
}

function DeliveriesTable({ projectId, rows }: { projectId: string; rows: TriggerDelivery[] }) {
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Received</th>
            <th scope="col">Event</th>
            <th scope="col">Outcome</th>
            <th scope="col">Reason</th>
            <th scope="col">Job</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((d) => (
            <tr key={d.id}>
              <td title={d.receivedAt}>{timeAgo(d.receivedAt)}</td>
              <td>
                {d.host === 'github' ? 'GitHub' : 'GitLab'} {d.event ?? ''}
              </td>
              <td>
                <span className={`badge delivery-${d.outcome}`}>{d.outcome.replace('_', ' ')}</span> <span className="muted small">{d.statusCode}</span>
              </td>
              <td className="small">{d.reason}</td>
              <td>{d.jobId ? <Link href={`/projects/${encodeURIComponent(projectId)}/jobs/${encodeURIComponent(d.jobId)}`}>{d.jobId}</Link> : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
