// Wire types of the API, derived from the server's TypeBox schemas with type-only imports, so the
// compiled client has no runtime dependency. The shapes match the upstream service's documents.
import type { Static } from 'typebox';
import type {
  Job as JobSchema,
  JobChanges as JobChangesSchema,
  JobMessage as JobMessageSchema,
  JobStatus as JobStatusSchema,
  UsageReport as UsageReportSchema,
  WebhookDelivery as WebhookDeliverySchema,
} from '../contracts/jobs.ts';
import type { AiCompaniesResponse, EventsResponse, ImportResponse, NotFoundResponse, ReferrersResponse, ViewsResponse, VisitorsResponse } from '../contracts/analytics.ts';
import type { StartSuggestionResponse, SuggestionsResponse } from '../contracts/suggestions.ts';
import type { ImpactCounts as ImpactCountsSchema, ImpactPage as ImpactPageSchema, JobImpact as JobImpactSchema } from '../contracts/impact.ts';

export type Job = Static<typeof JobSchema>;
/** The prompt or a follow-up, with the agent's answer once handled and (Folio) where it came from. */
export type JobMessage = Static<typeof JobMessageSchema>;
export type JobStatus = Static<typeof JobStatusSchema>;
/** One event of a job, typed by its `type` (src/contracts/job-events.ts); `data` may be clipped when it was too large to store. */
import type { JobEvent } from '../contracts/job-events.ts';
export type { JobEvent };
export type { JobEventType, JobEventData, ClippedEventData } from '../contracts/job-events.ts';
/** A job status change announced to the project's webhook URL, and how its delivery went. */
export type WebhookDelivery = Static<typeof WebhookDeliverySchema>;
/** One file a job changed. */
export type JobFile = Job['files'][number];
/** Tokens and estimated cost of a job. */
export type JobUsage = Job['usage'];
/** GET /v2/agent/{projectId}/job/{id}/changes: the diff against the base, the files, the last docs checks. */
export type JobChanges = Static<typeof JobChangesSchema>;
/** The docs checks report of a job's last turn. */
export type ChecksReport = NonNullable<JobChanges['checks']>;
/** GET /v2/agent/{projectId}/job/{id}/impact: the pages a merged job touched, before and after the merge (Folio). */
export type JobImpact = Static<typeof JobImpactSchema>;
/** One touched page of a job's impact, with its counts before and after. */
export type ImpactPage = Static<typeof ImpactPageSchema>;
/** The counts of one window of a job's impact. */
export type ImpactCounts = Static<typeof ImpactCountsSchema>;
/** GET /v2/agent/{projectId}/usage: tokens and estimated cost per day and per job. */
export type UsageReport = Static<typeof UsageReportSchema>;

/** Statuses after which a job needs a follow-up to do anything again (`archived` is final). */
export const TERMINAL_STATUSES: readonly JobStatus[] = ['completed', 'archived', 'failed'];

export interface JobPage {
  jobs: Job[];
  nextCursor: string | null;
  hasMore: boolean;
}

export interface JobEventPage {
  events: JobEvent[];
  hasMore: boolean;
  nextAfter: number;
}

/** GET /v1/analytics/{projectId}/visitors: unique visitors, site-wide and per path. */
export type VisitorsPage = Static<typeof VisitorsResponse>;

/** GET /v1/analytics/{projectId}/views: content view events, site-wide and per path. */
export type ViewsPage = Static<typeof ViewsResponse>;

/** GET /v1/analytics/{projectId}/not-found: paths that answered 404 or 410, with exact visitors and referrers. */
export type NotFoundPage = Static<typeof NotFoundResponse>;

/** One not-found path. */
export type NotFoundPath = NotFoundPage['paths'][number];

/** GET /v1/analytics/{projectId}/referrers: referring hosts, classed, and the humans sent by AI answers per day. */
export type ReferrersPage = Static<typeof ReferrersResponse>;
export type AiCompaniesPage = Static<typeof AiCompaniesResponse>;

/** GET /v2/agent/{projectId}/suggestions: what traffic proposes, and the jobs started from suggestions. */
export type SuggestionList = Static<typeof SuggestionsResponse>;

/** One suggestion: broken paths with their likely pages, or Markdown for AI agents, with its prompt. */
export type Suggestion = SuggestionList['suggestions'][number];

/** A job started from a suggestion, with each path's not-found visitors before and after. */
export type StartedSuggestion = SuggestionList['started'][number];

/** POST /v2/agent/{projectId}/suggestions/{id}/job: the job and the suggestion it was started from. */
export type SuggestionJob = Static<typeof StartSuggestionResponse>;

export interface SuggestionsQuery {
  /** Inclusive start (default: 30 days before dateTo); same formats as AnalyticsQuery. */
  dateFrom?: string | Date;
  /** Exclusive end (default: the end of today, UTC). */
  dateTo?: string | Date;
  /** Distinct visitors a not-found path needs to be proposed (server default 3). */
  minVisitors?: number;
}

/** Human, AI and deduplicated total counts. */
export type TrafficCounts = VisitorsPage['totals'];

/** One path's counts. */
export type PathCounts = VisitorsPage['visitors'][number];

export interface AnalyticsQuery {
  /** Inclusive start: `YYYY-MM-DD` (00:00 UTC), an ISO 8601 date-time, or a Date. */
  dateFrom?: string | Date;
  /** Exclusive end, same formats. */
  dateTo?: string | Date;
  /** Rows per page, 1 to 250 (server default 50). */
  limit?: number;
  offset?: number;
  /** ai-companies only: one company's rows per path. */
  company?: string;
}

/** One page view for POST /v1/analytics/{projectId}/events. */
export interface AnalyticsEvent {
  /** When the view happened (ISO 8601 or a Date); the server's clock when omitted. */
  timestamp?: string | Date;
  path: string;
  userAgent: string;
  ip?: string;
  visitorId?: string;
  referrer?: string;
  /** The request's Accept header (Markdown-preferring views count as AI). */
  accept?: string;
  /** The HTTP status the page answered (100–599): 404 and 410 are not-found views, reported apart. */
  status?: number;
}

/** POST /v1/analytics/{projectId}/events → 202. */
export type IngestResult = Static<typeof EventsResponse>;

/** POST /v1/analytics/{projectId}/import → 200. */
export type ImportResult = Static<typeof ImportResponse>;
