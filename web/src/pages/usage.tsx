// A project's model usage: tokens and estimated cost per day and per job (from the server's price
// table, FOLIO_MODEL_PRICES).
import { useMemo, useState } from 'react';
import { folioClient, type JobUsage, type UsageReport } from '../api.ts';
import { JobCells, Table, type Column } from '../tables.tsx';
import { Alert, Empty, Loading, SelectField, formatDate, useAsync, useTitle, type Option } from '../ui.tsx';

/** The periods offered, in days back from today. */
const PERIODS: readonly Option<string>[] = [7, 30, 90].map((d) => [String(d), `Last ${d} days`]);

const DAY_COLUMNS = ['Day (UTC)', 'Jobs', 'Input tokens', 'Output tokens', 'Estimated cost'];
const JOB_COLUMNS: Column[] = ['Job', 'Status', 'Model', 'Created', { label: 'Tokens', className: 'num' }, { label: 'Estimated cost', className: 'num' }];

export function formatTokens(n: number): string {
  return n.toLocaleString('en-US');
}

/** `$0.0123`, `$4.56`, or a dash when the model has no price. */
export function formatCost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined) return '—';
  if (usd === 0) return '$0';
  return `$${usd < 1 ? usd.toFixed(4) : usd.toFixed(2)}`;
}

/** The tooltip of a token count: how it splits into input and output. */
export function usageTitle(u: Pick<JobUsage, 'inputTokens' | 'outputTokens'>): string {
  return `${formatTokens(u.inputTokens)} input + ${formatTokens(u.outputTokens)} output tokens`;
}

export function UsagePage({ projectId }: { projectId: string }) {
  useTitle('Usage');
  const client = useMemo(() => folioClient(projectId), [projectId]);
  const [days, setDays] = useState<number>(30);
  const report = useAsync<UsageReport>(() => client.usage({ days }), [client, days]);
  return (
    <div className="stack">
      <div className="page-head">
        <h1>Usage</h1>
        <SelectField id="u-days" label="Period" inline value={String(days)} onChange={(d) => setDays(Number(d))} options={PERIODS} />
      </div>
      <p className="hint">Tokens the model reported for this project's agent jobs (failed turns too), and their estimated cost from the server's price table.</p>
      {report.error && <Alert title="Usage could not be loaded.">{report.error}</Alert>}
      {!report.data && !report.error && <Loading what="usage" />}
      {report.data?.month && <MonthBudget month={report.data.month} />}
      {report.data && <UsageTables report={report.data} projectId={projectId} />}
    </div>
  );
}

/** This month's spend against the project's monthly budgets (Settings), and when the month resets. */
function MonthBudget({ month }: { month: NonNullable<UsageReport['month']> }) {
  const over = (month.budgetUsd !== null && month.costUsd >= month.budgetUsd) || (month.tokenBudget !== null && month.totalTokens >= month.tokenBudget);
  const of = (limit: string | null) => (limit === null ? '' : ` of ${limit}`);
  return (
    <section className="card stack" aria-labelledby="this-month" data-testid="usage-month">
      <h2 id="this-month">This month</h2>
      <p>
        {formatCost(month.costUsd)}
        {of(month.budgetUsd === null ? null : formatCost(month.budgetUsd))} · {formatTokens(month.totalTokens)} tokens
        {of(month.tokenBudget === null ? null : formatTokens(month.tokenBudget))}
        {month.budgetUsd === null && month.tokenBudget === null ? ' · no monthly budget (Settings)' : ''}
      </p>
      <p className="small muted">
        Since {month.from}; resets on {month.resetsOn} (UTC).
      </p>
      {over && <Alert kind="error">The monthly budget is spent: new jobs and follow-ups are refused until {month.resetsOn}.</Alert>}
    </section>
  );
}

function UsageTables({ report, projectId }: { report: UsageReport; projectId: string }) {
  if (report.days.length === 0) return <Empty title="No usage in this period">Agent jobs record their tokens here as they run.</Empty>;
  const t = report.totals;
  return (
    <>
      <div className="totals">
        <div className="card stat">
          <span className="stat-label">Tokens</span>
          <span className="stat-value" data-testid="usage-total-tokens">{formatTokens(t.totalTokens)}</span>
        </div>
        <div className="card stat">
          <span className="stat-label">Estimated cost</span>
          <span className="stat-value" data-testid="usage-total-cost">{formatCost(t.estimatedCostUsd)}</span>
        </div>
        <div className="card stat">
          <span className="stat-label">Jobs that called the model</span>
          <span className="stat-value" data-testid="usage-jobs">
            {report.jobs.length}
            {report.jobs.length >= 100 ? '+' : ''}
          </span>
          <span className="small muted">in this period, failed ones too</span>
        </div>
      </div>
      {t.unpricedTokens > 0 && (
        <Alert kind="info">{formatTokens(t.unpricedTokens)} tokens are of models without a price and are not in the estimate; set FOLIO_MODEL_PRICES on the server.</Alert>
      )}
      <section className="stack" aria-labelledby="per-day">
        <h2 id="per-day">Per day</h2>
        <Table className="numbers" aria-labelledby="per-day" columns={DAY_COLUMNS}>
          {report.days.map((d) => (
            <tr key={d.date}>
              <td>{d.date}</td>
              <td>{d.jobs}</td>
              <td>{formatTokens(d.inputTokens)}</td>
              <td>{formatTokens(d.outputTokens)}</td>
              <td>{formatCost(d.estimatedCostUsd)}</td>
            </tr>
          ))}
        </Table>
      </section>
      <section className="stack" aria-labelledby="per-job">
        <h2 id="per-job">Per job</h2>
        <Table aria-labelledby="per-job" columns={JOB_COLUMNS}>
          {report.jobs.map((j) => (
            <tr key={j.id}>
              <JobCells projectId={projectId} job={j} />
              <td>{j.model}</td>
              <td>{formatDate(j.createdAt)}</td>
              <td className="num" title={usageTitle(j)}>
                {formatTokens(j.totalTokens)}
              </td>
              <td className="num">{formatCost(j.estimatedCostUsd)}</td>
            </tr>
          ))}
        </Table>
      </section>
    </>
  );
}
