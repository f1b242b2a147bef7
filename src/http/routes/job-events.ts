// Job events as JSON pages, or live as Server-Sent Events resuming from Last-Event-ID.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import fp from 'fastify-plugin';
import { errorResponses, MAX_SEQUENCE } from '../../contracts/common.ts';
import { JobEventPage, JobEventsQuery, JobParams } from '../../contracts/jobs.ts';
import type { JobEvent } from '../../contracts/job-events.ts';
import type { JobEventsService } from '../../jobs/event-streams.ts';
import { STREAM_BATCH } from '../../jobs/event-streams.ts';
import { ApiError, badRequest, notFound } from '../../errors.ts';
import { ACCESS, type AccessWatch } from '../auth.ts';

const POLL_MS = 1_000;
const KEEPALIVE_MS = 15_000;

/** Where a stream starts: the Last-Event-ID a reconnecting client sends, else the `after` query value. */
function streamCursor(request: FastifyRequest, after: number): number {
  const lastEventId = request.headers['last-event-id'];
  if (typeof lastEventId !== 'string' || lastEventId === '') return after;
  if (!/^\d{1,10}$/.test(lastEventId) || Number(lastEventId) > MAX_SEQUENCE) {
    throw badRequest('invalid_request', `Last-Event-ID must be an event id (a whole number up to ${MAX_SEQUENCE}).`);
  }
  return Number(lastEventId);
}

function startEventStream(res: ServerResponse, requestId: string): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-request-id': requestId,
  });
  res.write('retry: 2000\n\n');
}

/**
 * One open stream: reads batches from the store (so order is exact and other processes' events arrive
 * too) when this process records an event and once a second, and checks access again before sending
 * each batch, so nothing written after a revocation is delivered.
 */
class EventStream {
  closed = false;
  private draining: Promise<void> | null = null;
  private readonly cleanups: (() => void)[] = [];
  private readonly res: ServerResponse;
  private readonly events: JobEventsService;
  private readonly jobId: string;
  private cursor: number;
  private readonly log: FastifyRequest['log'];
  constructor(res: ServerResponse, events: JobEventsService, jobId: string, cursor: number, log: FastifyRequest['log']) {
    this.res = res;
    this.events = events;
    this.jobId = jobId;
    this.cursor = cursor;
    this.log = log;
  }

  start(access: AccessWatch, release: () => void): void {
    this.cleanups.push(release, () => access.stop(), this.events.onEvent(this.jobId, () => this.drain(access)));
    const poll = setInterval(() => this.drain(access), POLL_MS);
    const keepalive = setInterval(() => this.res.write(': keepalive\n\n'), KEEPALIVE_MS);
    this.cleanups.push(() => clearInterval(poll), () => clearInterval(keepalive));
    this.drain(access);
  }

  /** Ends the stream with an error event naming why (access lost, job gone). */
  endWith(refusal: ApiError): void {
    if (this.closed) return;
    this.res.write(`event: error\ndata: ${JSON.stringify({ code: refusal.code, error: refusal.message })}\n\n`);
    this.end();
  }

  end(): void {
    this.close();
    this.res.end();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const cleanup of this.cleanups.splice(0)) cleanup();
  }

  private drain(access: AccessWatch): void {
    if (this.closed || this.draining) return;
    this.draining = this.sendBatches(access)
      .catch((err) => this.log.warn({ err }, 'event stream read failed'))
      .finally(() => (this.draining = null));
  }

  private async sendBatches(access: AccessWatch): Promise<void> {
    for (;;) {
      const batch = await this.events.batch(this.jobId, this.cursor);
      // Checked after the read: every event sent was written while access still held.
      const refusal = batch.length > 0 ? await access.recheck() : undefined;
      if (this.closed) return;
      if (refusal) return this.endWith(refusal);
      for (const e of batch) this.send(e);
      if (batch.length < STREAM_BATCH) return;
    }
  }

  private send(event: JobEvent): void {
    this.res.write(`id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    this.cursor = event.id;
  }
}

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const events = app.jobEvents;
  // Live streams never end by themselves: a graceful shutdown ends them, or the server would wait forever.
  const openStreams = new Set<EventStream>();
  app.addHook('preClose', (done) => {
    for (const stream of openStreams) stream.end();
    done();
  });

  app.get(
    '/v2/agent/:projectId/job/:id/events',
    {
      schema: {
        tags: ['Agent jobs'],
        summary: 'Job events',
        description:
          'Every step of the job in order (model messages, tool calls and results, validation, commits, pushes, pull requests, errors, token usage). ' +
          'With `Accept: text/event-stream` the same events stream live as Server-Sent Events; reconnect with `Last-Event-ID` to resume.',
        params: JobParams,
        querystring: JobEventsQuery,
        response: { 200: JobEventPage, ...errorResponses(400, 401, 403, 404, 429) },
      },
      // The page is the server's own stored events: JSON as stored. The schema's one shape per event
      // type documents them; a compiled serializer would refuse an older event's shape.
      serializerCompiler: () => (data) => JSON.stringify(data),
      config: ACCESS.read,
    },
    async (request, reply) => {
      const { projectId, id } = request.params;
      const after = request.query.after ?? 0;
      if (!(request.headers.accept ?? '').includes('text/event-stream')) return events.page(projectId, id, after, request.query.limit ?? 100);

      const cursor = streamCursor(request, after);
      const caller = request.apiKey ? `key:${request.apiKey.id}` : `user:${request.operator?.user.id}`;
      const release = await events.open(caller, projectId, id);
      reply.hijack();
      startEventStream(reply.raw, request.id);
      const stream = new EventStream(reply.raw, events, id, cursor, request.log);
      // What admitted the stream is checked again, from the store, every config.streams.recheckMs
      // (the auth plugin) and before each batch: revocation in any process ends it.
      const access = app.watchAccess(request, {
        onLost: (refusal) => stream.endWith(refusal),
        stillThere: () => events.exists(projectId, id),
        gone: () => notFound(`Job "${id}" does not exist in this project.`, 'job_not_found'),
      });
      openStreams.add(stream);
      const close = () => {
        stream.close();
        openStreams.delete(stream);
      };
      request.raw.on('close', close);
      reply.raw.on('close', close);
      stream.start(access, release);
    },
  );
};

export const jobEventRoutes = fp(routes, { name: 'job-event-routes', dependencies: ['jobEvents', 'folio-auth'], encapsulate: true });
