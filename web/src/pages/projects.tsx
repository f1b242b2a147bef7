// Projects: the list and the form to create one.
import { useState, type FormEvent } from 'react';
import { CODE_HOST_KINDS, CODE_HOSTS } from '../../../src/codehost/kinds.ts';
import { api, errorMessage, type Project, type Session } from '../api.ts';
import { Link, navigate } from '../router.tsx';
import { Alert, Empty, Loading, useAsync, useTitle, ModelSelect } from '../ui.tsx';

export function ProjectsPage({ session }: { session: Session }) {
  useTitle('Projects');
  const projects = useAsync(() => api.projects(), []);
  const [creating, setCreating] = useState(false);

  return (
    <section className="stack">
      <div className="page-head">
        <h1>Projects</h1>
        {!creating && (projects.data?.length ?? 0) > 0 && (
          <button type="button" className="button" onClick={() => setCreating(true)}>
            New project
          </button>
        )}
      </div>
      {(creating || projects.data?.length === 0) && (
        <NewProject session={session} onCancel={projects.data?.length ? () => setCreating(false) : undefined} />
      )}
      {projects.loading && !projects.data && <Loading what="projects" />}
      {projects.error && <Alert title="Projects could not be loaded.">{projects.error}</Alert>}
      {projects.data?.length === 0 && !creating && (
        <Empty title="No projects yet">Create your first project above: the docs repository the agent works on.</Empty>
      )}
      {projects.data && projects.data.length > 0 && (
        <ul className="project-list" aria-label="Projects">
          {projects.data.map((p) => (
            <li key={p.id} className="card project-card">
              <h2>
                <Link href={`/projects/${p.id}/jobs`}>{p.name}</Link>
              </h2>
              <p className="muted mono small">{p.id}</p>
              <p className="small">
                {p.repositoryUrl} · <span className="muted">base</span> {p.baseBranch} · <span className="muted">{codeHostLabel(p.codeHost)}</span>
              </p>
              <nav aria-label={`${p.name} shortcuts`} className="inline-links small">
                <Link href={`/projects/${p.id}/jobs`}>Agent jobs</Link>
                <Link href={`/projects/${p.id}/analytics`}>Analytics</Link>
                <Link href={`/projects/${p.id}/keys`}>API keys</Link>
                <Link href={`/projects/${p.id}/settings`}>Settings</Link>
              </nav>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

export const codeHostLabel = (h: Project['codeHost']) => CODE_HOSTS[h].label;

/** The code hosts Folio knows, as <option>s (src/codehost/kinds.ts declares them). */
export function CodeHostOptions() {
  return (
    <>
      {CODE_HOST_KINDS.map((k) => (
        <option key={k} value={k}>
          {CODE_HOSTS[k].label} — {CODE_HOSTS[k].description}
        </option>
      ))}
    </>
  );
}

function NewProject({ session, onCancel }: { session: Session; onCancel?: () => void }) {
  const [name, setName] = useState('');
  const [repositoryUrl, setRepositoryUrl] = useState('');
  const [baseBranch, setBaseBranch] = useState('main');
  const [codeHost, setCodeHost] = useState<'' | Project['codeHost']>('');
  const [defaultModel, setDefaultModel] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const p = await api.createProject({
        name,
        repositoryUrl: repositoryUrl.trim(),
        baseBranch: baseBranch.trim() || 'main',
        ...(codeHost ? { codeHost } : {}),
        defaultModel: defaultModel || null,
      });
      navigate(`/projects/${p.id}/keys`);
    } catch (err) {
      setError(errorMessage(err));
      setBusy(false);
    }
  };

  return (
    <form className="card stack" onSubmit={submit} aria-labelledby="new-project-title">
      <h2 id="new-project-title">New project</h2>
      {error && <Alert>{error}</Alert>}
      <div className="grid-2">
        <div className="field">
          <label htmlFor="p-name">Name</label>
          <input id="p-name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} placeholder="Acme docs" />
        </div>
        <div className="field">
          <label htmlFor="p-repo">Repository URL</label>
          <input id="p-repo" required value={repositoryUrl} onChange={(e) => setRepositoryUrl(e.target.value)} placeholder="https://github.com/acme/docs" aria-describedby="p-repo-hint" />
          <p id="p-repo-hint" className="hint">The git repository of your docs (https://, ssh:// or git@host:org/repo.git).</p>
        </div>
        <div className="field">
          <label htmlFor="p-branch">Base branch</label>
          <input id="p-branch" required value={baseBranch} onChange={(e) => setBaseBranch(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="p-host">Code host</label>
          <select id="p-host" value={codeHost} onChange={(e) => setCodeHost(e.target.value as typeof codeHost)}>
            <option value="">Detect from the URL</option>
            <CodeHostOptions />
          </select>
        </div>
        <div className="field">
          <label htmlFor="p-model">Default model</label>
          <ModelSelect id="p-model" value={defaultModel} onChange={setDefaultModel} models={session.models} />
        </div>
      </div>
      <div className="actions">
        {onCancel && (
          <button type="button" className="button secondary" onClick={onCancel}>
            Cancel
          </button>
        )}
        <button type="submit" className="button" disabled={busy}>
          {busy ? 'Creating…' : 'Create project'}
        </button>
      </div>
    </form>
  );
}
