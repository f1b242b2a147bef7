// Suggestions drawn from a project's traffic, and starting the agent job of one.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import { errorResponses, ProjectParams } from '../../contracts/common.ts';
import { SITE_PATH_LIMITS, StartSuggestionResponse, SuggestionParams, SuggestionsQuery, SuggestionsResponse, type SuggestionsResponse as List } from '../../contracts/suggestions.ts';
import type { SuggestionList } from '../../suggestions/service.ts';
import { ACCESS } from '../auth.ts';
import { rateLimitHeaders } from '../../errors.ts';

const tags = ['Suggestions'];
const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

function listView(l: SuggestionList): List {
  return {
    dateFrom: iso(l.range.from),
    dateTo: iso(l.range.to),
    minVisitors: l.minVisitors,
    site: l.site,
    suggestions: l.suggestions,
    notProposed: l.notProposed,
    started: l.started.map((s) => ({
      ...s,
      createdAt: iso(s.createdAt),
      pullRequest: s.pullRequest ? { state: s.pullRequest.state, mergedAt: isoOrNull(s.pullRequest.mergedAt) } : null,
      measuredSince: isoOrNull(s.measuredSince),
    })),
  };
}

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { suggestions } = app;
  // Listing and starting both read the project's traffic like a report: each takes an hourly read slot.
  const takeReadSlot = async (projectId: string, reply: FastifyReply) => {
    const info = await app.analyticsReads.take(projectId);
    if (info) reply.headers(rateLimitHeaders(info));
  };

  app.get(
    '/v2/agent/:projectId/suggestions',
    {
      schema: {
        tags,
        summary: 'List suggestions from traffic',
        description:
          'What Folio proposes from the project\'s traffic (default: the last 30 days, FOLIO_SUGGESTIONS_DAYS): **broken_paths**, one suggestion covering every not-found path with at least `minVisitors` distinct visitors, each with the existing pages most likely to replace it (by slug, title and navigation, read from the base branch); and **agent_markdown**, `.md` and `llms.txt` addresses at least `minVisitors` AI agents asked for that do not exist. Each carries the prompt its job gets. '
          + `Only paths shaped like a path of the site (at most ${SITE_PATH_LIMITS.chars} characters and ${SITE_PATH_LIMITS.segments} segments of unreserved characters or letters and digits) are proposed; others that reach the threshold are listed in \`notProposed\`, percent-encoded with the reason, and never put in a prompt. `
          + 'Paths a started suggestion\'s job is still fixing (its pull request not merged or closed) are not proposed again; `started` shows those jobs with each path\'s not-found visitors before and after.',
        params: ProjectParams,
        querystring: SuggestionsQuery,
        response: { 200: SuggestionsResponse, ...errorResponses(400, 401, 403, 404, 429) },
      },
      config: ACCESS.read,
    },
    async (request, reply) => {
      await takeReadSlot(request.params.projectId, reply);
      return listView(await suggestions.list(request.params.projectId, request.query));
    },
  );

  app.post(
    '/v2/agent/:projectId/suggestions/:suggestionId/job',
    {
      schema: {
        tags,
        summary: 'Start the agent job of a suggestion',
        description:
          'Starts an ordinary agent job (poll it, follow up, archive) with the suggestion\'s prompt and context; its `trigger` is `{kind: "suggestion", …}`. The range and `minVisitors` must be those the suggestion was listed with (the defaults when omitted). 404 `suggestion_not_found` when no current suggestion has the id (including another project\'s); 409 `suggestion_in_progress` when another job already covers one of its paths. Takes an analytics read slot (it reads the traffic again) and a job-creation slot.',
        params: SuggestionParams,
        querystring: SuggestionsQuery,
        response: { 201: StartSuggestionResponse, ...errorResponses(400, 401, 402, 403, 404, 409, 429) },
      },
      config: ACCESS.write,
    },
    async (request, reply) => {
      const { projectId, suggestionId } = request.params;
      await takeReadSlot(projectId, reply);
      return reply.code(201).send(await suggestions.start(projectId, suggestionId, request.query));
    },
  );
};

export const suggestionRoutes = fp(routes, { name: 'suggestion-routes', dependencies: ['suggestions', 'analyticsReads', 'folio-auth'], encapsulate: true });
