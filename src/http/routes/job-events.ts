// Job events as JSON pages, or live as Server-Sent Events resuming from Last-Event-ID.
import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../../services.ts';
import { errorResponses } from '../../contracts/common.ts';
import { JobEventPage, JobEventsQuery, JobParams } from '../../contracts/jobs.ts';
import { jobEventBus, listJobEvents } from '../../jobs/events.ts';
import { badRequest } from '../../errors.ts';
import { requireKey } from '../auth.ts';

const POLL_MS = 1_000;
const KEEPALIVE_MS = 15_000;

export const jobEventRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const { jobs, keys, store } = services;
  // Live streams never end by themselves: a graceful shutdown ends them, or the server would wait forever.
  const openStreams = new Set<() => void>();
  app.addHook('preClose', (done) => {
    for (const end of openStreams) end();
    done();
  });

  app.get<{ Params: { projectId: string; id: string }; Querystring: { after?: number; limit?: number } }>(
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
        response: { 200: JobEventPage, ...errorResponses(400, 401, 403, 404) },
      },
      preHandler: requireKey(keys, 'read'),
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
        if (!/^\d+$/.test(lastEventId)) throw badRequest('invalid_request', 'Last-Event-ID must be an event id (a whole number).');
        cursor = Number(lastEventId);
      }

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
      // Reads from the store so order is exact and events written by other processes arrive too.
      const drain = () => {
        if (closed || draining) return;
        draining = (async () => {
          try {
            for (;;) {
              const batch = await listJobEvents(store.db, id, cursor, 500);
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
      jobEventBus.on(`job:${id}`, onEvent);
      const poll = setInterval(drain, POLL_MS);
      const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
      const close = () => {
        closed = true;
        clearInterval(poll);
        clearInterval(keepalive);
        jobEventBus.off(`job:${id}`, onEvent);
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
