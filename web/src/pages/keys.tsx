// The API keys page: the project id, creating a key (shown once), the key list and revoking.
import { useState, type FormEvent } from 'react';
import { api, errorMessage, type ApiKey } from '../api.ts';
import { Alert, Confirm, CopyButton, Empty, formatDate, Loading, timeAgo, useAsync, useTitle } from '../ui.tsx';

const EXPIRY = [
  ['never', 'Never'],
  ['30', '30 days'],
  ['90', '90 days'],
  ['365', '1 year'],
] as const;

function keyState(k: ApiKey): 'revoked' | 'expired' | 'active' {
  if (k.revokedAt) return 'revoked';
  if (k.expiresAt && Date.parse(k.expiresAt) <= Date.now()) return 'expired';
  return 'active';
}

export function KeysPage({ projectId }: { projectId: string }) {
  useTitle('API keys');
  const keys = useAsync(() => api.keys(projectId), [projectId]);
  const [created, setCreated] = useState<(ApiKey & { key: string }) | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const [revokeError, setRevokeError] = useState<string | null>(null);

  const revoke = async () => {
    const k = revoking!;
    setRevoking(null);
    setRevokeError(null);
    try {
      await api.revokeKey(projectId, k.id);
      keys.reload();
    } catch (err) {
      setRevokeError(errorMessage(err));
    }
  };

  return (
    <div className="stack">
      <h1>API keys</h1>
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

      {created ? (
        <section className="card stack new-key" aria-labelledby="new-key-title">
          <h2 id="new-key-title">Your new key “{created.name}”</h2>
          <Alert kind="warning" title="Copy this key now.">
            It is shown only this once; Folio stores only a hash of it. If you lose it, revoke it and create another.
          </Alert>
          <div className="copy-row">
            <code className="codeblock key" data-testid="new-key">{created.key}</code>
            <CopyButton value={created.key} what="API key" />
          </div>
          <div className="actions">
            <button type="button" className="button" onClick={() => setCreated(null)}>
              I have stored the key
            </button>
          </div>
        </section>
      ) : (
        <CreateKey
          projectId={projectId}
          onCreated={(k) => {
            setCreated(k);
            keys.reload();
          }}
        />
      )}

      <section className="stack" aria-labelledby="keys-title">
        <h2 id="keys-title">Keys</h2>
        {revokeError && <Alert title="The key was not revoked.">{revokeError}</Alert>}
        {keys.error && <Alert title="Keys could not be loaded.">{keys.error}</Alert>}
        {!keys.data && keys.loading && <Loading what="keys" />}
        {keys.data?.length === 0 && <Empty title="No keys yet">Create a key above to call the API from scripts, CI or bots.</Empty>}
        {keys.data && keys.data.length > 0 && (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Key</th>
                  <th scope="col">Scope</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Expires</th>
                  <th scope="col">State</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {keys.data.map((k) => {
                  const state = keyState(k);
                  return (
                    <tr key={k.id}>
                      <td>{k.name}</td>
                      <td className="mono">{k.prefix}…</td>
                      <td>{k.scope === 'write' ? 'read & write' : 'read only'}</td>
                      <td>{formatDate(k.createdAt)}</td>
                      <td title={k.lastUsedAt ?? undefined}>{timeAgo(k.lastUsedAt)}</td>
                      <td>{k.expiresAt ? formatDate(k.expiresAt) : 'never'}</td>
                      <td>
                        <span className={`badge key-${state}`}>{state}</span>
                      </td>
                      <td>
                        {state !== 'revoked' && (
                          <button type="button" className="button small danger-outline" onClick={() => setRevoking(k)} aria-label={`Revoke ${k.name} (${k.prefix}…)`}>
                            Revoke
                          </button>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <Confirm open={revoking !== null} title="Revoke this key?" confirmLabel="Revoke key" danger onConfirm={revoke} onCancel={() => setRevoking(null)}>
        <p>
          <strong>{revoking?.name}</strong> (<span className="mono">{revoking?.prefix}…</span>) stops working at once. Anything using it will get
          401 errors. This cannot be undone.
        </p>
      </Confirm>
    </div>
  );
}

function CreateKey({ projectId, onCreated }: { projectId: string; onCreated: (k: ApiKey & { key: string }) => void }) {
  const [name, setName] = useState('');
  const [scope, setScope] = useState<'read' | 'write'>('write');
  const [expiry, setExpiry] = useState<(typeof EXPIRY)[number][0]>('90');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const k = await api.createKey(projectId, { name: name.trim() || 'API key', scope, expiresInDays: expiry === 'never' ? null : Number(expiry) });
      setName('');
      onCreated(k);
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="card stack" onSubmit={submit} aria-labelledby="create-key-title">
      <h2 id="create-key-title">Create a key</h2>
      {error && <Alert>{error}</Alert>}
      <div className="grid-3">
        <div className="field">
          <label htmlFor="k-name">Name</label>
          <input id="k-name" maxLength={100} value={name} onChange={(e) => setName(e.target.value)} placeholder="CI pipeline" />
        </div>
        <div className="field">
          <label htmlFor="k-scope">Scope</label>
          <select id="k-scope" value={scope} onChange={(e) => setScope(e.target.value as 'read' | 'write')}>
            <option value="write">Read & write (create jobs, ingest events)</option>
            <option value="read">Read only (get jobs, read analytics)</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor="k-expiry">Expires</label>
          <select id="k-expiry" value={expiry} onChange={(e) => setExpiry(e.target.value as typeof expiry)}>
            {EXPIRY.map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
          </select>
        </div>
      </div>
      <div className="actions">
        <button type="submit" className="button" disabled={busy}>
          {busy ? 'Creating…' : 'Create key'}
        </button>
      </div>
    </form>
  );
}
