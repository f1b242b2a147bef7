// Requests by (method, route, status) and their latency histogram, kept as plain numbers and
// handed to prom-client only when /metrics is scraped. prom-client's own Counter and Histogram
// build and hash a label key on every observation; on the hottest routes that was the largest
// cost a request paid to Folio itself.
// Kept for `GET job`: docs/benchmarks.md, "Performance shortcuts kept".
import type { Registry } from 'prom-client';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

interface Series {
  labels: { method: string; route: string; status: string };
  count: number;
  sum: number;
  /** Observations per bucket, not cumulative (made cumulative when scraped); the last is +Inf. */
  buckets: number[];
}

interface Sample {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

export class RequestMetrics {
  readonly #series = new Map<string, Series>();

  /** Registers `folio_http_requests_total` and `folio_http_request_duration_seconds` on `registry`. */
  constructor(registry: Registry) {
    const series = () => [...this.#series.values()];
    registry.registerMetric(
      metric('folio_http_requests_total', 'HTTP requests by route and status', 'counter', () =>
        series().map((s) => ({ labels: s.labels, value: s.count })),
      ),
    );
    registry.registerMetric(
      metric('folio_http_request_duration_seconds', 'HTTP request latency by route and status', 'histogram', () =>
        series().flatMap((s) => {
          const out: Sample[] = [];
          let cumulative = 0;
          BUCKETS.forEach((le, i) => {
            cumulative += s.buckets[i];
            out.push({ metricName: 'folio_http_request_duration_seconds_bucket', labels: { ...s.labels, le }, value: cumulative });
          });
          out.push({ metricName: 'folio_http_request_duration_seconds_bucket', labels: { ...s.labels, le: '+Inf' }, value: s.count });
          out.push({ metricName: 'folio_http_request_duration_seconds_sum', labels: s.labels, value: s.sum });
          out.push({ metricName: 'folio_http_request_duration_seconds_count', labels: s.labels, value: s.count });
          return out;
        }),
      ),
    );
  }

  /** Records one finished request; `route` is the route pattern, not the path. */
  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let s = this.#series.get(key);
    if (!s) {
      s = { labels: { method, route, status: String(status) }, count: 0, sum: 0, buckets: new Array(BUCKETS.length + 1).fill(0) };
      this.#series.set(key, s);
    }
    s.count++;
    s.sum += seconds;
    let i = 0;
    while (i < BUCKETS.length && seconds > BUCKETS[i]) i++;
    s.buckets[i]++;
  }
}

/** The shape prom-client's registry reads from a metric when it renders the exposition text. */
function metric(name: string, help: string, type: 'counter' | 'histogram', values: () => Sample[]) {
  const get = () => ({ name, help, type, values: values(), aggregator: 'sum' });
  return { name, help, type, aggregator: 'sum', get, reset() {} } as unknown as Parameters<Registry['registerMetric']>[0];
}
