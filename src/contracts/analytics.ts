// Visitor-analytics schemas: validation, types and OpenAPI. Wire-compatible with the upstream
// `GET /v1/analytics/{projectId}/visitors` and `/views` operations.
import { Type, type Static } from 'typebox';

const DateParam = (which: 'from' | 'to') =>
  Type.String({
    maxLength: 64,
    description:
      which === 'from'
        ? 'Inclusive start: YYYY-MM-DD (00:00 UTC) or ISO 8601 with an offset. Missing = unbounded.'
        : 'Exclusive end: results include times before it, not on it. YYYY-MM-DD (00:00 UTC) or ISO 8601 with an offset. Missing = unbounded.',
    // A month: the start of one and of the next (the end is exclusive).
    examples: [which === 'from' ? '2026-10-01' : '2026-11-01'],
  });

export const RangeQuery = Type.Object({
  dateFrom: Type.Optional(DateParam('from')),
  dateTo: Type.Optional(DateParam('to')),
});
export type RangeQuery = Static<typeof RangeQuery>;

export const PagedQuery = Type.Object({
  dateFrom: Type.Optional(DateParam('from')),
  dateTo: Type.Optional(DateParam('to')),
  limit: Type.Integer({ minimum: 1, maximum: 250, default: 50, description: 'Max results per page (1–250, default 50).' }),
  offset: Type.Integer({ minimum: 0, maximum: 10_000_000, default: 0, description: 'Rows to skip (at most 10,000,000); while hasMore is true, add limit to offset.' }),
});
export type PagedQuery = Static<typeof PagedQuery>;

export const TimeseriesQuery = Type.Object({
  dateFrom: Type.Optional(DateParam('from')),
  dateTo: Type.Optional(DateParam('to')),
  interval: Type.Union([Type.Literal('day'), Type.Literal('hour')], { default: 'day', description: 'Bucket size (UTC).' }),
});
export type TimeseriesQuery = Static<typeof TimeseriesQuery>;

const Counts = (what: string) =>
  Type.Object({
    human: Type.Integer({ description: `${what} from human traffic.` }),
    ai: Type.Integer({ description: `${what} from AI agents (assistants, coding agents, Markdown readers).` }),
    total: Type.Integer({ description: `${what}, deduplicated across human and AI.` }),
  });

/** The order of visitors and views rows; the engines' queries (ROW_ORDER) implement it. */
const ROW_ORDER = 'Ordered by total descending, then path ascending (by Unicode code point).';

export const VisitorsResponse = Type.Object(
  {
    totals: Counts('Site-wide exact unique visitors'),
    visitors: Type.Array(
      Type.Object({
        path: Type.String({ description: 'Page path (query and fragment stripped).' }),
        human: Type.Integer(),
        ai: Type.Integer(),
        total: Type.Integer({ description: 'Distinct visitors of this path, human and AI deduplicated.' }),
      }),
      { description: ROW_ORDER },
    ),
    hasMore: Type.Boolean({ description: 'True exactly when more paths exist past offset + limit.' }),
  },
  { $id: 'VisitorsByPage', title: 'VisitorsByPage' },
);
export type VisitorsResponse = Static<typeof VisitorsResponse>;

export const ViewsResponse = Type.Object(
  {
    totals: Counts('Site-wide page views'),
    views: Type.Array(
      Type.Object({ path: Type.String(), human: Type.Integer(), ai: Type.Integer(), total: Type.Integer() }),
      { description: ROW_ORDER },
    ),
    hasMore: Type.Boolean(),
  },
  { $id: 'ViewsByPage', title: 'ViewsByPage' },
);

export const TimeseriesResponse = Type.Object({
  interval: Type.Union([Type.Literal('day'), Type.Literal('hour')]),
  series: Type.Array(
    Type.Object({
      start: Type.String({ format: 'date-time', description: 'Start of the bucket (UTC).' }),
      human: Type.Integer({ description: 'Distinct human visitors in the bucket.' }),
      ai: Type.Integer({ description: 'Distinct AI visitors in the bucket.' }),
      total: Type.Integer(),
      views: Type.Integer({ description: 'Human and AI page views in the bucket.' }),
      humanViews: Type.Integer({ description: 'Page views by humans in the bucket.' }),
      aiViews: Type.Integer({ description: 'Page views by AI agents in the bucket.' }),
    }),
  ),
});
export type TimeseriesResponse = Static<typeof TimeseriesResponse>;

export const AgentsResponse = Type.Object({
  agents: Type.Array(
    Type.Object({
      agent: Type.String({ description: 'Agent name from the curated list, "Markdown client", or "Other bots".' }),
      category: Type.String({ description: 'ai (counted as AI visitors), search, training or bot (counted in neither).' }),
      visitors: Type.Integer(),
      views: Type.Integer(),
    }),
  ),
});
export type AgentsResponse = Static<typeof AgentsResponse>;

const DERIVED =
  'Distinct identities the server derived itself: the keyed hash of the client\'s address and user agent, whatever visitorId the client sent (so ten visitorIds from one address and agent are one). Views without a known address (events sent without `ip`) count in none. Weekly automatic runs count these.';

export const NotFoundResponse = Type.Object(
  {
    totals: Type.Object({
      human: Type.Integer({ description: 'Distinct human visitors who hit any not-found page.' }),
      ai: Type.Integer({ description: 'Distinct AI visitors who hit any not-found page.' }),
      total: Type.Integer({ description: 'Distinct visitors who hit any not-found page, human and AI deduplicated.' }),
      derivedVisitors: Type.Integer({ description: DERIVED }),
      views: Type.Integer({ description: 'Not-found views by humans and AI.' }),
    }),
    paths: Type.Array(
      Type.Object({
        path: Type.String({ description: 'The path that answered 404 or 410 (query and fragment stripped).' }),
        human: Type.Integer(),
        ai: Type.Integer(),
        total: Type.Integer({ description: 'Distinct visitors of this path, human and AI deduplicated.' }),
        derivedVisitors: Type.Integer({ description: DERIVED }),
        views: Type.Integer(),
        firstSeen: Type.String({ format: 'date-time' }),
        lastSeen: Type.String({ format: 'date-time' }),
        referrers: Type.Array(
          Type.Object({
            host: Type.Union([Type.String(), Type.Null()], { description: 'The referring host; null: no referrer.' }),
            visitors: Type.Integer(),
          }),
          { description: 'The top referring hosts of this path by distinct visitors, at most 5.' },
        ),
      }),
      { description: ROW_ORDER },
    ),
    hasMore: Type.Boolean({ description: 'True exactly when more paths exist past offset + limit.' }),
  },
  { $id: 'NotFoundByPage', title: 'NotFoundByPage' },
);
export type NotFoundResponse = Static<typeof NotFoundResponse>;

const Source = Type.Union([Type.Literal('ai_assistant'), Type.Literal('search'), Type.Literal('social'), Type.Literal('other')], {
  description: 'ai_assistant: answers of AI assistants (chatgpt.com, perplexity.ai, claude.ai, …); search; social; other: any other host.',
});

export const ReferrersResponse = Type.Object(
  {
    classes: Type.Array(
      Type.Object({ source: Source, human: Type.Integer(), ai: Type.Integer(), total: Type.Integer({ description: 'Distinct visitors, human and AI deduplicated.' }) }),
      { description: 'Distinct visitors sent by each class of source, every class listed (readers without a referrer are in none).' },
    ),
    referrers: Type.Array(
      Type.Object({ host: Type.String(), source: Source, human: Type.Integer(), ai: Type.Integer(), total: Type.Integer() }),
      { description: 'Referring hosts, ordered by total descending, then host ascending.' },
    ),
    hasMore: Type.Boolean({ description: 'True exactly when more hosts exist past offset + limit.' }),
    aiShare: Type.Array(
      Type.Object({
        start: Type.String({ format: 'date-time', description: 'The UTC day.' }),
        humans: Type.Integer({ description: 'Distinct human visitors that day.' }),
        fromAiAssistant: Type.Integer({ description: 'Of them, those who arrived from an AI assistant answer.' }),
      }),
      { description: 'Per UTC day with human visitors, the humans sent by AI answers (the share is fromAiAssistant / humans).' },
    ),
  },
  { $id: 'Referrers', title: 'Referrers' },
);
export type ReferrersResponse = Static<typeof ReferrersResponse>;

export const AiCompaniesQuery = Type.Object({
  dateFrom: Type.Optional(DateParam('from')),
  dateTo: Type.Optional(DateParam('to')),
  limit: PagedQuery.properties.limit,
  offset: PagedQuery.properties.offset,
  company: Type.Optional(
    Type.String({ minLength: 1, maxLength: 1024, description: 'A company of the agent list (such as OpenAI): its rows are per path instead of one per company.' }),
  ),
});
export type AiCompaniesQuery = Static<typeof AiCompaniesQuery>;

export const AiCompaniesResponse = Type.Object(
  {
    company: Type.Union([Type.String(), Type.Null()], { description: 'The company asked for (`company`): the rows are its paths; null: one row per company.' }),
    companies: Type.Array(
      Type.Object({
        company: Type.String({ description: 'The company, as the agent list names it.' }),
        path: Type.Union([Type.String(), Type.Null()], { description: 'The page (with `company`); null on a row per company.' }),
        trainingViews: Type.Integer({ description: 'Views by its training crawlers.' }),
        searchViews: Type.Integer({ description: 'Views by its search crawlers.' }),
        crawlers: Type.Integer({ description: 'Distinct agents among its training and search crawlers.' }),
        assistantVisitors: Type.Integer({ description: 'Distinct visitors by its assistants and coding agents (user-triggered fetchers).' }),
        assistantViews: Type.Integer({ description: 'Views by its assistants and coding agents.' }),
        referredHumans: Type.Integer({ description: "Distinct humans who arrived from its assistants' answers (the referring host names the company)." }),
        crawlsPerReferredHuman: Type.Union([Type.Number(), Type.Null()], { description: '(trainingViews + searchViews) / referredHumans; null when it sent no one.' }),
      }),
      { description: 'Ordered by views taken (trainingViews + searchViews + assistantViews) descending, then referredHumans descending, then company and path ascending.' },
    ),
    hasMore: Type.Boolean({ description: 'True exactly when more rows exist past offset + limit.' }),
  },
  { $id: 'AiCompanies', title: 'AiCompanies' },
);
export type AiCompaniesResponse = Static<typeof AiCompaniesResponse>;

export const EventsBody = Type.Object(
  {
    events: Type.Array(Type.Unknown(), {
      description:
        'At most 1,000 events, each {timestamp?, path, userAgent, ip?, visitorId?, referrer?, accept?, status?}. `status` (100–599) is the HTTP status the page answered: 404 and 410 go to the not-found report and count nowhere else. Bad events are rejected one by one.',
    }),
  },
  { additionalProperties: false },
);
export type EventsBody = Static<typeof EventsBody>;

export const EventsResponse = Type.Object({
  accepted: Type.Integer({ description: 'Events stored durably.' }),
  rejected: Type.Array(Type.Object({ index: Type.Integer(), code: Type.String(), error: Type.String() })),
});

// The fields are checked by the ingest pipeline (the same rules as an event of the events API), so
// the schema only documents them.
export const CollectBody = Type.Object(
  {
    path: Type.Optional(Type.Unknown({ description: 'Page path starting with "/" (query and fragment are stripped; at most 2,048 characters without them).' })),
    referrer: Type.Optional(Type.Unknown({ description: 'Referrer URL, at most 2,048 characters.' })),
    visitorId: Type.Optional(Type.Unknown({ description: "The script's first-party visitor id (from localStorage), at most 256 characters." })),
    status: Type.Optional(Type.Unknown({ description: 'The HTTP status the page answered (100–599), sent by a site\'s 404 page: 404 and 410 go to the not-found report.' })),
  },
  { additionalProperties: true, description: '{path, referrer?, visitorId?, status?}: any other field is refused (400 unknown_field).' },
);
export type CollectBody = Static<typeof CollectBody>;

export const ImportResponse = Type.Object({
  received: Type.Integer({ description: 'Lines received.' }),
  recorded: Type.Integer({ description: 'Events stored (not seen before).' }),
  duplicates: Type.Integer({ description: 'Events already imported earlier (same line), not stored again.' }),
  crawlers: Type.Integer({ description: 'Stored events from search/training crawlers and other bots (counted in neither human nor AI).' }),
  rejected: Type.Integer(),
  errors: Type.Array(Type.Object({ line: Type.Integer(), code: Type.String(), error: Type.String() }), { description: 'The first 20 rejected lines.' }),
  skipped: Type.Optional(
    Type.Object(
      {
        unparseable: Type.Integer({ description: 'Lines in neither the combined format nor JSON.' }),
        method: Type.Integer({ description: 'Requests other than GET.' }),
        status: Type.Integer({ description: 'Responses other than 2xx and 304.' }),
        asset: Type.Integer({ description: 'Requests for assets (images, scripts, styles, fonts…), not pages.' }),
        empty: Type.Integer({ description: 'Blank lines.' }),
      },
      { description: 'Raw logs only: lines that are not page views, by reason (not counted as rejected).' },
    ),
  ),
  kinds: Type.Optional(
    Type.Object(
      {
        pageViews: Type.Integer({ description: 'Views by people and AI agents.' }),
        notFound: Type.Integer({ description: 'Not-found views (404, 410) by people and AI agents, stored for the not-found report.' }),
        crawlerNotFound: Type.Integer({ description: 'Not-found views by crawlers and bots: not kept.' }),
      },
      {
        description:
          'Raw logs only: the page views read, by kind (before duplicates are taken out). `pageViews + notFound + crawlers + crawlerNotFound + rejected` and the `skipped` counts add up to `received`.',
      },
    ),
  ),
});
export type ImportResponse = Static<typeof ImportResponse>;

export const LogImportQuery = Type.Object({
  format: Type.Union([Type.Literal('auto'), Type.Literal('combined'), Type.Literal('json')], {
    default: 'auto',
    description: 'Raw logs only: `combined` (Apache/nginx), `json` (one object per line) or `auto` (decided per line).',
  }),
  map: Type.Optional(
    Type.Array(Type.String({ minLength: 3, maxLength: 200 }), {
      maxItems: 20,
      description: 'Raw JSON logs only, repeatable: `NAME=FIELD` reads NAME (time, ip, method, path, request, status, userAgent, referrer, accept) from FIELD first (a dotted path reaches into nested objects).',
    }),
  ),
});
export type LogImportQuery = Static<typeof LogImportQuery>;
