// The analytics chart: human and AI visitors — or page views, as the page counts — per hour or day,
// with its numbers as a table for screen readers and copying.
import { useEffect, useRef } from 'react';
import { Chart, type ChartConfiguration, CategoryScale, Filler, Legend, LinearScale, LineController, LineElement, PointElement, Tooltip } from 'chart.js';
import type { Interval, SeriesPoint } from '../api.ts';
import { Table } from '../tables.tsx';
import { DAY, isoDay, isoMinute } from '../dates.ts';

Chart.register(LineController, LineElement, PointElement, LinearScale, CategoryScale, Legend, Tooltip, Filler);


/** One point per bucket of the range, zero where the API has none. */
export function fillSeries(series: SeriesPoint[], from: string, toExclusive: string, interval: Interval): SeriesPoint[] {
  const step = interval === 'hour' ? 3_600_000 : DAY;
  const byStart = new Map(series.map((p) => [Date.parse(p.start), p]));
  const out: SeriesPoint[] = [];
  for (let t = Date.parse(from); t < Date.parse(toExclusive); t += step) {
    out.push(byStart.get(t) ?? { start: new Date(t).toISOString(), human: 0, ai: 0, total: 0, views: 0, humanViews: 0, aiViews: 0 });
  }
  return out;
}

/** What the chart counts: distinct visitors or page views. */
export type ChartMetric = 'visitors' | 'views';

/** The human, AI and total figures of a point, in the chart's metric. */
export function pointFigures(p: SeriesPoint, metric: ChartMetric): { human: number; ai: number; total: number } {
  return metric === 'views' ? { human: p.humanViews, ai: p.aiViews, total: p.views } : { human: p.human, ai: p.ai, total: p.total };
}

/** The chart's title for the metric. */
export const chartTitle = (metric: ChartMetric) => (metric === 'views' ? 'Human vs AI page views over time' : 'Human vs AI visitors over time');

/** A line per kind of reader, in the page's colours (CSS variables, so dark mode follows). */
function chartConfig(series: SeriesPoint[], labels: string[], metric: ChartMetric): ChartConfiguration<'line'> {
  const css = getComputedStyle(document.documentElement);
  const color = (v: string) => css.getPropertyValue(v).trim();
  return {
    type: 'line',
    data: {
      labels,
      datasets: [
        { label: 'Humans', data: series.map((p) => pointFigures(p, metric).human), borderColor: color('--human'), backgroundColor: color('--human-fill'), fill: true, tension: 0.25, pointRadius: 2 },
        { label: 'AI', data: series.map((p) => pointFigures(p, metric).ai), borderColor: color('--ai'), backgroundColor: color('--ai-fill'), fill: true, tension: 0.25, pointRadius: 2, borderDash: [6, 3] },
      ],
    },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      interaction: { mode: 'index', intersect: false },
      scales: {
        y: { beginAtZero: true, ticks: { precision: 0, color: color('--muted') }, grid: { color: color('--grid') } },
        x: { ticks: { color: color('--muted'), maxRotation: 0, autoSkip: true }, grid: { display: false } },
      },
      plugins: { legend: { labels: { color: color('--text') } } },
    },
  };
}

export function SeriesChart({ series, metric }: { series: SeriesPoint[]; metric: ChartMetric }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const hourly = series.length > 1 && Date.parse(series[1].start) - Date.parse(series[0].start) < DAY;
  const labels = series.map((p) => {
    const d = new Date(p.start);
    return hourly ? isoMinute(p.start) : isoDay(d);
  });
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, chartConfig(series, labels, metric));
    return () => chart.destroy();
  }, [series, metric]);
  const unit = metric === 'views' ? 'page views' : 'visitors';
  return (
    <>
      <div className="chart">
        <canvas ref={canvas} role="img" aria-label={`Line chart of human and AI ${unit} per ${hourly ? 'hour' : 'day'}; the same numbers are in the table below.`} />
      </div>
      <details>
        <summary>Show the chart's numbers</summary>
        <Table className="numbers" aria-label={`Chart numbers: ${unit}`} columns={[hourly ? 'Hour (UTC)' : 'Day (UTC)', 'Humans', 'AI', 'Total']}>
          {series.map((p, i) => {
            const f = pointFigures(p, metric);
            return (
              <tr key={p.start}>
                <td>{labels[i]}</td>
                <td>{f.human}</td>
                <td>{f.ai}</td>
                <td>{f.total}</td>
              </tr>
            );
          })}
        </Table>
      </details>
    </>
  );
}
