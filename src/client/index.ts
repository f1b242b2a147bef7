// folio/client: the typed client of the Folio API. No dependencies beyond the platform's fetch.
export { FolioClient, CLIENT_VERSION } from './client.ts';
export type {
  CallOptions,
  CreateJobInput,
  FolioClientOptions,
  IngestOptions,
  JobEventsOptions,
  JobIterable,
  ListJobsQuery,
  LogImportOptions,
  ResponseInfo,
  WaitForJobOptions,
  WriteOptions,
} from './client.ts';
export { FolioError, type ClientErrorCode, type FolioErrorDetail } from './errors.ts';
export { TERMINAL_STATUSES } from './types.ts';
export { toCsv } from './csv.ts';
export type {
  AnalyticsEvent,
  AnalyticsQuery,
  ChecksReport,
  IngestResult,
  ImportResult,
  Job,
  JobChanges,
  JobEvent,
  JobFile,
  JobUsage,
  JobEventPage,
  JobMessage,
  JobPage,
  JobStatus,
  PathCounts,
  TrafficCounts,
  UsageReport,
  NotFoundPage,
  NotFoundPath,
  ReferrersPage,
  StartedSuggestion,
  Suggestion,
  SuggestionJob,
  SuggestionList,
  SuggestionsQuery,
  ViewsPage,
  VisitorsPage,
  WebhookDelivery,
} from './types.ts';
