// Prometheus metrics: requests by route and status, latencies, queue depth, jobs by status.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.ts';

export function registerMetrics(app: FastifyInstance, services: Services): void {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'folio_process_' });
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({ name: 'folio_http_requests_total', help: 'HTTP requests by route and status', labelNames, registers: [registry] });
  const latency = new Histogram({
    name: 'folio_http_request_duration_seconds',
    help: 'HTTP request latency by route and status',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  new Gauge({
    name: 'folio_queue_depth',
    help: 'Active jobs waiting for a worker',
    registers: [registry],
    async collect() {
      this.set(await services.queue.depth());
    },
  });
  new Gauge({
    name: 'folio_jobs',
    help: 'Jobs by status',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      this.reset();
      const rows = await services.store.db
        .selectFrom('jobs')
        .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
        .groupBy('status')
        .execute();
      for (const s of ['active', 'completed', 'archived', 'failed']) this.set({ status: s }, 0);
      for (const r of rows) this.set({ status: r.status }, Number(r.n));
    },
  });
  new Gauge({
    name: 'folio_worker_runs',
    help: 'Job runs in progress in this process',
    registers: [registry],
    collect() {
      this.set(services.workers?.activeRuns ?? 0);
    },
  });

  // Label children bound once per (method, route, status): no label hashing per request.
  const bound = new Map<string, { count: { inc(): void }; time: { observe(v: number): void } }>();
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const key = `${request.method} ${route} ${reply.statusCode}`;
    let m = bound.get(key);
    if (!m) {
      const labels = { method: request.method, route, status: String(reply.statusCode) };
      m = { count: requests.labels(labels), time: latency.labels(labels) };
      bound.set(key, m);
    }
    m.count.inc();
    m.time.observe(reply.elapsedTime / 1000);
    done();
  });

  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    reply.header('content-type', registry.contentType);
    return registry.metrics();
  });
}
