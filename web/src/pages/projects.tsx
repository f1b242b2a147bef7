// Projects: the list and the form to create one.
import { useState } from 'react';
import { CODE_HOST_KINDS, CODE_HOSTS } from '../../../src/codehost/kinds.ts';
import { api, type Project, type Session } from '../api.ts';
import { Link, navigate } from '../router.tsx';
import { ActionForm, Alert, Empty, Loading, modelOptions, SelectField, SubmitButton, TextField, useAsync, useTitle, type Option } from '../ui.tsx';

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
                <Link href={`/projects/${p.id}/insights`}>Insights</Link>
                <Link href={`/projects/${p.id}/usage`}>Usage</Link>
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

/** The code hosts Folio knows, as choices of a select (src/codehost/kinds.ts declares them). */
export const CODE_HOST_OPTIONS: readonly Option<Project['codeHost']>[] = CODE_HOST_KINDS.map((k) => [k, `${CODE_HOSTS[k].label} — ${CODE_HOSTS[k].description}`]);

/** The forms of repository URL this server accepts (FOLIO_GIT_PROTOCOLS, FOLIO_ALLOW_LOCAL_REPOSITORIES): each named once, none denied. */
export function repositoryHint(r: Session['repositories']): string {
  const forms = ['https://host/org/repo.git'];
  if (r.protocols.includes('http')) forms.push('http://');
  if (r.protocols.includes('ssh')) forms.push('ssh://', 'git@host:org/repo.git');
  if (r.allowLocal) forms.push('a local path or file://');
  if (forms.length === 1) return `The git repository of your docs: ${forms[0]} (this server takes HTTPS URLs only).`;
  return `The git repository of your docs: ${forms.slice(0, -1).join(', ')} or ${forms.at(-1)}.`;
}

function CreatedWithWarnings({ project }: { project: Project }) {
  return (
    <div className="card stack">
      <h2>Project created</h2>
      {project.warnings!.map((w) => (
        <Alert key={w} kind="warning">
          {w}
        </Alert>
      ))}
      <p>
        <Link href={`/projects/${project.id}/keys`}>Continue to {project.name}’s API keys</Link> · <Link href={`/projects/${project.id}/settings`}>Check its settings</Link>
      </p>
    </div>
  );
}

function NewProject({ session, onCancel }: { session: Session; onCancel?: () => void }) {
  const [name, setName] = useState('');
  const [repositoryUrl, setRepositoryUrl] = useState('');
  const [baseBranch, setBaseBranch] = useState('main');
  const [codeHost, setCodeHost] = useState<'' | Project['codeHost']>('');
  const [defaultModel, setDefaultModel] = useState('');

  const [created, setCreated] = useState<Project | null>(null);

  const create = async () => {
    const p = await api.createProject({
      name,
      repositoryUrl: repositoryUrl.trim(),
      baseBranch: baseBranch.trim() || 'main',
      ...(codeHost ? { codeHost } : {}),
      defaultModel: defaultModel || null,
    });
    // The repository could not be asked (its host did not answer): say so before moving on.
    if (p.warnings?.length) setCreated(p);
    else navigate(`/projects/${p.id}/keys`);
  };
  if (created) return <CreatedWithWarnings project={created} />;

  return (
    <ActionForm action={create} className="card stack" aria-labelledby="new-project-title">
      <h2 id="new-project-title">New project</h2>
      <div className="grid-2">
        <TextField id="p-name" label="Name" required maxLength={200} value={name} onChange={setName} placeholder="Acme docs" />
        <TextField
          id="p-repo"
          label="Repository URL"
          required
          value={repositoryUrl}
          onChange={setRepositoryUrl}
          placeholder="https://github.com/acme/docs"
          hint={repositoryHint(session.repositories)}
        />
        <TextField id="p-branch" label="Base branch" required value={baseBranch} onChange={setBaseBranch} />
        <SelectField id="p-host" label="Code host" value={codeHost} onChange={setCodeHost} options={[['', 'Detect from the URL'], ...CODE_HOST_OPTIONS]} />
        <SelectField id="p-model" label="Default model" value={defaultModel} onChange={setDefaultModel} options={modelOptions(session.models)} />
      </div>
      <div className="actions">
        {onCancel && (
          <button type="button" className="button secondary" onClick={onCancel}>
            Cancel
          </button>
        )}
        <SubmitButton label="Create project" busyLabel="Creating…" />
      </div>
    </ActionForm>
  );
}
