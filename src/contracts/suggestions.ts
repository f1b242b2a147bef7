// Suggestions drawn from traffic (GET /v2/agent/{projectId}/suggestions) and jobs started from them.
import { Type, type Static } from 'typebox';
import { ProjectId } from './common.ts';
import { RangeQuery } from './analytics.ts';
import { Job, JobStatus, SuggestionKind } from './jobs.ts';

const Visitors = Type.Object({
  human: Type.Integer(),
  ai: Type.Integer(),
  total: Type.Integer({ description: 'Distinct visitors, human and AI deduplicated.' }),
});

const Candidate = Type.Object(
  {
    url: Type.String({ description: 'The page\'s site path.' }),
    file: Type.String({ description: 'The page\'s file in the repository.' }),
    title: Type.String(),
    score: Type.Number({ minimum: 0, maximum: 1, description: '0.5 × slug + 0.3 × title + 0.2 × navigation similarity.' }),
    matchedBy: Type.Array(Type.Union([Type.Literal('slug'), Type.Literal('title'), Type.Literal('navigation')])),
  },
  { description: 'An existing page that may replace the path, best first.' },
);

const DerivedVisitors = Type.Integer({
  description: 'Distinct identities the server derived from address and user agent (not a client-chosen visitorId); weekly automatic runs count these.',
});

export const SuggestedPath = Type.Object({
  path: Type.String({ description: 'Shaped like a path of the site (see notProposed): only such paths reach a prompt.' }),
  visitors: Visitors,
  derivedVisitors: DerivedVisitors,
  views: Type.Integer(),
  referrers: Type.Array(Type.Object({ host: Type.Union([Type.String(), Type.Null()]), visitors: Type.Integer() })),
  candidates: Type.Array(Candidate, { description: 'At most 3; empty when the repository could not be read or no page is alike.' }),
});

export const Suggestion = Type.Object(
  {
    id: Type.String({ description: 'Stable while the same paths qualify; another project never has it.' }),
    kind: SuggestionKind,
    title: Type.String(),
    paths: Type.Array(SuggestedPath, { description: 'Busiest first, at most 50.' }),
    prompt: Type.String({ description: 'The instruction the agent gets when the suggestion is started.' }),
  },
  { $id: 'Suggestion', title: 'Suggestion' },
);
export type Suggestion = Static<typeof Suggestion>;

export const StartedSuggestion = Type.Object(
  {
    suggestionId: Type.String(),
    kind: SuggestionKind,
    title: Type.String(),
    automatic: Type.Boolean({ description: 'Started by the weekly automatic run.' }),
    createdAt: Type.String({ format: 'date-time' }),
    job: Type.Object({ id: Type.String(), status: JobStatus, prLink: Type.Union([Type.String(), Type.Null()]) }),
    pullRequest: Type.Union([
      Type.Object({
        state: Type.Union([Type.Literal('open'), Type.Literal('merged'), Type.Literal('closed')]),
        mergedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      }),
      Type.Null(),
    ], { description: 'What the code host last said of the job\'s pull request; null when not known yet.' }),
    measuredFrom: Type.Union([Type.Literal('merge'), Type.Literal('completion'), Type.Null()], {
      description: '"after" counts start at the pull request\'s merge, else at the job\'s completion; null while neither happened.',
    }),
    measuredSince: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    beforeDays: Type.Number({ description: 'Days of traffic the "before" counts cover.' }),
    afterDays: Type.Union([Type.Number(), Type.Null()], { description: 'Days of traffic the "after" counts cover so far.' }),
    afterReady: Type.Boolean({
      description: 'Whether "after" has at least a day of traffic to compare with "before": until then every path\'s `after` is null, so that no early zero reads as a fix that worked.',
    }),
    paths: Type.Array(
      Type.Object({
        path: Type.String(),
        before: Visitors,
        after: Type.Union([Visitors, Type.Null()], { description: 'Not-found visitors since measuredSince; null before it.' }),
      }),
    ),
  },
  { $id: 'StartedSuggestion', title: 'StartedSuggestion' },
);
export type StartedSuggestion = Static<typeof StartedSuggestion>;

/** The bounds of a path shaped like a path of the site (src/suggestions/path-shape.ts applies them). */
export const SITE_PATH_LIMITS = { chars: 200, segments: 12 } as const;

export const PathShapeProblem = Type.Union(
  [Type.Literal('too_long'), Type.Literal('too_many_segments'), Type.Literal('empty_segment'), Type.Literal('dot_segment'), Type.Literal('bad_escape'), Type.Literal('character')],
  {
    description:
      `Why it is not shaped like a path of the site: over ${SITE_PATH_LIMITS.chars} characters, over ${SITE_PATH_LIMITS.segments} segments, an empty (\`//\`) or dot segment, a \`%\` that is no escape of UTF-8, or a character outside A–Z a–z 0–9 - . _ ~ and letters, marks or digits of any script (raw or escaped).`,
  },
);
export type PathShapeProblem = Static<typeof PathShapeProblem>;

export const NotProposedPath = Type.Object(
  {
    path: Type.String({ description: 'The path as stored (JSON-escaped only): show `escaped` instead.' }),
    escaped: Type.String({ description: 'The path percent-encoded outside a URL path\'s characters (spaces, quotes, controls, bidirectional and other non-ASCII characters): how people are shown it.' }),
    kind: SuggestionKind,
    visitors: Visitors,
    derivedVisitors: DerivedVisitors,
    reason: PathShapeProblem,
    message: Type.String({ description: 'The reason in one sentence.' }),
  },
  { description: 'A not-found path that reached the threshold but is not shaped like a path of the site: listed for people, never put in a prompt or an automatic run.' },
);

export const SuggestionsQuery = Type.Object({
  ...RangeQuery.properties,
  minVisitors: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 1_000_000,
      description:
        'Distinct visitors a not-found path needs to be proposed (default FOLIO_SUGGESTIONS_MIN_VISITORS, 3): `visitors.total` for broken paths, `visitors.ai` for Markdown addresses. (The weekly automatic run counts `derivedVisitors` instead.)',
    }),
  ),
});
export type SuggestionsQuery = Static<typeof SuggestionsQuery>;

export const SuggestionsResponse = Type.Object(
  {
    dateFrom: Type.String({ format: 'date-time' }),
    dateTo: Type.String({ format: 'date-time' }),
    minVisitors: Type.Integer(),
    site: Type.Object(
      {
        read: Type.Boolean(),
        framework: Type.Union([Type.String(), Type.Null()]),
        commit: Type.Union([Type.String(), Type.Null()]),
        pages: Type.Integer(),
        error: Type.Union([Type.String(), Type.Null()], { description: 'Why the repository could not be read; suggestions then have no candidates.' }),
        notes: Type.Array(Type.String(), {
          description: 'What the read or the scoring left out, in sentences: files over the size limit (named, with their sizes) that were not read, paths not compared with the pages.',
        }),
      },
      { description: 'The docs site as the base branch has it, which candidate pages come from.' },
    ),
    suggestions: Type.Array(Suggestion),
    notProposed: Type.Array(NotProposedPath, { description: 'Busiest first, at most 50.' }),
    started: Type.Array(StartedSuggestion, { description: 'Jobs started from suggestions, newest first (at most 50).' }),
  },
  { $id: 'SuggestionList', title: 'SuggestionList' },
);
export type SuggestionsResponse = Static<typeof SuggestionsResponse>;

export const SuggestionParams = Type.Object({
  projectId: ProjectId,
  suggestionId: Type.String({ pattern: '^sug_[0-9a-f]{24}$', description: 'A suggestion id from the list.' }),
});

export const StartSuggestionResponse = Type.Object(
  { job: Job, suggestion: Suggestion },
  { $id: 'SuggestionJob', title: 'SuggestionJob' },
);
export type StartSuggestionResponse = Static<typeof StartSuggestionResponse>;
