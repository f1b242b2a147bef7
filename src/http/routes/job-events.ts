// Job events as JSON pages, or live as Server-Sent Events resuming from Last-Event-ID.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../services.ts';
import { errorResponses, MAX_SEQUENCE } from '../../contracts/common.ts';
import { JobEventPage, JobEventsQuery, JobParams } from '../../contracts/jobs.ts';
import { listJobEvents } from '../../jobs/events.ts';
import { ApiError, badRequest, notFound } from '../../errors.ts';
import { ACCESS } from '../auth.ts';

const POLL_MS = 1_000;
const KEEPALIVE_MS = 15_000;

export const jobEventRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { jobs, store, config } = services;
  // Live streams never end by themselves: a graceful shutdown ends them, or the server would wait forever.
  const openStreams = new Set<() => void>();
  // Open streams per caller (an API key, or an operator's session) and per project, capped so one
  // client cannot hold every connection or poll the store without end.
  const streamsBy = new Map<string, number>();
  const takeStream = (caller: string, project: string): (() => void) => {
    const { perKey, perProject } = config.streams;
    const byCaller = streamsBy.get(caller) ?? 0;
    const byProject = streamsBy.get(project) ?? 0;
    if (byCaller >= perKey || byProject >= perProject) {
      const which = byCaller >= perKey ? `${perKey} per API key` : `${perProject} per project`;
      throw new ApiError(429, 'too_many_streams', `Too many live event streams are open (at most ${which}); close one or read the events as pages.`, {
        headers: { 'retry-after': '5' },
      });
    }
    streamsBy.set(caller, byCaller + 1);
    streamsBy.set(project, byProject + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const k of [caller, project]) {
        const n = (streamsBy.get(k) ?? 1) - 1;
        if (n <= 0) streamsBy.delete(k);
        else streamsBy.set(k, n);
      }
    };
  };
  app.addHook('preClose', (done) => {
    for (const end of openStreams) end();
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
      config: ACCESS.read,
    },
    async (request, reply) => {
      const { projectId, id } = request.params;
      await jobs.get(projectId, id); // 404 for another project's or an unknown job
      const limit = request.query.limit ?? 100;
      const wantsStream = (request.headers.accept ?? '').includes('text/event-stream');
      if (!wantsStream) {
        const events = await listJobEvents(store.db, id, request.query.after ?? 0, limit + 1);
        const page = events.slice(0, limit);
        return { events: page, hasMore: events.length > limit, nextAfter: page.at(-1)?.id ?? request.query.after ?? 0 };
      }

      const lastEventId = request.headers['last-event-id'];
      let cursor = request.query.after ?? 0;
      if (typeof lastEventId === 'string' && lastEventId !== '') {
        if (!/^\d{1,10}$/.test(lastEventId) || Number(lastEventId) > MAX_SEQUENCE) {
          throw badRequest('invalid_request', `Last-Event-ID must be an event id (a whole number up to ${MAX_SEQUENCE}).`);
        }
        cursor = Number(lastEventId);
      }

      const caller = request.apiKey ? `key:${request.apiKey.id}` : `user:${request.operator?.user.id}`;
      const releaseStream = takeStream(caller, `project:${projectId}`);

      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        'x-request-id': request.id,
      });
      res.write('retry: 2000\n\n');

      let closed = false;
      let draining: Promise<void> | null = null;
      // What admitted the stream is checked again, from the store, every config.streams.recheckMs
      // (the auth plugin) and before each batch below: revocation in any process ends it.
      const access = app.watchAccess(request, {
        onLost: (refusal) => endWith(refusal),
        stillThere: () => jobs.exists(projectId, id),
        gone: () => notFound(`Job "${id}" does not exist in this project.`, 'job_not_found'),
      });
      const endWith = (refusal: ApiError) => {
        if (closed) return;
        res.write(`event: error\ndata: ${JSON.stringify({ code: refusal.code, error: refusal.message })}\n\n`);
        end();
      };
      // Reads from the store so order is exact and events written by other processes arrive too.
      const drain = () => {
        if (closed || draining) return;
        draining = (async () => {
          try {
            for (;;) {
              const batch = await listJobEvents(store.db, id, cursor, 500);
              // Checked after the read: every event sent was written while access still held.
              const refusal = batch.length > 0 ? await access.recheck() : undefined;
              if (closed) break;
              if (refusal) {
                endWith(refusal);
                break;
              }
              for (const e of batch) {
                res.write(`id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
                cursor = e.id;
              }
              if (batch.length < 500 || closed) break;
            }
          } catch (err) {
            request.log.warn({ err }, 'event stream read failed');
          } finally {
            draining = null;
          }
        })();
      };
      const onEvent = () => drain();
      const unsubscribe = jobs.events.subscribe(id, onEvent);
      const poll = setInterval(drain, POLL_MS);
      const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
      const close = () => {
        closed = true;
        releaseStream();
        access.stop();
        clearInterval(poll);
        clearInterval(keepalive);
        unsubscribe();
        openStreams.delete(end);
      };
      const end = () => {
        close();
        res.end();
      };
      openStreams.add(end);
      request.raw.on('close', close);
      res.on('close', close);
      drain();
    },
  );
};
