// The request metrics and the per-request logger that the HTTP layer keeps cheap.
import { describe, expect, it, vi } from 'vitest';
import { Writable } from 'node:stream';
import pino from 'pino';
import { Registry } from 'prom-client';
import type { FastifyBaseLogger } from 'fastify';
import { RequestMetrics } from '../../src/http/request-metrics.ts';
import { lazyChildLogger } from '../../src/http/request-logger.ts';

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

describe('per-request logger', () => {
  function capture() {
    const lines: Record<string, unknown>[] = [];
    const stream = new Writable({
      write(chunk, _enc, cb) {
        for (const l of String(chunk).trim().split('\n')) lines.push(JSON.parse(l));
        cb();
      },
    });
    return { lines, log: pino({ level: 'info' }, stream) };
  }

  it('makes the child only when something logs, with the request bindings', async () => {
    const { lines, log } = capture();
    const child = vi.spyOn(log, 'child');
    const requestLog = lazyChildLogger(log as unknown as FastifyBaseLogger, { reqId: 'req-1' }, {});
    expect(requestLog.level).toBe('info');
    expect(child).not.toHaveBeenCalled();
    requestLog.debug('below the level');
    requestLog.error({ err: new Error('boom') }, 'request failed');
    requestLog.warn('again');
    expect(child).toHaveBeenCalledTimes(1);
    await new Promise((r) => setImmediate(r));
    expect(lines.map((l) => [l.reqId, l.msg])).toEqual([
      ['req-1', 'request failed'],
      ['req-1', 'again'],
    ]);
    expect((lines[0].err as { message: string }).message).toBe('boom');
  });

  it('children of the request logger keep its bindings; levels can be changed', async () => {
    const { lines, log } = capture();
    const requestLog = lazyChildLogger(log as unknown as FastifyBaseLogger, { reqId: 'req-2' }, {});
    requestLog.level = 'debug';
    requestLog.debug('now shown');
    requestLog.child({ jobId: 'job_1' }).info('nested');
    await new Promise((r) => setImmediate(r));
    expect(lines.map((l) => [l.reqId, l.jobId, l.msg])).toEqual([
      ['req-2', undefined, 'now shown'],
      ['req-2', 'job_1', 'nested'],
    ]);
  });
});
