// Prometheus metrics: requests by route and status, latencies, queue depth, jobs by status. Only for
// the holder of FOLIO_METRICS_TOKEN (ACCESS.metrics); without it there is no /metrics route at all,
// and no request is counted.
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { FastifyInstance } from 'fastify';
import { RequestMetrics } from './request-metrics.ts';
import { ACCESS } from './auth.ts';
import { JOB_STATUSES } from '../contracts/jobs.ts';

export function registerMetrics(app: FastifyInstance): void {
  const { metrics, config } = app;
  if (config.metricsToken === null) return;
  const registry = new Registry();
  // prom-client's own names start with process_ and nodejs_: folio_process_cpu_seconds_total…
  collectDefaultMetrics({ register: registry, prefix: 'folio_' });
  const requests = new RequestMetrics(registry);
  new Gauge({
    name: 'folio_queue_depth',
    help: 'Active jobs waiting for a worker',
    registers: [registry],
    async collect() {
      this.set(await metrics.queueDepth());
    },
  });
  new Gauge({
    name: 'folio_jobs',
    help: 'Jobs by status',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      this.reset();
      const rows = await metrics.jobsByStatus();
      for (const s of JOB_STATUSES) this.set({ status: s }, 0);
      for (const r of rows) this.set({ status: r.status }, r.count);
    },
  });
  new Gauge({
    name: 'folio_trigger_refusals_total',
    help: 'Code-host deliveries refused before their signature checked out (not recorded), by host and code, since the process started',
    labelNames: ['host', 'code'],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of metrics.triggerRefusals()) this.set({ host: r.host, code: r.code }, r.count);
    },
  });
  new Gauge({
    name: 'folio_worker_runs',
    help: 'Job runs in progress in this process',
    registers: [registry],
    collect() {
      this.set(metrics.activeRuns());
    },
  });

  // Hand-fed series: docs/benchmarks.md, "Performance shortcuts kept".
  app.addHook('onResponse', async (request, reply) => {
    requests.observe(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
  });

  app.get('/metrics', { schema: { hide: true }, config: ACCESS.metrics }, async (_req, reply) => {
    reply.header('content-type', registry.contentType);
    return registry.metrics();
  });
}
