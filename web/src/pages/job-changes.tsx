// A job's changes on its page: the docs checks and their results, and the diff of the job branch
// against where it forked from the base, file by file (react-diff-view renders it as React elements:
// no HTML from the diff is ever injected).
import { useMemo } from 'react';
import { Diff, Hunk, parseDiff, type FileData } from 'react-diff-view';
import 'react-diff-view/style/index.css';
import type { ChecksMode, ChecksReport, JobChanges, JobFile, JobStatus } from '../api.ts';
import { Alert, Empty } from '../ui.tsx';

/** Files shown open at first; the rest are one click away (a big diff stays quick to render). */
const OPEN_FILES = 8;

type CheckName = ChecksReport['problems'][number]['check'];

/** Every check the contract declares has a label here (a new one without it does not compile). */
const CHECK_LABELS: Record<CheckName, string> = {
  links: 'Links',
  anchors: 'Anchors',
  assets: 'Images and files',
  navigation: 'Navigation',
  redirects: 'Redirects',
  'llms-txt': 'llms.txt',
  scope: 'Suggestion scope',
  build: 'Site build',
};

const checkLabel = (name: string) => (Object.hasOwn(CHECK_LABELS, name) ? CHECK_LABELS[name as CheckName] : name);

/** Why a job has no checks report: what happened, by the job's state. */
function noChecks(mode: ChecksMode | null, status: JobStatus): string {
  if (mode === 'off') return 'Off for this project.';
  if (status === 'failed') return 'The job failed before checks ran.';
  if (status === 'active') return 'Not run yet: they run when the agent finishes a turn.';
  return 'None ran: the agent changed no files to check.';
}

/** Why a job has no diff, by the job's state. */
function noChanges(status: JobStatus): [string, string] {
  if (status === 'failed') return ['No changes were pushed', 'The job failed before the agent pushed a change.'];
  if (status === 'active') return ['No changes yet', "The diff of the job's branch appears here once the agent pushes."];
  return ['No changes', 'The agent changed no files.'];
}

export function ChecksCard({ checks, mode, status }: { checks: ChecksReport | null; mode: ChecksMode | null; status: JobStatus }) {
  if (!checks) {
    return (
      <section className="card stack" aria-labelledby="checks-title" data-testid="checks">
        <h2 id="checks-title">Docs checks</h2>
        <p className="muted">{noChecks(mode, status)}</p>
      </section>
    );
  }
  const ok = checks.problems.length === 0;
  return (
    <section className="card stack" aria-labelledby="checks-title" data-testid="checks">
      <div className="page-head">
        <h2 id="checks-title">Docs checks</h2>
        <span className={`badge ${ok ? 'status-completed' : 'status-failed'}`}>
          {ok ? 'No new problems' : `${checks.problems.length} problem${checks.problems.length === 1 ? '' : 's'}`}
        </span>
      </div>
      <p className="small muted">
        Mode <strong>{checks.mode}</strong> · {checks.framework} · {checks.pagesChecked} page{checks.pagesChecked === 1 ? '' : 's'} checked
        {checks.truncated ? ' (partially: limits reached)' : ''}
      </p>
      {checks.build && (
        <p className="small" data-testid="site-build">
          Site build ({checks.build.tool}): <code>{checks.build.command}</code> — {checks.build.status}
          {checks.build.status === 'passed' ? ` in ${(checks.build.ms / 1000).toFixed(1)} s` : ''}
          {checks.build.reason ? `: ${checks.build.reason}` : ''}
        </p>
      )}
      <ul className="check-list" aria-label="Checks that ran">
        {checks.ran.map((name) => {
          const count = checks.problems.filter((p) => p.check === name).length;
          return (
            <li key={name} className={count ? 'check-failed' : 'check-passed'}>
              <span aria-hidden="true">{count ? '✗' : '✓'}</span> {checkLabel(name)}
              {count ? `: ${count}` : ''}
            </li>
          );
        })}
      </ul>
      {!ok && <ProblemList problems={checks.problems} label="Problems introduced by this job" />}
      {checks.preExisting.length > 0 && (
        <details>
          <summary>
            {checks.preExisting.length} problem{checks.preExisting.length === 1 ? '' : 's'} already on the base branch (not caused by this job)
          </summary>
          <ProblemList problems={checks.preExisting} label="Problems already on the base branch" />
        </details>
      )}
    </section>
  );
}

function ProblemList({ problems, label }: { problems: ChecksReport['problems']; label: string }) {
  return (
    <ul className="problems" aria-label={label}>
      {problems.map((p, i) => (
        <li key={i}>
          <span className="badge">{checkLabel(p.check)}</span> <code>{p.line ? `${p.path}:${p.line}` : p.path}</code> {p.message}
          {p.enforced && <span className="small muted"> (fails the job in every checks mode)</span>}
        </li>
      ))}
    </ul>
  );
}

function parse(diff: string): { files: FileData[]; error: string | null } {
  if (!diff.trim()) return { files: [], error: null };
  try {
    return { files: parseDiff(diff, { nearbySequences: 'zip' }), error: null };
  } catch (err) {
    return { files: [], error: (err as Error).message };
  }
}

export function DiffView({ changes, status }: { changes: JobChanges | null; status: JobStatus }) {
  const parsed = useMemo(() => parse(changes?.diff ?? ''), [changes?.diff]);
  if (!changes || changes.files.length === 0) {
    const [title, why] = noChanges(status);
    return (
      <section className="stack" aria-labelledby="diff-title" data-testid="diff">
        <h2 id="diff-title">Changes</h2>
        <Empty title={title}>{why}</Empty>
      </section>
    );
  }
  const stats = new Map<string, JobFile>(changes.files.map((f) => [f.path, f]));
  const shown = new Set(parsed.files.map((f) => (f.type === 'delete' ? f.oldPath : f.newPath)));
  const missing = changes.files.filter((f) => !shown.has(f.path));
  const adds = changes.files.reduce((n, f) => n + f.additions, 0);
  const dels = changes.files.reduce((n, f) => n + f.deletions, 0);
  return (
    <section className="stack" aria-labelledby="diff-title" data-testid="diff">
      <div className="page-head">
        <h2 id="diff-title">Changes</h2>
        <span className="small">
          {changes.files.length} file{changes.files.length === 1 ? '' : 's'} · <span className="adds">+{adds}</span> <span className="dels">−{dels}</span>
          {changes.baseSha && <span className="muted mono"> · {changes.baseSha.slice(0, 10)}…{changes.headSha?.slice(0, 10)}</span>}
        </span>
      </div>
      {parsed.error && <Alert kind="warning">The diff could not be displayed: {parsed.error}</Alert>}
      {(changes.diffTruncated || missing.length > 0) && (
        <Alert kind="info">
          The diff is too large to show entirely; {missing.length} file{missing.length === 1 ? ' is' : 's are'} listed without their lines:{' '}
          {missing.slice(0, 20).map((f) => f.path).join(', ')}
          {missing.length > 20 ? '…' : ''}. The pull request has the whole diff.
        </Alert>
      )}
      {parsed.files.map((file, i) => {
        const path = file.type === 'delete' ? file.oldPath : file.newPath;
        const stat = stats.get(path);
        return (
          <details key={`${file.oldPath}:${file.newPath}`} className="diff-file card" open={i < OPEN_FILES} data-testid="diff-file">
            <summary>
              <span className="mono diff-path">{file.type === 'rename' ? `${file.oldPath} → ${file.newPath}` : path}</span>{' '}
              <span className="badge">{LABELS[file.type] ?? file.type}</span>{' '}
              {stat && !stat.binary && (
                <span className="small">
                  <span className="adds">+{stat.additions}</span> <span className="dels">−{stat.deletions}</span>
                </span>
              )}
            </summary>
            {file.isBinary || stat?.binary ? (
              <p className="muted small">Binary file, not shown.</p>
            ) : file.hunks.length === 0 ? (
              <p className="muted small">No line changes (renamed or mode changed).</p>
            ) : (
              <div className="diff-scroll">
                <Diff viewType="unified" diffType={file.type} hunks={file.hunks}>
                  {(hunks) => hunks.map((h) => <Hunk key={h.content} hunk={h} />)}
                </Diff>
              </div>
            )}
          </details>
        );
      })}
    </section>
  );
}

const LABELS: Record<string, string> = { add: 'added', delete: 'deleted', modify: 'modified', rename: 'renamed', copy: 'copied' };
