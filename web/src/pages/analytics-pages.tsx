// The analytics pages table: visitors or views per path, sortable, paginated, and exported as CSV
// as sorted (written by the one CSV writer, src/client/csv.ts).
import { useEffect, useMemo, useState } from 'react';
import { toCsv } from '../../../src/client/index.ts';
import type { PathCounts } from '../api.ts';
import { Alert, Empty } from '../ui.tsx';

const PAGE_SIZE = 25;
type SortKey = 'path' | 'human' | 'ai' | 'total';
type Sort = { key: SortKey; dir: 'asc' | 'desc' };
const SORT_KEYS: readonly SortKey[] = ['path', 'human', 'ai', 'total'];

/**
 * Paths in Unicode code-point order, the API's (ROW_ORDER): by default the table keeps the order the
 * API answered in. Neither `localeCompare` (the reader's locale) nor `<` (UTF-16 units) is that order.
 */
function byCodePoint(a: string, b: string): number {
  for (let i = 0; i < a.length && i < b.length; ) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    i += x > 0xffff ? 2 : 1;
  }
  return a.length - b.length;
}

/** Sorted by `key`, ties by path, so the order is the same on every render and in the CSV. */
function sortRows(rows: PathCounts[], { key, dir }: Sort): PathCounts[] {
  const sign = dir === 'asc' ? 1 : -1;
  return [...rows].sort((a, b) => {
    const primary = key === 'path' ? byCodePoint(a.path, b.path) : a[key] - b[key];
    return primary !== 0 ? primary * sign : byCodePoint(a.path, b.path);
  });
}

function downloadCsv(filename: string, rows: PathCounts[]): void {
  const text = toCsv(['path', 'human', 'ai', 'total'], rows.map((r) => [r.path, r.human, r.ai, r.total]));
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  window.setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

export function PagesTable(props: { projectId: string; rows: PathCounts[]; truncatedAt: number | null; unit: string; csvName: string }) {
  const [sort, setSort] = useState<Sort>({ key: 'total', dir: 'desc' });
  const [page, setPage] = useState(0);
  const sorted = useMemo(() => sortRows(props.rows, sort), [props.rows, sort]);
  useEffect(() => setPage(0), [props.rows]); // new data starts at the first page
  const toggleSort = (key: SortKey) => {
    setSort((s) => (s.key === key ? { key, dir: s.dir === 'asc' ? 'desc' : 'asc' } : { key, dir: key === 'path' ? 'asc' : 'desc' }));
    setPage(0);
  };
  return (
    <section className="card stack" aria-labelledby="pages-title">
      <div className="page-head">
        <h2 id="pages-title">Pages</h2>
        <button type="button" className="button small secondary" onClick={() => downloadCsv(props.csvName, sorted)} disabled={sorted.length === 0}>
          Export CSV
        </button>
      </div>
      {props.truncatedAt !== null && <Alert kind="info">Showing the top {props.truncatedAt} pages by total; narrow the range or use the API for all.</Alert>}
      {sorted.length === 0 ? (
        <Empty title="No page views in this range">
          Paste the script tag from Settings into your docs site, or send events to <code>/v1/analytics/{props.projectId}/events</code>.
        </Empty>
      ) : (
        <>
          <SortableTable rows={sorted.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE)} sort={sort} onSort={toggleSort} unit={props.unit} />
          <Pager page={page} pageCount={Math.max(1, Math.ceil(sorted.length / PAGE_SIZE))} total={sorted.length} onPage={setPage} />
        </>
      )}
    </section>
  );
}

const headingOf = (k: SortKey) => (k === 'path' ? 'Page' : k === 'ai' ? 'AI' : k[0].toUpperCase() + k.slice(1));
const ariaSort = (sort: Sort, k: SortKey) => (sort.key !== k ? 'none' : sort.dir === 'asc' ? 'ascending' : 'descending');

function SortableTable({ rows, sort, onSort, unit }: { rows: PathCounts[]; sort: Sort; onSort: (k: SortKey) => void; unit: string }) {
  return (
    <div className="table-wrap">
      <table className="numbers">
        <caption className="visually-hidden">
          {unit} per page, sorted by {sort.key} {sort.dir === 'asc' ? 'ascending' : 'descending'}
        </caption>
        <thead>
          <tr>
            {SORT_KEYS.map((k) => (
              <th key={k} scope="col" aria-sort={ariaSort(sort, k)}>
                <button type="button" className="sort" onClick={() => onSort(k)}>
                  {headingOf(k)}
                  <span aria-hidden="true">{sort.key === k ? (sort.dir === 'asc' ? ' ▲' : ' ▼') : ''}</span>
                </button>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.path}>
              <td className="path">{r.path}</td>
              <td>{r.human.toLocaleString()}</td>
              <td>{r.ai.toLocaleString()}</td>
              <td>{r.total.toLocaleString()}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Pager({ page, pageCount, total, onPage }: { page: number; pageCount: number; total: number; onPage: (page: number) => void }) {
  return (
    <nav className="pager" aria-label="Pages of the table">
      <button type="button" className="button small secondary" disabled={page === 0} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span>
        Page {page + 1} of {pageCount} · {total} paths
      </span>
      <button type="button" className="button small secondary" disabled={page + 1 >= pageCount} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}
