// The Insights chart: the share of human visitors an AI assistant's answer sent, per day, with its
// numbers as a table behind a disclosure (for screen readers and copying).
import { useEffect, useRef } from 'react';
import { Chart, type ChartConfiguration, CategoryScale, Filler, LinearScale, LineController, LineElement, PointElement, Tooltip } from 'chart.js';
import type { ReferrersPage } from '../api.ts';
import { Table } from '../tables.tsx';

Chart.register(LineController, LineElement, PointElement, LinearScale, CategoryScale, Tooltip, Filler);

type ShareDay = ReferrersPage['aiShare'][number];

/** The share as a number of percent, 0 on a day without human visitors. */
const shareOf = (d: ShareDay) => (d.humans === 0 ? 0 : (d.fromAiAssistant / d.humans) * 100);
export const percent = (part: number, whole: number) => (whole === 0 ? '—' : `${((part / whole) * 100).toFixed(1)}%`);

function config(days: ShareDay[]): ChartConfiguration<'line'> {
  const css = getComputedStyle(document.documentElement);
  const color = (v: string) => css.getPropertyValue(v).trim();
  return {
    type: 'line',
    data: {
      labels: days.map((d) => d.start.slice(0, 10)),
      datasets: [{ label: 'Share from AI answers (%)', data: days.map(shareOf), borderColor: color('--ai'), backgroundColor: color('--ai-fill'), fill: true, tension: 0.25, pointRadius: 2 }],
    },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      scales: {
        y: { beginAtZero: true, suggestedMax: 10, ticks: { color: color('--muted'), callback: (v) => `${v}%` }, grid: { color: color('--grid') } },
        x: { ticks: { color: color('--muted'), maxRotation: 0, autoSkip: true }, grid: { display: false } },
      },
      plugins: { legend: { display: false }, tooltip: { callbacks: { label: (c) => `${(c.parsed.y ?? 0).toFixed(1)}% of human visitors` } } },
    },
  };
}

export function AiShareChart({ days }: { days: ShareDay[] }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, config(days));
    return () => chart.destroy();
  }, [days]);
  return (
    <>
      <div className="chart small-chart">
        <canvas ref={canvas} role="img" aria-label="Line chart of the share of human visitors sent by AI answers, per day; the same numbers are in the table below." />
      </div>
      <details>
        <summary>Show the chart's numbers</summary>
        <Table className="numbers" aria-label="Chart numbers: share of human visitors from AI answers" columns={['Day (UTC)', 'Human visitors', 'From AI answers', 'Share']}>
          {days.map((d) => (
            <tr key={d.start}>
              <td>{d.start.slice(0, 10)}</td>
              <td>{d.humans.toLocaleString()}</td>
              <td>{d.fromAiAssistant.toLocaleString()}</td>
              <td>{percent(d.fromAiAssistant, d.humans)}</td>
            </tr>
          ))}
        </Table>
      </details>
    </>
  );
}
