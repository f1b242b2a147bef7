// The API keys page: the project id, creating a key (shown once) for this project or for many,
// the keys usable on this project with what each covers, and revoking.
import { useState } from 'react';
import { api, type ApiKey, type CreatedKey, type Project } from '../api.ts';
import { ACTIONS_COLUMN, Table } from '../tables.tsx';
import { ActionForm, Alert, Confirm, CopyButton, Empty, formatDate, Loading, SelectField, SubmitButton, TextField, timeAgo, useAction, useAsync, useTitle, type Option } from '../ui.tsx';

type Expiry = 'never' | '30' | '90' | '365';
type Scope = ApiKey['scope'];
/** What a new key works on: this project (a project key), or every or chosen projects (an admin key). */
type Cover = 'project' | 'all' | 'chosen';

const EXPIRY_OPTIONS: readonly Option<Expiry>[] = [
  ['never', 'Never'],
  ['30', '30 days'],
  ['90', '90 days'],
  ['365', '1 year'],
];
const SCOPE_OPTIONS: readonly Option<Scope>[] = [
  ['write', 'Read & write (create jobs, ingest events)'],
  ['read', 'Read only (get jobs, read analytics)'],
];
const COVER_OPTIONS: readonly Option<Cover>[] = [
  ['project', 'This project'],
  ['all', 'Every project (also later ones)'],
  ['chosen', 'Chosen projects'],
];

/** What a key covers, in words; names of projects where they are known. */
export function coverText(k: ApiKey, projects: Project[] | undefined): string {
  if (k.kind === 'project') return 'This project';
  if (k.allProjects) return 'Every project';
  const names = k.projectIds.map((id) => projects?.find((p) => p.id === id)?.name ?? id);
  return `${names.length} project${names.length === 1 ? '' : 's'}: ${names.join(', ')}`;
}

function keyState(k: ApiKey): 'revoked' | 'expired' | 'active' {
  if (k.revokedAt) return 'revoked';
  if (k.expiresAt && Date.parse(k.expiresAt) <= Date.now()) return 'expired';
  return 'active';
}

export function KeysPage({ projectId }: { projectId: string }) {
  useTitle('API keys');
  const keys = useAsync(() => api.keys(projectId), [projectId]);
  const projects = useAsync(() => api.projects(), []);
  const [created, setCreated] = useState<CreatedKey | null>(null);
  return (
    <div className="stack">
      <h1>API keys</h1>
      <ProjectIdCard projectId={projectId} />
      {created ? (
        <NewKeyCard created={created} projects={projects.data} onStored={() => setCreated(null)} />
      ) : (
        <CreateKey
          projectId={projectId}
          projects={projects.data}
          onCreated={(k) => {
            setCreated(k);
            keys.reload();
          }}
        />
      )}
      <section className="stack" aria-labelledby="keys-title">
        <h2 id="keys-title">Keys</h2>
        {keys.error && <Alert title="Keys could not be loaded.">{keys.error}</Alert>}
        {!keys.data && keys.loading && <Loading what="keys" />}
        {keys.data?.length === 0 && <Empty title="No keys yet">Create a key above to call the API from scripts, CI or bots.</Empty>}
        {keys.data && keys.data.length > 0 && <KeysTable projectId={projectId} keys={keys.data} projects={projects.data} onRevoked={keys.reload} />}
      </section>
    </div>
  );
}

function ProjectIdCard({ projectId }: { projectId: string }) {
  return (
    <section className="card stack" aria-labelledby="pid-label">
      <span className="label" id="pid-label">Project ID</span>
      <div className="copy-row">
        <code className="codeblock" data-testid="project-id" aria-labelledby="pid-label">{projectId}</code>
        <CopyButton value={projectId} what="project ID" />
      </div>
      <p className="hint">
        Use it in API paths: <code>/v2/agent/{projectId}/job</code> and <code>/v1/analytics/{projectId}/visitors</code>.
      </p>
    </section>
  );
}

/** A key just made: the only time its secret is shown. */
function NewKeyCard({ created, projects, onStored }: { created: CreatedKey; projects: Project[] | undefined; onStored: () => void }) {
  return (
    <section className="card stack new-key" aria-labelledby="new-key-title">
      <h2 id="new-key-title">Your new key “{created.name}”</h2>
      <Alert kind="warning" title="Copy this key now.">
        It is shown only this once; Folio stores only a hash of it. If you lose it, revoke it and create another.
      </Alert>
      <p>Works on: {coverText(created, projects)}.</p>
      <div className="copy-row">
        <code className="codeblock key" data-testid="new-key">{created.key}</code>
        <CopyButton value={created.key} what="API key" />
      </div>
      <div className="actions">
        <button type="button" className="button" onClick={onStored}>
          I have stored the key
        </button>
      </div>
    </section>
  );
}

const KEY_COLUMNS = ['Name', 'Key', 'Covers', 'Scope', 'Created', 'Last used', 'Expires', 'State', ACTIONS_COLUMN];

function KeysTable(props: { projectId: string; keys: ApiKey[]; projects: Project[] | undefined; onRevoked: () => void }) {
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const revoke = useAction(async () => {
    const k = revoking;
    setRevoking(null);
    if (!k) return;
    await (k.kind === 'admin' ? api.revokeAnyKey(k.id) : api.revokeKey(props.projectId, k.id));
    props.onRevoked();
  });
  return (
    <>
      {revoke.error && <Alert title="The key was not revoked.">{revoke.error}</Alert>}
      <Table columns={KEY_COLUMNS}>
        {props.keys.map((k) => (
          <KeyRow key={k.id} apiKey={k} projects={props.projects} onRevoke={() => setRevoking(k)} />
        ))}
      </Table>
      <Confirm open={revoking !== null} title="Revoke this key?" confirmLabel="Revoke key" danger onConfirm={() => void revoke.run()} onCancel={() => setRevoking(null)}>
        <p>
          <strong>{revoking?.name}</strong> (<span className="mono">{revoking?.prefix}…</span>) stops working at once
          {revoking?.kind === 'admin' ? ' on every project it covers' : ''}. Anything using it will get 401 errors. This cannot be undone.
        </p>
      </Confirm>
    </>
  );
}

function KeyRow({ apiKey: k, projects, onRevoke }: { apiKey: ApiKey; projects: Project[] | undefined; onRevoke: () => void }) {
  const state = keyState(k);
  return (
    <tr>
      <td>{k.name}</td>
      <td className="mono">{k.prefix}…</td>
      <td data-testid="key-covers">{coverText(k, projects)}</td>
      <td>{k.scope === 'write' ? 'read & write' : 'read only'}</td>
      <td>{formatDate(k.createdAt)}</td>
      <td title={k.lastUsedAt ?? undefined}>{timeAgo(k.lastUsedAt)}</td>
      <td>{k.expiresAt ? formatDate(k.expiresAt) : 'never'}</td>
      <td>
        <span className={`badge key-${state}`}>{state}</span>
      </td>
      <td>
        {state !== 'revoked' && (
          <button type="button" className="button small danger-outline" onClick={onRevoke} aria-label={`Revoke ${k.name} (${k.prefix}…)`}>
            Revoke
          </button>
        )}
      </td>
    </tr>
  );
}

function CreateKey({ projectId, projects, onCreated }: { projectId: string; projects: Project[] | undefined; onCreated: (k: CreatedKey) => void }) {
  const [name, setName] = useState('');
  const [cover, setCover] = useState<Cover>('project');
  const [chosen, setChosen] = useState<string[]>([projectId]);
  const [scope, setScope] = useState<Scope>('write');
  const [expiry, setExpiry] = useState<Expiry>('90');

  const create = async () => {
    const common = { name: name.trim() || (cover === 'project' ? 'API key' : 'Admin key'), scope, expiresInDays: expiry === 'never' ? null : Number(expiry) };
    const k =
      cover === 'project'
        ? await api.createKey(projectId, common)
        : await api.createAdminKey(cover === 'all' ? { ...common, allProjects: true } : { ...common, projectIds: chosen });
    setName('');
    onCreated(k);
  };

  return (
    <ActionForm action={create} className="card stack" aria-labelledby="create-key-title">
      <h2 id="create-key-title">Create a key</h2>
      <div className="grid-2">
        <TextField id="k-name" label="Name" maxLength={100} value={name} onChange={setName} placeholder="CI pipeline" />
        <SelectField id="k-scope" label="Scope" value={scope} onChange={setScope} options={SCOPE_OPTIONS} />
        <SelectField id="k-cover" label="Works on" value={cover} onChange={setCover} options={COVER_OPTIONS} />
        <SelectField id="k-expiry" label="Expires" value={expiry} onChange={setExpiry} options={EXPIRY_OPTIONS} />
      </div>
      {cover === 'chosen' && <ProjectChoice projects={projects ?? []} chosen={chosen} onChange={setChosen} />}
      <div className="actions">
        <SubmitButton label="Create key" busyLabel="Creating…" disabled={cover === 'chosen' && chosen.length === 0} />
      </div>
    </ActionForm>
  );
}

function ProjectChoice({ projects, chosen, onChange }: { projects: Project[]; chosen: string[]; onChange: (ids: string[]) => void }) {
  return (
    <fieldset className="stack plain">
      <legend className="small">Projects the key works on</legend>
      {projects.map((p) => (
        <label className="inline small" key={p.id}>
          <input
            type="checkbox"
            checked={chosen.includes(p.id)}
            onChange={(e) => onChange(e.target.checked ? [...chosen, p.id] : chosen.filter((x) => x !== p.id))}
          />{' '}
          {p.name} <span className="muted mono">{p.id}</span>
        </label>
      ))}
    </fieldset>
  );
}
