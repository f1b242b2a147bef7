// Shared table pieces: a scrollable table with its column headings, and the cells that name a job.
import type { ReactNode, TableHTMLAttributes } from 'react';
import type { JobStatus } from './api.ts';
import { jobPath, Link } from './router.tsx';
import { CopyButton, StatusBadge } from './ui.tsx';

/** A column heading: its words, or its words and a class (e.g. `num` for right-aligned figures). */
export type Column = string | { label: ReactNode; className?: string };

/** The heading of a column of row buttons: read by screen readers, not shown. */
export const ACTIONS_COLUMN: Column = { label: <span className="visually-hidden">Actions</span> };

/** A table that scrolls sideways on narrow screens; the rows are the children. */
export function Table({ columns, children, ...attributes }: TableHTMLAttributes<HTMLTableElement> & { columns: readonly Column[]; children: ReactNode }) {
  return (
    <div className="table-wrap">
      <table {...attributes}>
        <thead>
          <tr>
            {columns.map((c, i) => (
              <th key={i} scope="col" className={typeof c === 'string' ? undefined : c.className}>
                {typeof c === 'string' ? c : c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** The first cells of a row about a job: its title linking to its page, its id under it, and its status. */
export function JobCells({ projectId, job }: { projectId: string; job: { id: string; title: string; status: JobStatus } }) {
  return (
    <>
      <td className="job-cell">
        <Link href={jobPath(projectId, job.id)} className="job-link">
          {job.title || job.id}
        </Link>
        <span className="mono small muted job-id">{job.id}</span>
      </td>
      <td>
        <StatusBadge status={job.status} />
      </td>
    </>
  );
}

/**
 * A visitor's path in a cell: on one line, never broken inside a word; a long one ends in "…" with the
 * whole path on hover (title) and, with `copy`, in a copy button. `phoneNote`: a column a phone drops,
 * shown under the path there instead.
 */
export function PathCell({ path, copy = false, className = '', phoneNote }: { path: string; copy?: boolean; className?: string; phoneNote?: ReactNode }) {
  return (
    <td className={`path-cell ${className}`.trim()}>
      <span className="path-line">
        <span className="path-text" title={path}>
          {path}
        </span>
        {copy && <CopyButton value={path} what="the path" />}
      </span>
      {phoneNote && <span className="small muted phone-only">{phoneNote}</span>}
    </td>
  );
}
