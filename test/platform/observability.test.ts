// The request metrics the HTTP layer keeps cheap.
import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { RequestMetrics } from '../../src/http/request-metrics.ts';

describe('request metrics', () => {
  it('renders counts and a cumulative latency histogram per method, route and status', async () => {
    const registry = new Registry();
    const metrics = new RequestMetrics(registry);
    for (const seconds of [0.0005, 0.001, 0.003, 0.2, 7]) metrics.observe('GET', '/v2/agent/:projectId/job/:id', 200, seconds);
    metrics.observe('GET', '/v2/agent/:projectId/job/:id', 404, 0.002);
    const text = await registry.metrics();
    const labels = 'method="GET",route="/v2/agent/:projectId/job/:id",status="200"';
    expect(text).toContain('# TYPE folio_http_requests_total counter');
    expect(text).toContain(`folio_http_requests_total{${labels}} 5`);
    expect(text).toContain('folio_http_requests_total{method="GET",route="/v2/agent/:projectId/job/:id",status="404"} 1');
    expect(text).toContain('# TYPE folio_http_request_duration_seconds histogram');
    // `le` is inclusive: 0.001 falls in the 0.001 bucket.
    expect(text).toContain(`folio_http_request_duration_seconds_bucket{${labels},le="0.001"} 2`);
    expect(text).toContain(`folio_http_request_duration_seconds_bucket{${labels},le="0.005"} 3`);
    expect(text).toContain(`folio_http_request_duration_seconds_bucket{${labels},le="0.25"} 4`);
    expect(text).toContain(`folio_http_request_duration_seconds_bucket{${labels},le="5"} 4`);
    expect(text).toContain(`folio_http_request_duration_seconds_bucket{${labels},le="+Inf"} 5`);
    expect(text).toContain(`folio_http_request_duration_seconds_count{${labels}} 5`);
    const sum = Number(/folio_http_request_duration_seconds_sum\{[^}]*status="200"\} (\S+)/.exec(text)![1]);
    expect(sum).toBeCloseTo(7.2045, 6);
  });
});
