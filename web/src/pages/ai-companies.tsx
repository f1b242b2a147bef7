// The Insights panel "AI companies": what each AI company's crawlers and assistants read, against the
// humans its assistants' answers sent (GET …/ai-companies); a company's button lists its pages.
import { useState } from 'react';
import type { AiCompaniesPage, FolioClient } from '../api.ts';
import { PathCell, Table, type Column } from '../tables.tsx';
import { Alert, Empty, Loading, useAsync } from '../ui.tsx';

type Row = AiCompaniesPage['companies'][number];
const n = (x: number) => x.toLocaleString();
const ratio = (r: number | null) => (r === null ? '—' : r.toFixed(1));
const crawls = (row: Row) => {
  const c = row.trainingViews + row.searchViews;
  return `${n(c)} crawl${c === 1 ? '' : 's'}`;
};

/** Per company, or per page of one company: the same columns after the first. */
function Cells({ row }: { row: Row }) {
  return (
    <>
      <td className="wide-only">{n(row.trainingViews)}</td>
      <td className="wide-only">{n(row.searchViews)}</td>
      <td className="wide-only">{n(row.assistantVisitors)}</td>
      <td className="wide-only">{n(row.assistantViews)}</td>
      <td>{n(row.referredHumans)}</td>
      <td className="wide-only">{ratio(row.crawlsPerReferredHuman)}</td>
    </>
  );
}

// A phone keeps the humans a company sends back; what it takes (its crawls) goes under its name.
const wide = (label: string): Column => ({ label, className: 'wide-only' });
const COLUMNS: Column[] = [wide('Training crawls'), wide('Search crawls'), wide('Assistant visitors'), wide('Assistant views'), 'Humans sent', wide('Crawls per human')];

export function AiCompanies({ client, range }: { client: FolioClient; range: { dateFrom: string; dateTo: string } }) {
  const [company, setCompany] = useState<string | null>(null);
  const list = useAsync(() => client.aiCompanies({ ...range, limit: 50 }), [client, range.dateFrom, range.dateTo]);
  const pages = useAsync(async () => (company === null ? null : client.aiCompanies({ ...range, company, limit: 20 })), [client, range.dateFrom, range.dateTo, company]);
  return (
    <section className="card stack" aria-labelledby="ai-companies-title">
      <h2 id="ai-companies-title">AI companies</h2>
      <p className="small">What each company's crawlers and assistants read, and how many readers its assistants' answers sent back.</p>
      {list.error && <Alert title="AI companies could not be loaded.">{list.error}</Alert>}
      {list.loading && !list.data && <Loading what="AI companies" />}
      {list.data && list.data.companies.length === 0 && <Empty title="No AI company read or referred in this range" />}
      {list.data && list.data.companies.length > 0 && (
        <Table className="numbers" columns={['Company', ...COLUMNS]}>
          {list.data.companies.map((r) => (
            <tr key={r.company}>
              <td>
                <button type="button" className={company === r.company ? 'button small' : 'button small secondary'} aria-pressed={company === r.company} onClick={() => setCompany(company === r.company ? null : r.company)}>
                  {r.company}
                </button>
                <span className="small muted phone-only">{crawls(r)}</span>
              </td>
              <Cells row={r} />
            </tr>
          ))}
        </Table>
      )}
      {company !== null && pages.error && <Alert title={`${company}'s pages could not be loaded.`}>{pages.error}</Alert>}
      {company !== null && pages.data && (
        <div className="stack" aria-label={`${company}, per page`} role="region">
          <h3>{company}, per page</h3>
          <Table className="numbers" columns={['Path', ...COLUMNS]}>
            {pages.data.companies.map((r) => (
              <tr key={r.path}>
                <PathCell path={r.path ?? ""} phoneNote={crawls(r)} />
                <Cells row={r} />
              </tr>
            ))}
          </Table>
          {pages.data.hasMore && <p className="small muted">The 20 pages it took most from; `folio analytics ai-companies --company "{company}" --all` lists every one.</p>}
        </div>
      )}
    </section>
  );
}
