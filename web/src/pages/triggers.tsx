// Project settings, code-change triggers: where each code host sends webhooks, the secret (shown
// once), the watched repositories with their events and filters, the prompt template, and the
// recent deliveries with what each did.
import { useState } from 'react';
import { TRIGGER_HOSTS } from '../../../src/contracts/common.ts';
import { CODE_HOSTS } from '../../../src/codehost/kinds.ts';
import { api, type RepositoryInput, type TriggerDelivery, type TriggerEvent, type TriggerSettings, type WatchedRepository } from '../api.ts';
import { jobPath, Link } from '../router.tsx';
import { Table } from '../tables.tsx';
import { ActionButton, ActionForm, Alert, CopyButton, Empty, Fieldset, formatDate, Loading, SelectField, StoredSecretField, SubmitButton, TextField, timeAgo, useAction, useAsync, type Option } from '../ui.tsx';

const EVENTS: [TriggerEvent, string][] = [
  ['merged', 'Merged pull requests'],
  ['opened', 'Opened pull requests (new commits follow up)'],
  ['push', 'Pushes to the default branch'],
];

/** The hosts whose webhooks start jobs, as choices (src/codehost/kinds.ts declares them). */
const HOST_OPTIONS: readonly Option<WatchedRepository['host']>[] = TRIGGER_HOSTS.map((host) => [host, CODE_HOSTS[host].label]);

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
  host: r?.host ?? TRIGGER_HOSTS[0],
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
  const [saved, setSaved] = useState(false);

  const update = (key: string, change: Partial<RepoForm>) => setRepos((rs) => rs.map((r) => (r.key === key ? { ...r, ...change } : r)));
  const save = async () => {
    setSaved(false);
    const next = await api.saveTriggers(projectId, { repositories: repos.map(inputOf), template: template === initial.defaultTemplate ? null : template });
    setRepos(next.repositories.map(formOf));
    setTemplate(next.template);
    onChange(next);
    setSaved(true);
  };

  return (
    <section className="stack" aria-labelledby="triggers-title">
      <h2 id="triggers-title">Code-change triggers</h2>
      <p className="hint">
        Start an agent job when code changes: point a GitHub or GitLab webhook of your code repository at this project, and Folio opens a docs pull
        request for every merged pull request (or as configured below). See docs/triggers.md.
      </p>
      <Endpoints projectId={projectId} settings={initial} onChange={onChange} />
      <ActionForm action={save} errorTitle="Not saved." className="stack" onChange={() => setSaved(false)} aria-label="Code-change trigger settings">
        {saved && <Alert kind="success">Saved the trigger settings.</Alert>}
        <Fieldset legend="Watched repositories">
          {repos.length === 0 && <p className="hint">No repository is watched: webhooks are answered but start nothing.</p>}
          {repos.map((r, i) => (
            <WatchedRepositoryFields key={r.key} repo={r} number={i + 1} onChange={(change) => update(r.key, change)} onRemove={() => setRepos((rs) => rs.filter((x) => x.key !== r.key))} />
          ))}
          <div>
            <button type="button" className="button small secondary" onClick={() => setRepos((rs) => [...rs, formOf()])}>
              Watch a repository
            </button>
          </div>
        </Fieldset>
        <TemplateFields settings={initial} template={template} onChange={setTemplate} />
        <div className="actions">
          <SubmitButton label="Save trigger settings" busyLabel="Saving…" />
        </div>
      </ActionForm>
      <Deliveries projectId={projectId} settings={initial} />
    </section>
  );
}

/** Where each code host sends its webhooks, and the secret they sign with (shown once when made). */
function Endpoints({ projectId, settings, onChange }: { projectId: string; settings: TriggerSettings; onChange: (s: TriggerSettings) => void }) {
  const [secret, setSecret] = useState<string | null>(null);
  const makeSecret = useAction(async () => {
    const { secret: made, ...rest } = await api.makeTriggerSecret(projectId);
    setSecret(made);
    onChange(rest);
  });
  return (
    <div className="card stack">
      {TRIGGER_HOSTS.map((host) => (
        <div className="stack" key={host}>
          <span className="label" id={`${host}-endpoint-label`}>
            Endpoint for {CODE_HOSTS[host].label} ({CODE_HOSTS[host].webhook.urlField})
          </span>
          <div className="copy-row">
            <code className="codeblock" aria-labelledby={`${host}-endpoint-label`} data-testid={`${host}-endpoint`}>
              {settings.endpoints[host]}
            </code>
            <CopyButton value={settings.endpoints[host]} what={`${CODE_HOSTS[host].label} endpoint`} />
          </div>
        </div>
      ))}
      {secret ? (
        <div className="stack new-key">
          <Alert kind="warning" title="Copy this secret now.">
            Paste it into the webhook’s {TRIGGER_HOSTS.map((host) => `${CODE_HOSTS[host].webhook.secretField} (${CODE_HOSTS[host].label})`).join(' or ')}. It is shown only this once; Folio keeps it encrypted.
          </Alert>
          <div className="copy-row">
            <code className="codeblock key" data-testid="trigger-secret">{secret}</code>
            <CopyButton value={secret} what="trigger secret" />
          </div>
        </div>
      ) : (
        <p className="small">
          {settings.hasSecret ? `Webhook secret set ${formatDate(settings.secretCreatedAt)}.` : 'No webhook secret yet: deliveries are refused until you make one.'}
        </p>
      )}
      {makeSecret.error && <Alert title="No new secret.">{makeSecret.error}</Alert>}
      <div className="actions">
        <ActionButton action={makeSecret} label={settings.hasSecret ? 'Make a new secret' : 'Make a secret'} />
      </div>
    </div>
  );
}

function WatchedRepositoryFields(props: { repo: RepoForm; number: number; onChange: (change: Partial<RepoForm>) => void; onRemove: () => void }) {
  const { repo: r, onChange } = props;
  const removeToken = { label: 'Remove the token', value: r.removeToken, onChange: (removeToken: boolean) => onChange({ removeToken }) };
  return (
    <div className="stack watched-repo" role="group" aria-label={`Watched repository ${props.number}`}>
      <div className="grid-2">
        <TextField id={`t-url-${r.key}`} label="Code repository" required value={r.repositoryUrl} onChange={(repositoryUrl) => onChange({ repositoryUrl })} placeholder="https://github.com/acme/api" />
        <SelectField id={`t-host-${r.key}`} label="Host" value={r.host} onChange={(host) => onChange({ host })} options={HOST_OPTIONS} />
      </div>
      <fieldset className="stack plain">
        <legend className="small">Start a job on</legend>
        {EVENTS.map(([ev, label]) => (
          <label className="inline small" key={ev}>
            <input type="checkbox" checked={r.events.includes(ev)} onChange={(e) => onChange({ events: e.target.checked ? [...r.events, ev] : r.events.filter((x) => x !== ev) })} />{' '}
            {label}
          </label>
        ))}
      </fieldset>
      <div className="grid-3">
        <TextField id={`t-paths-${r.key}`} label="Only when these paths change" rows={3} value={r.paths} onChange={(paths) => onChange({ paths })} placeholder={'src/**\napi/*.proto'} hint="Globs, one per line; empty means any file." />
        <TextField id={`t-labels-${r.key}`} label="Only with one of these labels" value={r.labels} onChange={(labels) => onChange({ labels })} placeholder="docs-needed" hint="Comma-separated; empty means any pull request." />
        <StoredSecretField
          id={`t-token-${r.key}`}
          label="API token to read changes"
          value={r.token}
          onChange={(token) => onChange({ token })}
          isSet={r.hasToken}
          unsetText="Uses GITHUB_TOKEN / GITLAB_TOKEN"
          remove={removeToken}
        />
      </div>
      <div className="actions">
        <button type="button" className="button small danger-outline" onClick={props.onRemove} aria-label={`Stop watching repository ${props.number}`}>
          Stop watching
        </button>
      </div>
    </div>
  );
}

function TemplateFields({ settings, template, onChange }: { settings: TriggerSettings; template: string; onChange: (template: string) => void }) {
  const hint = (
    <>
      Placeholders: {settings.placeholders.map((p) => `{{${p}}}`).join(' ')}. Description and changes are inserted as quoted blocks that the change’s text
      cannot break out of.
    </>
  );
  return (
    <Fieldset legend="Prompt template">
      <TextField id="t-template" label="The instruction each job gets" rows={12} value={template} onChange={onChange} hint={hint} />
      <div>
        <button type="button" className="button small secondary" onClick={() => onChange(settings.defaultTemplate)}>
          Use the default template
        </button>
      </div>
    </Fieldset>
  );
}

function Deliveries({ projectId, settings }: { projectId: string; settings: TriggerSettings }) {
  const deliveries = useAsync(() => api.triggerDeliveries(projectId), [projectId]);
  return (
    <section className="stack" aria-labelledby="deliveries-title">
      <div className="copy-row">
        <h3 id="deliveries-title">Recent deliveries</h3>
        <button type="button" className="button small secondary" onClick={deliveries.reload}>
          Refresh
        </button>
      </div>
      {settings.refusedDeliveries > 0 && (
        <p className="muted small">
          {settings.refusedDeliveries === 1 ? '1 delivery was refused' : `${settings.refusedDeliveries} deliveries were refused`} before a signature checked out
          {settings.lastRefusedAt ? ` (the last ${timeAgo(settings.lastRefusedAt)})` : ''}: a wrong or missing secret, or too large to verify. They are counted, not
          listed, since anyone can send them.
        </p>
      )}
      {deliveries.error && <Alert title="Deliveries could not be loaded.">{deliveries.error}</Alert>}
      {deliveries.data?.length === 0 && <Empty title="No deliveries yet">Webhooks received for this project show up here with what they did.</Empty>}
      {deliveries.data && deliveries.data.length > 0 && <DeliveriesTable projectId={projectId} rows={deliveries.data} />}
    </section>
  );
}

const DELIVERY_COLUMNS = ['Received', 'Event', 'Outcome', 'Reason', 'Job'];

function DeliveriesTable({ projectId, rows }: { projectId: string; rows: TriggerDelivery[] }) {
  return (
    <Table columns={DELIVERY_COLUMNS}>
      {rows.map((d) => (
        <tr key={d.id}>
          <td title={d.receivedAt}>{timeAgo(d.receivedAt)}</td>
          <td>
            {CODE_HOSTS[d.host].label} {d.event ?? ''}
          </td>
          <td>
            <span className={`badge delivery-${d.outcome}`}>{d.outcome.replace('_', ' ')}</span> <span className="muted small">{d.statusCode}</span>
          </td>
          <td className="small">{d.reason}</td>
          <td>{d.jobId ? <Link href={jobPath(projectId, d.jobId)}>{d.jobId}</Link> : '—'}</td>
        </tr>
      ))}
    </Table>
  );
}
